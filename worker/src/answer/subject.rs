//! What a question names, as its sources name things. A question names the thing it asks about
//! in plain words ("Which profile does cargo install build with by default?"); technical pages
//! write the same name as code (`cargo install`) or are titled by it ("cargo install - The
//! Cargo Book"). A phrase of the question (one to three of its words, lowercase, a possessive
//! "'s" and the punctuation around them taken off) that one of the answer's passages writes
//! whole as a code span or that one of their documents has as its title (or a part of it:
//! "cargo install" of "cargo install - The Cargo Book"), or that the question itself writes as
//! code, is a name the question asks about. A passage whose address, title, heading and text do
//! not hold every word of such a name (of two characters or more, as [`words`] reads them)
//! speaks of something else, whatever other words of the question it shares: a list of
//! `[profile.dev]` settings does not say what `cargo install` builds with.

use super::claims::{code_spans, plain_form};
use super::relevance::Vocabulary;
use crate::question::words::{is_stopword, words};
use crate::question::Question;

/// The longest phrase of the question read as one name, in words.
const LONGEST_NAME: usize = 3;

/// The names a question asks about, by its facets: a facet's names are the ones its text
/// holds ("A and B" asks about A in one facet and B in the other).
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    facets: Vec<Vec<String>>,
}

impl Subject {
    /// The names of `question` that it writes as code, or that one of `passages` (title,
    /// text) writes whole as a code span or has as its title or a part of it.
    pub fn of<'p>(question: &Question, passages: impl IntoIterator<Item = (&'p str, &'p str)>) -> Subject {
        let written: Vec<String> = passages
            .into_iter()
            .flat_map(|(title, text)| title_parts(title).into_iter().chain(code_spans(text)))
            .collect();
        let mut names: Vec<String> = code_spans(question.text());
        for n in 1..=LONGEST_NAME {
            for phrase in question.tokens().windows(n).map(|w| w.join(" ")) {
                let plain_word = n == 1 && is_stopword(&phrase);
                if !plain_word && written.contains(&phrase) && !names.contains(&phrase) {
                    names.push(phrase);
                }
            }
        }
        let facets = question
            .facets()
            .iter()
            .map(|f| names.iter().filter(|name| f.text().contains(name.as_str())).cloned().collect())
            .collect();
        Subject { facets }
    }

    /// Every name the question asks about, each once, in the order its facets give them.
    pub fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for name in self.facets.iter().flatten() {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }

    /// Whether `place` (a passage with its address, title and heading) is about what the
    /// question names: for one of the question's facets that names something, it holds every
    /// word of each of those names in some form ([`Vocabulary::holds`]). A question that
    /// names nothing this way is held by every place.
    pub fn held_by(&self, place: &str) -> bool {
        let named: Vec<&Vec<String>> = self.facets.iter().filter(|names| !names.is_empty()).collect();
        if named.is_empty() {
            return true;
        }
        let vocabulary = Vocabulary::of(words(place));
        named.iter().any(|names| names.iter().all(|name| words(name).iter().all(|w| vocabulary.holds(w))))
    }
}

/// A title and, when it has separators, its parts between them ("cargo install - The Cargo
/// Book": the whole, then "cargo install" and "the cargo book"), in [`plain_form`].
fn title_parts(title: &str) -> Vec<String> {
    let whole = plain_form(title);
    let mut parts = vec![whole.clone()];
    for sep in [" - ", " – ", " — ", " | ", ": "] {
        parts = parts.iter().flat_map(|p| p.split(sep).map(str::to_string).collect::<Vec<_>>()).collect();
    }
    let mut out = vec![whole];
    for p in parts.into_iter().map(|p| p.trim().to_string()) {
        if !p.is_empty() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(question: &str, passages: &[&str]) -> Subject {
        Subject::of(&Question::read(question), passages.iter().map(|p| ("", *p)))
    }

    #[test]
    fn a_phrase_of_the_question_a_passage_writes_as_code_is_a_name() {
        let s = subject(
            "Which profile does cargo install build with by default?",
            &["Run `cargo install --debug` or `cargo install`.", "The `which` keyword; `release`."],
        );
        assert_eq!(s.facets, [vec!["cargo install".to_string()]]);
        let s = subject("On which port does llama.cpp's llama-server listen?", &["`llama-server` of `llama.cpp`"]);
        assert_eq!(s.facets, [vec!["llama.cpp".to_string(), "llama-server".to_string()]]);
        assert_eq!(subject("Is `tokio` fast?", &[]).facets, [vec!["tokio".to_string()]]);
        assert!(subject("What is the default?", &["```\ndefault\n```"]).facets[0].is_empty());
    }

    #[test]
    fn a_phrase_a_document_is_titled_by_is_a_name() {
        let q = Question::read("Which profile does cargo install build with by default?");
        let s = Subject::of(&q, [("cargo install - The Cargo Book", "Install a Rust binary."), ("Profiles", "")]);
        assert_eq!(s.facets, [vec!["cargo install".to_string()]]);
        assert_eq!(
            title_parts("tokio: an async runtime | docs"),
            ["tokio: an async runtime | docs", "tokio", "an async runtime", "docs"]
        );
        assert_eq!(title_parts("Profiles"), ["profiles"]);
    }

    #[test]
    fn the_right_words_about_another_subject_do_not_hold_it() {
        let q = "Which profile does cargo install build with by default?";
        let install = "`cargo install`: Install with the `release` profile by default; `cargo install --debug` builds with `dev`.";
        let overrides =
            "Overrides\n4. `[profile.dev]` — Settings in `Cargo.toml`.\n5. Default values built-in to Cargo.";
        let s = subject(q, &[install, overrides]);
        assert!(s.held_by(&format!("svc://docs/cargo/commands/cargo-install.html {install}")));
        assert!(!s.held_by(&format!("svc://docs/cargo/reference/profiles.html Profiles {overrides}")));
        // The name in the address alone: the document is about it.
        assert!(s.held_by("svc://docs/cargo/commands/cargo-install.html Options\nBuild with `dev`."));
    }

    #[test]
    fn one_facet_named_is_enough_and_a_question_naming_nothing_is_held_everywhere() {
        let s = subject("What does `serde` do, and what does `bincode` do?", &[]);
        assert!(s.held_by("bincode encodes values as bytes"));
        assert!(!s.held_by("a format of bytes"));
        assert!(subject("How big can my crate be?", &["`cargo publish`"]).held_by("anything"));
    }
}
