//! Collections, sync and jobs.

use super::call;
use crate::bodies::{AddCollectionBody, SyncBody};
use crate::error::ApiReply;
use crate::extract::{Body, Params};
use crate::AppState;
use axum::extract::{Path, State};
use protocol::api::{CollectionAdded, CollectionInfo, CollectionRemoved, ExplainResponse, Job, SyncStarted};
use protocol::{ApiError, ErrorEnvelope, Explain};

/// The configured collections.
#[utoipa::path(get, path = "/api/collections", tag = "collections", operation_id = "list_collections",
    responses((status = 200, description = "Every collection", body = Vec<CollectionInfo>)))]
pub async fn list(State(s): State<AppState>) -> ApiReply {
    ApiReply::ok(s.worker.call(protocol::ListCollections).await)
}

/// Adds a folder as a collection and starts its first sync (202).
#[utoipa::path(post, path = "/api/collections", tag = "collections", request_body = AddCollectionBody,
    responses((status = 202, description = "Added; the sync job runs", body = CollectionAdded),
              (status = 409, description = "The name or folder is taken, or a job runs", body = ErrorEnvelope)))]
pub async fn add(State(s): State<AppState>, Body(b): Body<AddCollectionBody>) -> ApiReply {
    match b.into_request() {
        Ok(r) => ApiReply::accepted(s.worker.call(r).await),
        Err(e) => e.into(),
    }
}

/// Removes a collection from the index (its files stay).
#[utoipa::path(delete, path = "/api/collections/{name}", tag = "collections",
    params(("name" = String, Path, description = "The collection")),
    responses((status = 200, description = "Removed", body = CollectionRemoved),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope),
              (status = 409, description = "A job runs", body = ErrorEnvelope)))]
pub async fn remove(State(s): State<AppState>, Path(name): Path<String>) -> ApiReply {
    match crate::bodies::collection(&name) {
        Ok(name) => ApiReply::ok(s.worker.call(protocol::RemoveCollection { name }).await),
        Err(e) => e.into(),
    }
}

/// Starts a sync of one collection or of all (202).
#[utoipa::path(post, path = "/api/sync", tag = "collections", request_body = Option<SyncBody>,
    responses((status = 202, description = "The sync job", body = SyncStarted),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope),
              (status = 409, description = "A job runs", body = ErrorEnvelope)))]
pub async fn sync(State(s): State<AppState>, Body(b): Body<SyncBody>) -> ApiReply {
    match b.into_parts() {
        Ok((collection, git_pull)) => {
            ApiReply::accepted(s.worker.call(protocol::SyncCollections { collection, git_pull }).await)
        }
        Err(e) => e.into(),
    }
}

/// A job's state and, when finished, its result.
#[utoipa::path(get, path = "/api/jobs/{id}", tag = "collections",
    params(("id" = String, Path, description = "The job id")),
    responses((status = 200, description = "The job", body = Job),
              (status = 404, description = "Unknown or expired job", body = ErrorEnvelope)))]
pub async fn job(State(s): State<AppState>, Path(id): Path<String>) -> ApiReply {
    if id.len() > 64 || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return ApiError::not_found("Job not found or expired").into();
    }
    ApiReply::ok(s.worker.call(protocol::GetJob { id }).await)
}

/// The indexing job that runs now (`activeJob: null` when none).
#[utoipa::path(get, path = "/api/jobs/active", tag = "collections",
    responses((status = 200, description = "The running job, or null", body = protocol::api::ActiveJobResponse)))]
pub async fn active_job(State(s): State<AppState>) -> ApiReply {
    ApiReply::ok(s.worker.call(protocol::GetActiveJob).await)
}

/// Longest `path` accepted (bytes), as PATH_MAX.
const MAX_PATH_BYTES: usize = 4096;

/// What `?path=` names: an absolute path or a `svc://` URI; anything else is a 400.
fn explain_target(p: &Params) -> Result<Explain, ApiError> {
    let raw = p.str_opt("path").ok_or_else(|| ApiError::validation("path is required"))?;
    if raw.contains('\0') {
        return Err(ApiError::validation("path must not contain NUL"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(ApiError::validation(format!("path is longer than {MAX_PATH_BYTES} bytes")));
    }
    if raw.starts_with("svc://") {
        return Ok(Explain::Uri(raw));
    }
    if !raw.starts_with('/') {
        return Err(ApiError::validation("path must be absolute or a svc://<collection>/<path> URI"));
    }
    Ok(Explain::Path(raw))
}

/// Whether a file is indexed and, if not, the one rule that left it out: an editor's litter,
/// a name never notes, a hidden name, a `CACHEDIR.TAG`, an ignore file's line, the
/// collection's globs, the size limit, the format, or the error that stopped its reading.
#[utoipa::path(get, path = "/api/explain", tag = "collections",
    params(("path" = String, Query, description = "An absolute path on this machine, or a svc:// URI")),
    responses((status = 200, description = "Where the path stands", body = ExplainResponse),
              (status = 400, description = "No path, a relative one, or a folder", body = ErrorEnvelope),
              (status = 404, description = "The URI's collection does not exist", body = ErrorEnvelope)))]
pub async fn explain(State(s): State<AppState>, p: Params) -> ApiReply {
    call(&s, explain_target(&p)).await
}

/// Read-only findings over the index and its folders: files that cannot be read, links to
/// nothing, anchors to missing headings, names that make bare links ambiguous, files whose
/// index differs from the disk, documents without vectors, and what the rules leave out.
/// Every kind is counted; up to `limit` of each are listed, in a stable order.
#[utoipa::path(get, path = "/api/audit", tag = "collections",
    params(("collection" = Option<String>, Query, description = "Only this collection"),
           ("limit" = Option<i64>, Query, minimum = 1, description = "Findings of each kind listed; default 100, above 1000 is clamped")),
    responses((status = 200, description = "The findings", body = protocol::api::AuditResponse),
              (status = 400, description = "A limit that is not a positive integer", body = ErrorEnvelope),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope)))]
pub async fn audit(State(s): State<AppState>, p: Params) -> ApiReply {
    let req = (|| {
        let collection = crate::bodies::collection_opt(p.str_opt("collection"))?;
        let limit = p.int("limit", protocol::Audit::DEFAULT_LIMIT, 1, protocol::Audit::MAX_LIMIT)?;
        Ok(protocol::Audit { collection, limit })
    })();
    call(&s, req).await
}
