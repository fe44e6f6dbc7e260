//! Search replies and similar documents.

use serde::{Deserialize, Serialize};

/// Which retrieval answered a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// `POST /api/search`
    Bm25,
    /// `POST /api/vsearch`
    Vector,
    /// `POST /api/query`
    Hybrid,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Bm25 => "bm25",
            SearchMode::Vector => "vector",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

/// The file behind a search result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchSource {
    pub rel_path: String,
    /// Only when the hit is a resolvable file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abs_path: Option<String>,
    pub mime: String,
    pub ext: String,
    pub modified_at: String,
    pub size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_date: Option<String>,
}

/// The best chunk of a search result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ChunkRef {
    pub text: String,
    pub index: u32,
}

/// An entry of `results` of `POST /api/search`, `/api/vsearch` and `/api/query`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    /// The document's content type (`prose`, `meeting`, `spec`, a configured id…).
    pub content_type: String,
    pub tags: Vec<String>,
    pub score: f32,
    pub chunk: ChunkRef,
    /// For a code file: the path of the symbol the best chunk belongs to (`Kettle::descale`),
    /// the innermost one that starts in it, else the one it is inside. Absent for other files,
    /// and for code svc parses as plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    pub snippet: String,
    pub line: u32,
    pub source: SearchSource,
}

/// `meta` of a search reply.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, utoipa::ToSchema)]
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

/// `POST /api/search`, `POST /api/vsearch` and `POST /api/query`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    pub query: String,
    pub mode: SearchMode,
    /// Hybrid mode: the query language (the `lang` hint, else detected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_language: Option<String>,
    pub results: Vec<SearchResult>,
    pub meta: SearchMeta,
}

/// An entry of `GET /api/doc/{id}/similar`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SimilarDoc {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    /// Similarity in 0..1 (an `f32` score widened to `f64`).
    pub score: f64,
}

/// `meta` of `GET /api/doc/{id}/similar`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SimilarMeta {
    pub docid: String,
    pub total_results: u64,
    /// The request's threshold, as sent.
    pub threshold: f64,
    pub cross_collection: bool,
}

/// `GET /api/doc/{id}/similar`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SimilarResponse {
    pub similar: Vec<SimilarDoc>,
    pub meta: SimilarMeta,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_use_the_contract_strings() {
        for m in [SearchMode::Bm25, SearchMode::Vector, SearchMode::Hybrid] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
        }
    }
}
