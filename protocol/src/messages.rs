//! The payloads of the requests the gateway sends to the worker (the frames that carry them
//! are in `frame.rs`, [`crate::Request`]'s variants in `requests.rs`, their replies paired in
//! `call.rs`).
//!
//! Every request has already been validated by the gateway: numbers are clamped, tags
//! parsed ([`Tag`]), dates parsed into epoch milliseconds.

use crate::{ChangeCursor, CollectionName, Tag};
use serde::{Deserialize, Serialize};

/// A document named by docid (`#abcdef12`) or by `svc://` URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DocRef {
    Docid(String),
    Uri(String),
}

/// A document reference that is neither a docid nor a `svc://` URI.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a document reference: use a docid (#abcd1234, the # sent as %23 or left out) or a svc:// URI")]
pub struct InvalidDocRef(pub String);

impl DocRef {
    /// A docid: `#` and 6 to 64 hex digits (the `#` may be left out), lowercased. The one
    /// parser of a docid, for HTTP, MCP and the CLI alike.
    pub fn docid(raw: &str) -> Result<DocRef, InvalidDocRef> {
        let hex = raw.strip_prefix('#').unwrap_or(raw);
        if (6..=64).contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            Ok(DocRef::Docid(format!("#{}", hex.to_ascii_lowercase())))
        } else {
            Err(InvalidDocRef(raw.to_string()))
        }
    }

    /// A docid ([`DocRef::docid`]) or a `svc://` URI (the worker resolves its path).
    pub fn parse(raw: &str) -> Result<DocRef, InvalidDocRef> {
        match raw.strip_prefix(crate::uri::SCHEME) {
            Some(rest) if !rest.is_empty() => Ok(DocRef::Uri(raw.to_string())),
            Some(_) => Err(InvalidDocRef(raw.to_string())),
            None => DocRef::docid(raw),
        }
    }

    /// The reference as a client wrote it (normalized): the docid or the URI.
    pub fn as_str(&self) -> &str {
        match self {
            DocRef::Docid(d) | DocRef::Uri(d) => d,
        }
    }

    /// The URI wins when a request gives both: a renamed file keeps its docid's bytes but
    /// the URI picks the live document.
    pub fn or_uri(self, uri: Option<String>) -> Self {
        match uri.filter(|u| !u.is_empty()) {
            Some(u) => DocRef::Uri(u),
            None => self,
        }
    }
}

/// A link's `linkType` (and the `type` filter of `/api/doc/{id}/links`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    /// `[[Target]]`
    Wiki,
    /// `[text](path.md)`
    Markdown,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Wiki => "wiki",
            LinkKind::Markdown => "markdown",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "wiki" => Some(LinkKind::Wiki),
            "markdown" => Some(LinkKind::Markdown),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct AddCollection {
    pub path: String,
    pub name: Option<String>,
    pub pattern: Option<String>,
    pub include: Option<String>,
    pub exclude: Option<String>,
    pub git_pull: bool,
    /// Follow the folder's changes as they happen; `None` means yes.
    pub watch: Option<bool>,
    /// The language the collection's notes are written in, for those that do not declare one.
    pub lang: Option<String>,
    /// Share it with the team this server joined (`--cluster`, `--team`).
    pub shared: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SearchFilters {
    pub collection: Option<CollectionName>,
    /// Inclusive lower bound on the modified time, epoch milliseconds.
    pub since_ms: Option<i64>,
    /// Inclusive upper bound on the modified time, epoch milliseconds.
    pub until_ms: Option<i64>,
    /// Lowercased; any-match.
    pub categories: Vec<String>,
    /// Case-insensitive substring.
    pub author: Option<String>,
    /// The document must have all.
    pub tags_all: Vec<Tag>,
    /// The document must have at least one.
    pub tags_any: Vec<Tag>,
    /// Code files in any of these languages (sorted, no duplicates).
    pub languages: Vec<crate::source_kind::CodeLanguage>,
}

/// `POST /api/ask` without `verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskRequest {
    /// The retrieval; its `limit` is how many results the reply lists.
    pub query: QueryRequest,
    pub max_answer_tokens: u32,
    /// Send the answer's text as it is generated ([`ServerFrame::Partial`]) before the reply
    /// (never in verified mode: a draft is only shown once verified).
    pub stream: bool,
    /// Verified mode: the draft comes from one closed Context Capsule and is checked claim by
    /// claim.
    pub verified: Option<VerifiedAsk>,
}

