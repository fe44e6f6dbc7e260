//! Which passages an answer may be drawn from: every chunk of the pooled documents, ranked by
//! how much of the question's weight it holds ([`relevance::Weighed::held_by`], its title
//! included) plus how near it is in meaning (the cosine of its stored vector and the
//! question's). A long page answers in one section, not in its head or its table of contents,
//! and the words a user asks in are often not the page's ("how big can my crate be" of "a
//! 10MB size limit"): the rarity-weighted words find the section that names the thing asked,
//! the vectors the one that says it in other words. A document may give more than one passage;
//! the best [`POOL`] are the pool [`sources::choose`] picks from.

use super::sources::{self, Evidence, POOL};
use super::{claims, relevance};
use crate::question::words;
use crate::retrieval::vector::VectorContext;
use crate::shared::Shared;
use crate::stores::catalog::{self, Chunk};
use protocol::api::SearchResult;
use protocol::ApiError;
use std::collections::HashMap;

/// What writing all of the question's joined names adds to a passage's rank (its words' share
/// and its nearness each count up to 1): enough to break a near tie, not to lift a passage
/// over one that holds more of the question. `stack-size-threshold` asked, the section headed
/// by it holds the same words as the one of `array-size-threshold` ("arrays on the stack"),
/// and only the name tells them apart. Chosen on rustdocs-ask: the smallest of 0.02, 0.05,
/// 0.1 and 0.2 that ranks r56's section first (docs/retrieval.md).
pub const NAMED: f64 = 0.05;

/// The best [`POOL`] passages of `results` for the question `weighed`, best first, each cut
/// to the lines around those that hold the most of the question's words
/// ([`sources::focus`]).
pub fn ranked(w: &Shared, weighed: &relevance::Weighed, results: &[SearchResult]) -> Result<Vec<Evidence>, ApiError> {
    let mut docs: Vec<Pooled> = Vec::with_capacity(results.len());
    {
        let conn = w.stores.catalog.reader();
        for result in results {
            let Some(doc) = catalog::doc_by_docid(&conn, &result.docid)? else { continue };
            let chunks = catalog::chunks_of(&conn, &doc.mirror_hash)?;
            docs.push(Pooled { result, mirror_hash: doc.mirror_hash, chunks });
        }
    }
    let nearness = nearness(w, weighed.question().text(), &docs);
    let near = |d: usize, seq: u32| {
        nearness.get(&docs[d].mirror_hash).and_then(|by_seq| by_seq.get(&seq)).copied().unwrap_or(0.0)
    };
    let titled: Vec<Titled> =
        docs.iter().map(|d| Titled { address: &d.result.uri, title: &d.result.title, chunks: &d.chunks }).collect();
    let words = weighed.question().content_words();
    Ok(best(weighed, &titled, near, POOL)
        .into_iter()
        .map(|(d, c)| {
            let (result, chunk) = (docs[d].result, &docs[d].chunks[c]);
            let passage = sources::focus(words, &chunk.text, chunk.start_line, sources::MAX_EVIDENCE_CHARS);
            Evidence {
                docid: result.docid.clone(),
                uri: result.uri.clone(),
                title: result.title.clone(),
                score: result.score,
                text: passage.text,
                start_line: passage.start_line,
                end_line: passage.end_line.min(chunk.end_line),
            }
        })
        .collect())
}

/// A pooled result's document: its content and chunks.
struct Pooled<'r> {
    result: &'r SearchResult,
    mirror_hash: String,
    chunks: Vec<Chunk>,
}

/// A pooled document as [`best`] ranks its chunks.
struct Titled<'d> {
    address: &'d str,
    title: &'d str,
    chunks: &'d [Chunk],
}

