//! The sources an answer cites: its `[n]` markers (`[2]`, `[1, 3]` or `[1][2]`, each number a
//! source's position in the prompt, from 1), and for sentences without a marker the source
//! whose words they hold, else the source closest to them in meaning (the small default
//! generator rarely writes markers, and paraphrases).

use super::claims::{self, Claim};
use super::relevance;

/// The markers of `answer`: the distinct source numbers in order of first mention that name
/// one of `sources` sources, and how many numbers named none.
pub fn markers(answer: &str, sources: usize) -> (Vec<usize>, u32) {
    let mut cited: Vec<usize> = Vec::new();
    let mut unmatched = 0u32;
    for m in claims::markers_of(answer).0 {
        if !(1..=sources).contains(&m.number) {
            unmatched += 1;
        } else if !cited.contains(&m.number) {
            cited.push(m.number);
        }
    }
    (cited, unmatched)
}

/// The sources that give what a sentence of `answer` adds to the question as the answer (one
/// of their sentences about the question holds its numbers and at least half of its words:
/// [`claims::Addition::mostly_held_by`], the grounding check's rule in one place), each once, in
/// order of first credit, for every sentence, marked or not: the small generator often cites
/// the neighbour of the source its answer comes from. `sources` are `(name, text)`, the name
/// being the source's address and title.
pub fn answered_by(answer: &str, question: &relevance::Weighed, sources: &[(&str, &str)]) -> Vec<usize> {
    let mut out = Vec::new();
    for claim in claims::split(answer).into_iter().filter(Claim::is_substantive) {
        let addition = claims::Addition::of(&claim.plain, question.question());
        for (i, (name, text)) in sources.iter().enumerate() {
            if addition.mostly_held_by(question, name, text) {
                push_new(&mut out, i + 1);
            }
        }
    }
    out
}

/// Content words of a sentence a source must hold for the sentence to be credited to it: half,
/// as a capsule facet counts as covered. A grounding hint, not a verification (verified mode
/// asks for 80 % and a semantic check).
const ATTRIBUTION_COVERAGE: f64 = 0.5;

/// The sources the unmarked sentences of an answer are credited to, each in order of first
/// credit.
#[derive(Debug, Default, PartialEq)]
pub struct Attributed {
    /// Sources holding a sentence's words.
    pub by_words: Vec<usize>,
    /// Sources closest in meaning to a sentence whose words no source holds.
    pub by_meaning: Vec<usize>,
}

/// Credits each sentence of `answer` without a marker: to the source (texts, in prompt order)
/// that holds the largest share of its content words, at least [`ATTRIBUTION_COVERAGE`], and
/// all its numbers, with nothing contradicting it (ties to the earlier source); failing that,
/// to the source with the sentence closest in meaning, at least [`ATTRIBUTION_SIMILARITY`].
/// `embed` gives unit vectors, one per text, or `None` when no embedder is at hand (then
/// nothing is credited by meaning).
pub fn attributed(answer: &str, sources: &[&str], embed: Embed<'_>) -> Attributed {
    let mut out = Attributed::default();
    let mut open: Vec<String> = Vec::new();
    for claim in claims::split(answer).into_iter().filter(|c| c.markers.is_empty() && c.is_substantive()) {
        match by_words(&claim.plain, sources) {
            Some(n) => push_new(&mut out.by_words, n),
            None => open.push(claim.plain),
        }
    }
    out.by_meaning = by_meaning(&open, sources, embed);
    out
}

fn push_new(out: &mut Vec<usize>, n: usize) {
    if !out.contains(&n) {
        out.push(n);
    }
}

/// The source holding the largest share of `sentence`'s words, as [`attributed`] credits it.
fn by_words(sentence: &str, sources: &[&str]) -> Option<usize> {
    sources
        .iter()
        .enumerate()
        .map(|(i, text)| (i + 1, claims::lexical(sentence, text)))
        .filter(|(_, l)| l.coverage >= ATTRIBUTION_COVERAGE && l.numbers_present && !l.conflicts)
        .max_by(|a, b| a.1.coverage.total_cmp(&b.1.coverage).then(b.0.cmp(&a.0)))
        .map(|(n, _)| n)
}

/// Cosine (unit vectors) between a sentence of the answer and a sentence of a source at or
/// above which the source is credited by meaning: the similarity verified mode asks of a
/// supported claim.
pub const ATTRIBUTION_SIMILARITY: f64 = 0.6;

/// Unit vectors for texts, one each, or `None` without an embedder.
pub type Embed<'a> = &'a dyn Fn(&[&str]) -> Option<Vec<Vec<f32>>>;

