//! The sources an answer cites: its `[n]` markers (`[2]`, `[1, 3]` or `[1][2]`, each number a
//! source's position in the prompt, from 1), and for sentences without a marker the source
//! whose words they hold (the small default generator rarely writes markers).

use super::claims;

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

/// Content words of a sentence a source must hold for the sentence to be credited to it: half,
/// as a capsule facet counts as covered. A grounding hint, not a verification (verified mode
/// asks for 80 % and a semantic check).
const ATTRIBUTION_COVERAGE: f64 = 0.5;

/// A sentence of `answer` without a marker is credited to the source (texts, in prompt order)
/// that holds the largest share of its content words, at least [`ATTRIBUTION_COVERAGE`], and
/// all its numbers, with nothing contradicting it (ties to the earlier source); returns the
/// source numbers in order of first credit.
pub fn attributed(answer: &str, sources: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    for claim in claims::split(answer).iter().filter(|c| c.markers.is_empty() && c.is_substantive()) {
        let best = sources
            .iter()
            .enumerate()
            .map(|(i, text)| (i + 1, claims::lexical(&claim.plain, text)))
            .filter(|(_, l)| l.coverage >= ATTRIBUTION_COVERAGE && l.numbers_present && !l.conflicts)
            .max_by(|a, b| a.1.coverage.total_cmp(&b.1.coverage).then(b.0.cmp(&a.0)));
        if let Some((n, _)) = best {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_single_grouped_and_adjacent_markers() {
        assert_eq!(markers("Paris [2]. Also [1, 3] and [1][2].", 3), (vec![2, 1, 3], 0));
    }

    #[test]
    fn numbers_that_name_no_source_are_counted_not_cited() {
        assert_eq!(markers("See [4] and [0] and [2].", 3), (vec![2], 2));
    }

    #[test]
    fn unmarked_sentences_are_credited_to_the_source_holding_their_words() {
        let sources = ["Tomatoes need sun.", "Paris is the capital of France.", "Paris is big."];
        assert_eq!(attributed("The capital of France is Paris. Hello there.", &sources), vec![2]);
        assert_eq!(attributed("Paris is the capital [3].", &sources), Vec::<usize>::new(), "marked: not attributed");
        assert_eq!(attributed("Berlin is the capital of Germany.", &sources), Vec::<usize>::new());
    }

    #[test]
    fn brackets_that_are_not_markers_are_text() {
        assert_eq!(markers("an array [a, b] or [ ] or [12345] or [1", 3), (vec![], 0));
        assert_eq!(markers("nested [[1]]", 1), (vec![1], 0));
    }
}
