//! `POST /api/query`: BM25 and vector retrieval, optional query variants (given as
//! `queryModes` or generated), weighted reciprocal rank fusion, an optional cross-encoder
//! rerank of the best chunk per document, and a position-aware blend.
//!
//! The numbers (weights, bonuses, blend) are `decisions.md`'s, checked on the SciFact train
//! split with `scripts/eval`; `docs/retrieval.md` has the measurements.

use crate::config::content_types;
use crate::question::Question;
use crate::retrieval::common::{self, Ranked, Scope};
use crate::retrieval::expansion::{self, Variants};
use crate::retrieval::keyword::{bm25_candidates, keyword_coverage};
use crate::retrieval::vector::{
    chunk_pool, documents_for_hits, has_filters, query_documents, QueryVector, VectorContext,
};
use crate::shared::Shared;
use crate::stores::bm25::query::KeywordQuery;
use crate::stores::catalog;
use crate::stores::DocKey;
use protocol::api::{SearchMeta, SearchMode, SearchResponse};
use protocol::{ApiError, QueryRequest};
use std::collections::{HashMap, HashSet};

/// Reciprocal rank fusion constant.
pub const RRF_K: f32 = 60.0;
pub const WEIGHT_ORIGINAL: f32 = 2.0;
pub const WEIGHT_VARIANT: f32 = 0.5;
pub const WEIGHT_HYDE: f32 = 0.7;
/// Added to a document ranked first by the original BM25 or vector list.
pub const BONUS_TOP1: f32 = 0.1;
/// Added to a document ranked in the top `TOP_N` (but not first) of either original list.
pub const BONUS_TOP_N: f32 = 0.04;
/// The reference's "rank <= 5"; on SciFact 5 and 3 are within 0.002 nDCG@10 (docs/retrieval.md).
pub const TOP_N: usize = 5;
pub const DEFAULT_CANDIDATE_LIMIT: usize = 20;
/// Characters of a chunk the reranker sees.
const RERANK_CHARS: usize = 4000;
/// When no keyword matches at all, a vector neighbour counts only this close (similarity
/// 0..1, cosine 0.5). Vector search always finds neighbours, even for a nonsense word
/// (MiniLM gives them 0.63–0.71 on the docs eval's index, about what a real question's top
/// hits get), so without a keyword a neighbour has to be clearly about the query.
pub const VECTOR_ONLY_FLOOR: f32 = 0.75;

/// Where a ranked list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Bm25,
    Vector,
    Bm25Variant,
    VectorVariant,
    Hyde,
}

impl Source {
    /// Whether the list is keyword retrieval (else vector retrieval).
    fn lexical(self) -> bool {
        matches!(self, Source::Bm25 | Source::Bm25Variant)
    }

    fn weight(self) -> f32 {
        match self {
            Source::Bm25 | Source::Vector => WEIGHT_ORIGINAL,
            Source::Bm25Variant | Source::VectorVariant => WEIGHT_VARIANT,
            Source::Hyde => WEIGHT_HYDE,
        }
    }
}

/// Each stage's ranking, for `/api/query/diagnose`: `(document row id, score)`, best first.
#[derive(Debug, Default)]
pub struct Trace {
    pub bm25: Vec<(DocKey, f32)>,
    pub vector: Option<Vec<(DocKey, f32)>>,
    pub fusion: Vec<(DocKey, f32)>,
    pub rerank: Option<Vec<(DocKey, f32)>>,
    pub candidate_limit: usize,
    /// The returned documents, in order.
    pub returned: Vec<DocKey>,
    /// The documents a keyword list (the query's or a variant's) found.
    pub lexical: HashSet<DocKey>,
    /// The documents a vector list (the query's, a variant's or HyDE's) found.
    pub semantic: HashSet<DocKey>,
}

pub struct Outcome {
    pub response: SearchResponse,
    pub trace: Trace,
    /// The query read as a question, once, for what follows a search (an answer).
    pub question: Question,
}

