//! The one rule by which svc reads the words of a text: a question, a facet, a passage, a
//! claim. Runs of letters and digits, lowercase, of two characters or more, each once, except
//! that a number with dots stays one word ("0.41", "1.54.0"): a version is then never held by a
//! piece of another, and "Rust 1.41" does not hold the "41" of "lancedb 0.41". A dotted number
//! whose parts are all single digits ("0.8", "2.0.0") is left out, as its parts would be.
//! Chinese, Japanese and Korean runs are read in their pairs and Thai, Lao, Khmer and Burmese
//! runs in their dictionary words, as the keyword index cuts them ([`super::script`]). Beside
//! the words, the names a text writes joined ([`names`]: `stack-size-threshold`), which the
//! words read as pieces.

use super::language::Language;
use super::script;

/// Words that carry no content of their own (English; another language's are its Snowball
/// list, [`Language::is_stopword`]).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "how", "i", "if", "in",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "then",
    "there", "these", "this", "to", "vs", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with",
    "you", "your",
];

/// The words of `text`, in order, each once (the module's rule).
pub fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    // Ends the word being read (nothing when it is empty or too short).
    let mut finish = |word: &mut String| {
        let w = std::mem::take(word).to_lowercase();
        if w.chars().any(|c| script::is_cjk(c) || script::is_complex(c)) {
            // Cut as the keyword index cuts it: CJK pairs, Thai words.
            for range in script::cut(&w) {
                let piece = &w[range];
                if piece.chars().count() >= 2 && !out.iter().any(|o| o == piece) {
                    out.push(piece.to_string());
                }
            }
        } else if w.split('.').any(|part| part.chars().count() >= 2) && !out.contains(&w) {
            out.push(w);
        }
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let dot_in_number =
            c == '.' && word.ends_with(|p: char| p.is_ascii_digit()) && chars.peek().is_some_and(char::is_ascii_digit);
        if c.is_alphanumeric() || script::is_complex(c) || dot_in_number {
            word.push(c);
        } else {
            finish(&mut word);
        }
    }
    finish(&mut word);
    out
}

/// The words of `text` that say what it is about: its [`words`] without the stopwords, and
/// without its language's too when it reads as another language than English
/// ([`Language::of_words`]: "wie" says nothing in a German question).
pub fn content_words(text: &str) -> Vec<String> {
    let words = words(text);
    let language = Language::of_words(&words);
    without_stopwords(words, language)
}

/// `words` (of one text, read as `language`) without the stopwords of [`content_words`].
pub fn without_stopwords(words: Vec<String>, language: Language) -> Vec<String> {
    words
        .into_iter()
        .filter(|t| !is_stopword(t) && (language == Language::English || !language.is_stopword(t)))
        .collect()
}

