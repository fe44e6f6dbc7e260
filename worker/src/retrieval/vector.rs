//! Vector retrieval: `POST /api/vsearch`, the vector half of `/api/query`, and
//! `GET /api/doc/:id/similar`. Chunks come from LanceDB; documents, filters and activity
//! from the catalog, so a deactivated or deleted note never comes back.

use crate::errors::internal;
use crate::models::embedder::Embedder;
use crate::models::language_means::QueryLanguage;
use crate::models::presets::QueryOffset;
use crate::models::ModelError;
use crate::retrieval::common::{self, Ranked, Scope};
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow};
use crate::stores::vectors::{AwayFrom, TableKey, VectorError, VectorHit, VectorStore};
use crate::uri;
use protocol::api::{SearchMeta, SearchMode, SearchResponse, SimilarDoc, SimilarMeta, SimilarResponse};
use protocol::{ApiError, DocRef, ErrorCode, SearchRequest, SimilarQuery};
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

const MAX_CHUNK_CANDIDATES: usize = 2000;

/// What vector retrieval needs: the embedder, its table and the store.
pub struct VectorContext<'w> {
    pub embedder: Arc<Embedder>,
    pub key: TableKey,
    pub store: &'w VectorStore,
    /// How the embedder's queries are moved before they are searched.
    pub query_offset: Option<QueryOffset>,
}

/// How many of a query's nearest chunks tell whether it is asked across languages.
const LANGUAGE_SAMPLE: usize = 10;

/// A query's vector, and, for an embedder whose languages each gather around a point of their
/// own, the query's language.
pub struct QueryVector {
    pub vector: Vec<f32>,
    offset: Option<Offset>,
}

/// A query searched away from its language's mean, more when it is asked of notes in another.
struct Offset {
    language: QueryLanguage<'static>,
    /// The preset's means and weights.
    spec: QueryOffset,
    /// Whether the notes it found first are in another language ([`query_documents`]).
    across: OnceCell<bool>,
}

/// A failure of the vector side itself: the embedder (an ORT error, a panic, its time limit) or
/// the vector store, never the catalog. `/api/query` answers from BM25 alone on it.
#[derive(Debug, thiserror::Error)]
pub enum VectorSideError {
    #[error("query embedding failed: {0}")]
    Model(#[from] ModelError),
    #[error(transparent)]
    Store(#[from] VectorError),
}

impl VectorSideError {
    /// The client's error: 503 when the embedder is not there to be used (a model server
    /// down, say), else 500.
    pub fn into_api(self) -> ApiError {
        match self {
            VectorSideError::Model(e @ (ModelError::Server(_) | ModelError::Egress(_))) => {
                ApiError::new(ErrorCode::Unavailable, format!("Vector search is unavailable: {e}"))
            }
            VectorSideError::Model(e) if e.is_unavailable() => unavailable(&e.to_string()),
            other => internal(other),
        }
    }
}

fn unavailable(reason: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Unavailable,
        format!("Vector search is unavailable: {reason}. Prepare the models (scripts/models default, or POST /api/models/pull) and let the embedding backlog finish (GET /api/status)."),
    )
}

impl<'a> VectorContext<'a> {
    /// The vector context of `w`, or 503 `UNAVAILABLE` when no embedder or vector store is there.
    pub(crate) fn of(w: &'a Shared) -> Result<Self, ApiError> {
        let store = w.stores.vectors.as_ref().ok_or_else(|| unavailable("the vector store could not be opened"))?;
        let embedder = w.models.embedder().map_err(|e| unavailable(&e.to_string()))?;
        let key = TableKey::new(w.models.embed_model_ref(), embedder.dim());
        Ok(VectorContext { embedder, key, store, query_offset: w.models.embed_query_offset() })
    }

    /// Like [`VectorContext::of`], but `None` instead of an error (hybrid falls back to BM25).
    pub(crate) fn available(w: &'a Shared) -> Option<Self> {
        Self::of(w).ok()
    }
}

impl VectorContext<'_> {
    /// The vector of the query `text`, and its language (`lang` when the request declares
    /// one) where the embedder's preset moves queries away from their language's mean.
    pub fn embed_query(&self, text: &str, lang: Option<&str>) -> Result<QueryVector, ModelError> {
        let vector = self.embedder.embed_query(text)?;
        let offset = self.query_offset.map(|o| Offset {
            language: (o.means)().of_query(text, lang, &vector),
            spec: o,
            across: OnceCell::new(),
        });
        Ok(QueryVector { vector, offset })
    }