/// The settings of a verified ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifiedAsk {
    /// The capsule's token budget (default 12,000).
    pub budget_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: u32,
    /// Kept as the client sent it (f64), so echoes and comparisons see the same number.
    pub min_score: Option<f64>,
    pub filters: SearchFilters,
    /// Steers snippet selection; never searched.
    pub intent: Option<String>,
    /// Lowercased terms; a result containing any of them is dropped.
    pub exclude: Vec<String>,
    /// How many candidates to consider before filtering and cutting to `limit`.
    pub candidate_limit: Option<u32>,
}

/// How a `queryModes` entry is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueryModeKind {
    /// A keyword variant (BM25).
    Term,
    /// A rephrasing (vector).
    Intent,
    /// A hypothetical answer passage (vector).
    Hyde,
}

impl QueryModeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryModeKind::Term => "term",
            QueryModeKind::Intent => "intent",
            QueryModeKind::Hyde => "hyde",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Term, Self::Intent, Self::Hyde].into_iter().find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryMode {
    pub kind: QueryModeKind,
    pub text: String,
}

/// `POST /api/query` (hybrid) and the query part of `/api/query/diagnose`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct QueryRequest {
    pub search: SearchRequest,
    pub lang: Option<String>,
    /// Generate query variants with the generator. Off unless the request asks
    /// (`noExpand: false`): on SciFact it cost 30x the latency and changed no ranking
    /// (docs/retrieval.md).
    pub expand: bool,
    pub no_rerank: bool,
    /// Given variants replace generated expansion.
    pub query_modes: Vec<QueryMode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarQuery {
    pub limit: u32,
    pub threshold: f64,
    pub cross_collection: bool,
}

/// `sortOrder` of `/api/docs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    Asc,
    #[default]
    Desc,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DocsQuery {
    pub collection: Option<CollectionName>,
    pub limit: u32,
    pub offset: u32,
    pub tags_all: Vec<Tag>,
    pub tags_any: Vec<Tag>,
    pub sort_field: SortField,
    pub sort_order: SortOrder,
}

/// What `GET /api/docs` orders by: the file's modified time, or a front-matter date key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum SortField {
    #[default]
    Modified,
    DateKey(DateKey),
}

/// A front-matter date key as a sort field: `[a-z0-9_]+`, built only by parsing (so it can
/// go into a JSON path as it is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String")]
pub struct DateKey(String);

impl TryFrom<String> for DateKey {
    type Error = String;
    fn try_from(raw: String) -> Result<Self, String> {
        let ok = !raw.is_empty() && raw.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if ok {
            Ok(DateKey(raw))
        } else {
            Err("sortField must be `modified` or a front-matter date key".to_string())
        }
    }
}

