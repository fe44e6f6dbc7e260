//! Document writes: create, update, deactivate, folders, note presets.

use super::call;
use crate::error::ApiReply;
use crate::extract::{Params, Payload};
use crate::routes::docs::doc_ref;
use crate::AppState;
use axum::extract::{Path, State};
use protocol::{ApiError, ApplyConfirmation, CollisionPolicy, CreateDoc, RefactorOp, Request, UpdateDoc};

fn collision(body: &Payload) -> Result<CollisionPolicy, ApiError> {
    let overwrite = body.bool_opt("overwrite")?.unwrap_or(false);
    let policy = match body.str_opt("collisionPolicy")?.as_deref() {
        None => CollisionPolicy::Error,
        Some("error") => CollisionPolicy::Error,
        Some("open_existing") => CollisionPolicy::OpenExisting,
        Some("create_with_suffix") => CollisionPolicy::CreateWithSuffix,
        Some(other) => {
            return Err(ApiError::validation(format!(
                "Unknown collisionPolicy {other:?}: use error, open_existing or create_with_suffix"
            )))
        }
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
    call(&s, doc_ref(&id, &p).map(|doc| Request::DeactivateDoc { doc })).await
}

pub async fn folder(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        Ok(Request::CreateFolder {
            collection: body.str_req("collection")?.trim().to_lowercase(),
            name: body.str_req("name")?,
            parent_path: body.str_opt("parentPath")?,
        })
    })();
    call(&s, req).await
}

pub async fn note_presets(State(s): State<AppState>) -> ApiReply {
    ApiReply::ok(s.worker.call(Request::NotePresets).await)
}

const SOURCE_KINDS: &[&str] = &["direct", "web", "email", "meeting", "chat", "file", "api", "unknown"];
const SOURCE_FIELDS: &[&str] = &[
    "kind",
    "title",
    "url",
    "uri",
    "docid",
    "mime",
    "ext",
    "author",
    "canonicalUrl",
    "site",
    "publishedAt",
    "observedAt",
    "externalId",
];
const MAX_SOURCE_VALUE: usize = 2048;

fn source(body: &Payload) -> Result<Vec<(String, String)>, ApiError> {
    let Some(v) = body.0.get("source").filter(|v| !v.is_null()) else {
        return Ok(vec![("kind".into(), "direct".into())]);
    };
    let obj = v.as_object().ok_or_else(|| ApiError::validation("source must be an object"))?;
    if let Some(k) = obj.keys().find(|k| !SOURCE_FIELDS.contains(&k.as_str())) {
        return Err(ApiError::validation(format!("Unknown source field {k:?}")));
    }
    let mut out = Vec::new();
    for key in SOURCE_FIELDS {
        match obj.get(*key) {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(s)) if s.len() <= MAX_SOURCE_VALUE && !s.contains('\0') => {
                out.push((key.to_string(), s.clone()))
            }
            Some(_) => {
                return Err(ApiError::validation(format!(
                    "source.{key} must be a string of at most {MAX_SOURCE_VALUE} bytes"
                )))
            }
        }
    }
    match out.iter().find(|(k, _)| k == "kind") {
        Some((_, kind)) if !SOURCE_KINDS.contains(&kind.as_str()) => {
            Err(ApiError::validation(format!("source.kind must be one of {}", SOURCE_KINDS.join(", "))))
        }
        Some(_) => Ok(out),
        None => {
            out.insert(0, ("kind".into(), "direct".into()));
            Ok(out)
        }
    }
}

pub async fn capture(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<protocol::Capture, ApiError> {
        if body.0.contains_key("overwrite") {
            return Err(ApiError::validation(
                "capture does not accept overwrite: a capture never replaces a file (use collisionPolicy)",
            ));
        }
        let collision = match body.str_opt("collisionPolicy")?.as_deref() {
            None => None,
            Some("error") => Some(CollisionPolicy::Error),
            Some("open_existing") => Some(CollisionPolicy::OpenExisting),
            Some("create_with_suffix") => Some(CollisionPolicy::CreateWithSuffix),
            Some(other) => return Err(ApiError::validation(format!("Unknown collisionPolicy {other:?}"))),
        };
        Ok(protocol::Capture {
            collection: body.str_req("collection")?.trim().to_lowercase(),
            content: body.str_opt("content")?,
            title: body.str_opt("title")?.filter(|t| !t.trim().is_empty()),
            rel_path: body.str_opt("relPath")?,
            folder_path: body.str_opt("folderPath")?,
            collision,
            preset_id: body.str_opt("presetId")?,
            tags: body.list_opt("tags")?,
            source: source(&body)?,
        })
    })();
    match req {
        Ok(r) => ApiReply::accepted(s.worker.call(Request::Capture(r)).await),
        Err(e) => e.into(),
    }
}

/// The operation of a refactor body: `rename {name}`, `move {folderPath, name?}`, `duplicate {folderPath?, name?}`.
fn refactor_op(kind: &str, body: &Payload) -> Result<RefactorOp, ApiError> {
    match kind {
        "rename" => Ok(RefactorOp::Rename { name: body.str_req("name")? }),
        "move" => Ok(RefactorOp::Move {
            folder_path: body.str_opt("folderPath")?.ok_or_else(|| ApiError::validation("folderPath is required"))?,
            name: body.str_opt("name")?,
        }),
        "duplicate" => {
            Ok(RefactorOp::Duplicate { folder_path: body.str_opt("folderPath")?, name: body.str_opt("name")? })
        }
        other => Err(ApiError::validation(format!("Unsupported operation {other:?}: use rename, move or duplicate"))),
    }
}

fn refactor_doc(id: &str, p: &Params, body: &Payload) -> Result<protocol::DocRef, ApiError> {
    let mut doc = doc_ref(id, p)?;
    if let Some(u) = body.str_opt("uri")? {
        doc.uri = Some(u);
    }
    Ok(doc)
}

pub async fn refactor_plan(State(s): State<AppState>, Path(id): Path<String>, p: Params, body: Payload) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        let kind = body.str_req("operation")?;
        Ok(Request::RefactorPlan { doc: refactor_doc(&id, &p, &body)?, op: refactor_op(&kind, &body)? })
    })();
    call(&s, req).await
}

async fn refactor_apply(s: AppState, id: String, p: Params, body: Payload, kind: &str) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        Ok(Request::RefactorApply {
            doc: refactor_doc(&id, &p, &body)?,
            op: refactor_op(kind, &body)?,
            confirm: ApplyConfirmation {
                plan_digest: body.str_opt("planDigest")?,
                schema_version: body.str_opt("schemaVersion")?,
                confirmation: body.str_opt("confirmation")?,
            },
        })
    })();
    call(&s, req).await
}

pub async fn rename(State(s): State<AppState>, Path(id): Path<String>, p: Params, body: Payload) -> ApiReply {
    refactor_apply(s, id, p, body, "rename").await
}

pub async fn move_doc(State(s): State<AppState>, Path(id): Path<String>, p: Params, body: Payload) -> ApiReply {
    refactor_apply(s, id, p, body, "move").await
}

pub async fn duplicate(State(s): State<AppState>, Path(id): Path<String>, p: Params, body: Payload) -> ApiReply {
    refactor_apply(s, id, p, body, "duplicate").await
}
