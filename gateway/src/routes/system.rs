//! Health, status and capabilities: answered without the worker.

use crate::error::ApiReply;
use crate::AppState;
use axum::extract::State;
use protocol::api::{Capabilities, ConnectorProjection, ContentTypeBoost, Health, StatusSnapshot, WorkerState};
use protocol::{Dirs, JsonBody};

/// Liveness of the gateway.
#[utoipa::path(get, path = "/api/health", tag = "system", responses((status = 200, description = "Up", body = Health)))]
pub async fn health() -> ApiReply {
    ApiReply::ok(JsonBody::of(&Health { ok: true }))
}

/// The snapshot the worker last published to `status.json`, if there is a readable one.
pub(crate) fn published_status(dirs: &Dirs) -> Option<StatusSnapshot> {
    std::fs::read(dirs.status_file()).ok().and_then(|b| serde_json::from_slice(&b).ok())
}

/// The worker's last published snapshot, marked unhealthy while the worker is down.
fn snapshot(state: &AppState) -> StatusSnapshot {
    let mut s = published_status(&state.dirs).unwrap_or_else(|| StatusSnapshot {
        index_name: state.dirs.index_name.clone(),
        config_path: state.dirs.config_file().display().to_string(),
        db_path: state.dirs.catalog_file().display().to_string(),
        connector_projection: ConnectorProjection::default(),
        content_type_boost: ContentTypeBoost::default(),
        ..Default::default()
    });
    s.connector_projection = crate::connectors::receipts::projection(&state.dirs.connectors_file());
    s.capabilities.bm25 = true;
    s.worker = state.worker.state();
    s.healthy = s.healthy && s.worker == WorkerState::Running;
    s
}

/// The worker's last published status, marked unhealthy while the worker is down.
#[utoipa::path(get, path = "/api/status", tag = "system",
    responses((status = 200, description = "The index, its collections and models", body = StatusSnapshot)))]
pub async fn status(State(state): State<AppState>) -> ApiReply {
    ApiReply::ok(JsonBody::of(&snapshot(&state)))
}

/// What the index can do now (keyword, vectors, rerank, answers...).
#[utoipa::path(get, path = "/api/capabilities", tag = "system",
    responses((status = 200, description = "Capabilities", body = Capabilities)))]
pub async fn capabilities(State(state): State<AppState>) -> ApiReply {
    ApiReply::ok(JsonBody::of(&snapshot(&state).capabilities))
}
