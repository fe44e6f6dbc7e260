//! Bodies of the document writes: create, update, folders, capture and refactors.

use super::{collection_req, non_blank, required, tags, StringList};
use protocol::{
    ApiError, ApplyConfirmation, CollectionName, CollisionPolicy, CreateDoc, DocRef, RefactorOp, UpdateDoc,
};
use serde::Deserialize;
use utoipa::ToSchema;

/// `collisionPolicy`: what to do when the note's file exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollisionPolicyBody {
    /// 409 `CONFLICT`.
    Error,
    /// Answer with the existing note (200), write nothing.
    OpenExisting,
    /// Write `name-2.md`, `name-3.md`, ...
    CreateWithSuffix,
}

impl From<CollisionPolicyBody> for CollisionPolicy {
    fn from(p: CollisionPolicyBody) -> Self {
        match p {
            CollisionPolicyBody::Error => CollisionPolicy::Error,
            CollisionPolicyBody::OpenExisting => CollisionPolicy::OpenExisting,
            CollisionPolicyBody::CreateWithSuffix => CollisionPolicy::CreateWithSuffix,
        }
    }
}

/// `POST /api/docs`: the raw form (`relPath`, `content`, `overwrite`) or the richer one
/// (`title`, `folderPath`, `presetId`, `collisionPolicy`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateDocBody {
    #[schema(required = true)]
    pub collection: Option<String>,
    /// The note's path in the collection (`relPath` or `title` is required).
    pub rel_path: Option<String>,
    pub title: Option<String>,
    /// A folder inside the collection (relative; absolute paths are refused).
    pub folder_path: Option<String>,
    pub content: Option<String>,
    pub tags: Option<StringList>,
    pub preset_id: Option<String>,
    /// Replace an existing file (the raw form).
    pub overwrite: Option<bool>,
    pub collision_policy: Option<CollisionPolicyBody>,
}

impl CreateDocBody {
    pub fn into_request(self) -> Result<CreateDoc, ApiError> {
        let title = non_blank(self.title);
        if self.rel_path.is_none() && title.is_none() {
            return Err(ApiError::validation("relPath (or title) is required"));
        }
        let policy = self.collision_policy.map_or(CollisionPolicy::Error, CollisionPolicy::from);
        Ok(CreateDoc {
            collection: collection_req(self.collection)?,
            rel_path: self.rel_path,
            title,
            folder_path: self.folder_path,
            content: self.content,
            tags: tags(self.tags)?,
            preset_id: self.preset_id,
            collision: if self.overwrite == Some(true) { CollisionPolicy::Overwrite } else { policy },
        })
    }
}

/// `PUT /api/docs/{id}`: new content, new tags, or both.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateDocBody {
    /// Names the document instead of the path's id.
    pub uri: Option<String>,
    pub content: Option<String>,
    /// Replaces the note's front-matter tags.
    pub tags: Option<StringList>,
    /// SHA-256 hex of the file the client last saw: 409 when the file changed since.
    pub expected_source_hash: Option<String>,
    /// The `modifiedAt` the client last saw (ISO 8601).
    pub expected_modified_at: Option<String>,
}

impl UpdateDocBody {
    pub fn into_request(self, doc: DocRef) -> Result<UpdateDoc, ApiError> {
        if self.content.is_none() && self.tags.is_none() {
            return Err(ApiError::validation("content or tags is required"));
        }
        let doc = doc.or_uri(self.uri);
        Ok(UpdateDoc {
            doc,
            content: self.content,
            tags: self.tags.map(|t| tags(Some(t))).transpose()?,
            expected_source_hash: self.expected_source_hash,
            expected_modified_at: self.expected_modified_at,
        })
    }
}

/// `POST /api/folders`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderBody {
    #[schema(required = true)]
    pub collection: Option<String>,
    #[schema(required = true)]
    pub name: Option<String>,
    /// The folder to create it in (relative; absolute paths are refused).
    pub parent_path: Option<String>,
}

impl FolderBody {
    /// `(collection, name, parent_path)`.
    pub fn into_parts(self) -> Result<(CollectionName, String, Option<String>), ApiError> {
        Ok((collection_req(self.collection)?, required("name", self.name)?, self.parent_path))
    }
}

/// `source.kind` of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Direct,
    Web,
    Email,
    Meeting,
    Chat,
    File,
    Api,
    Unknown,
}

impl SourceKind {
    fn as_str(self) -> &'static str {
        match self {
            SourceKind::Direct => "direct",
            SourceKind::Web => "web",
            SourceKind::Email => "email",
            SourceKind::Meeting => "meeting",
            SourceKind::Chat => "chat",
            SourceKind::File => "file",
            SourceKind::Api => "api",
            SourceKind::Unknown => "unknown",
        }
    }
}

/// The longest `source` value.
const MAX_SOURCE_VALUE: usize = 2048;

/// Where a captured note came from (closed: unknown fields are refused).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureSource {
    pub kind: Option<SourceKind>,
    #[schema(max_length = 2048)]
    pub title: Option<String>,
    #[schema(max_length = 2048)]
    pub url: Option<String>,
    #[schema(max_length = 2048)]
    pub uri: Option<String>,
    #[schema(max_length = 2048)]
    pub docid: Option<String>,
    #[schema(max_length = 2048)]
    pub mime: Option<String>,
    #[schema(max_length = 2048)]
    pub ext: Option<String>,
    #[schema(max_length = 2048)]
    pub author: Option<String>,
    #[schema(max_length = 2048)]
    pub canonical_url: Option<String>,
    #[schema(max_length = 2048)]
    pub site: Option<String>,
    #[schema(max_length = 2048)]
    pub published_at: Option<String>,
    #[schema(max_length = 2048)]
    pub observed_at: Option<String>,
    #[schema(max_length = 2048)]
    pub external_id: Option<String>,
}

