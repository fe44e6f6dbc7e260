//! A body's stems as one plain text, the value of the keyword index's `body` field.
//!
//! `Bm25Index::entry` tells a body's languages and stems its words on the sync side (each
//! paragraph by its own language, a short note's guessed stems stacked at their word's
//! position). tantivy's pre-tokenized values would carry those tokens to its indexing thread
//! as JSON (`PreTokenizedString`'s `BinarySerializable` is `serde_json`), written on one thread
//! and parsed on the other, the whole body text included. A [`StemsText`] carries the same
//! tokens as a string instead, and [`StemsTokenizer`], the field's analyzer, reads them back:
//! same texts, same positions, so the index is the one the pre-tokenized value made.
//!
//! The format: each stem is preceded by as many spaces as its position is past the one before
//! it (a stop word left out is one more space), and a stem stacked at the same position as the
//! one before it is preceded by `|`. Neither character is ever part of a word
//! ([`crate::question::script`] cuts words at both). A stem of another language than English
//! stands behind its language's tag (`de:entwickl`, [`super::language::Stemming::tag`]): `:`
//! is never part of a word either, so a tagged stem is never a word's stem in another language.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Stems, in the format of this module, built word by word.
#[derive(Debug, Default)]
pub struct StemsText {
    text: String,
    /// The spaces written so far: the position of the last stem.
    spaces: usize,
}

impl StemsText {
    pub fn with_capacity(bytes: usize) -> Self {
        StemsText { text: String::with_capacity(bytes), spaces: 0 }
    }

    /// A stem at `position`, after the last stem's (the first stem may be at any), behind
    /// `tag` (its language's, empty for English). An empty stem is no token.
    pub fn word(&mut self, position: usize, tag: &str, stem: &str) {
        if stem.is_empty() {
            return;
        }
        let mut gap = position.saturating_sub(self.spaces);
        if !self.text.is_empty() {
            gap = gap.max(1);
        }
        self.text.extend(std::iter::repeat_n(' ', gap));
        self.spaces += gap;
        self.text.push_str(tag);
        self.text.push_str(stem);
    }

    /// A stem at the same position as the last one, behind `tag`.
    pub fn stacked(&mut self, tag: &str, stem: &str) {
        if stem.is_empty() || self.text.is_empty() {
            return;
        }
        self.text.push('|');
        self.text.push_str(tag);
        self.text.push_str(stem);
    }

    pub fn into_string(self) -> String {
        self.text
    }
}

/// The `body` field's analyzer: the stems of a [`StemsText`], each at its position.
#[derive(Clone, Copy, Default)]
pub struct StemsTokenizer;

/// The stems of one [`StemsText`], read as they are asked for.
pub struct StemsStream<'a> {
    text: &'a str,
    next: usize,
    position: usize,
    token: Token,
}

impl Tokenizer for StemsTokenizer {
    type TokenStream<'a> = StemsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> StemsStream<'a> {
        StemsStream { text, next: 0, position: 0, token: Token::default() }
    }
}

impl TokenStream for StemsStream<'_> {
    fn advance(&mut self) -> bool {
        let bytes = self.text.as_bytes();
        while self.next < bytes.len() {
            match bytes[self.next] {
                b' ' => self.position += 1,
                b'|' => {}
                _ => break,
            }
            self.next += 1;
        }
        if self.next >= bytes.len() {
            return false;
        }
        let start = self.next;
        let end = self.text[start..].find([' ', '|']).map_or(self.text.len(), |i| start + i);
        self.next = end;
        self.token.text.clear();
        self.token.text.push_str(&self.text[start..end]);
        self.token.offset_from = start;
        self.token.offset_to = end;
        self.token.position = self.position;
        self.token.position_length = 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<(String, usize)> {
        let mut tokenizer = StemsTokenizer;
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push((stream.token().text.clone(), stream.token().position));
        }
        out
    }

    #[test]
    fn stems_are_read_back_at_their_positions_stacked_ones_at_their_words() {
        let mut s = StemsText::with_capacity(64);
        s.word(1, "", "develop");
        s.word(3, "", "road");
        s.stacked("es:", "roa");
        s.word(4, "de:", "entwickl");
        s.stacked("", "entwicklung");
        s.word(5, "de:", "jahr");
        let text = s.into_string();
        assert_eq!(text, " develop  road|es:roa de:entwickl|entwicklung de:jahr");
        assert_eq!(
            read(&text),
            [
                ("develop".to_string(), 1),
                ("road".to_string(), 3),
                ("es:roa".to_string(), 3),
                ("de:entwickl".to_string(), 4),
                ("entwicklung".to_string(), 4),
                ("de:jahr".to_string(), 5),
            ]
        );
        assert_eq!(read(""), []);
        assert_eq!(read(&StemsText::default().into_string()), []);
        let mut first = StemsText::default();
        first.word(0, "", "a");
        first.word(1, "", "b");
        assert_eq!(read(&first.into_string()), [("a".to_string(), 0), ("b".to_string(), 1)]);
    }
}
