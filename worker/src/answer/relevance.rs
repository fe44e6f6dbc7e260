//! How much of a question a passage holds: the question's content words, each weighted by its
//! rarity in the index (BM25's IDF), and the share of that weight a passage's words hold, for
//! the facet of the question it holds best (a question joining two things with "and" is
//! answered by a passage on each). A
//! passage about "the minimum supported Rust version" of another crate holds the common words
//! of "What is the minimum supported Rust version of lancedb 0.41?" but not its rarest one, so
//! it holds little of the question: it cannot answer it, and no answer is drawn from it.

use crate::question::language::Language;
use crate::question::words::words;
use crate::question::Question;
use crate::shared::Shared;

/// The share of a question's weight a source must hold to be one while another result holds
/// it: below it a source is about something else (docs/retrieval.md has the figures of the
/// ask-docs eval). When no result holds it, the question is taken to be asked in other words
/// than the notes use, and the best-ranked results are the sources (`sources::choose`).
pub const MIN_RELEVANCE: f64 = 0.4;
/// The share of the question's weight the place a verified claim's answer comes from (its
/// sentence, the ones either side of it, its heading and the document's title; a heading is read
/// alone, and one after the sentence not at all) must hold.
pub const ABOUT_THE_QUESTION: f64 = 0.5;

/// Two forms of one word, given their stems ([`stem`]): the same spelling
/// ([`same_spelling`]), or the same English stem ("use" and "uses", "enable" and "enabling").
fn same_form(a: &str, a_stem: &str, b: &str, b_stem: &str) -> bool {
    same_spelling(a, b) || (!a_stem.is_empty() && a_stem == b_stem)
}

/// Two spellings of one word: equal, or one starts with the other and the shorter has at
/// least four letters. What an answer adds to its question is read by spelling: "compression"
/// in `ipc_compression` adds a name to a question about "compressed" streams.
pub fn same_spelling(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.chars().count() >= 4 && long.starts_with(short))
}

/// The English stem of a lowercase word of letters; empty for a word of fewer than three
/// letters or one with digits, which is compared as written.
pub fn stem(word: &str) -> String {
    stem_in(word, Language::English)
}

/// [`stem`] by `language`'s rules: "réessaie" and "réessayer" are one French word.
pub fn stem_in(word: &str, language: Language) -> String {
    if word.chars().count() < 3 || !word.chars().all(char::is_alphabetic) {
        return String::new();
    }
    language.stem(word).into_owned()
}

/// The words of a text with their stems: where a word is looked for in any of its forms.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    words: Vec<String>,
    stems: std::collections::HashSet<String>,
    /// The stems by another language's rules than English, with that language
    /// ([`Vocabulary::in_language`]).
    other: Option<(Language, std::collections::HashSet<String>)>,
}

impl Vocabulary {
    /// The vocabulary of `words` (lowercase).
    pub fn of(words: impl IntoIterator<Item = String>) -> Vocabulary {
        let words: Vec<String> = words.into_iter().collect();
        let stems = words.iter().map(|w| stem(w)).filter(|s| !s.is_empty()).collect();
        Vocabulary { words, stems, other: None }
    }

    /// The vocabulary of `words` where a word is also looked for in its forms by `language`'s
    /// rules: "utilisez" is held by "utiliser" in French, as "uses" is by "use" in English.
    pub fn in_language(words: impl IntoIterator<Item = String>, language: Language) -> Vocabulary {
        let mut v = Vocabulary::of(words);
        if language != Language::English {
            let stems = v.words.iter().map(|w| stem_in(w, language)).filter(|s| !s.is_empty()).collect();
            v.other = Some((language, stems));
        }
        v
    }

    /// Whether the text holds `word` (lowercase): a text word starting with it, or one of
    /// its stem.
    pub fn holds(&self, word: &str) -> bool {
        if self.words.iter().any(|p| p.starts_with(word)) {
            return true;
        }
        let s = stem(word);
        if !s.is_empty() && self.stems.contains(&s) {
            return true;
        }
        self.other.as_ref().is_some_and(|(language, stems)| {
            let s = stem_in(word, *language);
            !s.is_empty() && stems.contains(&s)
        })
    }
}

/// A question's facets, each as its content words with their weights: the question as the
/// index weighs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Weighed {
    question: Question,
    facets: Vec<Vec<(String, f64)>>,
}

impl Weighed {
    /// `question`'s facets, their words weighted by `rarity` (one weight per content word, in
    /// order).
    pub fn new(question: Question, rarity: impl FnOnce(&[String]) -> Vec<f64>) -> Weighed {
        let words = question.content_words();
        let weights = rarity(words);
        let weight = |w: &String| words.iter().position(|x| x == w).and_then(|i| weights.get(i)).copied();
        let facets = question
            .facets()
            .iter()
            .map(|f| f.words().iter().filter_map(|w| weight(w).map(|x| (w.clone(), x))).collect())
            .collect();
        Weighed { question, facets }
    }

    /// `question` weighted by the rarity of its words in `w`'s index.
    pub fn of(w: &Shared, question: Question) -> Weighed {
        Weighed::new(question, |words| w.stores.bm25.rarity(words))
    }

