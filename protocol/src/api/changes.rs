//! Change reads: `GET /api/changes` (`changes@1.0`), `GET /api/diff` (`document-diff@1.0`)
//! and `GET /api/impact` (`impact@1.0`). Identity, hashes and structure only: no source
//! body is ever retained or returned.

use serde::{Deserialize, Serialize};

/// The kind of a journaled change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Create,
    Update,
    Rename,
    Inactivate,
    Reactivate,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Create => "create",
            ChangeKind::Update => "update",
            ChangeKind::Rename => "rename",
            ChangeKind::Inactivate => "inactivate",
            ChangeKind::Reactivate => "reactivate",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Create, Self::Update, Self::Rename, Self::Inactivate, Self::Reactivate]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// A document's identity at one point of its history.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSnapshot {
    pub rel_path: String,
    pub docid: String,
    pub uri: String,
    pub source_hash: String,
    /// SHA-256 of the canonical text (`null` when it was not recorded).
    pub mirror_hash: Option<String>,
    pub active: bool,
}

/// Entries that appeared and disappeared between two versions.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SetChange {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Front-matter dates that appeared, disappeared or changed (by key).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct DateChange {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

/// What changed in a document's structure. Each list holds at most 50 entries; `truncated`
/// says when one was cut.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StructureDelta {
    /// Heading titles.
    pub headings: SetChange,
    /// Link targets as `wiki:<target>` or `markdown:<path>`.
    pub links: SetChange,
    /// Typed relations (svc records none yet: always empty).
    pub typed_edges: SetChange,
    /// Front-matter date keys.
    pub dates: DateChange,
    pub truncated: bool,
}

/// One entry of `changes@1.0`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeEntry {
    /// Opaque change id: the cursor positioned at this change (`since=<id>` reads what came after it).
    pub id: String,
    pub kind: ChangeKind,
    pub collection: String,
    /// When the change was indexed (ISO 8601).
    pub observed_at: String,
    /// The document before the change (`null` for a create).
    pub previous: Option<ChangeSnapshot>,
    /// The document after the change.
    pub current: Option<ChangeSnapshot>,
    pub structure_delta: StructureDelta,
}

/// Paging of `changes@1.0`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangesPage {
    /// Where the next page starts; `null` when this page reached the newest change.
    pub next_cursor: Option<String>,
    /// Reads from the oldest retained change.
    pub earliest_cursor: String,
    /// Positioned at the newest change: polling from it returns only what comes later.
    pub latest_cursor: String,
    /// The `since` cursor points before the retained journal: changes after it were dropped.
    pub cursor_expired: bool,
    /// More changes than `limit` matched.
    pub truncated: bool,
    /// Changes the request asked for were dropped by the journal's retention bound.
    pub retention_truncated: bool,
}

/// `GET /api/changes`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangesResponse {
    /// Always `1.0`.
    pub schema_version: String,
    /// Oldest first.
    pub changes: Vec<ChangeEntry>,
    pub page: ChangesPage,
    pub warnings: Vec<String>,
}

/// A document as the diff and impact reads name it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocIdentity {
    /// The docid (`#` and 8 hex digits).
    pub id: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    pub rel_path: String,
}

/// `document` of `document-diff@1.0`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffDocument {
    pub id: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    pub rel_path: String,
    pub active: bool,
}

/// Whether the asked change is still in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffStatus {
    /// The change is returned.
    Available,
    /// The change was dropped by the journal's retention bound.
    Expired,
    /// The journal holds no change of this document.
    Unavailable,
}

/// How much of a document's history the journal still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HistoryStatus {
    /// Every change since the document was first indexed.
    Available,
    /// Its older changes were dropped by retention.
    Partial,
    /// None of its changes are retained.
    Unavailable,
}

/// `content` of `document-diff@1.0`: bodies are never retained.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct DiffContent {
    /// Always `not_retained`.
    pub status: String,
    /// Always `journal_metadata_only`.
    pub reason: String,
}

/// `history` of `document-diff@1.0`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct DiffHistory {
    pub status: HistoryStatus,
    /// `complete_journal`, `retention_truncated` or `no_retained_changes`.
    pub reason: String,
}

/// `GET /api/diff`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffResponse {
    /// Always `1.0`.
    pub schema_version: String,
    pub status: DiffStatus,
    pub document: DiffDocument,
    /// The asked change (the document's newest without `change`); `null` when not available.
    pub change: Option<ChangeEntry>,
    pub content: DiffContent,
    pub history: DiffHistory,
    pub warnings: Vec<String>,
}

/// A document named by id and URI on an evidence path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct PathNode {
    pub id: String,
    pub uri: String,
}

/// One link on an evidence path: `source` links to `target`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceEdge {
    pub source: PathNode,
    pub target: PathNode,
    /// The link's kind.
    pub edge_type: super::LinkKind,
    /// Always `links_to`.
    pub relation_type: String,
    /// 1 for a link resolved in the index.
    pub confidence: f64,
    /// Always `parsed` (the link was read from the source's text).
    pub edge_source: String,
}

/// A document that depends on the root, with one path of links leading to it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImpactedDoc {
    pub document: DocIdentity,
    /// Links between it and the root (1 = links to the root directly).
    pub depth: u32,
    /// From this document to the root, one edge per hop.
    pub evidence_path: Vec<EvidenceEdge>,
}

/// `meta` of `impact@1.0`: the bounds in force and what they cut.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImpactMeta {
    pub max_depth: u32,
    pub max_nodes: u32,
    pub max_edges: u32,
    pub frontier_limit: u32,
    pub visited_limit: u32,
    pub returned_nodes: u64,
    pub returned_edges: u64,
    /// A bound stopped the walk before every dependent was found.
    pub truncated: bool,
    /// Which bounds bit, in words.
    pub warnings: Vec<String>,
}

/// `GET /api/impact`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImpactResponse {
    /// Always `1.0`.
    pub schema_version: String,
    pub root: DocIdentity,
    /// Nearest first.
    pub impacted: Vec<ImpactedDoc>,
    pub meta: ImpactMeta,
}