/// Weighted RRF over ranked lists of document ids, with the top-rank bonus for the
/// original lists. Ties go to the smaller id (deterministic).
pub fn fuse(lists: &[(Source, Vec<DocKey>)]) -> Vec<(DocKey, f32)> {
    let mut fused: HashMap<DocKey, f32> = HashMap::new();
    let mut best_original: HashMap<DocKey, usize> = HashMap::new();
    for (source, ids) in lists {
        for (i, id) in ids.iter().enumerate() {
            *fused.entry(*id).or_default() += source.weight() / (RRF_K + (i + 1) as f32);
            if matches!(source, Source::Bm25 | Source::Vector) {
                let r = best_original.entry(*id).or_insert(usize::MAX);
                *r = (*r).min(i + 1);
            }
        }
    }
    for (id, rank) in best_original {
        if let Some(s) = fused.get_mut(&id) {
            *s += if rank == 1 {
                BONUS_TOP1
            } else if rank <= TOP_N {
                BONUS_TOP_N
            } else {
                0.0
            };
        }
    }
    let mut out: Vec<(DocKey, f32)> = fused.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// The fusion share of the blend at a 1-based position.
pub fn fusion_share(position: usize) -> f32 {
    match position {
        1..=3 => 0.75,
        4..=10 => 0.6,
        _ => 0.4,
    }
}

/// Blends normalized fusion scores with normalized rerank scores (for the first
/// `rerank.len()` candidates); later candidates keep half their fusion score.
pub fn blend(fusion: &[f32], rerank: &[f32]) -> Vec<f32> {
    fusion
        .iter()
        .enumerate()
        .map(|(i, f)| match rerank.get(i) {
            Some(r) => {
                let share = fusion_share(i + 1);
                share * f + (1.0 - share) * r
            }
            None => 0.5 * f,
        })
        .collect()
}

/// Sigmoid of a raw BM25 score: how sure the keyword match alone is.
fn confidence(raw: f32) -> f32 {
    1.0 / (1.0 + (-(raw.abs() - 4.5) / 2.8).exp())
}

/// True when the keyword results are decisive enough that expansion would only add noise.
pub fn strong_signal(raw_scores: &[f32]) -> bool {
    match raw_scores {
        [top, second, ..] => confidence(*top) >= 0.84 && confidence(*top) - confidence(*second) >= 0.14,
        [top] => confidence(*top) >= 0.84,
        [] => false,
    }
}

/// A small stopword vote for the query language; `und` when nothing matches.
pub fn detect_language(query: &str) -> &'static str {
    const LANGS: &[(&str, &[&str])] = &[
        ("en", &["the", "and", "is", "are", "of", "what", "how", "why", "does", "do", "in", "to", "with", "for"]),
        ("de", &["der", "die", "das", "und", "ist", "nicht", "wie", "was", "mit", "für", "ein", "eine"]),
        ("fr", &["le", "la", "les", "et", "est", "des", "une", "comment", "pourquoi", "avec", "pour", "du"]),
        ("es", &["el", "los", "las", "y", "es", "qué", "cómo", "por", "para", "con", "una", "del"]),
    ];
    let words: Vec<String> =
        query.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    let mut best = ("und", 0usize);
    for (lang, stop) in LANGS {
        let n = words.iter().filter(|w| stop.contains(&w.as_str())).count();
        if n > best.1 {
            best = (lang, n);
        }
    }
    best.0
}

/// The query vector of `text`, or `None` when the embedder fails (an ORT error, its time
/// limit): the failure is logged and the query goes on without this list. The store's
/// failures are met the same way where the vector is searched; catalog errors are not caught
/// and fail the request.
fn query_vector(ctx: &VectorContext<'_>, text: &str, lang: Option<&str>) -> Option<QueryVector> {
    match ctx.embed_query(text, lang) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!("vector retrieval skipped for one list of /api/query: query embedding failed: {e}");
            None
        }
    }
}

/// The ranked lists of one query and the documents they name (each document's first
/// ranking kept: its matched chunk and admission).
#[derive(Default)]
struct Candidates {
    docs: HashMap<DocKey, Ranked>,
    lists: Vec<(Source, Vec<DocKey>)>,
    lexical: HashSet<DocKey>,
    semantic: HashSet<DocKey>,
}

impl Candidates {
    /// Adds one list; returns its `(document, score)` ranking for the trace.
    fn keep(&mut self, source: Source, ranked: Vec<Ranked>) -> Vec<(DocKey, f32)> {
        let ids: Vec<(DocKey, f32)> = ranked.iter().map(|r| (r.row.id, r.score)).collect();
        let found = if source.lexical() { &mut self.lexical } else { &mut self.semantic };
        found.extend(ids.iter().map(|(id, _)| *id));
        for r in ranked {
            self.docs.entry(r.row.id).or_insert(r);
        }
        self.lists.push((source, ids.iter().map(|(id, _)| *id).collect()));
        ids
    }
}