    /// The share of the question a source holds: its address, title and text, as
    /// [`Self::held_by`] weighs them.
    pub fn held_by_source(&self, uri: &str, title: &str, text: &str) -> f64 {
        self.held_by(&format!("{uri} {title} {text}"))
    }

    /// The question weighed.
    pub fn question(&self) -> &Question {
        &self.question
    }

    /// The share of a facet's weight held by `text`, for the facet it holds best (a word of
    /// the text holds a facet word when they are two forms of one word, [`same_form`]). A
    /// question without content words is held by nothing.
    pub fn held_by(&self, text: &str) -> f64 {
        // The question's words and the text's, stemmed by the question's language's rules.
        let stem = |word: &str| stem_in(word, self.question.language());
        let text_words: Vec<(String, String)> = words(text).into_iter().map(|t| (stem(&t), t)).collect();
        let holds = |q: &str| {
            let q_stem = stem(q);
            text_words.iter().any(|(t_stem, t)| same_form(t, t_stem, q, &q_stem))
        };
        let share = |facet: &Vec<(String, f64)>| {
            let total: f64 = facet.iter().map(|(_, w)| w).sum();
            let held: f64 = facet.iter().filter(|(q, _)| holds(q)).map(|(_, w)| w).sum();
            if total > 0.0 {
                held / total
            } else {
                0.0
            }
        };
        self.facets.iter().map(share).fold(0.0, f64::max)
    }
}

/// `text` read as a question and weighed by `rarity`, for tests.
#[cfg(test)]
pub fn weighed(text: &str, rarity: impl FnOnce(&[String]) -> Vec<f64>) -> Weighed {
    Weighed::new(Question::read(text), rarity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rare_word_weighs_more_than_common_ones() {
        let q = weighed("What is the minimum supported Rust version of lancedb?", |words| {
            words.iter().map(|w| if w == "lancedb" { 8.0 } else { 1.0 }).collect()
        });
        let other_crate = q.held_by("## Minimum Supported Rust Version\nRust 1.41 or higher.");
        let this_crate = q.held_by("lancedb: the minimum supported Rust version is 1.78.");
        assert!((other_crate - 4.0 / 12.0).abs() < 1e-9, "{other_crate}");
        assert!(this_crate > MIN_RELEVANCE && other_crate < MIN_RELEVANCE);
        assert_eq!(weighed("what is it?", |w| vec![1.0; w.len()]).held_by("anything"), 0.0);
        let two = weighed("rust ownership and borrowing", |w| vec![1.0; w.len()]);
        assert_eq!(two.held_by("borrowing rules"), 1.0);
    }

    #[test]
    fn a_word_is_held_in_any_of_its_forms() {
        let v = Vocabulary::of(["use", "enable", "sockets"].map(String::from));
        assert!(v.holds("uses") && v.holds("enabling") && v.holds("socket"));
        assert!(!v.holds("user"));
        let same_word = |a: &str, b: &str| same_form(a, &stem(a), b, &stem(b));
        assert!(same_word("enabling", "enable") && !same_spelling("enabling", "enable"));
        assert!(!same_word("rust", "trust") && same_word("1.41", "1.41") && !same_word("1.41", "1.4"));
        let q = weighed("Which flag enables the parallel frontend?", |w| vec![1.0; w.len()]);
        assert_eq!(q.held_by("Enabling the parallel compiler: one flag."), 0.75);
    }

    #[test]
    fn a_question_in_another_language_is_held_by_the_forms_of_its_words_there() {
        let q = weighed("Combien de fois wget réessaie un téléchargement échoué ?", |w| vec![1.0; w.len()]);
        // "réessayer" and "réessaie", "télécharger" and "téléchargement" are one French word
        // each; read by English rules, neither pair is.
        assert_eq!(q.held_by("Combien de fois wget doit réessayer de télécharger ce qui a échoué ?"), 1.0);
        assert!(q.held_by("Combien de fois wget doit-il ?") < 0.7);
    }

    #[test]
    fn a_vocabulary_in_another_language_holds_its_forms_there() {
        let words = || ["utilisé", "téléchargement", "sockets"].map(String::from);
        let french = Vocabulary::in_language(words(), Language::French);
        assert!(french.holds("utilisez") && french.holds("socket") && french.holds("télécharger"));
        assert!(!Vocabulary::of(words()).holds("utilisez"), "English rules do not read French");
        assert!(!Vocabulary::in_language(words(), Language::English).holds("utilisez"));
    }

    #[test]
    fn a_version_is_one_word_and_not_held_by_a_piece_of_another() {
        let q = weighed("What is the minimum supported Rust version of lancedb 0.41?", |w| vec![1.0; w.len()]);
        let other_crate = q.held_by("## Minimum Supported Rust Version\nRust 1.41 or higher.");
        assert!((other_crate - 4.0 / 6.0).abs() < 1e-9, "{other_crate}");
        assert_eq!(q.held_by("lancedb 0.41.1: the minimum supported Rust version is 1.78."), 1.0);
    }
}
