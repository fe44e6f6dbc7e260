//! The route table. One module per resource.

mod assets;
mod collections;
mod docs;
mod events;
mod models;
mod search;
mod system;
mod vendor;
mod writes;

use crate::error::ApiReply;
use crate::{security, AppState};
use axum::routing::{delete, get, post, put};
use axum::Router;
use protocol::{ApiError, ErrorCode};

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/health", get(system::health))
        .route("/api/status", get(system::status))
        .route("/api/capabilities", get(system::capabilities))
        .route("/api/collections", get(collections::list).post(collections::add))
        .route("/api/collections/{name}", delete(collections::remove))
        .route("/api/sync", post(collections::sync))
        .route("/api/jobs/{id}", get(collections::job))
        .route("/api/search", post(search::search))
        .route("/api/vsearch", post(search::vsearch))
        .route("/api/query", post(search::query))
        .route("/api/query/diagnose", post(search::diagnose))
        .route("/api/presets", get(models::presets).post(models::set_preset))
        .route("/api/models/pull", post(models::pull))
        .route("/api/models/status", get(models::status))
        .route("/api/tags", get(docs::tags))
        .route("/api/docs", get(docs::list).post(writes::create))
        .route("/api/docs/{id}", put(writes::update))
        .route("/api/docs/{id}/deactivate", post(writes::deactivate))
        .route("/api/docs/{id}/refactor-plan", post(writes::refactor_plan))
        .route("/api/docs/{id}/rename", post(writes::rename))
        .route("/api/docs/{id}/move", post(writes::move_doc))
        .route("/api/docs/{id}/duplicate", post(writes::duplicate))
        .route("/api/folders", post(writes::folder))
        .route("/api/note-presets", get(writes::note_presets))
        .route("/api/capture", post(writes::capture))
        .route("/api/doc-asset", get(assets::doc_asset))
        .route("/api/events", get(events::events))
        .route("/api/doc", get(docs::doc))
        .route("/api/doc/{id}/links", get(docs::links))
        .route("/api/doc/{id}/backlinks", get(docs::backlinks))
        .route("/api/doc/{id}/sections", get(docs::sections))
        .route("/api/doc/{id}/similar", get(docs::similar))
        .route("/api/graph", get(docs::graph))
        .route("/vendor/pdfjs/{*rest}", axum::routing::any(vendor::pdfjs))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard))
        .with_state(state)
}

/// Sends a validated request to the worker, or answers the validation error.
pub(crate) async fn call(s: &AppState, r: Result<protocol::Request, ApiError>) -> ApiReply {
    match r {
        Ok(r) => ApiReply::ok(s.worker.call(r).await),
        Err(e) => e.into(),
    }
}

async fn not_found() -> ApiReply {
    ApiError::not_found("Not found").into()
}

async fn method_not_allowed() -> ApiReply {
    ApiError::new(ErrorCode::MethodNotAllowed, "Method not allowed").into()
}
