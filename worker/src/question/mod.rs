//! A question read once. Retrieval, the choice of an answer's sources, the prompt and the checks
//! of a draft all read the same [`Question`]: its words by one rule ([`words`]), its content
//! words, and its facets (the parts it joins with "and", "or", "vs", commas or semicolons), so
//! a rule fixed here holds everywhere. How rare each word is in an index is the answer's
//! business (`answer::relevance::Weighed`), not the question's.

pub mod language;
pub mod script;
pub mod words;

use language::Language;

/// A question as every stage reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    text: String,
    words: Vec<String>,
    tokens: Vec<String>,
    content_words: Vec<String>,
    names: Vec<String>,
    facets: Vec<Facet>,
    language: Language,
}

impl Question {
    /// Reads `text`: its words, its language, content words and facets.
    pub fn read(text: &str) -> Question {
        let words = words::words(text);
        let language = Language::of_words(&words);
        let content_words = words::without_stopwords(words.clone(), language);
        Question {
            text: text.to_string(),
            words,
            tokens: words::tokens(text),
            content_words,
            names: words::names(text),
            facets: facets_of(text),
            language,
        }
    }

    /// The language its stopwords tell ([`Language::of_words`]); English when they tell none.
    pub fn language(&self) -> Language {
        self.language
    }

    /// The question as asked.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its words ([`words::words`]), in order, each once.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Its words as written ([`words::tokens`]), in order, every one: where a phrase of it is
    /// looked for whole.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Its words without the stopwords: what it is about.
    pub fn content_words(&self) -> &[String] {
        &self.content_words
    }

    /// The names it writes joined ([`words::names`]: `stack-size-threshold`, `mem::forget`).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Its facets, in order, each once; the whole question when it joins nothing. A question
    /// without content words has none.
    pub fn facets(&self) -> &[Facet] {
        &self.facets
    }
}

/// A part of a question: its text (lowercase, trimmed) and its content words.
#[derive(Debug, Clone, PartialEq)]
pub struct Facet {
    text: String,
    words: Vec<String>,
}

impl Facet {
    /// A facet as written (a capsule keeps its facets as text).
    pub fn read(text: &str) -> Facet {
        Facet { text: text.to_string(), words: words::content_words(text) }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its content words.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Whether a passage (its [`words::words`]) covers the facet: at least half of the facet's
    /// words stand at the start of a passage word ("socket" in "sockets", not "rust" in
    /// "trust"). A facet without content words is covered by nothing.
    pub fn covered_by(&self, passage_words: &[String]) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let hits = self.words.iter().filter(|w| passage_words.iter().any(|p| p.starts_with(w.as_str()))).count();
        hits * 2 >= self.words.len()
    }
}

/// The facets of `text`: its parts between the joins, lowercase and trimmed, each once, those
/// with content words only; the whole text when no part has any but the whole does.
fn facets_of(text: &str) -> Vec<Facet> {
    let lower = text.to_lowercase();
    let mut parts: Vec<String> = vec![lower.clone()];
    for sep in [",", ";", " and ", " or ", " vs. ", " vs ", " versus "] {
        parts = parts.iter().flat_map(|p| p.split(sep).map(str::to_string).collect::<Vec<_>>()).collect();
    }
    let mut out: Vec<Facet> = Vec::new();
    for p in parts {
        let facet = Facet::read(p.trim().trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace()));
        if !facet.words.is_empty() && !out.iter().any(|f| f.text == facet.text) {
            out.push(facet);
        }
    }
    if out.is_empty() {
        let whole = Facet::read(lower.trim());
        if !whole.words.is_empty() {
            out.push(whole);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::words::words;
    use super::*;

    fn facet_texts(q: &str) -> Vec<String> {
        Question::read(q).facets().iter().map(|f| f.text().to_string()).collect()
    }

    #[test]
    fn facets_split_on_joins_and_drop_empty_parts() {
        assert_eq!(
            facet_texts("Rust ownership and borrowing, lifetimes"),
            ["rust ownership", "borrowing", "lifetimes"]
        );
        assert_eq!(facet_texts("tantivy vs lucene"), ["tantivy", "lucene"]);
        assert_eq!(facet_texts("How do sockets work?"), ["how do sockets work"]);
        assert_eq!(facet_texts("the and of"), Vec::<String>::new());
    }

    #[test]
    fn coverage_needs_half_the_content_words() {
        let facet = Facet::read("rust ownership");
        assert!(facet.covered_by(&words("Rust has ownership rules")));
        assert!(facet.covered_by(&words("ownership only")));
        assert!(!facet.covered_by(&words("nothing here")));
        assert!(!Facet::read("rust").covered_by(&words("trust issues")));
        assert!(Facet::read("socket").covered_by(&words("unix sockets")));
    }

    #[test]
    fn a_question_is_read_once_into_its_parts() {
        let q = Question::read("Which port does GNO's web UI use, and its egress policy?");
        assert_eq!(q.words()[..3], ["which", "port", "does"]);
        assert_eq!(q.content_words(), ["port", "gno", "web", "ui", "use", "egress", "policy"]);
        assert_eq!(q.facets().len(), 2);
        assert_eq!(q.facets()[1].words(), ["egress", "policy"]);
    }
}
