//! Frames and the typed requests the gateway sends to the worker.
//!
//! Every request has already been validated by the gateway: numbers are clamped, tags
//! normalized, dates parsed into epoch milliseconds.

use crate::error::ApiError;
use serde::{Deserialize, Serialize};

/// Gateway (or supervisor) to worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ClientFrame {
    /// First frame on every connection.
    Hello { version: u32 },
    /// One operation; the reply carries the same `id`.
    Call { id: u64, request: Request },
    /// Liveness probe (supervisor heartbeat).
    Ping { id: u64 },
}

/// Worker to gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ServerFrame {
    HelloAck { version: u32, pid: u32 },
    /// The peer spoke another protocol version; the connection closes after this.
    Rejected { reason: String },
    Reply { id: u64, result: Result<JsonBody, ApiError> },
    Pong { id: u64 },
}

/// A JSON document, already serialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonBody(pub Vec<u8>);

impl JsonBody {
    pub fn of<T: Serialize>(value: &T) -> Result<Self, ApiError> {
        serde_json::to_vec(value)
            .map(JsonBody)
            .map_err(|e| ApiError::runtime(format!("response could not be serialized: {e}")))
    }
}

/// A document named by docid (`#abcdef12`) or by URI; the URI wins when both are given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DocRef {
    pub docid: Option<String>,
    pub uri: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkKind {
    Wiki,
    Markdown,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Wiki => "wiki",
            LinkKind::Markdown => "markdown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    Capabilities,
    Status,
    ListCollections,
    AddCollection(AddCollection),
    RemoveCollection { name: String },
    Sync { collection: Option<String>, git_pull: Option<bool> },
    GetJob { id: String },
    Search(SearchRequest),
    ListTags { collection: Option<String>, prefix: Option<String> },
    ListDocs(DocsQuery),
    GetDoc(DocRef),
    Links { doc: DocRef, kind: Option<LinkKind> },
    Backlinks { doc: DocRef },
    Sections { doc: DocRef },
    Graph(GraphQuery),
}

impl Request {
    /// Short name for logs (never includes user content).
    pub fn name(&self) -> &'static str {
        match self {
            Request::Capabilities => "capabilities",
            Request::Status => "status",
            Request::ListCollections => "list_collections",
            Request::AddCollection(_) => "add_collection",
            Request::RemoveCollection { .. } => "remove_collection",
            Request::Sync { .. } => "sync",
            Request::GetJob { .. } => "get_job",
            Request::Search(_) => "search",
            Request::ListTags { .. } => "list_tags",
            Request::ListDocs(_) => "list_docs",
            Request::GetDoc(_) => "get_doc",
            Request::Links { .. } => "links",
            Request::Backlinks { .. } => "backlinks",
            Request::Sections { .. } => "sections",
            Request::Graph(_) => "graph",
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SearchFilters {
    pub collection: Option<String>,
    /// Inclusive lower bound on the modified time, epoch milliseconds.
    pub since_ms: Option<i64>,
    /// Inclusive upper bound on the modified time, epoch milliseconds.
    pub until_ms: Option<i64>,
    /// Lowercased; any-match.
    pub categories: Vec<String>,
    /// Case-insensitive substring.
    pub author: Option<String>,
    /// Normalized tags; the document must have all.
    pub tags_all: Vec<String>,
    /// Normalized tags; the document must have at least one.
    pub tags_any: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: u32,
    pub min_score: Option<f32>,
    pub filters: SearchFilters,
    /// Steers snippet selection; never searched.
    pub intent: Option<String>,
    /// Lowercased terms; a result containing any of them is dropped.
    pub exclude: Vec<String>,
    /// How many candidates to consider before filtering and cutting to `limit`.
    pub candidate_limit: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum SortOrder {
    Asc,
    #[default]
    Desc,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DocsQuery {
    pub collection: Option<String>,
    pub limit: u32,
    pub offset: u32,
    pub tags_all: Vec<String>,
    pub tags_any: Vec<String>,
    /// `modified` or a front-matter date key.
    pub sort_field: String,
    pub sort_order: SortOrder,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GraphQuery {
    pub collection: Option<String>,
    pub limit: u32,
    pub edge_limit: u32,
    pub include_similar: bool,
    pub threshold: f32,
    pub linked_only: bool,
    pub similar_top_k: u32,
}