impl CaptureSource {
    /// The fields as `(key, value)` pairs in the contract's order, `kind` first (default `direct`).
    fn into_pairs(self) -> Result<Vec<(String, String)>, ApiError> {
        let kind = self.kind.unwrap_or(SourceKind::Direct).as_str().to_string();
        let fields = [
            ("title", self.title),
            ("url", self.url),
            ("uri", self.uri),
            ("docid", self.docid),
            ("mime", self.mime),
            ("ext", self.ext),
            ("author", self.author),
            ("canonicalUrl", self.canonical_url),
            ("site", self.site),
            ("publishedAt", self.published_at),
            ("observedAt", self.observed_at),
            ("externalId", self.external_id),
        ];
        let mut out = vec![("kind".to_string(), kind)];
        for (key, value) in fields {
            match value {
                Some(v) if v.len() > MAX_SOURCE_VALUE => {
                    return Err(ApiError::validation(format!("source.{key} must be at most {MAX_SOURCE_VALUE} bytes")))
                }
                Some(v) => out.push((key.to_string(), v)),
                None => {}
            }
        }
        Ok(out)
    }
}

/// `POST /api/capture`: a note with provenance. A capture never replaces a file.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureBody {
    #[schema(required = true)]
    pub collection: Option<String>,
    pub content: Option<String>,
    pub title: Option<String>,
    pub rel_path: Option<String>,
    pub folder_path: Option<String>,
    /// Default: open_existing for a generated path, error for a given one.
    pub collision_policy: Option<CollisionPolicyBody>,
    pub preset_id: Option<String>,
    pub tags: Option<StringList>,
    pub source: Option<CaptureSource>,
    /// Refused: use `collisionPolicy`.
    #[serde(default)]
    #[schema(ignore)]
    pub overwrite: Option<serde::de::IgnoredAny>,
}

impl CaptureBody {
    pub fn into_request(self) -> Result<protocol::Capture, ApiError> {
        if self.overwrite.is_some() {
            return Err(ApiError::validation(
                "capture does not accept overwrite: a capture never replaces a file (use collisionPolicy)",
            ));
        }
        Ok(protocol::Capture {
            collection: collection_req(self.collection)?,
            content: self.content,
            title: non_blank(self.title),
            rel_path: self.rel_path,
            folder_path: self.folder_path,
            collision: self.collision_policy.map(CollisionPolicy::from),
            preset_id: self.preset_id,
            tags: tags(self.tags)?,
            source: self.source.unwrap_or_default().into_pairs()?,
        })
    }
}

/// The operation a refactor plan previews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefactorKind {
    Rename,
    Move,
    Duplicate,
}

/// The fields every refactor body shares: the new file name (rename: required) and the
/// folder to move or copy into (move: required; relative).
struct RefactorTarget {
    name: Option<String>,
    folder_path: Option<String>,
}

impl RefactorTarget {
    fn op(self, kind: RefactorKind) -> Result<RefactorOp, ApiError> {
        Ok(match kind {
            RefactorKind::Rename => RefactorOp::Rename { name: required("name", self.name)? },
            RefactorKind::Move => RefactorOp::Move {
                folder_path: self.folder_path.ok_or_else(|| ApiError::validation("folderPath is required"))?,
                name: self.name,
            },
            RefactorKind::Duplicate => RefactorOp::Duplicate { folder_path: self.folder_path, name: self.name },
        })
    }
}

/// `POST /api/docs/{id}/refactor-plan`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorPlanBody {
    #[schema(required = true)]
    pub operation: Option<RefactorKind>,
    pub uri: Option<String>,
    pub name: Option<String>,
    pub folder_path: Option<String>,
}

impl RefactorPlanBody {
    pub fn into_parts(self, doc: DocRef) -> Result<(DocRef, RefactorOp), ApiError> {
        let kind = self.operation.ok_or_else(|| ApiError::validation("operation is required"))?;
        let doc = doc.or_uri(self.uri);
        let target = RefactorTarget { name: self.name, folder_path: self.folder_path };
        Ok((doc, target.op(kind)?))
    }
}

/// `POST /api/docs/{id}/rename|move|duplicate`: the operation's fields and the confirmation
/// of the plan (`planDigest`, `schemaVersion: "1.0"`, `confirmation: "apply"`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorApplyBody {
    pub uri: Option<String>,
    pub name: Option<String>,
    pub folder_path: Option<String>,
    pub plan_digest: Option<String>,
    pub schema_version: Option<String>,
    pub confirmation: Option<String>,
}

impl RefactorApplyBody {
    pub fn into_parts(
        self,
        kind: RefactorKind,
        doc: DocRef,
    ) -> Result<(DocRef, RefactorOp, ApplyConfirmation), ApiError> {
        let doc = doc.or_uri(self.uri);
        let confirm = ApplyConfirmation {
            plan_digest: self.plan_digest,
            schema_version: self.schema_version,
            confirmation: self.confirmation,
        };
        let target = RefactorTarget { name: self.name, folder_path: self.folder_path };
        Ok((doc, target.op(kind)?, confirm))
    }
}
