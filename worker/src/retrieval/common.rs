//! What every retrieval mode shares (BM25, vector, hybrid): the scope of a request (which
//! collections exist, author and exclude filters), admission of a candidate document,
//! recency ordering, and turning ranked documents into the contract's results.

use crate::config::content_types;
use crate::shared::Shared;
use crate::stores::catalog::{self, Chunk, DocRow};
use crate::stores::DocKey;
use crate::{index::ingest, time_fmt, uri};
use protocol::api::{ChunkRef, SearchResult, SearchSource};
use protocol::{ApiError, SearchRequest};
use regex::Regex;
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

const SNIPPET_CHARS: usize = 300;

/// The words that ask for the newest documents first.
fn recency_words() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(latest|newest|most recent|recent|recently|today|yesterday|this week|last week|this month|last month)\b",
        )
        .ok()
    })
    .as_ref()
}

/// Whether the query asks for the newest documents first.
pub fn has_recency_intent(query: &str) -> bool {
    recency_words().is_some_and(|re| re.is_match(query))
}

/// The query without its recency words, which ask for an order and say nothing of what the
/// documents are about ("latest meeting notes" ranks as "meeting notes"); the query as it is
/// when nothing else is left.
pub fn without_recency_words(query: &str) -> std::borrow::Cow<'_, str> {
    let Some(re) = recency_words() else { return std::borrow::Cow::Borrowed(query) };
    let rest = re.replace_all(query, " ");
    if rest.chars().any(char::is_alphanumeric) {
        rest
    } else {
        std::borrow::Cow::Borrowed(query)
    }
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

/// A document ranked by some retrieval, with the chunk that matched when known.
pub struct Ranked {
    /// The score the reply shows (normalized to [0, 1] by the retrieval).
    pub score: f32,
    /// The retrieval's own score before normalization (BM25, cosine, fused RRF): a ratio
    /// scale, so "near the best" means the same for two results as for twenty.
    pub relevance: f32,
    pub row: DocRow,
    pub seq: Option<u32>,
    /// Chunks loaded while admitting the document (reused for the snippet).
    pub chunks: Option<Vec<Chunk>>,
}

/// Recency reorders only the results whose relevance is at least this share of the best
/// one: a new note that merely mentions one word of "latest meeting notes" must not come
/// first. Compared on [`Ranked::relevance`], not the min-max score, which always puts the
/// weakest result at 0.
const RECENCY_BAND: f32 = 0.5;

/// Which results a recency order puts newest first: those relevant to the query.
pub enum Relevant<'a> {
    /// Those holding the most of the query's words any result holds (every word, when one
    /// does), by the keyword index's count of each ([`crate::stores::bm25::Bm25Index::coverage`]):
    /// all the way down the list, however their scores fall.
    Covering(&'a HashMap<DocKey, usize>),
    /// Those within [`RECENCY_BAND`] of the best relevance (a vector search, which has no
    /// words to count).
    NearTheBest,
}

/// When the query asks for recent documents: the relevant results ([`Relevant`]) come first,
/// newest first (ties by score); the others follow in score order.
pub fn order_by_recency(ranked: &mut Vec<Ranked>, relevant: &Relevant<'_>) {
    let is_relevant: Box<dyn Fn(&Ranked) -> bool> = match relevant {
        Relevant::Covering(coverage) => {
            let words = |r: &Ranked| coverage.get(&r.row.id).copied().unwrap_or(0);
            let most = ranked.iter().map(words).max().unwrap_or(0);
            Box::new(move |r: &Ranked| most > 0 && words(r) == most)
        }
        Relevant::NearTheBest => {
            let best = ranked.iter().map(|r| r.relevance).fold(f32::NEG_INFINITY, f32::max);
            let cut = best * RECENCY_BAND;
            Box::new(move |r: &Ranked| r.relevance >= cut)
        }
    };
    let (mut strong, mut weak): (Vec<Ranked>, Vec<Ranked>) = ranked.drain(..).partition(|r| is_relevant(r));
    strong.sort_by(|a, b| recency_ms(&b.row).cmp(&recency_ms(&a.row)).then(b.score.total_cmp(&a.score)));
    weak.sort_by(|a, b| b.score.total_cmp(&a.score));
    strong.append(&mut weak);
    *ranked = strong;
}

