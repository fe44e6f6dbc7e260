//! The keyword index's words: runs of letters and digits, as tantivy's `SimpleTokenizer` cuts
//! them, except that Chinese, Japanese and Korean text, written without spaces between its
//! words, is cut into overlapping pairs of characters (as Lucene's CJK analyzer does): "図書館"
//! is indexed as "図書" and "書館", so the word is found inside a sentence, and "부산에서"
//! ("in Busan") holds "부산". A query is cut the same way, so its pairs are found where the
//! word is. A run of one such character is one word.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The tokenizer of both keyword analyzers (stemmed and plain).
#[derive(Clone, Copy, Default)]
pub struct WordsTokenizer;

/// The tokens of one text, in order (owned: the filters after the tokenizer rewrite them).
pub struct WordsStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for WordsTokenizer {
    type TokenStream<'a> = WordsStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordsStream {
        let mut tokens = Vec::new();
        cut(text, &mut tokens);
        WordsStream { tokens, next: 0 }
    }
}

impl TokenStream for WordsStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    /// The token read last; called only after [`Self::advance`] returned true.
    fn token(&self) -> &Token {
        &self.tokens[self.next.saturating_sub(1)]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next.saturating_sub(1)]
    }
}

/// Whether `c` belongs to a script written without spaces between words: Han ideographs,
/// Hiragana, Katakana and Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF        // Hangul Jamo
        | 0x3040..=0x309F      // Hiragana
        | 0x30A0..=0x30FF      // Katakana
        | 0x3130..=0x318F      // Hangul compatibility Jamo
        | 0x31F0..=0x31FF      // Katakana phonetic extensions
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFF66..=0xFF9F      // halfwidth Katakana
        | 0x20000..=0x2FA1F) // CJK extensions B-F, compatibility supplement
}

/// Appends the tokens of `text` to `out`.
fn cut(text: &str, out: &mut Vec<Token>) {
    let push = |from: usize, to: usize, out: &mut Vec<Token>| {
        let position = out.len();
        out.push(Token {
            offset_from: from,
            offset_to: to,
            position,
            text: text[from..to].to_string(),
            position_length: 1,
        });
    };
    // A run of letters and digits, split where it passes between CJK and other characters.
    let mut run: Vec<(usize, char)> = Vec::new();
    let flush = |run: &mut Vec<(usize, char)>, out: &mut Vec<Token>| {
        let end_of = |k: usize, run: &[(usize, char)]| run[k].0 + run[k].1.len_utf8();
        let mut k = 0;
        while k < run.len() {
            let cjk = is_cjk(run[k].1);
            let mut j = k;
            while j + 1 < run.len() && is_cjk(run[j + 1].1) == cjk {
                j += 1;
            }
            if !cjk || j == k {
                push(run[k].0, end_of(j, run), out);
            } else {
                for p in k..j {
                    push(run[p].0, end_of(p + 1, run), out);
                }
            }
            k = j + 1;
        }
        run.clear();
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            run.push((i, c));
        } else {
            flush(&mut run, out);
        }
    }
    flush(&mut run, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::{SimpleTokenizer, TextAnalyzer};

    fn words(text: &str) -> Vec<String> {
        super::super::tokens_of(TextAnalyzer::from(WordsTokenizer), text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn text_without_cjk_is_cut_as_the_simple_tokenizer_cuts_it() {
        let text = "Ownership & borrowing: Rust 1.54.0 (naïve café), snake_case x2!";
        let cut = |analyzer: TextAnalyzer| -> Vec<(String, usize, usize, usize)> {
            super::super::tokens_of(analyzer, text)
                .into_iter()
                .map(|t| (t.text, t.offset_from, t.offset_to, t.position))
                .collect()
        };
        let expected = cut(TextAnalyzer::from(SimpleTokenizer::default()));
        let got = cut(TextAnalyzer::from(WordsTokenizer));
        assert_eq!(got, expected);
    }

    #[test]
    fn cjk_runs_are_cut_into_pairs_and_a_word_of_the_run_is_found() {
        assert_eq!(words("図書館へ行く"), ["図書", "書館", "館へ", "へ行", "行く"]);
        assert_eq!(words("在北京的预算"), ["在北", "北京", "京的", "的预", "预算"]);
        assert_eq!(words("부산에서 만나요"), ["부산", "산에", "에서", "만나", "나요"]);
        assert_eq!(words("Rust製のツール, 猫"), ["Rust", "製の", "のツ", "ツー", "ール", "猫"]);
        for word in ["図書館", "北京", "预算", "부산"] {
            let pairs = words(word);
            let all = [words("図書館へ行く"), words("在北京的预算"), words("부산에서 만나요")].concat();
            assert!(pairs.iter().all(|p| all.contains(p)), "{word}: {pairs:?}");
        }
        assert!(is_cjk('館') && is_cjk('へ') && is_cjk('ツ') && is_cjk('부') && !is_cjk('a') && !is_cjk('é'));
    }
}
