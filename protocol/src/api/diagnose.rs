//! `POST /api/query/diagnose`: the closed `query-diagnose@1.0` shape.

use crate::messages::QueryModeKind;
use serde::{Deserialize, Serialize};

/// `target.status` of a diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetStatus {
    NotFound,
    Inactive,
    NoIndexedContent,
    FilteredOut,
    Diagnosed,
}

/// What a document's content type was read from (`target.contentTypeSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ContentTypeSource {
    /// Front-matter `type` names a configured content type.
    FrontmatterType,
    /// The longest configured prefix of the document's path.
    Prefix,
    /// The path or the file extension (`code`, `meeting`, `spec`, `notes`).
    PathExt,
    /// None of the above: `prose`.
    Fallback,
}

/// `target` of `POST /api/query/diagnose`. Every key is always there: `null` (or empty)
/// where there is no document to say it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnoseTarget {
    /// The request's `target`, as sent.
    #[serde(rename = "ref")]
    pub target_ref: String,
    pub status: TargetStatus,
    pub docid: Option<String>,
    pub uri: Option<String>,
    pub title: Option<String>,
    /// The content type id (`prose`, `meeting`, a configured id…).
    pub content_type: Option<String>,
    pub content_type_source: Option<ContentTypeSource>,
    pub categories: Vec<String>,
    /// Always empty: there is no graph stage.
    pub graph_hints: Vec<String>,
    /// The fingerprint of the content-type rules the ranking used (`none` without rules).
    pub content_type_rules_fingerprint: Option<String>,
    /// Whether the document's indexed content type was resolved under those rules.
    pub content_type_fingerprint_matches: Option<bool>,
    /// The additive score the target's content type adds (absent when no rule boosts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type_boost: Option<f64>,
    pub mirror_hash: Option<String>,
    pub chunk_count: Option<u64>,
    /// The request filters that shut the target out, in request-field order.
    pub filter_reasons: Vec<String>,
}

/// A pipeline stage's `id`, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StageId {
    Bm25,
    Vector,
    Fusion,
    Graph,
    Rerank,
}

/// Whether a stage ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StageStatus {
    Active,
    Skipped,
}

/// Why the target did not go on from a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    NotInCandidateSet,
    BelowCutoff,
    Skipped,
}

/// An entry of `stages` of `POST /api/query/diagnose`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnoseStage {
    pub id: StageId,
    pub status: StageStatus,
    pub source_count: u64,
    pub present: bool,
    /// 1-based rank of the target in the stage's list.
    pub rank: Option<u64>,
    /// The target's score in the stage (an `f32` widened to `f64`).
    pub score: Option<f64>,
    pub survived: bool,
    /// `null` when the target went on.
    pub drop_reason: Option<DropReason>,
    /// A sentence for a non-null `dropReason`; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `chunk` of `POST /api/query/diagnose`: the target's chunk a result would show.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnoseChunk {
    pub seq: u32,
    pub start_line: u32,
    pub end_line: u32,
    /// Always `null`: the catalog keeps no chunk language.
    pub language: Option<String>,
}

/// `meta.mode` of `POST /api/query/diagnose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiagnoseMode {
    Bm25Only,
    Hybrid,
}

/// `meta` of `POST /api/query/diagnose`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnoseMeta {
    pub mode: DiagnoseMode,
    pub vectors_used: bool,
    pub reranked: bool,
    pub total_results: u64,
    /// The distinct `queryModes` kinds of the request, in order; absent without any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_modes: Option<Vec<QueryModeKind>>,
}

/// `POST /api/query/diagnose`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnoseResponse {
    /// `1.0`
    pub schema_version: String,
    pub query: String,
    pub target: DiagnoseTarget,
    /// Empty when the target was not found.
    pub stages: Vec<DiagnoseStage>,
    /// `null` when the target has no chunk.
    pub chunk: Option<DiagnoseChunk>,
    pub meta: DiagnoseMeta,
}
