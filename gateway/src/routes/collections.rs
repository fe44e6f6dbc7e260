//! Collections, sync and jobs.

use crate::error::ApiReply;
use crate::extract::Payload;
use crate::AppState;
use axum::extract::{Path, State};
use protocol::{AddCollection, ApiError, Request};

pub async fn list(State(s): State<AppState>) -> ApiReply {
    ApiReply::ok(s.worker.call(Request::ListCollections).await)
}

pub async fn add(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<AddCollection, ApiError> {
        Ok(AddCollection {
            path: body.str_req("path")?,
            name: body.str_opt("name")?,
            pattern: body.str_opt("pattern")?,
            include: body.str_opt("include")?,
            exclude: body.str_opt("exclude")?,
            git_pull: body.bool_opt("gitPull")?.unwrap_or(false),
        })
    })();
    match req {
        Ok(r) => ApiReply::accepted(s.worker.call(Request::AddCollection(r)).await),
        Err(e) => e.into(),
    }
}

pub async fn remove(State(s): State<AppState>, Path(name): Path<String>) -> ApiReply {
    ApiReply::ok(s.worker.call(Request::RemoveCollection { name }).await)
}

pub async fn sync(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        Ok(Request::Sync { collection: body.str_opt("collection")?, git_pull: body.bool_opt("gitPull")? })
    })();
    match req {
        Ok(r) => ApiReply::accepted(s.worker.call(r).await),
        Err(e) => e.into(),
    }
}

pub async fn job(State(s): State<AppState>, Path(id): Path<String>) -> ApiReply {
    if id.len() > 64 || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return ApiError::not_found("Job not found or expired").into();
    }
    ApiReply::ok(s.worker.call(Request::GetJob { id }).await)
}
