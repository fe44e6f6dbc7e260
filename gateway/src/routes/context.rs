//! Context Capsules: `/api/context` compiles one, `/api/context/verify` checks one a client
//! kept. Both answer errors from the context family's fixed catalog, never a path or a cause;
//! a failure outside the worker's catalog (the worker restarting) keeps its own code.

use crate::bodies::{context_error, CapsuleFormat, ContextBody, VerifyBody};
use crate::error::ApiReply;
use crate::extract::{Body, BodyRejection};
use crate::AppState;
use axum::extract::State;
use protocol::api::{capsule_markdown, receipt_markdown, Capsule, CapsuleReceipt};
use protocol::{ApiError, ErrorCode, ErrorEnvelope};

const MARKDOWN: &str = "text/markdown; charset=utf-8";

fn unreadable() -> ApiError {
    ApiError::context(ErrorCode::RuntimeError)
}

/// A context body read and validated: any error in the context family's catalog.
fn parse<T, R>(
    body: Result<Body<T>, BodyRejection>,
    validate: impl FnOnce(T) -> Result<R, ApiError>,
) -> Result<R, ApiReply> {
    match body {
        Ok(Body(b)) => validate(b).map_err(ApiReply::Error),
        Err(rejected) => Err(ApiReply::Error(context_error(rejected))),
    }
}

/// Compiles a Context Capsule: exact, hashed passages for a goal within a token budget
/// that covers the whole payload. Deterministic for the same index and request.
#[utoipa::path(post, path = "/api/context", tag = "evidence", request_body = ContextBody,
    responses((status = 200, description = "The capsule (`context-capsule-v1@1.1`), canonical JSON; `format: md` answers text/markdown",
                content((Capsule = "application/json"), (String = "text/markdown"))),
              (status = 400, description = "invalid_input, invalid_goal, invalid_budget, invalid_filter or invalid_uri", body = ErrorEnvelope),
              (status = 404, description = "no_evidence", body = ErrorEnvelope),
              (status = 409, description = "index_changed_during_compile", body = ErrorEnvelope),
              (status = 500, description = "retrieval_failed, content_load_failed or runtime_error", body = ErrorEnvelope),
              (status = 503, description = "tokenizer_unavailable, or the worker is restarting", body = ErrorEnvelope)))]
pub async fn compile(State(s): State<AppState>, body: Result<Body<ContextBody>, BodyRejection>) -> ApiReply {
    let (req, format) = match parse(body, ContextBody::into_request) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    match s.worker.call(protocol::CompileContext(req)).await {
        Err(e) => e.into(),
        Ok(capsule) if format == CapsuleFormat::Markdown => match capsule.decode() {
            Ok(c) => ApiReply::Text(MARKDOWN, capsule_markdown(&c)),
            Err(_) => unreadable().into(),
        },
        Ok(capsule) => ApiReply::ok(Ok(capsule)),
    }
}

/// Verifies a kept capsule against the index now (read-only): each evidence `unchanged`,
/// `stale` or `missing`, ranking and fingerprint drift. A capsule whose bytes do not match
/// its identity fails with `identity_mismatch` before any evidence is read.
#[utoipa::path(post, path = "/api/context/verify", tag = "evidence", operation_id = "verify_context", request_body = VerifyBody,
    responses((status = 200, description = "The receipt (`context-capsule-verification@1.0`); `format: md` answers text/markdown",
                content((CapsuleReceipt = "application/json"), (String = "text/markdown"))),
              (status = 400, description = "invalid_input or identity_mismatch", body = ErrorEnvelope),
              (status = 409, description = "index_snapshot_mismatch: the capsule is from another index", body = ErrorEnvelope),
              (status = 500, description = "content_load_failed or runtime_error", body = ErrorEnvelope)))]
pub async fn verify(State(s): State<AppState>, body: Result<Body<VerifyBody>, BodyRejection>) -> ApiReply {
    let (capsule, format) = match parse(body, VerifyBody::into_parts) {
        Ok(p) => p,
        Err(reply) => return reply,
    };
    let markdown_of = |receipt: &protocol::Typed<CapsuleReceipt>| -> Result<String, ApiError> {
        let r = receipt.decode().map_err(|_| unreadable())?;
        let c: Capsule = serde_json::from_str(&capsule).map_err(|_| unreadable())?;
        Ok(receipt_markdown(&r, &c))
    };
    match s.worker.call(protocol::VerifyContext { capsule: capsule.clone() }).await {
        Err(e) => e.into(),
        Ok(receipt) if format == CapsuleFormat::Markdown => match markdown_of(&receipt) {
            Ok(text) => ApiReply::Text(MARKDOWN, text),
            Err(e) => e.into(),
        },
        Ok(receipt) => ApiReply::ok(Ok(receipt)),
    }
}
