//! Retrieval: `/api/search` (BM25), `/api/vsearch` (vectors), `/api/query` (hybrid) and
//! `/api/query/diagnose`.

use super::call;
use crate::bodies::{DiagnoseBody, QueryBody, SearchBody};
use crate::error::ApiReply;
use crate::extract::Body;
use crate::AppState;
use axum::extract::State;
use protocol::api::{DiagnoseResponse, SearchResponse};

/// Keyword search (BM25).
#[utoipa::path(post, path = "/api/search", tag = "search", request_body = SearchBody,
    responses((status = 200, description = "Ranked documents", body = SearchResponse),
              (status = 404, description = "Unknown collection", body = protocol::ErrorEnvelope)))]
pub async fn search(State(s): State<AppState>, Body(b): Body<SearchBody>) -> ApiReply {
    call(&s, b.into_search()).await
}

/// Vector search (503 `UNAVAILABLE` without an embedder or vectors).
#[utoipa::path(post, path = "/api/vsearch", tag = "search", request_body = SearchBody,
    responses((status = 200, description = "Documents nearest to the query", body = SearchResponse),
              (status = 404, description = "Unknown collection", body = protocol::ErrorEnvelope)))]
pub async fn vsearch(State(s): State<AppState>, Body(b): Body<SearchBody>) -> ApiReply {
    call(&s, b.into_search().map(protocol::VectorSearch)).await
}

/// Hybrid search: BM25 and vectors fused, optionally expanded and reranked.
#[utoipa::path(post, path = "/api/query", tag = "search", request_body = QueryBody,
    responses((status = 200, description = "Ranked documents", body = SearchResponse),
              (status = 404, description = "Unknown collection", body = protocol::ErrorEnvelope)))]
pub async fn query(State(s): State<AppState>, Body(b): Body<QueryBody>) -> ApiReply {
    call(&s, b.into_request()).await
}

/// Why a document ranks where it does for a query.
#[utoipa::path(post, path = "/api/query/diagnose", tag = "search", request_body = DiagnoseBody,
    responses((status = 200, description = "The target's path through retrieval", body = DiagnoseResponse),
              (status = 404, description = "Unknown collection or target", body = protocol::ErrorEnvelope)))]
pub async fn diagnose(State(s): State<AppState>, Body(b): Body<DiagnoseBody>) -> ApiReply {
    call(&s, b.into_parts().map(|(query, target)| protocol::Diagnose { query, target })).await
}