    /// The `k` chunks nearest to a query (`k` capped), as the embedder's preset searches: a
    /// query asked of notes in another language is moved away from its own language's mean
    /// (the notes nearest that mean are near every question in that language), a query in its
    /// notes' language (or not yet known to be in another) by the smaller weight of its own.
    pub fn search_query_vector(&self, query: &QueryVector, k: usize) -> Result<Vec<VectorHit>, VectorError> {
        let k = k.min(MAX_CHUNK_CANDIDATES);
        let Some(o) = &query.offset else { return self.nearest_capped(&query.vector, k) };
        let weight = if o.across.get() == Some(&true) { o.spec.across } else { o.spec.within };
        if weight <= 0.0 {
            return self.nearest_capped(&query.vector, k);
        }
        self.store.search_away_from(&self.key, &query.vector, AwayFrom::new(o.language.mean, weight), k)
    }

    /// Whether the chunks that matched the first of `docs` are in another language than the
    /// query. A failure to read their vectors is logged and taken as "no".
    fn in_another_language(&self, o: &Offset, docs: &[Ranked]) -> bool {
        let chunks: Vec<(String, u32)> =
            docs.iter().take(LANGUAGE_SAMPLE).map(|r| (r.row.mirror_hash.clone(), r.seq.unwrap_or(0))).collect();
        match self.store.vectors_of(&self.key, &chunks) {
            Ok(vectors) => (o.spec.means)().across(&o.language, &vectors),
            Err(e) => {
                tracing::warn!("a query's language was not compared with its notes': {e}");
                false
            }
        }
    }

    pub fn nearest(&self, vector: &[f32], k: usize) -> Result<Vec<VectorHit>, ApiError> {
        Ok(self.nearest_capped(vector, k)?)
    }

    fn nearest_capped(&self, vector: &[f32], k: usize) -> Result<Vec<VectorHit>, VectorError> {
        self.store.search(&self.key, vector, k.min(MAX_CHUNK_CANDIDATES))
    }
}

/// Documents for chunk hits, best chunk per document, in hit order, admitted by the scope
/// and the request's filters. Scores are the vector similarities (0..1).
pub fn documents_for_hits(
    w: &Shared,
    scope: &Scope,
    req: &SearchRequest,
    hits: &[VectorHit],
) -> Result<Vec<Ranked>, ApiError> {
    let allowed = w.stores.bm25.filter_keys(&req.filters)?;
    let hashes: Vec<String> = {
        let mut seen = HashSet::new();
        hits.iter().filter(|h| seen.insert(h.mirror_hash.clone())).map(|h| h.mirror_hash.clone()).collect()
    };
    let conn = w.stores.catalog.reader();
    let mut by_hash: HashMap<String, Vec<DocRow>> = HashMap::new();
    for row in catalog::active_docs_by_mirror(&conn, &hashes)? {
        by_hash.entry(row.mirror_hash.clone()).or_default().push(row);
    }
    let mut seen_docs = HashSet::new();
    let mut out = Vec::new();
    for hit in hits {
        let Some(rows) = by_hash.get(&hit.mirror_hash) else { continue };
        for row in rows {
            if allowed.as_ref().is_some_and(|a| !a.contains(&row.id)) || !seen_docs.insert(row.id) {
                continue;
            }
            if let Some(chunks) = scope.admit(&conn, row)? {
                out.push(Ranked {
                    score: hit.score,
                    relevance: hit.score,
                    row: row.clone(),
                    seq: Some(hit.seq),
                    chunks,
                });
            }
        }
    }
    Ok(out)
}

/// The documents of the chunks nearest to a query, at least `wanted` of them when the table
/// holds them: `search(k)` gives the documents of the `k` nearest chunks (and how many chunks
/// it read), or `None` when the vector side failed. A first pool of `first` chunks is widened
/// fourfold while its documents number fewer than `wanted`, up to [`MAX_CHUNK_CANDIDATES`].
/// The nearest chunks can all belong to a few documents, or to documents the search's scope
/// leaves out: one table holds every collection's chunks, so a question asked of one
/// collection in the language of another finds that other's chunks first.
pub fn widening<T, E>(
    first: usize,
    wanted: usize,
    mut search: impl FnMut(usize) -> Result<Option<(usize, Vec<T>)>, E>,
) -> Result<Option<Vec<T>>, E> {
    let mut k = first.min(MAX_CHUNK_CANDIDATES);
    loop {
        let Some((read, docs)) = search(k)? else { return Ok(None) };
        if docs.len() >= wanted || read < k || k >= MAX_CHUNK_CANDIDATES {
            return Ok(Some(docs));
        }
        k = (k * 4).min(MAX_CHUNK_CANDIDATES);
    }
}

