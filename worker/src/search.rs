//! `POST /api/search`: BM25 retrieval, filters, score normalization, recency ordering and
//! snippet selection.

use crate::catalog::{self, ChunkRow, DocRow};
use crate::query::KeywordQuery;
use crate::{ingest, runtime, time_fmt, uri, Worker};
use protocol::api::{ChunkRef, SearchMeta, SearchResponse, SearchResult, SearchSource};
use protocol::{ApiError, SearchRequest};
use regex::Regex;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

const MAX_CANDIDATES: usize = 1000;
const SNIPPET_CHARS: usize = 300;

/// Words that ask for the newest documents first.
pub fn has_recency_intent(query: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(latest|newest|most recent|recent|recently|today|yesterday|this week|last week|this month|last month)\b",
        )
        .ok()
    })
    .as_ref()
    .is_some_and(|re| re.is_match(query))
}

/// Min-max normalization into 0..1 (a single or all-equal score set maps to 1).
pub fn normalize(scores: &mut [f32]) {
    let (lo, hi) = scores.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    for s in scores.iter_mut() {
        *s = if hi > lo { (*s - lo) / (hi - lo) } else { 1.0 };
    }
}

/// Newest-first key: the front-matter date, else the file's modified time.
fn recency_ms(row: &DocRow) -> i64 {
    row.fm_date.as_deref().and_then(time_fmt::iso_to_ms).unwrap_or(row.source_mtime_ns / 1_000_000)
}

/// The chunk that holds the most query terms (intent terms count 0.3); ties go to the earlier chunk.
fn best_chunk<'a>(chunks: &'a [ChunkRow], terms: &[String], intent: &[String]) -> Option<&'a ChunkRow> {
    let hits = |text: &str, ts: &[String]| -> f32 {
        let lower = text.to_lowercase();
        ts.iter().filter(|t| lower.contains(t.as_str())).count() as f32
    };
    let mut best: Option<(&ChunkRow, f32)> = None;
    for c in chunks {
        let s = hits(&c.text, terms) + 0.3 * hits(&c.text, intent);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((c, s));
        }
    }
    best.map(|(c, _)| c)
}