impl DateKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl SortField {
    /// `modified`, or a date key (`[a-z0-9_]+`).
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw == "modified" {
            Ok(SortField::Modified)
        } else {
            DateKey::try_from(raw.to_string()).map(SortField::DateKey)
        }
    }

    /// The name as a reply echoes it.
    pub fn as_str(&self) -> &str {
        match self {
            SortField::Modified => "modified",
            SortField::DateKey(k) => k.as_str(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GraphQuery {
    pub collection: Option<CollectionName>,
    pub limit: u32,
    pub edge_limit: u32,
    pub include_similar: bool,
    pub threshold: f64,
    pub linked_only: bool,
    pub similar_top_k: u32,
}

/// Where a change read starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangesSince {
    /// From the oldest retained change.
    Start,
    /// After this position.
    Cursor(ChangeCursor),
    /// Changes observed at or after this instant (epoch milliseconds).
    Time(i64),
}

/// `GET /api/changes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangesQuery {
    pub since: ChangesSince,
    pub collection: Option<CollectionName>,
    /// 1..=[`ChangesQuery::MAX_LIMIT`].
    pub limit: u32,
}

impl ChangesQuery {
    /// Changes per page when a request names no limit.
    pub const DEFAULT_LIMIT: u32 = 100;
    /// The most changes per page; a larger limit is clamped.
    pub const MAX_LIMIT: u32 = 1000;
}

/// The bounds of an impact walk (each already clamped to its maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpactBounds {
    /// Link hops from the root (at most 6).
    pub max_depth: u32,
    /// Dependents returned (at most 1,000).
    pub max_nodes: u32,
    /// Edges on all evidence paths together (at most 5,000).
    pub max_edges: u32,
    /// Documents expanded per depth level (at most 1,000).
    pub frontier_limit: u32,
    /// Documents examined in all (at most 5,000).
    pub visited_limit: u32,
}

impl ImpactBounds {
    /// The bounds a request that names none gets.
    pub const DEFAULT: ImpactBounds =
        ImpactBounds { max_depth: 3, max_nodes: 100, max_edges: 250, frontier_limit: 100, visited_limit: 500 };
    /// The largest bounds: above them a request is clamped.
    pub const MAX: ImpactBounds =
        ImpactBounds { max_depth: 6, max_nodes: 1000, max_edges: 5000, frontier_limit: 1000, visited_limit: 5000 };
}

/// How hard a capsule compile looks (`retrieval.depthPolicy` of a capsule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DepthPolicy {
    /// BM25 only: no model is set up.
    Fast,
    /// Hybrid when vectors exist, else BM25.
    #[default]
    Balanced,
    /// A larger candidate pool and the retrieved notes' link neighbours.
    Thorough,
}

impl DepthPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            DepthPolicy::Fast => "fast",
            DepthPolicy::Balanced => "balanced",
            DepthPolicy::Thorough => "thorough",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Fast, Self::Balanced, Self::Thorough].into_iter().find(|d| d.as_str() == s)
    }
}

impl std::fmt::Display for DepthPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `POST /api/context`, validated by the gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ContextRequest {
    pub goal: String,
    /// What is searched (the goal unless given).
    pub query: String,
    /// Empty means every collection.
    pub collections: Vec<CollectionName>,
    pub uri_prefix: Option<String>,
    pub query_modes: Vec<QueryMode>,
    /// The search filters (collection unset: `collections` scopes the compile).
    pub filters: SearchFilters,
    pub intent: Option<String>,
    pub exclude: Vec<String>,
    pub min_score: Option<f64>,
    pub lang: Option<String>,
    /// Follow link neighbours (default: only with `thorough`).
    pub graph: Option<bool>,
    pub no_rerank: bool,
    /// Evidence passages at most.
    pub limit: u32,
    pub candidate_limit: Option<u32>,
    pub budget_tokens: u64,
    pub budget_bytes: u64,
    pub safety_margin_tokens: u64,
    pub safety_margin_bytes: u64,
    pub depth: DepthPolicy,
}

/// What to do when the target of a new note exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum CollisionPolicy {
    /// 409 `CONFLICT` (the raw form: unless `overwrite`).
    #[default]
    Error,
    /// Answer with the existing note, write nothing.
    OpenExisting,
    /// Write `name-2.md`, `name-3.md`, ...
    CreateWithSuffix,
    /// Replace the file (the raw form's `overwrite: true`).
    Overwrite,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateDoc {
    pub collection: CollectionName,
    /// The raw form: the note's path in the collection.
    pub rel_path: Option<String>,
    /// The richer form: the title (also the file name when `rel_path` is absent).
    pub title: Option<String>,
    pub folder_path: Option<String>,
    pub content: Option<String>,
    pub tags: Vec<Tag>,
    pub preset_id: Option<String>,
    pub collision: CollisionPolicy,
}

