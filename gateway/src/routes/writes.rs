//! Document writes: create, update, deactivate, folders, note presets, capture, refactors.

use super::call;
use crate::bodies::{
    CaptureBody, CreateDocBody, FolderBody, RefactorApplyBody, RefactorKind, RefactorPlanBody, UpdateDocBody,
};
use crate::error::ApiReply;
use crate::extract::{Body, Params};
use crate::routes::docs::doc_ref;
use crate::AppState;
use axum::extract::{Path, State};
use protocol::api::{
    CaptureResponse, CreatedDoc, CreatedFolder, DeactivatedDoc, NotePresetsResponse, RefactorApplied, RefactorPlan,
    UpdatedDoc,
};
use protocol::{ApiError, Call, ErrorEnvelope};

/// Sends a create or a capture: 202 when it wrote the note (indexed in the background), 200
/// when it answered an existing note without writing (`collisionPolicy: open_existing`), as
/// the reply `R` says.
async fn written<C: Call>(s: &AppState, r: Result<C, ApiError>) -> ApiReply
where
    C::Reply: OpenedExisting,
{
    let reply = match r {
        Ok(c) => s.worker.call(c).await,
        Err(e) => return e.into(),
    };
    match reply.and_then(|b| b.decode().map(|reply| (reply.opened_existing(), b))) {
        Ok((true, b)) => ApiReply::ok(Ok(b)),
        Ok((false, b)) => ApiReply::accepted(Ok(b)),
        Err(e) => e.into(),
    }
}

/// A write's reply that tells whether it opened an existing note instead of writing one.
trait OpenedExisting: serde::de::DeserializeOwned {
    fn opened_existing(&self) -> bool;
}

impl OpenedExisting for CreatedDoc {
    fn opened_existing(&self) -> bool {
        self.opened_existing
    }
}

impl OpenedExisting for CaptureResponse {
    fn opened_existing(&self) -> bool {
        self.opened_existing
    }
}

/// Creates a note (202; 200 with `collisionPolicy: open_existing` when it exists).
#[utoipa::path(post, path = "/api/docs", tag = "writes", request_body = CreateDocBody,
    responses((status = 202, description = "Written; indexing follows", body = CreatedDoc),
              (status = 200, description = "The existing note (open_existing)", body = CreatedDoc),
              (status = 404, description = "Unknown collection or preset", body = ErrorEnvelope),
              (status = 409, description = "The file exists", body = ErrorEnvelope)))]
pub async fn create(State(s): State<AppState>, Body(b): Body<CreateDocBody>) -> ApiReply {
    written(&s, b.into_request()).await
}

/// Replaces a note's content or tags, guarded by `expectedSourceHash`.
#[utoipa::path(put, path = "/api/docs/{id}", tag = "writes", request_body = UpdateDocBody,
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Written", body = UpdatedDoc),
              (status = 404, description = "Unknown document", body = ErrorEnvelope),
              (status = 409, description = "The file changed since the client read it", body = ErrorEnvelope)))]
pub async fn update(
    State(s): State<AppState>,
    Path(id): Path<String>,
    p: Params,
    Body(b): Body<UpdateDocBody>,
) -> ApiReply {
    call(&s, doc_ref(&id, &p).and_then(|doc| b.into_request(doc))).await
}

/// Takes a note out of the index without deleting its file.
#[utoipa::path(post, path = "/api/docs/{id}/deactivate", tag = "writes",
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Deactivated", body = DeactivatedDoc),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn deactivate(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).map(|doc| protocol::DeactivateDoc { doc })).await
}

/// Creates a folder inside a collection.
#[utoipa::path(post, path = "/api/folders", tag = "writes", request_body = FolderBody,
    responses((status = 200, description = "Created", body = CreatedFolder),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope),
              (status = 409, description = "It exists", body = ErrorEnvelope)))]
pub async fn folder(State(s): State<AppState>, Body(b): Body<FolderBody>) -> ApiReply {
    let req =
        b.into_parts().map(|(collection, name, parent_path)| protocol::CreateFolder { collection, name, parent_path });
    call(&s, req).await
}

