//! The goal's facets: the parts a question joins with "and", "or", "vs", commas or
//! semicolons. A passage covers a facet when it holds at least half of the facet's content
//! words (at least one).

use crate::retrieval::common::query_terms;

/// Words that carry no content of their own.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "how", "i", "if", "in",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "then",
    "there", "these", "this", "to", "vs", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with",
    "you", "your",
];

/// Facets of `goal`, in order, lowercased, each at most once; the whole goal when it has
/// no separator. A part without content words is not a facet.
pub fn split(goal: &str) -> Vec<String> {
    let lower = goal.to_lowercase();
    let mut parts: Vec<String> = vec![lower.clone()];
    for sep in [",", ";", " and ", " or ", " vs. ", " vs ", " versus "] {
        parts = parts.iter().flat_map(|p| p.split(sep).map(str::to_string).collect::<Vec<_>>()).collect();
    }
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        let p = p.trim().trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace()).to_string();
        if !content_words(&p).is_empty() && !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() && !content_words(&lower).is_empty() {
        out.push(lower.trim().to_string());
    }
    out
}

/// The content words of a text: query terms that are not stopwords.
pub fn content_words(text: &str) -> Vec<String> {
    query_terms(text).into_iter().filter(|t| !is_stopword(t)).collect()
}

/// Whether `word` (lowercase) is too common to say what a question is about.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Whether a passage (its words, [`query_terms`]) covers `facet`: a facet word counts when
/// a passage word starts with it ("socket" in "sockets", not "rust" in "trust").
pub fn covers(passage_words: &[String], facet: &str) -> bool {
    let words = content_words(facet);
    if words.is_empty() {
        return false;
    }
    let hits = words.iter().filter(|w| passage_words.iter().any(|p| p.starts_with(w.as_str()))).count();
    hits * 2 >= words.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_joins_and_drops_empty_parts() {
        assert_eq!(split("Rust ownership and borrowing, lifetimes"), vec!["rust ownership", "borrowing", "lifetimes"]);
        assert_eq!(split("tantivy vs lucene"), vec!["tantivy", "lucene"]);
        assert_eq!(split("How do sockets work?"), vec!["how do sockets work"]);
        assert_eq!(split("the and of"), Vec::<String>::new());
    }

    #[test]
    fn coverage_needs_half_the_content_words() {
        let words = |t: &str| query_terms(t);
        assert!(covers(&words("Rust has ownership rules"), "rust ownership"));
        assert!(covers(&words("ownership only"), "rust ownership"));
        assert!(!covers(&words("nothing here"), "rust ownership"));
        assert!(!covers(&words("trust issues"), "rust"));
        assert!(covers(&words("unix sockets"), "socket"));
    }
}
