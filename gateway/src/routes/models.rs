//! Model presets and pulls: `GET/POST /api/presets`, `POST /api/models/pull`,
//! `GET /api/models/status`.

use super::call;
use crate::bodies::SetPresetBody;
use crate::error::ApiReply;
use crate::extract::Body;
use crate::AppState;
use axum::extract::State;
use protocol::api::{PresetChanged, PresetsResponse, PullStarted, PullStatus};
use protocol::ErrorEnvelope;

/// The model presets and the active one.
#[utoipa::path(get, path = "/api/presets", tag = "models",
    responses((status = 200, description = "Presets", body = PresetsResponse)))]
pub async fn presets(State(s): State<AppState>) -> ApiReply {
    call(&s, Ok(protocol::ListPresets)).await
}

/// Switches the active preset.
#[utoipa::path(post, path = "/api/presets", tag = "models", request_body = SetPresetBody,
    responses((status = 200, description = "Switched", body = PresetChanged),
              (status = 404, description = "Unknown preset", body = ErrorEnvelope)))]
pub async fn set_preset(State(s): State<AppState>, Body(b): Body<SetPresetBody>) -> ApiReply {
    call(&s, b.into_id().map(|id| protocol::SetPreset { id })).await
}

/// Downloads the active preset's missing model files in the background.
#[utoipa::path(post, path = "/api/models/pull", tag = "models",
    responses((status = 200, description = "The pull started (or runs)", body = PullStarted),
              (status = 409, description = "A pull runs", body = ErrorEnvelope)))]
pub async fn pull(State(s): State<AppState>) -> ApiReply {
    call(&s, Ok(protocol::PullModels)).await
}

/// Progress of the last pull.
#[utoipa::path(get, path = "/api/models/status", tag = "models", operation_id = "model_status",
    responses((status = 200, description = "Pull progress", body = PullStatus)))]
pub async fn status(State(s): State<AppState>) -> ApiReply {
    call(&s, Ok(protocol::GetModelStatus)).await
}