/// The documents of a query's nearest chunks, as [`widening`] finds them with `search` (which
/// searches with [`VectorContext::search_query_vector`]). Where the embedder's preset moves
/// queries away from their language's mean, the documents found first tell by how much: when
/// most of the first ten matched in another language than the query's, they are searched
/// again with the larger weight.
pub fn query_documents<E>(
    ctx: &VectorContext<'_>,
    query: &QueryVector,
    first: usize,
    wanted: usize,
    search: impl FnMut(usize) -> Result<Option<(usize, Vec<Ranked>)>, E>,
) -> Result<Option<Vec<Ranked>>, E> {
    let Some(o) = &query.offset else { return widening(first, wanted, search) };
    searched_again_if(first, wanted, search, |docs| {
        let across = ctx.in_another_language(o, docs);
        o.across.set(across).is_ok() && across
    })
}

/// [`widening`] with `search`, and once more when `again` says so of the documents found.
fn searched_again_if<T, E>(
    first: usize,
    wanted: usize,
    mut search: impl FnMut(usize) -> Result<Option<(usize, Vec<T>)>, E>,
    again: impl FnOnce(&[T]) -> bool,
) -> Result<Option<Vec<T>>, E> {
    let docs = widening(first, wanted, &mut search)?;
    match docs {
        Some(d) if again(&d) => widening(first, wanted, search),
        other => Ok(other),
    }
}

/// How many chunks to fetch for `docs` documents (chunks repeat documents; filters drop some).
pub fn chunk_pool(docs: usize, filtered: bool) -> usize {
    let base = (docs * 4).max(50);
    if filtered {
        base * 3
    } else {
        base
    }
}

pub fn has_filters(req: &SearchRequest) -> bool {
    let f = &req.filters;
    f.collection.is_some()
        || f.since_ms.is_some()
        || f.until_ms.is_some()
        || !f.categories.is_empty()
        || !f.tags_all.is_empty()
        || !f.tags_any.is_empty()
        || !f.languages.is_empty()
}

/// `POST /api/vsearch`.
pub fn vsearch(w: &Shared, req: &SearchRequest) -> Result<SearchResponse, ApiError> {
    let scope = Scope::of(w, req)?;
    let ctx = VectorContext::of(w)?;
    let recency = common::has_recency_intent(&req.query);
    let limit = req.limit.max(1) as usize;
    let wanted = limit.max(req.candidate_limit.unwrap_or(0) as usize);
    let filtered = has_filters(req) || scope.filters_rows() || recency;
    let vector = ctx.embed_query(&req.query, None).map_err(|e| VectorSideError::from(e).into_api())?;
    let mut ranked = query_documents(&ctx, &vector, chunk_pool(wanted, filtered), wanted, |k| {
        let hits = ctx.search_query_vector(&vector, k).map_err(|e| VectorSideError::from(e).into_api())?;
        Ok::<_, ApiError>(Some((hits.len(), documents_for_hits(w, &scope, req, &hits)?)))
    })?
    .unwrap_or_default();
    common::apply_content_type_boost(w, &mut ranked);
    let total = common::finish(&mut ranked, req.min_score, recency.then_some(common::Relevant::NearTheBest), limit);
    let terms = crate::question::words::words(&req.query);
    let intent = common::intent_terms(req.intent.as_deref());
    let results = common::results(w, &scope, ranked, &terms, &intent)?;
    Ok(SearchResponse {
        query: req.query.clone(),
        mode: SearchMode::Vector,
        query_language: None,
        results,
        meta: SearchMeta {
            total_results: total,
            recency_ordered: recency,
            expanded: Some(false),
            vectors_used: Some(true),
            ..Default::default()
        },
    })
}

/// The document's first chunk vector (seq 0, else its lowest chunk).
fn first_vector(w: &Shared, ctx: &VectorContext<'_>, row: &DocRow) -> Result<Option<Vec<f32>>, ApiError> {
    if let Some(v) = ctx.store.vector(&ctx.key, &row.mirror_hash, 0)? {
        return Ok(Some(v));
    }
    let chunks = catalog::chunks_of(&w.stores.catalog.reader(), &row.mirror_hash)?;
    match chunks.first() {
        Some(c) => Ok(ctx.store.vector(&ctx.key, &row.mirror_hash, c.seq)?),
        None => Ok(None),
    }
}