/// The variants to search besides the query: the caller's `queryModes`, else generated ones
/// when asked for and the keyword match is not already decisive, else none.
fn variants_for(w: &Shared, req: &QueryRequest, raw_top: &[f32]) -> Variants {
    if !req.query_modes.is_empty() {
        Variants::from_modes(&req.query_modes)
    } else if !req.expand || strong_signal(raw_top) {
        Variants::default()
    } else {
        expansion::generate(w, &req.search.query, req.search.intent.as_deref())
    }
}

/// Reranks the head of the fused list with the cross-encoder and blends; the fusion scores
/// stand when there is no reranker, it is not wanted, or it fails. Returns the blended
/// scores and the rerank trace (`None` when no rerank happened).
#[allow(clippy::type_complexity)]
fn rerank(
    w: &Shared,
    req: &QueryRequest,
    question: &Question,
    fused: &[(DocKey, f32)],
    fusion_scores: &[f32],
    docs: &HashMap<DocKey, Ranked>,
    candidate_limit: usize,
) -> Result<(Vec<f32>, Option<Vec<(DocKey, f32)>>), ApiError> {
    let sreq = &req.search;
    let model = match (req.no_rerank, fused.is_empty()) {
        (false, false) => match w.models.reranker() {
            Ok(m) => m,
            Err(_) => return Ok((fusion_scores.to_vec(), None)),
        },
        _ => return Ok((fusion_scores.to_vec(), None)),
    };
    let head: Vec<DocKey> = fused.iter().take(candidate_limit).map(|(id, _)| *id).collect();
    let terms = question.words();
    let conn = w.stores.catalog.reader();
    let mut passages = Vec::with_capacity(head.len());
    for id in &head {
        // Every fused id names a candidate; one that did not would be scored as an empty
        // passage (keeping the positions of the blend), never a panic.
        let Some(r) = docs.get(id) else {
            passages.push(String::new());
            continue;
        };
        let chunks = match &r.chunks {
            Some(c) => c.clone(),
            None => catalog::chunks_of(&conn, &r.row.mirror_hash)?,
        };
        let text = common::best_chunk(&chunks, terms, &[], r.seq).map_or(r.row.title.clone(), |c| c.text.clone());
        passages.push(text.chars().take(RERANK_CHARS).collect::<String>());
    }
    drop(conn);
    let query = match &sreq.intent {
        Some(i) => format!("Intent: {i}\nQuery: {}", sreq.query),
        None => sreq.query.clone(),
    };
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    // A reranker that fails or runs out of time costs the rerank, not the answer: the
    // fusion order stands and `reranked` says false.
    match model.score(&query, &refs) {
        Ok(mut scores) => {
            common::normalize(&mut scores);
            let trace = head.iter().copied().zip(scores.iter().copied()).collect();
            Ok((blend(fusion_scores, &scores), Some(trace)))
        }
        Err(e) => {
            tracing::warn!("rerank skipped: {e}");
            Ok((fusion_scores.to_vec(), None))
        }
    }
}

/// The documents in final order, each with its blended score and its fused relevance.
fn in_order(fused: &[(DocKey, f32)], blended: Vec<f32>, mut docs: HashMap<DocKey, Ranked>) -> Vec<Ranked> {
    let mut order: Vec<(DocKey, f32, f32)> =
        fused.iter().zip(blended).map(|((id, fused), score)| (*id, score, *fused)).collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut ranked: Vec<Ranked> = Vec::with_capacity(order.len());
    for (id, score, fused) in order {
        if let Some(mut r) = docs.remove(&id) {
            r.score = score;
            r.relevance = fused;
            ranked.push(r);
        }
    }
    ranked
}

/// The content-type boost on the normalized fusion scores, before the rerank blend: the
/// candidates re-ordered by their boosted scores (the same candidates, none added).
fn boost_fused(
    w: &Shared,
    fused: Vec<(DocKey, f32)>,
    scores: Vec<f32>,
    docs: &HashMap<DocKey, Ranked>,
) -> (Vec<(DocKey, f32)>, Vec<f32>) {
    if w.settings.content_types.is_empty() {
        return (fused, scores);
    }
    let mut pairs: Vec<((DocKey, f32), f32)> = fused
        .into_iter()
        .zip(scores)
        .map(|((id, raw), s)| {
            let add = docs.get(&id).map_or(0.0, |r| common::content_type_additive(w, &r.row));
            ((id, raw), content_types::boosted(f64::from(s), add) as f32)
        })
        .collect();
    pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
    pairs.into_iter().unzip()
}