/// The `limit` best chunks of `docs` (in the retrieval's order) as
/// `(document, chunk)` positions, best first: by the share of the question's weight the title
/// and chunk hold plus `near(document, seq)`; among equals the better-ranked document's, then
/// the earlier chunk.
fn best(
    weighed: &relevance::Weighed,
    docs: &[Titled],
    near: impl Fn(usize, u32) -> f64,
    limit: usize,
) -> Vec<(usize, usize)> {
    // A name a pooled document's address holds is that document's subject: retrieval found
    // the documents by it, and every section of theirs is about it. The other names stand
    // inside a document (a setting, a function) and tell its sections apart.
    let names: Vec<String> = weighed
        .question()
        .names()
        .iter()
        .filter(|n| !docs.iter().any(|d| d.address.to_lowercase().contains(n.as_str())))
        .cloned()
        .collect();
    let mut scored: Vec<(f64, usize, usize)> = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        for (c, chunk) in doc.chunks.iter().enumerate() {
            let text = format!("{} {}", doc.title, chunk.text);
            let held = weighed.held_by(&text);
            let named = named(&names, &text);
            scored.push((held + near(d, chunk.seq) + named, d, c));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().take(limit).map(|(_, d, c)| (d, c)).collect()
}

/// What a passage gains for writing the question's joined names as it does
/// ([`words::names`]): [`NAMED`] times the share of `names` its title or text writes whole.
fn named(names: &[String], text: &str) -> f64 {
    if names.is_empty() {
        return 0.0;
    }
    let text = text.to_lowercase();
    let written = names.iter().filter(|n| words::writes_name(&text, n)).count();
    NAMED * written as f64 / names.len() as f64
}

/// The cosine of the question's vector and each chunk's stored one, by content, then chunk.
/// Empty without an embedder or a vector store, or when either fails: the passages are then
/// ranked by their words alone.
fn nearness(w: &Shared, question: &str, docs: &[Pooled]) -> HashMap<String, HashMap<u32, f64>> {
    let Some(ctx) = VectorContext::available(w) else { return HashMap::new() };
    let query = match ctx.embedder.embed_query(question) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!("passages ranked without vectors: the question's embedding failed: {e}");
            return HashMap::new();
        }
    };
    let mut contents: Vec<String> = docs.iter().map(|d| d.mirror_hash.clone()).collect();
    contents.sort();
    contents.dedup();
    let expected = docs.iter().map(|d| d.chunks.len()).sum();
    match ctx.store.chunk_vectors(&ctx.key, &contents, expected) {
        Ok(vectors) => {
            let mut out: HashMap<String, HashMap<u32, f64>> = HashMap::new();
            for ((content, seq), v) in vectors {
                out.entry(content).or_default().insert(seq, claims::similarity(&query, &v));
            }
            out
        }
        Err(e) => {
            tracing::warn!("passages ranked without vectors: {e}");
            HashMap::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(seq: u32, text: &str) -> Chunk {
        Chunk { seq, text: text.into(), start_line: seq * 10 + 1, end_line: seq * 10 + 9, symbol: None }
    }

    fn titled<'d>(title: &'d str, chunks: &'d [Chunk]) -> Titled<'d> {
        Titled { address: "svc://notes/page.md", title, chunks }
    }

    /// `question` with `rare` weighing 8 and its other words 1.
    fn weighed(question: &str, rare: &str) -> relevance::Weighed {
        relevance::weighed(question, |words| words.iter().map(|w| if w == rare { 8.0 } else { 1.0 }).collect())
    }

    #[test]
    fn the_section_that_names_the_thing_asked_beats_the_page_head() {
        let q = weighed("How long does cargo wait for an HTTP request before the timeout?", "timeout");
        let config = [
            chunk(0, "Keyboard shortcuts. Press S to search. How to configure cargo, and how long it takes."),
            chunk(1, "[http] section: proxy, timeout, low-speed-limit"),
            chunk(2, "http.timeout: the timeout of each HTTP request, in seconds. Default: 30"),
        ];
        let other = [chunk(0, "cargo build: how long a build takes")];
        let docs = [titled("Configuration", &config), titled("cargo build", &other)];
        let best = best(&q, &docs, |_, _| 0.0, 2);
        assert_eq!(best, vec![(0, 2), (0, 1)], "one page may give two passages, its head none");
    }

    #[test]
    fn meaning_lifts_a_passage_in_other_words() {
        let q = weighed("How big can my crate be?", "crate");
        let page = [chunk(0, "Publishing a crate is permanent."), chunk(1, "There is a 10MB size limit on the file.")];
        let docs = [titled("Publishing a crate", &page)];
        // The title holds "crate" for both chunks: the words tie, and the head comes first.
        assert_eq!(best(&q, &docs, |_, _| 0.0, 1), vec![(0, 0)]);
        let near = |_, seq| if seq == 1 { 0.6 } else { 0.2 };
        assert_eq!(best(&q, &docs, near, 1), vec![(0, 1)]);
    }

    #[test]
    fn equal_passages_go_to_the_better_ranked_document() {
        let q = weighed("tokio runtime", "tokio");
        let a = [chunk(0, "the tokio runtime")];
        let b = [chunk(0, "the tokio runtime")];
        let docs = [titled("", &a), titled("", &b)];
        assert_eq!(best(&q, &docs, |_, _| 0.0, 5), vec![(0, 0), (1, 0)]);
    }

    #[test]
    fn the_section_that_writes_the_name_asked_beats_one_of_the_same_words() {
        let q = weighed("What is the default value of Clippy's stack-size-threshold setting?", "clippy");
        let page = [
            chunk(0, "## array-size-threshold\nThe maximum allowed size for arrays on the stack\nDefault Value: 16384"),
            chunk(1, "## stack-size-threshold\nThe maximum allowed stack size for functions\nDefault Value: 512000"),
        ];
        let docs = [titled("Clippy configuration", &page)];
        // The same words: the head comes first, unless the name is read whole; the name breaks
        // a near tie, not a clear lead.
        assert_eq!(q.held_by(&page[0].text), q.held_by(&page[1].text));
        assert_eq!(best(&q, &docs, |_, seq| if seq == 0 { 0.03 } else { 0.0 }, 1), vec![(0, 1)]);
        assert_eq!(best(&q, &docs, |_, seq| if seq == 0 { 0.1 } else { 0.0 }, 1), vec![(0, 0)]);
        // A name a pooled document's address holds is its subject, every chunk's: the words
        // and the nearness rank its chunks.
        let page = [chunk(0, "stack-size-threshold: default value"), chunk(1, "stack size threshold: default value")];
        let near = |_, seq| if seq == 1 { 0.03 } else { 0.0 };
        let named_by = |address| [Titled { address, title: "Clippy", chunks: &page }];
        assert_eq!(best(&q, &named_by("svc://docs/lints.md"), near, 1), vec![(0, 0)]);
        assert_eq!(best(&q, &named_by("svc://crates/stack-size-threshold-1.0/README.md"), near, 1), vec![(0, 1)]);
    }
}