pub fn similar(w: &Shared, doc: &DocRef, q: &SimilarQuery) -> Result<SimilarResponse, ApiError> {
    let row = w.resolve_doc(doc)?;
    let ctx = VectorContext::of(w)?;
    let Some(v) = first_vector(w, &ctx, &row)? else {
        return Err(unavailable("this document has no embedding yet"));
    };
    let hits = ctx.nearest(&v, (q.limit as usize + 1) * 8)?;
    let scope = Scope::of(w, &SearchRequest::default())?;
    let req = SearchRequest::default();
    let mut out = Vec::new();
    for r in documents_for_hits(w, &scope, &req, &hits)? {
        if r.row.id == row.id || r.row.mirror_hash == row.mirror_hash || f64::from(r.score) < q.threshold {
            continue;
        }
        if !q.cross_collection && r.row.collection != row.collection {
            continue;
        }
        out.push(SimilarDoc {
            docid: r.row.docid.clone(),
            uri: uri::doc_uri(&r.row.collection, &r.row.rel_path),
            title: r.row.title.clone(),
            collection: r.row.collection.clone(),
            score: f64::from(r.score),
        });
        if out.len() >= q.limit as usize {
            break;
        }
    }
    Ok(SimilarResponse {
        meta: SimilarMeta {
            docid: row.docid,
            total_results: out.len() as u64,
            threshold: q.threshold,
            cross_collection: q.cross_collection,
        },
        similar: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_pool_grows_with_filters() {
        assert_eq!(chunk_pool(5, false), 50);
        assert_eq!(chunk_pool(20, false), 80);
        assert_eq!(chunk_pool(20, true), 240);
    }

    /// A search of `k` chunks over a table of `rows` chunks, `per_doc` of them per document
    /// and the first `hidden` documents out of scope: how many chunks it read, and the
    /// documents it admits, nearest first.
    fn search_in(
        rows: usize,
        per_doc: usize,
        hidden: usize,
    ) -> impl FnMut(usize) -> Result<Option<(usize, Vec<usize>)>, ()> {
        move |k| {
            let read = k.min(rows);
            let mut docs: Vec<usize> = (0..read).map(|c| c / per_doc).filter(|d| *d >= hidden).collect();
            docs.dedup();
            Ok(Some((read, docs)))
        }
    }

    #[test]
    fn a_query_is_searched_again_only_when_its_first_documents_say_so() {
        let searches = std::cell::Cell::new(0);
        let search = |k: usize| {
            searches.set(searches.get() + 1);
            Ok::<_, ()>(Some((k, vec![searches.get(); 10])))
        };
        let docs = searched_again_if(50, 10, search, |d: &[usize]| d[0] == 1).unwrap().unwrap();
        assert_eq!((searches.get(), docs[0]), (2, 2), "searched again: the second search's documents");
        searches.set(0);
        let docs = searched_again_if(50, 10, search, |_| false).unwrap().unwrap();
        assert_eq!((searches.get(), docs[0]), (1, 1));
        let failed = searched_again_if(50, 10, |_| Ok::<_, ()>(None::<(usize, Vec<usize>)>), |_| unreachable!());
        assert_eq!(failed, Ok(None), "a failed search is not judged");
    }

    #[test]
    fn a_pool_whose_documents_are_out_of_scope_is_widened_until_enough_are_found() {
        // 50 chunks read: documents 0-24, of which the first 20 are another collection's.
        let docs = widening(50, 10, search_in(10_000, 2, 20)).unwrap().unwrap();
        assert!(docs.len() >= 10, "{docs:?}");
        assert_eq!(docs[0], 20, "the nearest admitted document stays first");
    }

    #[test]
    fn a_pool_with_enough_documents_is_searched_once() {
        let mut asked = Vec::new();
        let mut inner = search_in(10_000, 1, 0);
        let docs = widening(50, 10, |k| {
            asked.push(k);
            inner(k)
        })
        .unwrap()
        .unwrap();
        assert_eq!((docs.len(), asked), (50, vec![50]));
    }

    #[test]
    fn widening_stops_at_the_table_and_at_the_cap() {
        // A table of 30 chunks of one document: read whole once, then no wider.
        assert_eq!(widening(50, 10, search_in(30, 30, 0)).unwrap().unwrap(), vec![0]);
        let mut asked = Vec::new();
        let mut inner = search_in(1_000_000, 1_000_000, 0);
        widening(50, 10, |k| {
            asked.push(k);
            inner(k)
        })
        .unwrap();
        assert_eq!(asked, vec![50, 200, 800, MAX_CHUNK_CANDIDATES]);
    }

    #[test]
    fn a_failed_search_is_no_list() {
        let docs: Option<Vec<usize>> = widening(50, 10, |_| Ok::<_, ()>(None)).unwrap();
        assert!(docs.is_none());
    }
}