impl CreateDoc {
    /// A note in `collection`, every other field at its default.
    pub fn new(collection: CollectionName) -> Self {
        CreateDoc {
            collection,
            rel_path: None,
            title: None,
            folder_path: None,
            content: None,
            tags: Vec::new(),
            preset_id: None,
            collision: CollisionPolicy::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateDoc {
    pub doc: DocRef,
    pub content: Option<String>,
    pub tags: Option<Vec<Tag>>,
    /// SHA-256 hex of the file's bytes the client last saw.
    pub expected_source_hash: Option<String>,
    /// The `modifiedAt` the client last saw (ISO 8601).
    pub expected_modified_at: Option<String>,
}

/// `POST /api/capture`: a note with provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    pub collection: CollectionName,
    pub content: Option<String>,
    pub title: Option<String>,
    pub rel_path: Option<String>,
    pub folder_path: Option<String>,
    /// `None`: open_existing for a generated path, error for a given one. Never overwrite.
    pub collision: Option<CollisionPolicy>,
    pub preset_id: Option<String>,
    pub tags: Vec<Tag>,
    /// Validated `source` fields (`kind`, `url`, `title`, ...), in a fixed order.
    pub source: Vec<(String, String)>,
}

impl Capture {
    /// A capture into `collection`, every other field at its default.
    pub fn new(collection: CollectionName) -> Self {
        Capture {
            collection,
            content: None,
            title: None,
            rel_path: None,
            folder_path: None,
            collision: None,
            preset_id: None,
            tags: Vec::new(),
            source: Vec::new(),
        }
    }
}

/// A file refactor of one note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RefactorOp {
    /// New file name in the same folder.
    Rename { name: String },
    /// Another folder of the same collection (optionally with a new name).
    Move { folder_path: String, name: Option<String> },
    /// A copy (links to the original are left alone).
    Duplicate { folder_path: Option<String>, name: Option<String> },
}

/// What an apply request carries besides the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ApplyConfirmation {
    pub plan_digest: Option<String>,
    pub schema_version: Option<String>,
    pub confirmation: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reference_is_a_docid_or_a_svc_uri() {
        assert_eq!(DocRef::parse("#ABCDEF12"), Ok(DocRef::Docid("#abcdef12".into())));
        assert_eq!(DocRef::parse("abcdef12"), Ok(DocRef::Docid("#abcdef12".into())), "the # may be left out");
        assert_eq!(DocRef::parse("svc://notes/a%20b.md"), Ok(DocRef::Uri("svc://notes/a%20b.md".into())));
        for bad in ["", "#", "#abc", "#xyz12345", "svc://", "notes/a.md", "file:///etc/passwd", &"a".repeat(65)] {
            assert!(DocRef::parse(bad).is_err(), "{bad:?}");
        }
        assert!(DocRef::docid("svc://notes/a.md").is_err(), "a docid only");
        assert_eq!(DocRef::parse("#abcdef12").unwrap().as_str(), "#abcdef12");
    }

    #[test]
    fn a_sort_field_is_modified_or_a_date_key_and_nothing_else_deserializes() {
        assert_eq!(SortField::parse("modified"), Ok(SortField::Modified));
        assert_eq!(SortField::parse("due_2").unwrap().as_str(), "due_2");
        for bad in ["", "Due", "a.b", "x') OR 1=1 --", "é"] {
            assert!(SortField::parse(bad).is_err(), "{bad:?}");
        }
        assert!(serde_json::from_str::<DateKey>("\"a'b\"").is_err(), "a frame cannot smuggle one in");
    }
}