/// The sources closest in meaning to the `open` sentences, as [`attributed`] credits them.
fn by_meaning(open: &[String], sources: &[&str], embed: Embed<'_>) -> Vec<usize> {
    if open.is_empty() || sources.is_empty() {
        return Vec::new();
    }
    // One call: the open sentences, then every sentence of every source.
    let mut texts: Vec<String> = open.to_vec();
    let mut owner: Vec<usize> = Vec::new();
    for (i, text) in sources.iter().enumerate() {
        for s in claims::sentences(text) {
            texts.push(s);
            owner.push(i + 1);
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let Some(vectors) = embed(&refs).filter(|v| v.len() == refs.len()) else { return Vec::new() };
    let (asked, passages) = vectors.split_at(open.len());
    let mut out = Vec::new();
    for sentence in asked {
        let candidates = passages.iter().map(Vec::as_slice).zip(owner.iter().copied());
        if let Some((_, n)) = claims::closest(sentence, candidates).filter(|(sim, _)| *sim >= ATTRIBUTION_SIMILARITY) {
            push_new(&mut out, n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_holding_the_answer_is_credited_whatever_the_marker_says() {
        let q = "What replaced rust-stemmers in tantivy 0.27.0?";
        let asked = relevance::weighed(q, |words| vec![1.0; words.len()]);
        let sources = [
            ("tantivy CHANGELOG", "# 0.27.0\n- Replaced rust-stemmers with frostem in tantivy."),
            ("frostem", "Frostem is a stemming library."),
        ];
        assert_eq!(answered_by("frostem replaced rust-stemmers in tantivy 0.27.0 [2].", &asked, &sources), vec![1]);
        assert!(answered_by("rust-stemmers was replaced in tantivy 0.27.0 [1].", &asked, &sources).is_empty());
    }

    #[test]
    fn reads_single_grouped_and_adjacent_markers() {
        assert_eq!(markers("Paris [2]. Also [1, 3] and [1][2].", 3), (vec![2, 1, 3], 0));
    }

    #[test]
    fn numbers_that_name_no_source_are_counted_not_cited() {
        assert_eq!(markers("See [4] and [0] and [2].", 3), (vec![2], 2));
    }

    /// Credits by words alone (no embedder at hand).
    fn by_words_only(answer: &str, sources: &[&str]) -> Vec<usize> {
        attributed(answer, sources, &|_| None).by_words
    }

    #[test]
    fn unmarked_sentences_are_credited_to_the_source_holding_their_words() {
        let sources = ["Tomatoes need sun.", "Paris is the capital of France.", "Paris is big."];
        assert_eq!(by_words_only("The capital of France is Paris. Hello there.", &sources), vec![2]);
        assert_eq!(by_words_only("Paris is the capital [3].", &sources), Vec::<usize>::new(), "marked: not attributed");
        assert_eq!(by_words_only("Berlin is the capital of Germany.", &sources), Vec::<usize>::new());
    }

    #[test]
    fn sentences_no_source_holds_the_words_of_are_credited_by_meaning() {
        let sources = ["Tomatoes need sun.", "Paris is the capital of France.", "Cats sleep a lot."];
        // A stand-in embedder: a sentence about Paris points one way, anything else another.
        let embed = |texts: &[&str]| -> Option<Vec<Vec<f32>>> {
            Some(
                texts
                    .iter()
                    .map(|t| if t.contains("Paris") || t.contains("French") { vec![1.0, 0.0] } else { vec![0.0, 1.0] })
                    .collect(),
            )
        };
        let answer = "The French seat of government is in Paris, on the Seine. Marked [1].";
        let attributed_by_meaning = |a: &str, e: Embed<'_>| attributed(a, &sources, e).by_meaning;
        assert_eq!(by_words_only(answer, &sources), Vec::<usize>::new(), "too few shared words");
        assert_eq!(attributed_by_meaning(answer, &embed), vec![2]);
        // Sentences credited by their words, or marked ones, are not looked at again.
        assert_eq!(attributed_by_meaning("Paris is the capital of France.", &embed), Vec::<usize>::new());
        assert_eq!(attributed_by_meaning(answer, &|_| None), Vec::<usize>::new(), "no embedder");
    }

    #[test]
    fn brackets_that_are_not_markers_are_text() {
        assert_eq!(markers("an array [a, b] or [ ] or [12345] or [1", 3), (vec![], 0));
        assert_eq!(markers("nested [[1]]", 1), (vec![1], 0));
    }
}