pub fn search(w: &Worker, req: &SearchRequest) -> Result<SearchResponse, ApiError> {
    let q = KeywordQuery::parse(&req.query)?;
    let roots: HashMap<String, String> = w.config().collections.iter().map(|c| (c.name.clone(), c.path.clone())).collect();
    if let Some(c) = &req.filters.collection {
        if !roots.contains_key(c) {
            return Err(ApiError::not_found(format!("Collection not found: {c}")));
        }
    }
    let recency = has_recency_intent(&req.query);
    let limit = req.limit.max(1) as usize;
    let mut candidates = limit.max(req.candidate_limit.unwrap_or(0) as usize);
    if recency || req.filters.author.is_some() || !req.exclude.is_empty() {
        candidates = (candidates * 3).max(50);
    }
    let hits = w.bm25.search(&q, &req.filters, candidates.min(MAX_CANDIDATES)).map_err(runtime)?;

    let conn = w.catalog.reader();
    let keys: Vec<i64> = hits.iter().map(|(_, k)| *k).collect();
    let rows: HashMap<i64, DocRow> =
        catalog::docs_by_ids(&conn, &keys).map_err(runtime)?.into_iter().map(|r| (r.id, r)).collect();
    let tags = catalog::tags_of(&conn, &keys).map_err(runtime)?;
    let author = req.filters.author.as_ref().map(|a| a.to_lowercase());

    // Chunks are loaded only where needed: for `exclude`, and for the results kept.
    let mut kept: Vec<(f32, &DocRow, Option<Vec<ChunkRow>>)> = Vec::new();
    for (score, key) in &hits {
        let Some(row) = rows.get(key).filter(|r| r.active && roots.contains_key(&r.collection)) else { continue };
        if let Some(a) = &author {
            if !row.author.as_deref().is_some_and(|x| x.to_lowercase().contains(a.as_str())) {
                continue;
            }
        }
        let mut chunks = None;
        if !req.exclude.is_empty() {
            let hay = |s: &str| {
                let l = s.to_lowercase();
                req.exclude.iter().any(|x| l.contains(x.as_str()))
            };
            let cs = catalog::chunks_of(&conn, &row.mirror_hash).map_err(runtime)?;
            if hay(&row.title) || hay(&row.rel_path) || cs.iter().any(|c| hay(&c.text)) {
                continue;
            }
            chunks = Some(cs);
        }
        kept.push((*score, row, chunks));
    }
    let mut scores: Vec<f32> = kept.iter().map(|k| k.0).collect();
    normalize(&mut scores);
    let mut ranked: Vec<(f32, &DocRow, Option<Vec<ChunkRow>>)> =
        kept.into_iter().zip(scores).map(|((_, r, c), s)| (s, r, c)).collect();
    if let Some(min) = req.min_score {
        ranked.retain(|(s, _, _)| *s >= min);
    }
    if recency {
        ranked.sort_by(|a, b| recency_ms(b.1).cmp(&recency_ms(a.1)).then(b.0.total_cmp(&a.0)));
    }
    let total = ranked.len() as u64;
    ranked.truncate(limit);

    let terms = q.highlight_terms();
    let intent: Vec<String> = req
        .intent
        .as_deref()
        .map(|i| i.split(|c: char| !c.is_alphanumeric()).filter(|t| t.len() >= 2).map(str::to_lowercase).collect())
        .unwrap_or_default();
    let mut loaded = Vec::with_capacity(ranked.len());
    for (score, row, chunks) in ranked {
        let chunks = match chunks {
            Some(c) => c,
            None => catalog::chunks_of(&conn, &row.mirror_hash).map_err(runtime)?,
        };
        loaded.push((score, row, chunks));
    }
    let results = loaded
        .into_iter()
        .map(|(score, row, chunks)| {
            let (chunk, snippet, line) = match best_chunk(&chunks, &terms, &intent) {
                Some(c) => {
                    let s = ingest::snippet(&c.text, &terms, SNIPPET_CHARS);
                    (ChunkRef { text: c.text.clone(), index: c.seq }, s.text, c.start_line + s.line_offset)
                }
                None => (ChunkRef { text: row.title.clone(), index: 0 }, row.title.clone(), row.body_start_line),
            };
            let abs = roots.get(&row.collection).map(|root| Path::new(root).join(&row.rel_path)).filter(|p| p.is_file());
            SearchResult {
                docid: row.docid.clone(),
                uri: uri::doc_uri(&row.collection, &row.rel_path),
                title: row.title.clone(),
                collection: row.collection.clone(),
                tags: tags.get(&row.id).cloned().unwrap_or_default(),
                score,
                chunk,
                snippet,
                line,
                source: SearchSource {
                    rel_path: row.rel_path.clone(),
                    abs_path: abs.map(|p| p.display().to_string()),
                    mime: row.source_mime.clone(),
                    ext: row.source_ext.clone(),
                    modified_at: time_fmt::ms_to_iso(row.source_mtime_ns / 1_000_000),
                    size_bytes: row.source_size,
                    document_date: row.fm_date.clone(),
                },
            }
        })
        .collect();
    Ok(SearchResponse {
        query: req.query.clone(),
        mode: "bm25".into(),
        results,
        meta: SearchMeta { total_results: total, recency_ordered: recency },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_min_max() {
        let mut s = vec![2.0, 4.0, 3.0];
        normalize(&mut s);
        assert_eq!(s, vec![0.0, 1.0, 0.5]);
        let mut one = vec![7.0];
        normalize(&mut one);
        assert_eq!(one, vec![1.0]);
    }

    #[test]
    fn detects_recency_words() {
        assert!(has_recency_intent("latest notes on rust"));
        assert!(has_recency_intent("What did I write last week?"));
        assert!(!has_recency_intent("recentralize the plan"));
    }
}