/// Runs the pipeline (candidates, variants, fusion, rerank, order, finish) and keeps each
/// stage's ranking.
pub fn run(w: &Shared, req: &QueryRequest) -> Result<Outcome, ApiError> {
    let sreq = &req.search;
    let scope = Scope::of(w, sreq)?;
    let recency = common::has_recency_intent(&sreq.query);
    // Recency words ask for an order: the keyword side reads the rest of the query.
    let q = KeywordQuery::parse(&common::without_recency_words(&sreq.query))?.in_language(req.lang.as_deref());
    let question = Question::read(&sreq.query);
    let limit = sreq.limit.max(1) as usize;
    let candidate_limit = sreq.candidate_limit.map_or(DEFAULT_CANDIDATE_LIMIT, |c| c as usize);
    let filtered = has_filters(sreq) || scope.filters_rows() || recency;
    let multiplier = if filtered { 3 } else { 1 };
    let pool = (limit * 2).max(candidate_limit) * multiplier;

    let mut cands = Candidates::default();
    let bm25 = bm25_candidates(w, &scope, &q, sreq, pool)?;
    let raw_top: Vec<f32> = bm25.iter().take(2).map(|r| r.score).collect();
    let bm25_ids = cands.keep(Source::Bm25, bm25);

    // The vector side degrades: without an embedder, or when embedding or searching the
    // original query fails, the answer is BM25 alone (`vectorsUsed: false`); a failing
    // variant only loses its own list.
    let ctx: Option<VectorContext<'_>> = VectorContext::available(w);
    let no_keyword = bm25_ids.is_empty();
    // At least `limit` documents from the vector side when the table holds them (`widening`).
    let vector_docs = |ctx: &VectorContext<'_>, text: &str| -> Result<Option<Vec<Ranked>>, ApiError> {
        let Some(vector) = query_vector(ctx, text, req.lang.as_deref()) else { return Ok(None) };
        let docs = query_documents(ctx, &vector, chunk_pool(pool, filtered), limit, |k| {
            match ctx.search_query_vector(&vector, k) {
                Ok(hits) => Ok::<_, ApiError>(Some((hits.len(), documents_for_hits(w, &scope, sreq, &hits)?))),
                Err(e) => {
                    tracing::warn!("vector retrieval skipped for one list of /api/query: {e}");
                    Ok(None)
                }
            }
        })?;
        Ok(docs.map(|mut docs| {
            if no_keyword {
                docs.retain(|r| r.score >= VECTOR_ONLY_FLOOR);
            }
            docs
        }))
    };
    let original = match &ctx {
        Some(c) => vector_docs(c, &sreq.query)?,
        None => None,
    };
    let vector_ids = original.map(|ranked| cands.keep(Source::Vector, ranked));
    let ctx = ctx.filter(|_| vector_ids.is_some());

    let variants = variants_for(w, req, &raw_top);
    let expanded = !variants.is_empty();
    for text in &variants.lexical {
        if let Ok(vq) = KeywordQuery::parse(text).map(|vq| vq.in_language(req.lang.as_deref())) {
            cands.keep(Source::Bm25Variant, bm25_candidates(w, &scope, &vq, sreq, limit * multiplier)?);
        }
    }
    if let Some(c) = &ctx {
        let semantic = variants.semantic.iter().map(|t| (Source::VectorVariant, t));
        for (source, text) in semantic.chain(variants.hyde.iter().map(|t| (Source::Hyde, t))) {
            if let Some(ranked) = vector_docs(c, text)? {
                cands.keep(source, ranked);
            }
        }
    }

    let (lexical, semantic) = (std::mem::take(&mut cands.lexical), std::mem::take(&mut cands.semantic));
    let fused = fuse(&cands.lists);
    let mut fusion_scores: Vec<f32> = fused.iter().map(|(_, s)| *s).collect();
    common::normalize(&mut fusion_scores);
    let (fused, fusion_scores) = boost_fused(w, fused, fusion_scores, &cands.docs);
    let fusion_trace: Vec<(DocKey, f32)> = fused.iter().map(|(id, _)| *id).zip(fusion_scores.iter().copied()).collect();
    let (blended, rerank_trace) = rerank(w, req, &question, &fused, &fusion_scores, &cands.docs, candidate_limit)?;
    let mut ranked = in_order(&fused, blended, cands.docs);
    let coverage = if recency { Some(keyword_coverage(w, &q, &ranked)?) } else { None };
    let total = common::finish(&mut ranked, sreq.min_score, coverage.as_ref().map(common::Relevant::Covering), limit);
    let returned: Vec<DocKey> = ranked.iter().map(|r| r.row.id).collect();
    let terms = q.highlight_terms();
    let intent = common::intent_terms(sreq.intent.as_deref());
    let results = common::results(w, &scope, ranked, &terms, &intent)?;
    let language = req.lang.clone().unwrap_or_else(|| detect_language(&sreq.query).to_string());
    Ok(Outcome {
        response: SearchResponse {
            query: sreq.query.clone(),
            mode: SearchMode::Hybrid,
            query_language: Some(language),
            results,
            meta: SearchMeta {
                total_results: total,
                recency_ordered: recency,
                expanded: Some(expanded),
                reranked: Some(rerank_trace.is_some()),
                vectors_used: Some(vector_ids.is_some()),
                candidate_limit: Some(candidate_limit as u32),
            },
        },
        trace: Trace {
            bm25: bm25_ids,
            vector: vector_ids,
            fusion: fusion_trace,
            rerank: rerank_trace,
            candidate_limit,
            returned,
            lexical,
            semantic,
        },
        question,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_weights_ranks_and_rewards_top_ranks() {
        let keys = |ids: &[i64]| ids.iter().map(|&i| DocKey(i)).collect::<Vec<_>>();
        let lists = vec![
            (Source::Bm25, keys(&[1, 2, 3])),
            (Source::Vector, keys(&[3, 2, 4])),
            (Source::Bm25Variant, keys(&[4])),
        ];
        let f = fuse(&lists);
        let score = |id| f.iter().find(|(i, _)| *i == DocKey(id)).map(|(_, s)| *s).unwrap();
        // 1 and 3 are first in an original list and get the big bonus.
        assert!(score(1) > score(2) && score(3) > score(2));
        // 2 is in the top TOP_N of both lists: the small bonus once.
        let expected2 = 2.0 / 62.0 + 2.0 / 62.0 + BONUS_TOP_N;
        assert!((score(2) - expected2).abs() < 1e-6);
        // 4: rank 3 in vector (small bonus) plus a variant hit.
        let expected4 = 2.0 / 63.0 + 0.5 / 61.0 + BONUS_TOP_N;
        assert!((score(4) - expected4).abs() < 1e-6);
        assert_eq!(fuse(&[]), vec![]);
        // The small bonus reaches rank TOP_N and stops after it.
        let f = fuse(&[(Source::Bm25, (1..=TOP_N as i64 + 1).map(DocKey).collect())]);
        let score = |id: i64| f.iter().find(|(i, _)| *i == DocKey(id)).map(|(_, s)| *s).unwrap();
        let n = TOP_N as f32;
        assert!((score(TOP_N as i64) - (2.0 / (RRF_K + n) + BONUS_TOP_N)).abs() < 1e-6);
        assert!((score(TOP_N as i64 + 1) - 2.0 / (RRF_K + n + 1.0)).abs() < 1e-6);
    }

    #[test]
    fn blend_is_position_aware() {
        let b = blend(&[1.0, 0.8, 0.6, 0.5, 0.4], &[0.0, 1.0, 1.0, 1.0]);
        assert!((b[0] - 0.75).abs() < 1e-6);
        assert!((b[1] - (0.75 * 0.8 + 0.25)).abs() < 1e-6);
        assert!((b[3] - (0.6 * 0.5 + 0.4)).abs() < 1e-6);
        assert!((b[4] - 0.2).abs() < 1e-6, "beyond the reranked head: half the fusion score");
    }

    #[test]
    fn strong_signal_needs_a_confident_and_clear_winner() {
        assert!(strong_signal(&[12.0, 5.0]));
        assert!(!strong_signal(&[12.0, 11.5]));
        assert!(!strong_signal(&[3.0, 1.0]));
        assert!(!strong_signal(&[]));
    }

    #[test]
    fn detects_a_few_languages() {
        assert_eq!(detect_language("how do the sockets work"), "en");
        assert_eq!(detect_language("wie funktioniert das und die Sockets"), "de");
        assert_eq!(detect_language("xyzzy"), "und");
    }
}