/// The content type of a catalog row under the worker's rules.
pub fn content_type_of(w: &Shared, row: &DocRow) -> String {
    w.settings.content_types.resolve(row.fm_type.as_deref(), &row.rel_path).0
}

/// What a row's content type adds to its normalized score (0 without a boosting rule).
pub fn content_type_additive(w: &Shared, row: &DocRow) -> f64 {
    if w.settings.content_types.is_empty() {
        return 0.0;
    }
    w.settings.content_types.additive(&content_type_of(w, row))
}

/// Adds each result's content-type boost to its normalized score (clamped to [0, 1]) and
/// orders by the boosted score (ties keep their order). It never adds or drops a result.
pub fn apply_content_type_boost(w: &Shared, ranked: &mut [Ranked]) {
    if w.settings.content_types.is_empty() {
        return;
    }
    for r in ranked.iter_mut() {
        let add = content_type_additive(w, &r.row);
        if add != 0.0 {
            r.score = content_types::boosted(f64::from(r.score), add) as f32;
        }
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
}

/// The common tail of every retrieval: drop results under `min_score`, order newest first
/// when asked (`recency`: which results are relevant), cut to `limit`. Returns the total
/// before the cut.
pub fn finish(ranked: &mut Vec<Ranked>, min_score: Option<f64>, recency: Option<Relevant<'_>>, limit: usize) -> u64 {
    if let Some(min) = min_score {
        ranked.retain(|r| f64::from(r.score) >= min);
    }
    if let Some(relevant) = recency {
        order_by_recency(ranked, &relevant);
    }
    let total = ranked.len() as u64;
    ranked.truncate(limit);
    total
}

/// The request's scope: configured collection roots and the filters applied to rows.
pub struct Scope {
    pub roots: HashMap<String, String>,
    author: Option<String>,
    exclude: Vec<String>,
}

impl Scope {
    /// Fails with 404 when the request names a collection that does not exist.
    pub fn of(w: &Shared, req: &SearchRequest) -> Result<Self, ApiError> {
        let roots: HashMap<String, String> =
            w.settings.config().collections.iter().map(|c| (c.name.clone(), c.path.clone())).collect();
        if let Some(c) = &req.filters.collection {
            if !roots.contains_key(c.as_str()) {
                return Err(ApiError::not_found(format!("Collection not found: {c}")));
            }
        }
        Ok(Scope { roots, author: req.filters.author.as_ref().map(|a| a.to_lowercase()), exclude: req.exclude.clone() })
    }

    /// Whether an extra candidate pool is worth fetching (filters applied after retrieval).
    pub fn filters_rows(&self) -> bool {
        self.author.is_some() || !self.exclude.is_empty()
    }

    /// Admits an active document of a configured collection that passes the author and
    /// exclude filters. Returns the chunks when it had to load them.
    pub fn admit(&self, conn: &Connection, row: &DocRow) -> Result<Option<Option<Vec<Chunk>>>, ApiError> {
        if !row.active || !self.roots.contains_key(&row.collection) {
            return Ok(None);
        }
        if let Some(a) = &self.author {
            if !row.author.as_deref().is_some_and(|x| x.to_lowercase().contains(a.as_str())) {
                return Ok(None);
            }
        }
        if self.exclude.is_empty() {
            return Ok(Some(None));
        }
        let hay = |s: &str| {
            let l = s.to_lowercase();
            self.exclude.iter().any(|x| l.contains(x.as_str()))
        };
        let cs = catalog::chunks_of(conn, &row.mirror_hash)?;
        if hay(&row.title) || hay(&row.rel_path) || cs.iter().any(|c| hay(&c.text)) {
            return Ok(None);
        }
        Ok(Some(Some(cs)))
    }
}

/// Lowercased words of `intent` (they steer the snippet, never the ranking).
pub fn intent_terms(intent: Option<&str>) -> Vec<String> {
    intent
        .map(|i| i.split(|c: char| !c.is_alphanumeric()).filter(|t| t.len() >= 2).map(str::to_lowercase).collect())
        .unwrap_or_default()
}

/// The chunk that holds the most query terms (intent terms count 0.3, the chunk that
/// matched a vector search 0.2); ties go to the earlier chunk.
pub fn best_chunk<'a>(
    chunks: &'a [Chunk],
    terms: &[String],
    intent: &[String],
    matched: Option<u32>,
) -> Option<&'a Chunk> {
    let hits = |text: &str, ts: &[String]| -> f32 {
        let lower = text.to_lowercase();
        ts.iter().filter(|t| lower.contains(t.as_str())).count() as f32
    };
    let mut best: Option<(&Chunk, f32)> = None;
    for c in chunks {
        let bonus = if matched == Some(c.seq) { 0.2 } else { 0.0 };
        let s = hits(&c.text, terms) + 0.3 * hits(&c.text, intent) + bonus;
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((c, s));
        }
    }
    best.map(|(c, _)| c)
}

