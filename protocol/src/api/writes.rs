//! Note writes: create, update, deactivate, folders, capture and note presets.

use super::StringMap;
use serde::{Deserialize, Serialize};

/// `POST /api/docs`: 202 when the note was written, 200 when `open_existing` found one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedDoc {
    /// `file://` URI of the file.
    pub uri: String,
    pub path: String,
    pub rel_path: String,
    /// `svc://` URI of the note.
    pub doc_uri: String,
    /// `null` when the note is not (yet) indexed.
    pub docid: Option<String>,
    /// The finished `sync` job that indexed the note; absent when nothing was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    pub created: bool,
    pub opened_existing: bool,
    pub created_with_suffix: bool,
    pub note: String,
}

/// A file version: what `expectedSourceHash` / `expectedModifiedAt` compare against.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocVersion {
    /// SHA-256 hex of the file's bytes.
    pub source_hash: String,
    pub modified_at: String,
}

/// `PUT /api/docs/{id}`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatedDoc {
    pub success: bool,
    /// The new docid.
    pub doc_id: String,
    /// `file://` URI of the file.
    pub uri: String,
    pub doc_uri: String,
    pub path: String,
    pub rel_path: String,
    pub job_id: String,
    pub version: DocVersion,
}

/// `error.details` of the 409 `CONFLICT` of `PUT /api/docs/{id}` (a stale expectation).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionConflictDetails {
    pub current_version: DocVersion,
}

/// `POST /api/docs/{id}/deactivate`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeactivatedDoc {
    pub success: bool,
    pub doc_id: String,
    /// `null` when the collection is no longer configured.
    pub path: Option<String>,
    pub warning: String,
}

/// `POST /api/folders`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedFolder {
    pub success: bool,
    pub collection: String,
    pub folder_path: String,
    pub path: String,
}

/// `sync.status` of `POST /api/capture`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaptureSyncStatus {
    /// Nothing was written.
    Skipped,
    /// A background `sync` job indexes the note.
    Pending,
}

/// `sync` of `POST /api/capture`: `{status: skipped, reason}` or `{status: pending, jobId}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureSync {
    pub status: CaptureSyncStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

/// `embed` of `POST /api/capture`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CaptureEmbed {
    /// Always `not_requested`.
    pub status: String,
}

/// `collisionPolicyResult` of `POST /api/capture`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollisionPolicyResult {
    Created,
    CreatedWithSuffix,
    OpenedExisting,
}

/// `POST /api/capture`: 202 when the note was written, 200 when an existing one was opened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureResponse {
    /// `svc://` URI of the note.
    pub uri: String,
    pub file_uri: String,
    pub collection: String,
    pub rel_path: String,
    pub abs_path: String,
    pub created: bool,
    pub opened_existing: bool,
    pub created_with_suffix: bool,
    /// SHA-256 hex of the canonical content.
    pub content_hash: String,
    /// The `source:` front-matter map as written (ending with `capturedAt`).
    #[schema(value_type = HashMap<String, String>)]
    pub source: StringMap,
    pub tags: Vec<String>,
    pub sync: CaptureSync,
    pub embed: CaptureEmbed,
    pub collision_policy_result: CollisionPolicyResult,
}

/// The extra front matter of a note preset: `{}` or `{type}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct PresetFrontmatter {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// An entry of `GET /api/note-presets`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotePreset {
    pub id: String,
    pub label: String,
    pub description: String,
    pub default_tags: Vec<String>,
    pub frontmatter: PresetFrontmatter,
    /// The scaffold for the title `Untitled`.
    pub preview: String,
}

/// `GET /api/note-presets`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct NotePresetsResponse {
    pub presets: Vec<NotePreset>,
}