/// The names `text` writes joined: runs of letters and digits tied by `-`, `_` or `::`
/// (`stack-size-threshold`, `mem::forget`, `x86_64-unknown-linux-gnu`), lowercase, each once.
/// A name is one thing; its pieces, as [`words`] reads them, are also the pieces of others
/// (`array-size-threshold`), so a passage that writes the name as the question does is about it.
pub fn names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for run in text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))) {
        // Joiners and dots at its ends are punctuation, not part of the name.
        let name = run.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        if joined(&name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Whether `run` ties two runs of letters or digits with a joiner (`-`, `_`, `::`).
fn joined(run: &str) -> bool {
    let chars: Vec<char> = run.chars().collect();
    chars.windows(3).any(|w| w[0].is_alphanumeric() && matches!(w[1], '-' | '_') && w[2].is_alphanumeric())
        || chars.windows(4).any(|w| w[0].is_alphanumeric() && w[1] == ':' && w[2] == ':' && w[3].is_alphanumeric())
}

/// Whether `text` (lowercase) writes `name` (from [`names`]) as one name: not inside a longer
/// one (`stack-size-threshold` is not written by `max-stack-size-threshold`).
pub fn writes_name(text: &str, name: &str) -> bool {
    let joins = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_');
    text.match_indices(name).any(|(at, _)| {
        let (before, after) = (&text[..at], &text[at + name.len()..]);
        let longer_before = before.ends_with("::") || before.chars().next_back().is_some_and(joins);
        let longer_after = after.starts_with("::") || after.chars().next().is_some_and(joins);
        !longer_before && !longer_after
    })
}

/// The words of `text` as written, in order, every one: split at white space, lowercase, a
/// possessive "'s" and the punctuation at either end taken off (`llama.cpp's` is `llama.cpp`,
/// `toml?` is `toml`; inner dots, dashes and colons stay). Where a phrase of the text is
/// looked for as a whole ("cargo install").
pub fn tokens(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|t| {
            let t = t.to_lowercase();
            let t = t.trim_matches(|c: char| !c.is_alphanumeric());
            t.strip_suffix("'s").or_else(|| t.strip_suffix("’s")).unwrap_or(t).to_string()
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether `word` (lowercase) is too common to say what a question is about.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercase_runs_of_two_or_more_each_once() {
        assert_eq!(words("How do Unix sockets work? a sockets"), vec!["how", "do", "unix", "sockets", "work"]);
        assert_eq!(content_words("How do Unix sockets work?"), vec!["unix", "sockets", "work"]);
        assert_eq!(words("北京 预算"), vec!["北京", "预算"]);
    }

    #[test]
    fn cjk_and_thai_words_are_cut_as_the_keyword_index_cuts_them() {
        // A CJK run in its pairs, so a word of a sentence is held by it.
        assert_eq!(words("在北京的预算"), ["在北", "北京", "京的", "的预", "预算"]);
        assert!(words("北京").iter().all(|w| words("在北京的预算").contains(w)));
        assert_eq!(words("ทุกสองสัปดาห์"), ["ทุก", "สอง", "สัปดาห์"]);
        assert_eq!(words("Rust製のツール"), ["rust", "製の", "のツ", "ツー", "ール"]);
    }

    #[test]
    fn a_version_is_one_word() {
        assert_eq!(
            words("lancedb 0.41, Rust 1.54.0; axum 0.8 and ort 2.0.0-rc.15."),
            ["lancedb", "0.41", "rust", "1.54.0", "axum", "and", "ort", "rc", "15"]
        );
        assert_eq!(words("Version 3. 12 items.x"), ["version", "12", "items"]);
    }

    #[test]
    fn names_are_runs_tied_by_joiners() {
        assert_eq!(
            names("Is Clippy's stack-size-threshold, or mem::forget, safe on x86_64-unknown-linux-gnu?"),
            ["stack-size-threshold", "mem::forget", "x86_64-unknown-linux-gnu"]
        );
        assert_eq!(names("ort 2.0.0-rc.15 -- a plain sentence: done. __init"), ["2.0.0-rc.15"]);
        assert!(names("No names here, only words.").is_empty());
    }

    #[test]
    fn tokens_are_every_word_as_written() {
        assert_eq!(
            tokens("On which port does llama.cpp's  Server listen? (cargo install)"),
            ["on", "which", "port", "does", "llama.cpp", "server", "listen", "cargo", "install"]
        );
        assert!(tokens(" ?! ").is_empty());
    }

    #[test]
    fn a_name_is_written_only_whole() {
        let text = "## [`stack-size-threshold`](#stack-size-threshold) and max-array-size";
        assert!(writes_name(text, "stack-size-threshold"));
        assert!(!writes_name(text, "array-size"));
        assert!(!writes_name("the stack size threshold", "stack-size-threshold"));
        assert!(writes_name("stack-size-threshold: 512000", "stack-size-threshold"));
        assert!(!writes_name("std::mem::forget", "mem::forget") && writes_name("(mem::forget)", "mem::forget"));
    }
}