/// The contract's result entries for ranked documents.
pub fn results(
    w: &Shared,
    scope: &Scope,
    ranked: Vec<Ranked>,
    terms: &[String],
    intent: &[String],
) -> Result<Vec<SearchResult>, ApiError> {
    let conn = w.stores.catalog.reader();
    let ids: Vec<DocKey> = ranked.iter().map(|r| r.row.id).collect();
    let tags = catalog::tags_of(&conn, &ids)?;
    let mut out = Vec::with_capacity(ranked.len());
    for r in ranked {
        let chunks = match r.chunks {
            Some(c) => c,
            None => catalog::chunks_of(&conn, &r.row.mirror_hash)?,
        };
        let row = r.row;
        let best = best_chunk(&chunks, terms, intent, r.seq);
        let symbol = best.and_then(|c| c.symbol.clone());
        let (chunk, snippet, line) = match best {
            Some(c) => {
                let s = ingest::snippet(&c.text, terms, SNIPPET_CHARS);
                (ChunkRef { text: c.text.clone(), index: c.seq }, s.text, c.start_line + s.line_offset)
            }
            None => (ChunkRef { text: row.title.clone(), index: 0 }, row.title.clone(), row.body_start_line),
        };
        let abs =
            scope.roots.get(&row.collection).map(|root| Path::new(root).join(row.file_rel())).filter(|p| p.is_file());
        out.push(SearchResult {
            docid: row.docid.clone(),
            uri: uri::doc_uri(&row.collection, &row.rel_path),
            title: row.title.clone(),
            collection: row.collection.clone(),
            content_type: content_type_of(w, &row),
            tags: tags.get(&row.id).cloned().unwrap_or_default(),
            score: r.score,
            chunk,
            symbol,
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
        });
    }
    Ok(out)
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

    #[test]
    fn best_chunk_prefers_terms_then_the_matched_chunk() {
        let c = |seq, text: &str| Chunk { seq, text: text.into(), start_line: 1, end_line: 1, symbol: None };
        let chunks = vec![c(0, "alpha"), c(1, "beta gamma"), c(2, "beta")];
        assert_eq!(best_chunk(&chunks, &["beta".into()], &[], None).map(|c| c.seq), Some(1));
        assert_eq!(best_chunk(&chunks, &["beta".into()], &[], Some(2)).map(|c| c.seq), Some(2));
        assert_eq!(best_chunk(&chunks, &[], &[], None).map(|c| c.seq), Some(0));
    }
}
