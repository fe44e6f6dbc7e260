//! Model presets and pulls: `GET/POST /api/presets`, `POST /api/models/pull`,
//! `GET /api/models/status`.

use super::call;
use crate::error::ApiReply;
use crate::extract::Payload;
use crate::AppState;
use axum::extract::State;
use protocol::{ApiError, Request};

pub async fn presets(State(s): State<AppState>) -> ApiReply {
    call(&s, Ok(Request::ListPresets)).await
}

pub async fn set_preset(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = body.str_req("presetId").and_then(|id| {
        let id = id.trim().to_string();
        if id.is_empty() {
            Err(ApiError::validation("presetId is required"))
        } else {
            Ok(Request::SetPreset { id })
        }
    });
    call(&s, req).await
}

pub async fn pull(State(s): State<AppState>) -> ApiReply {
    call(&s, Ok(Request::PullModels)).await
}

pub async fn status(State(s): State<AppState>) -> ApiReply {
    call(&s, Ok(Request::ModelStatus)).await
}
