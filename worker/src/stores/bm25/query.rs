//! The keyword query grammar: words are OR-ed and ranked by BM25, `"quoted phrases"` must
//! match, and a leading `-` excludes a word or phrase.

use protocol::ApiError;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeywordQuery {
    /// Words (as typed) that rank documents.
    pub words: Vec<String>,
    /// Phrases (as typed) that a document must contain.
    pub phrases: Vec<String>,
    /// Words or phrases a document must not contain.
    pub excluded: Vec<String>,
    /// The language the request says the query is in (`lang`): its words are then stemmed by
    /// that language (and English, the stem of notes whose language is not told), not by every
    /// language the index holds.
    pub language: Option<String>,
}

impl KeywordQuery {
    /// The query in `language` (a request's `lang`; `auto` or none: not told).
    pub fn in_language(mut self, language: Option<&str>) -> Self {
        self.language =
            language.filter(|l| !l.trim().is_empty() && !l.eq_ignore_ascii_case("auto")).map(str::to_string);
        self
    }

    pub fn parse(text: &str) -> Result<Self, ApiError> {
        if text.chars().filter(|&c| c == '"').count() % 2 == 1 {
            return Err(ApiError::validation("Invalid search query: unbalanced quote"));
        }
        let mut q = KeywordQuery::default();
        let mut chars = text.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
                continue;
            }
            let negated = c == '-';
            if negated {
                chars.next();
                match chars.peek() {
                    Some(n) if !n.is_whitespace() => {}
                    _ => continue,
                }
            }
            let (item, phrase) = if chars.peek() == Some(&'"') {
                chars.next();
                let mut s = String::new();
                for ch in chars.by_ref() {
                    if ch == '"' {
                        break;
                    }
                    s.push(ch);
                }
                (s, true)
            } else {
                let mut s = String::new();
                while let Some(&ch) = chars.peek() {
                    if ch.is_whitespace() || ch == '"' {
                        break;
                    }
                    s.push(ch);
                    chars.next();
                }
                (s, false)
            };
            if !item.chars().any(char::is_alphanumeric) {
                continue;
            }
            if negated {
                q.excluded.push(item);
            } else if phrase {
                q.phrases.push(item);
            } else {
                q.words.push(item);
            }
        }
        if q.words.is_empty() && q.phrases.is_empty() {
            let msg = if q.excluded.is_empty() {
                "Invalid search query: it has no searchable words"
            } else {
                "Invalid search query: negation requires at least one positive search term"
            };
            return Err(ApiError::validation(msg));
        }
        Ok(q)
    }

    /// Lowercased words of the positive part, for snippet selection.
    pub fn highlight_terms(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for part in self.words.iter().chain(self.phrases.iter()) {
            for w in part.split(|c: char| !c.is_alphanumeric()) {
                let w = w.to_lowercase();
                if w.chars().count() >= 2 && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_words_phrases_and_negations() {
        let q = KeywordQuery::parse(r#"local "unix socket" -windows -"named pipe" ipc"#).unwrap();
        assert_eq!(q.words, vec!["local", "ipc"]);
        assert_eq!(q.phrases, vec!["unix socket"]);
        assert_eq!(q.excluded, vec!["windows", "named pipe"]);
    }

    #[test]
    fn long_natural_language_questions_parse() {
        let q = KeywordQuery::parse("What is the effect of 0-dimensional biomaterials (e.g. nanoparticles) on cells?")
            .unwrap();
        assert!(q.words.len() > 8);
    }

    #[test]
    fn refuses_malformed_queries() {
        assert!(KeywordQuery::parse("\"open").is_err());
        assert!(KeywordQuery::parse("-only -negations").is_err());
        assert!(KeywordQuery::parse("   ").is_err());
        assert!(KeywordQuery::parse("!!! ???").is_err());
    }

    #[test]
    fn hyphenated_words_are_words() {
        let q = KeywordQuery::parse("real-time gpt-4").unwrap();
        assert_eq!(q.words, vec!["real-time", "gpt-4"]);
    }
}