/// The note presets `POST /api/docs` and `/api/capture` accept.
#[utoipa::path(get, path = "/api/note-presets", tag = "writes",
    responses((status = 200, description = "The presets", body = NotePresetsResponse)))]
pub async fn note_presets(State(s): State<AppState>) -> ApiReply {
    ApiReply::ok(s.worker.call(protocol::ListNotePresets).await)
}

/// Captures a note with provenance (202; 200 when an existing note is answered).
#[utoipa::path(post, path = "/api/capture", tag = "writes", request_body = CaptureBody,
    responses((status = 202, description = "Written; indexing follows", body = CaptureResponse),
              (status = 200, description = "The existing note (open_existing)", body = CaptureResponse),
              (status = 404, description = "Unknown collection or preset", body = ErrorEnvelope),
              (status = 409, description = "The file exists", body = ErrorEnvelope)))]
pub async fn capture(State(s): State<AppState>, Body(b): Body<CaptureBody>) -> ApiReply {
    written(&s, b.into_request()).await
}

/// Previews a rename, move or duplicate: the files and links it would change.
#[utoipa::path(post, path = "/api/docs/{id}/refactor-plan", tag = "writes", request_body = RefactorPlanBody,
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "The plan and its digest", body = RefactorPlan),
              (status = 404, description = "Unknown document", body = ErrorEnvelope),
              (status = 409, description = "The target exists", body = ErrorEnvelope)))]
pub async fn refactor_plan(
    State(s): State<AppState>,
    Path(id): Path<String>,
    p: Params,
    Body(b): Body<RefactorPlanBody>,
) -> ApiReply {
    let req = doc_ref(&id, &p).and_then(|doc| b.into_parts(doc)).map(|(doc, op)| protocol::PlanRefactor { doc, op });
    call(&s, req).await
}

async fn refactor_apply(s: AppState, id: String, p: Params, b: RefactorApplyBody, kind: RefactorKind) -> ApiReply {
    let req = doc_ref(&id, &p)
        .and_then(|doc| b.into_parts(kind, doc))
        .map(|(doc, op, confirm)| protocol::ApplyRefactor { doc, op, confirm });
    call(&s, req).await
}

/// Applies a rename (confirmed by its plan's digest).
#[utoipa::path(post, path = "/api/docs/{id}/rename", tag = "writes", request_body = RefactorApplyBody,
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Applied", body = RefactorApplied),
              (status = 404, description = "Unknown document", body = ErrorEnvelope),
              (status = 409, description = "Stale plan or the target exists", body = ErrorEnvelope)))]
pub async fn rename(
    State(s): State<AppState>,
    Path(id): Path<String>,
    p: Params,
    Body(b): Body<RefactorApplyBody>,
) -> ApiReply {
    refactor_apply(s, id, p, b, RefactorKind::Rename).await
}

/// Applies a move to another folder of the collection.
#[utoipa::path(post, path = "/api/docs/{id}/move", tag = "writes", request_body = RefactorApplyBody,
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Applied", body = RefactorApplied),
              (status = 404, description = "Unknown document", body = ErrorEnvelope),
              (status = 409, description = "Stale plan or the target exists", body = ErrorEnvelope)))]
pub async fn move_doc(
    State(s): State<AppState>,
    Path(id): Path<String>,
    p: Params,
    Body(b): Body<RefactorApplyBody>,
) -> ApiReply {
    refactor_apply(s, id, p, b, RefactorKind::Move).await
}

/// Copies a note (links to the original are left alone).
#[utoipa::path(post, path = "/api/docs/{id}/duplicate", tag = "writes", request_body = RefactorApplyBody,
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Applied", body = RefactorApplied),
              (status = 404, description = "Unknown document", body = ErrorEnvelope),
              (status = 409, description = "The target exists", body = ErrorEnvelope)))]
pub async fn duplicate(
    State(s): State<AppState>,
    Path(id): Path<String>,
    p: Params,
    Body(b): Body<RefactorApplyBody>,
) -> ApiReply {
    refactor_apply(s, id, p, b, RefactorKind::Duplicate).await
}
