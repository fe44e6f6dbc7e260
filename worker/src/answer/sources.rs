//! `adaptive_coverage_v1`: which pooled results an answer is generated from. A base of the
//! best-ranked results, then more (up to a maximum) while a facet of the question is still
//! uncovered and a pooled result covers it.

use super::relevance::{self, MIN_RELEVANCE};
use crate::question::words::words;
use protocol::api::SourceReason;

/// Sources every answer starts from (when the pool has them). Two since the pool holds the
/// best passages rather than one per document: the best two hold an answer phrase about as
/// often as the best three (rustdocs-ask: 31 against 34 of 50, ask-docs: 52 against 54 of
/// 57), and each gets half the prompt instead of a third (docs/retrieval.md).
pub const BASE_SOURCES: usize = 2;
/// Sources an answer draws on at most.
pub const MAX_SOURCES: usize = 5;
/// Results considered, and passages of theirs ([`super::passages`]).
pub const POOL: usize = 12;
/// Characters of evidence per source at most.
pub const MAX_EVIDENCE_CHARS: usize = 1500;

/// A pooled passage: a chunk of a result's document, cut to [`MAX_EVIDENCE_CHARS`].
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub score: f32,
    pub text: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// What [`choose`] decided about one pooled result (by its position in the pool).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub pool_index: usize,
    pub query_token_hits: u32,
    pub facet_hits: u32,
    /// The share of the question's weight the result holds
    /// ([`relevance::Weighed::held_by_source`]), to three decimals.
    pub relevance: f64,
    pub reason: SourceReason,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub facets: Vec<String>,
    pub target_sources: usize,
    /// In prompt order: `[1]` is the first.
    pub selected: Vec<Decision>,
    pub dropped: Vec<Decision>,
}

impl Choice {
    /// The chosen sources in `pool` (the pool this choice was made from), in prompt order.
    pub fn sources<'p>(&self, pool: &'p [Evidence]) -> impl Iterator<Item = &'p Evidence> + use<'p, '_> {
        self.selected.iter().map(move |d| &pool[d.pool_index])
    }
}

/// Chooses the sources for `question` (`weighed`: its words by their rarity) from `pool` (best
/// first). Results that share no word with the question are never chosen, nor those that hold
/// less than [`MIN_RELEVANCE`] of its weight (address, title and text) while another holds
/// it. When none does, the question is asked in other words than the notes use ("how large
/// are the chunks" of a note on "chunks of 900 tokens"): the best-ranked results that share a
/// word with it are the sources (`best_available`), and the generator and the grounding check
/// decide whether they answer it.
pub fn choose(weighed: &relevance::Weighed, pool: &[Evidence]) -> Choice {
    let facets = weighed.question().facets();
    let question_words = weighed.question().content_words();
    // Each source's words, once: for its facets and for its question words.
    let source_words: Vec<Vec<String>> = pool.iter().map(|e| words(&format!("{} {}", e.title, e.text))).collect();
    let covered_by: Vec<Vec<bool>> =
        source_words.iter().map(|words| facets.iter().map(|f| f.covered_by(words)).collect()).collect();
    let hits: Vec<u32> = source_words
        .iter()
        .map(|words| question_words.iter().filter(|q| words.iter().any(|w| w.starts_with(q.as_str()))).count() as u32)
        .collect();
    let held: Vec<f64> = pool.iter().map(|e| weighed.held_by_source(&e.uri, &e.title, &e.text)).collect();
    let weak = !held.iter().any(|h| *h >= MIN_RELEVANCE);
    let relevant: Vec<bool> = held.iter().map(|h| weak || *h >= MIN_RELEVANCE).collect();
    let eligible = |i: usize| hits[i] > 0 && relevant[i];
    let decision = |i: usize, reason| Decision {
        pool_index: i,
        query_token_hits: hits[i],
        facet_hits: covered_by[i].iter().filter(|c| **c).count() as u32,
        relevance: (held[i] * 1000.0).round() / 1000.0,
        reason,
    };
    let base = if weak { SourceReason::BestAvailable } else { SourceReason::TopRank };
    let target_sources = facets.len().clamp(BASE_SOURCES, MAX_SOURCES);
    let mut chosen: Vec<Option<SourceReason>> = vec![None; pool.len()];
    let mut taken = 0;
    for (i, slot) in chosen.iter_mut().enumerate() {
        if taken == BASE_SOURCES {
            break;
        }
        if eligible(i) {
            *slot = Some(base);
            taken += 1;
        }
    }
    let mut covered: Vec<bool> = (0..facets.len()).map(|f| chosen_cover(&chosen, &covered_by, f)).collect();
    while taken < MAX_SOURCES {
        let next = (0..pool.len()).find(|&i| {
            chosen[i].is_none() && eligible(i) && covered_by[i].iter().zip(&covered).any(|(c, done)| *c && !*done)
        });
        let Some(i) = next else { break };
        chosen[i] = Some(SourceReason::FacetCoverage);
        taken += 1;
        for (done, c) in covered.iter_mut().zip(&covered_by[i]) {
            *done |= *c;
        }
    }
    let mut selected = Vec::new();
    let mut dropped = Vec::new();
    for (i, reason) in chosen.iter().enumerate() {
        match reason {
            Some(r) => selected.push(decision(i, *r)),
            None if hits[i] == 0 => dropped.push(decision(i, SourceReason::NoQueryTerms)),
            None if !relevant[i] => dropped.push(decision(i, SourceReason::BelowRelevance)),
            None if taken == MAX_SOURCES => dropped.push(decision(i, SourceReason::SourceLimit)),
            None => dropped.push(decision(i, SourceReason::NoNewFacet)),
        }
    }
    Choice { facets: facets.iter().map(|f| f.text().to_string()).collect(), target_sources, selected, dropped }
}

