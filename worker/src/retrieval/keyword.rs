//! `POST /api/search`: BM25 retrieval, filters, score normalization, recency ordering and
//! snippet selection.

use crate::retrieval::common::{self, Ranked, Scope};
use crate::shared::Shared;
use crate::stores::bm25::query::KeywordQuery;
use crate::stores::catalog::{self, DocRow};
use crate::stores::DocKey;
use protocol::api::{SearchMeta, SearchMode, SearchResponse};
use protocol::{ApiError, SearchRequest};
use std::collections::HashMap;

const MAX_CANDIDATES: usize = 1000;

/// BM25 candidates for a parsed query: `(raw score, row)`, best first, admitted by the scope.
pub fn bm25_candidates(
    w: &Shared,
    scope: &Scope,
    q: &KeywordQuery,
    req: &SearchRequest,
    n: usize,
) -> Result<Vec<Ranked>, ApiError> {
    let hits = w.stores.bm25.search(q, &req.filters, n.clamp(1, MAX_CANDIDATES))?;
    let conn = w.stores.catalog.reader();
    let keys: Vec<DocKey> = hits.iter().map(|(_, k)| *k).collect();
    let mut rows: HashMap<DocKey, DocRow> =
        catalog::docs_by_ids(&conn, &keys)?.into_iter().map(|r| (r.id, r)).collect();
    let mut out = Vec::with_capacity(hits.len());
    for (score, key) in hits {
        let Some(row) = rows.remove(&key) else { continue };
        if let Some(chunks) = scope.admit(&conn, &row)? {
            out.push(Ranked { score, relevance: score, row, seq: None, chunks });
        }
    }
    Ok(out)
}

/// How many of the query's words each ranked document holds (the keyword index's count), for
/// a recency order ([`common::Relevant::Covering`]).
pub fn keyword_coverage(w: &Shared, q: &KeywordQuery, ranked: &[Ranked]) -> Result<HashMap<DocKey, usize>, ApiError> {
    let keys: Vec<DocKey> = ranked.iter().map(|r| r.row.id).collect();
    Ok(w.stores.bm25.coverage(q, &keys)?)
}

pub fn search(w: &Shared, req: &SearchRequest) -> Result<SearchResponse, ApiError> {
    let recency = common::has_recency_intent(&req.query);
    // Recency words ask for an order: the ranking reads the rest of the query.
    let q = KeywordQuery::parse(&common::without_recency_words(&req.query))?;
    let scope = Scope::of(w, req)?;
    let limit = req.limit.max(1) as usize;
    let mut candidates = limit.max(req.candidate_limit.unwrap_or(0) as usize);
    if recency || scope.filters_rows() {
        candidates = (candidates * 3).max(50);
    }
    let mut ranked = bm25_candidates(w, &scope, &q, req, candidates)?;
    let mut scores: Vec<f32> = ranked.iter().map(|r| r.score).collect();
    common::normalize(&mut scores);
    for (r, s) in ranked.iter_mut().zip(scores) {
        r.score = s;
    }
    common::apply_content_type_boost(w, &mut ranked);
    let coverage = if recency { Some(keyword_coverage(w, &q, &ranked)?) } else { None };
    let total = common::finish(&mut ranked, req.min_score, coverage.as_ref().map(common::Relevant::Covering), limit);
    let terms = q.highlight_terms();
    let intent = common::intent_terms(req.intent.as_deref());
    let results = common::results(w, &scope, ranked, &terms, &intent)?;
    Ok(SearchResponse {
        query: req.query.clone(),
        mode: SearchMode::Bm25,
        query_language: None,
        results,
        meta: SearchMeta { total_results: total, recency_ordered: recency, ..Default::default() },
    })
}
