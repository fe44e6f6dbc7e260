//! A capsule's retrieval: by its depth policy (BM25, hybrid, plus link neighbours), each hit
//! with the chunk that matched, and which capabilities it used or fell back from.

use crate::reads::links::resolver;
use crate::retrieval::{hybrid, keyword};
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow};
use crate::stores::DocKey;
use crate::uri;
use protocol::api::*;
use protocol::{ApiError, CollectionName, ContextRequest, DepthPolicy, ErrorCode, QueryRequest, SearchRequest};
use std::collections::HashSet;

pub(super) fn fail(code: ErrorCode) -> impl Fn(String) -> ApiError {
    move |cause| {
        tracing::warn!("context: {}: {cause}", code.as_str());
        ApiError::context(code)
    }
}

/// A retrieved document and the chunk that matched.
#[derive(Clone)]
pub(super) struct Hit {
    pub row: DocRow,
    pub(super) seq: u32,
    /// 1-based retrieval rank (`None` for a link neighbour).
    pub rank: Option<u32>,
    pub(super) sources: Vec<RetrievalSource>,
    pub(super) graph: bool,
}

/// What retrieval produced, and which capabilities it used.
pub(super) struct Retrieved {
    pub(super) hits: Vec<Hit>,
    pub(super) semantic: CapabilityState,
    pub(super) reranking: CapabilityState,
    pub(super) graph: CapabilityState,
    pub(super) fallbacks: Vec<CapsuleFallback>,
    pub(super) filtered: Vec<(String, u32, u32)>,
}

pub(super) fn state(
    requested: bool,
    attempted: bool,
    outcome: CapabilityOutcome,
    reasons: Vec<FallbackCode>,
) -> CapabilityState {
    CapabilityState { attempted, fallback_reasons: reasons, outcome, requested }
}

pub(super) fn candidate_limit(req: &ContextRequest) -> u32 {
    req.candidate_limit.unwrap_or(if req.depth == DepthPolicy::Thorough { 80 } else { 40 })
}

pub(super) fn graph_requested(req: &ContextRequest) -> bool {
    req.graph.unwrap_or(req.depth == DepthPolicy::Thorough)
}

pub(super) fn search_request(req: &ContextRequest, collection: Option<CollectionName>, pool: u32) -> SearchRequest {
    let mut filters = req.filters.clone();
    filters.collection = collection;
    SearchRequest {
        query: req.query.clone(),
        limit: pool,
        min_score: req.min_score,
        filters,
        intent: req.intent.clone(),
        exclude: req.exclude.clone(),
        candidate_limit: Some(pool),
    }
}

/// A query the keyword grammar refuses (an odd quote, only negations) is the goal's fault.
pub(super) fn retrieval_error(e: ApiError) -> ApiError {
    match e.code {
        ErrorCode::Validation => ApiError::context(ErrorCode::InvalidGoal),
        _ => fail(ErrorCode::RetrievalFailed)(e.message),
    }
}

