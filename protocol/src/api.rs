//! JSON response bodies of the HTTP contract, written by the worker.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct Capabilities {
    pub bm25: bool,
    pub vector: bool,
    pub hybrid: bool,
    pub answer: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CollectionStatus {
    pub name: String,
    pub path: String,
    pub document_count: u64,
    pub chunk_count: u64,
    pub embedded_count: u64,
}

/// What the worker publishes to `<data>/<index>/status.json`; the gateway serves it as
/// `/api/status` without asking the worker.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StatusSnapshot {
    pub index_name: String,
    pub config_path: String,
    pub db_path: String,
    pub collections: Vec<CollectionStatus>,
    pub total_documents: u64,
    pub total_chunks: u64,
    pub embedding_backlog: u64,
    pub last_updated: String,
    pub healthy: bool,
    pub connector_projection: serde_json::Value,
    pub content_type_boost: serde_json::Value,
    pub capabilities: Capabilities,
    pub active_job_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CollectionSyncResult {
    pub collection: String,
    pub files_processed: u64,
    pub files_added: u64,
    pub files_updated: u64,
    pub files_unchanged: u64,
    pub files_errored: u64,
    pub files_skipped: u64,
    pub files_deactivated: u64,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SyncResult {
    pub collections: Vec<CollectionSyncResult>,
    pub total_duration_ms: u64,
    pub total_files_processed: u64,
    pub total_files_added: u64,
    pub total_files_updated: u64,
    pub total_files_errored: u64,
    pub total_files_skipped: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
    pub created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<SyncResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchSource {
    pub rel_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abs_path: Option<String>,
    pub mime: String,
    pub ext: String,
    pub modified_at: String,
    pub size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_date: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChunkRef {
    pub text: String,
    pub index: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    pub tags: Vec<String>,
    pub score: f32,
    pub chunk: ChunkRef,
    pub snippet: String,
    pub line: u32,
    pub source: SearchSource,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SearchMeta {
    pub total_results: u64,
    pub recency_ordered: bool,
    /// Vector and hybrid modes: whether query variants were added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expanded: Option<bool>,
    /// Hybrid mode: whether a cross-encoder rescored the candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reranked: Option<bool>,
    /// Vector and hybrid modes: whether vector retrieval contributed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectors_used: Option<bool>,
    /// Hybrid mode: how many fused candidates the reranker saw at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    pub query: String,
    pub mode: String,
    /// Hybrid mode: the query language (the `lang` hint, else detected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_language: Option<String>,
    pub results: Vec<SearchResult>,
    pub meta: SearchMeta,
}
