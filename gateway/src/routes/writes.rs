//! Document writes: create, update, deactivate, folders, note presets.

use crate::error::ApiReply;
use crate::extract::{Params, Payload};
use crate::routes::docs::doc_ref;
use crate::AppState;
use axum::extract::{Path, State};
use protocol::{ApiError, CollisionPolicy, CreateDoc, Request, UpdateDoc};

fn collision(body: &Payload) -> Result<CollisionPolicy, ApiError> {
    let overwrite = body.bool_opt("overwrite")?.unwrap_or(false);
    let policy = match body.str_opt("collisionPolicy")?.as_deref() {
        None => CollisionPolicy::Error,
        Some("error") => CollisionPolicy::Error,
        Some("open_existing") => CollisionPolicy::OpenExisting,
        Some("create_with_suffix") => CollisionPolicy::CreateWithSuffix,
        Some(other) => return Err(ApiError::validation(format!("Unknown collisionPolicy {other:?}: use error, open_existing or create_with_suffix"))),
    };
    Ok(if overwrite { CollisionPolicy::Overwrite } else { policy })
}

pub async fn create(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<CreateDoc, ApiError> {
        let rel_path = body.str_opt("relPath")?;
        let title = body.str_opt("title")?.filter(|t| !t.trim().is_empty());
        if rel_path.is_none() && title.is_none() {
            return Err(ApiError::validation("relPath (or title) is required"));
        }
        Ok(CreateDoc {
            collection: body.str_req("collection")?.trim().to_lowercase(),
            rel_path,
            title,
            folder_path: body.str_opt("folderPath")?,
            content: body.str_opt("content")?,
            tags: body.list_opt("tags")?,
            preset_id: body.str_opt("presetId")?,
            collision: collision(&body)?,
        })
    })();
    match req {
        Ok(r) => ApiReply::accepted(s.worker.call(Request::CreateDoc(r)).await),
        Err(e) => e.into(),
    }
}

pub async fn update(State(s): State<AppState>, Path(id): Path<String>, p: Params, body: Payload) -> ApiReply {
    let req = (|| -> Result<UpdateDoc, ApiError> {
        let mut doc = doc_ref(&id, &p)?;
        if let Some(u) = body.str_opt("uri")? {
            doc.uri = Some(u);
        }
        let tags = if body.0.get("tags").is_some_and(|v| !v.is_null()) { Some(body.list_opt("tags")?) } else { None };
        Ok(UpdateDoc {
            doc,
            content: body.str_opt("content")?,
            tags,
            expected_source_hash: body.str_opt("expectedSourceHash")?,
            expected_modified_at: body.str_opt("expectedModifiedAt")?,
        })
    })();
    match req {
        Ok(r) if r.content.is_none() && r.tags.is_none() => ApiError::validation("content or tags is required").into(),
        Ok(r) => ApiReply::ok(s.worker.call(Request::UpdateDoc(r)).await),
        Err(e) => e.into(),
    }
}

pub async fn deactivate(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    match doc_ref(&id, &p) {
        Ok(doc) => ApiReply::ok(s.worker.call(Request::DeactivateDoc { doc }).await),
        Err(e) => e.into(),
    }
}

pub async fn folder(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        Ok(Request::CreateFolder {
            collection: body.str_req("collection")?.trim().to_lowercase(),
            name: body.str_req("name")?,
            parent_path: body.str_opt("parentPath")?,
        })
    })();
    match req {
        Ok(r) => ApiReply::ok(s.worker.call(r).await),
        Err(e) => e.into(),
    }
}

pub async fn note_presets(State(s): State<AppState>) -> ApiReply {
    ApiReply::ok(s.worker.call(Request::NotePresets).await)
}
