//! The OpenAPI 3.1 document served at `GET /api/openapi.json`. The routes describe
//! themselves (`#[utoipa::path]` on each handler, bodies from [`crate::bodies`], replies
//! from `protocol::api`); this module adds what every route shares: the error envelope and
//! the statuses the gateway itself can answer with.

use crate::error::ApiReply;
use protocol::{ErrorEnvelope, JsonBody};
use std::sync::Arc;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Response, ResponseBuilder};
use utoipa::OpenApi as _;

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "svc",
        description = "svc's local knowledge index: keyword, vector and hybrid search, documents, links and safe edits. \
Served on 127.0.0.1 only. Every error is `{\"error\": {\"code\", \"message\", \"details\"?}}`."
    ),
    components(schemas(ErrorEnvelope, protocol::api::AnswerToken)),
    tags(
        (name = "system", description = "Health, status, capabilities and events"),
        (name = "collections", description = "Folders indexed as collections, syncs and jobs"),
        (name = "search", description = "Keyword, vector and hybrid retrieval"),
        (name = "documents", description = "Reading documents, tags and assets"),
        (name = "links", description = "Links, backlinks, similar documents and the graph"),
        (name = "writes", description = "Creating, editing and refactoring notes"),
        (name = "models", description = "Model presets and downloads"),
        (name = "changes", description = "What changed in the index, and what depends on a note"),
        (name = "evidence", description = "Context Capsules: bounded, checkable evidence for a goal"),
        (name = "connectors", description = "Agents that reach svc (MCP clients, skill files) and their verification"),
    )
)]
struct ApiDoc;

/// The document's frame: info, tags, the error envelope.
pub fn base() -> OpenApi {
    ApiDoc::openapi()
}

fn error(description: &str) -> RefOr<Response> {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorEnvelope"))).build())
        .build()
        .into()
}

/// The statuses any route can answer with, besides its own.
fn add_shared_errors(op: &mut Operation) {
    let has_body = op.request_body.is_some();
    let shared: [(&str, &str, bool); 5] = [
        (
            "400",
            "VALIDATION: a field is missing, of the wrong type or out of range, or the body is not a JSON object",
            true,
        ),
        ("403", "CSRF_VIOLATION: a Host or Origin that is not this server's, or a missing or wrong token", true),
        ("413", "PAYLOAD_TOO_LARGE: the body is larger than 16 MiB", has_body),
        ("500", "RUNTIME: an unexpected failure (the message never contains a path or a cause)", true),
        ("503", "UNAVAILABLE: the worker is restarting, or the capability needs a model that is not loaded", true),
    ];
    for (status, description, applies) in shared {
        if applies {
            op.responses.responses.entry(status.to_string()).or_insert_with(|| error(description));
        }
    }
}

/// The served document, serialized once.
#[derive(Clone)]
pub struct Document(Arc<Vec<u8>>);

impl Document {
    pub fn new(mut doc: OpenApi) -> Self {
        for item in doc.paths.paths.values_mut() {
            for op in [&mut item.get, &mut item.put, &mut item.post, &mut item.delete].into_iter().flatten() {
                add_shared_errors(op);
            }
        }
        let bytes = serde_json::to_vec(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}").into_bytes());
        Document(Arc::new(bytes))
    }

    pub fn reply_bytes(&self) -> Vec<u8> {
        self.0.to_vec()
    }

    pub fn reply(&self) -> ApiReply {
        ApiReply::ok(Ok(JsonBody { bytes: self.0.to_vec() }))
    }
}