fn chosen_cover(chosen: &[Option<SourceReason>], covered_by: &[Vec<bool>], facet: usize) -> bool {
    chosen.iter().zip(covered_by).any(|(c, cov)| c.is_some() && cov[facet])
}

/// A passage of a chunk: its text and the lines it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub text: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// The part of `text` (a chunk whose first line is `start_line`) that matters for a question
/// of the content words `question`: whole lines around the first line that holds the most of
/// them (the chunk's head when none does), grown a line at a time on both sides while it stays
/// within `max_chars` characters. A text within the limit is kept whole. Small generators
/// answer from what they are shown: the lines that hold the answer must be in the prompt, not
/// cut off after a chunk's first paragraphs.
pub fn focus(question: &[String], text: &str, start_line: u32, max_chars: usize) -> Passage {
    let lines: Vec<&str> = text.split('\n').collect();
    let span = |lo: usize, hi: usize| (start_line + lo as u32, start_line + hi.saturating_sub(1) as u32);
    if text.chars().count() <= max_chars {
        let (start_line, end_line) = span(0, lines.len());
        return Passage { text: text.to_string(), start_line, end_line };
    }
    let hits = |line: &str| {
        let words = words(line);
        question.iter().filter(|q| words.iter().any(|w| w.starts_with(q.as_str()))).count()
    };
    let mut best = (0, 0);
    for (i, line) in lines.iter().enumerate() {
        let h = hits(line);
        if h > best.1 {
            best = (i, h);
        }
    }
    let width = |i: usize| lines[i].chars().count() + 1;
    let (mut lo, mut hi) = (best.0, best.0 + 1);
    let mut used = width(best.0);
    loop {
        let mut grew = false;
        if hi < lines.len() && used + width(hi) <= max_chars {
            used += width(hi);
            hi += 1;
            grew = true;
        }
        if lo > 0 && used + width(lo - 1) <= max_chars {
            used += width(lo - 1);
            lo -= 1;
            grew = true;
        }
        if !grew {
            break;
        }
    }
    // One line longer than the limit is cut at the limit.
    let text: String = lines[lo..hi].join("\n").chars().take(max_chars).collect();
    let (start_line, end_line) = span(lo, hi);
    Passage { text, start_line, end_line }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word of `question` weighs the same.
    fn uniform(question: &str) -> relevance::Weighed {
        relevance::weighed(question, |words| vec![1.0; words.len()])
    }

    fn ev(id: &str, text: &str) -> Evidence {
        Evidence {
            docid: id.into(),
            uri: format!("svc://n/{id}.md"),
            title: String::new(),
            score: 0.5,
            text: text.into(),
            start_line: 1,
            end_line: 1,
        }
    }

    #[test]
    fn takes_the_base_then_covers_the_missing_facet() {
        let pool = vec![
            ev("a", "rust ownership explained"),
            ev("b", "rust ownership again"),
            ev("c", "more rust ownership"),
            ev("d", "rust ownership once more"),
            ev("e", "borrowing rules"),
        ];
        let c = choose(&uniform("rust ownership and borrowing"), &pool);
        assert_eq!(c.facets, vec!["rust ownership", "borrowing"]);
        let picked: Vec<(usize, SourceReason)> = c.selected.iter().map(|d| (d.pool_index, d.reason)).collect();
        assert_eq!(
            picked,
            vec![(0, SourceReason::TopRank), (1, SourceReason::TopRank), (4, SourceReason::FacetCoverage)]
        );
        assert_eq!(c.dropped.len(), 2);
        assert_eq!((c.dropped[0].pool_index, c.dropped[0].reason), (2, SourceReason::NoNewFacet));
        assert_eq!(c.selected[2].facet_hits, 1);
    }

    #[test]
    fn unrelated_results_are_never_sources() {
        let pool = vec![ev("a", "gardening tips"), ev("b", "tomatoes")];
        let c = choose(&uniform("quantum entanglement"), &pool);
        assert!(c.selected.is_empty());
        assert!(c.dropped.iter().all(|d| d.reason == SourceReason::NoQueryTerms && d.query_token_hits == 0));
    }

    #[test]
    fn a_result_without_the_rare_words_is_no_source() {
        let q = "minimum supported rust version of lancedb";
        let rare =
            relevance::weighed(q, |words| words.iter().map(|w| if w == "lancedb" { 8.0 } else { 1.0 }).collect());
        let pool = vec![ev("a", "minimum supported rust version: 1.41"), ev("b", "lancedb needs rust 1.78 at minimum")];
        let c = choose(&rare, &pool);
        assert_eq!(c.selected.iter().map(|d| d.pool_index).collect::<Vec<_>>(), vec![1]);
        assert_eq!((c.dropped[0].pool_index, c.dropped[0].reason), (0, SourceReason::BelowRelevance));
        // Without a result that holds enough of the question, the best-ranked ones that share
        // a word with it are the sources, said to be the best available.
        let c = choose(&rare, &pool[..1]);
        assert_eq!(c.selected.len(), 1);
        assert_eq!((c.selected[0].pool_index, c.selected[0].reason), (0, SourceReason::BestAvailable));
        assert!((c.selected[0].relevance - 0.333).abs() < 1e-9, "{:?}", c.selected[0]);
    }

    #[test]
    fn never_more_than_the_maximum() {
        let pool: Vec<Evidence> =
            (0..12).map(|i| ev(&i.to_string(), &format!("alpha beta gamma delta epsilon zeta {i}"))).collect();
        let c = choose(&uniform("alpha, beta, gamma, delta, epsilon, zeta"), &pool);
        assert!(c.selected.len() <= MAX_SOURCES);
        assert_eq!(c.target_sources, MAX_SOURCES);
        assert_eq!(c.selected.len() + c.dropped.len(), 12);
    }

    #[test]
    fn focus_keeps_whole_lines_around_the_best_line() {
        let mut text = "filler words here\n".repeat(200);
        text.push_str("the default port is 3000\n");
        text.push_str(&"more filler words\n".repeat(200));
        let question = crate::question::words::content_words("Which port is the default?");
        let p = focus(&question, &text, 10, MAX_EVIDENCE_CHARS);
        assert!(p.text.chars().count() <= MAX_EVIDENCE_CHARS);
        assert!(p.text.contains("the default port is 3000"), "{}", p.text);
        assert!(p.text.starts_with("filler") && p.text.ends_with("filler words"), "whole lines");
        let first = text.lines().position(|l| l.contains("3000")).unwrap() as u32;
        assert!(p.start_line < 10 + first && p.end_line > 10 + first);
        assert_eq!(p.end_line - p.start_line, p.text.matches('\n').count() as u32);
        let head = focus(&question, &"nothing relevant\n".repeat(400), 1, 100);
        assert_eq!(head.start_line, 1, "no line holds a question word: the head");
        let short = focus(&question, "short", 3, 100);
        assert_eq!(short, Passage { text: "short".into(), start_line: 3, end_line: 3 });
    }
}