pub(super) fn retrieve(w: &Shared, req: &ContextRequest) -> Result<Retrieved, ApiError> {
    let pool = candidate_limit(req);
    // One retrieval over the index, or one per collection (canonical order) merged by rank.
    let scopes: Vec<Option<CollectionName>> =
        if req.collections.is_empty() { vec![None] } else { req.collections.iter().cloned().map(Some).collect() };
    let semantic_wanted = req.depth != DepthPolicy::Fast;
    let rerank_wanted = semantic_wanted && !req.no_rerank;
    let mut vectors_used = false;
    let mut reranked = false;
    let mut lists: Vec<Vec<SearchResult>> = Vec::new();
    // The documents a vector list found (each passage says which retrieval found it).
    let mut by_vector: HashSet<DocKey> = HashSet::new();
    let mut by_keyword: HashSet<DocKey> = HashSet::new();
    for c in scopes {
        let s = search_request(req, c, pool);
        let response = if semantic_wanted {
            let q = QueryRequest {
                search: s,
                lang: req.lang.clone(),
                expand: false,
                no_rerank: !rerank_wanted,
                query_modes: req.query_modes.clone(),
            };
            let outcome = hybrid::run(w, &q).map_err(retrieval_error)?;
            by_vector.extend(outcome.trace.semantic);
            by_keyword.extend(outcome.trace.lexical);
            outcome.response
        } else {
            keyword::search(w, &s).map_err(retrieval_error)?
        };
        vectors_used |= response.meta.vectors_used == Some(true);
        reranked |= response.meta.reranked == Some(true);
        lists.push(response.results);
    }
    // Interleave the per-collection lists by rank (canonical collection order breaks ties).
    let mut merged: Vec<SearchResult> = Vec::new();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for l in &lists {
            if let Some(r) = l.get(i) {
                merged.push(r.clone());
            }
        }
    }
    let conn = w.stores.catalog.reader();
    let mut hits = Vec::new();
    let mut filtered = Vec::new();
    // Which retrieval found a document: keyword search alone unless hybrid says otherwise.
    let sources_of = |id: DocKey| -> Vec<RetrievalSource> {
        if !semantic_wanted {
            return vec![RetrievalSource::Bm25];
        }
        let found =
            [(by_keyword.contains(&id), RetrievalSource::Bm25), (by_vector.contains(&id), RetrievalSource::Vector)];
        found.iter().filter(|(hit, _)| *hit).map(|(_, source)| *source).collect()
    };
    for r in merged {
        let Some((coll, rel)) = uri::parse_uri(&r.uri) else { continue };
        let Some(row) =
            catalog::doc_by_path(&conn, &coll, &rel).map_err(|e| fail(ErrorCode::RetrievalFailed)(e.to_string()))?
        else {
            continue;
        };
        if req.uri_prefix.as_deref().is_some_and(|p| !r.uri.starts_with(p)) {
            filtered.push((r.uri.clone(), 0, 0));
            continue;
        }
        let rank = hits.len() as u32 + 1;
        let sources = sources_of(row.id);
        hits.push(Hit { row, seq: r.chunk.index, rank: Some(rank), sources, graph: false });
    }
    // The neighbours take connections of their own: a reader held here could be the one
    // they wait for.
    drop(conn);
    let graph_wanted = graph_requested(req);
    if graph_wanted {
        add_neighbours(w, req, &mut hits)?;
    }
    let mut fallbacks = Vec::new();
    let semantic = match (semantic_wanted, vectors_used) {
        (false, _) => state(false, false, CapabilityOutcome::NotRequested, vec![]),
        (true, true) => state(true, true, CapabilityOutcome::Used, vec![]),
        (true, false) => {
            fallbacks.push(CapsuleFallback {
                capability: FallbackCapability::SemanticSearch,
                code: FallbackCode::EmbeddingUnavailable,
            });
            state(true, true, CapabilityOutcome::Unavailable, vec![FallbackCode::EmbeddingUnavailable])
        }
    };
    let reranking = match (rerank_wanted, reranked) {
        (false, _) => state(false, false, CapabilityOutcome::NotRequested, vec![]),
        (true, true) => state(true, true, CapabilityOutcome::Used, vec![]),
        (true, false) => {
            fallbacks.push(CapsuleFallback {
                capability: FallbackCapability::Reranking,
                code: FallbackCode::RerankingUnavailable,
            });
            state(true, true, CapabilityOutcome::Unavailable, vec![FallbackCode::RerankingUnavailable])
        }
    };
    let graph = if graph_wanted {
        state(true, true, CapabilityOutcome::Used, vec![])
    } else {
        state(false, false, CapabilityOutcome::NotRequested, vec![])
    };
    Ok(Retrieved { hits, semantic, reranking, graph, fallbacks, filtered })
}

/// The documents a compile of `req` retrieves, in rank order (link neighbours last).
pub(super) fn retrieve_hits(w: &Shared, req: &ContextRequest) -> Result<Vec<Hit>, ApiError> {
    retrieve(w, req).map(|r| r.hits)
}

/// `thorough`: the notes the top hits link to (resolved over active notes), after the
/// retrieved ones, first chunk, in hit order then URI order; within the request's scope.
pub(super) fn add_neighbours(w: &Shared, req: &ContextRequest, hits: &mut Vec<Hit>) -> Result<(), ApiError> {
    let res = resolver(w).map_err(|e| fail(ErrorCode::RetrievalFailed)(e.message))?;
    let conn = w.stores.catalog.reader();
    let mut seen: HashSet<DocKey> = hits.iter().map(|h| h.row.id).collect();
    let mut extra = Vec::new();
    for h in hits.iter().take(10) {
        let links = catalog::links_of(&conn, h.row.id).map_err(|e| fail(ErrorCode::RetrievalFailed)(e.to_string()))?;
        let mut targets: Vec<&DocRow> = links
            .iter()
            .filter_map(|l| res.resolve(&h.row, l))
            .filter(|id| seen.insert(*id))
            .filter_map(|id| res.doc(id))
            .collect();
        targets.sort_by(|a, b| (&a.collection, &a.rel_path).cmp(&(&b.collection, &b.rel_path)));
        for t in targets {
            let in_scope = (req.collections.is_empty() || req.collections.iter().any(|c| *c == t.collection))
                && req.uri_prefix.as_deref().is_none_or(|p| uri::doc_uri(&t.collection, &t.rel_path).starts_with(p));
            if in_scope {
                extra.push(Hit {
                    row: t.clone(),
                    seq: 0,
                    rank: None,
                    sources: vec![RetrievalSource::Graph],
                    graph: true,
                });
            }
        }
    }
    hits.extend(extra);
    Ok(())
}
