//! The keyword index's words: runs of letters and digits, as tantivy's `SimpleTokenizer` cuts
//! them, except that Chinese, Japanese and Korean text, written without spaces between its
//! words, is cut into overlapping pairs of characters (as Lucene's CJK analyzer does): "図書館"
//! is indexed as "図書" and "書館", so the word is found inside a sentence, and "부산에서"
//! ("in Busan") holds "부산". A query is cut the same way, so its pairs are found where the
//! word is. A run of one such character is one word.
//!
//! Thai, Lao, Khmer and Burmese, also written without spaces, are cut into their words by
//! ICU's dictionary word breaker (`icu_segmenter`, its data compiled in): "ทุกสองสัปดาห์" is
//! "ทุก", "สอง", "สัปดาห์". Their vowel signs and tone marks are not letters to Rust's
//! `is_alphanumeric`, so a run of these scripts is taken whole, marks included, and the
//! breaker keeps the word-like parts.

use icu_segmenter::options::WordBreakInvariantOptions;
use icu_segmenter::{WordSegmenter, WordSegmenterBorrowed};
use std::sync::LazyLock;
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The dictionary word breaker for the scripts [`is_complex`] names (its data is static).
static BREAKER: LazyLock<WordSegmenterBorrowed<'static>> =
    LazyLock::new(|| WordSegmenter::new_dictionary(WordBreakInvariantOptions::default()));

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

/// Whether `c` belongs to a script written without spaces whose words a dictionary tells:
/// Thai, Lao, Myanmar (Burmese) and Khmer, marks and signs included.
pub fn is_complex(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F        // Thai
        | 0x0E80..=0x0EFF      // Lao
        | 0x1000..=0x109F      // Myanmar
        | 0x1780..=0x17FF      // Khmer
        | 0x19E0..=0x19FF      // Khmer symbols
        | 0xA9E0..=0xA9FF      // Myanmar extended-B
        | 0xAA60..=0xAA7F) // Myanmar extended-A
}

/// How a run's characters are cut: whole words, CJK pairs, or a dictionary's words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Spaced,
    Cjk,
    Complex,
}

fn script_of(c: char) -> Script {
    if is_cjk(c) {
        Script::Cjk
    } else if is_complex(c) {
        Script::Complex
    } else {
        Script::Spaced
    }
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
            let script = script_of(run[k].1);
            let mut j = k;
            while j + 1 < run.len() && script_of(run[j + 1].1) == script {
                j += 1;
            }
            let (from, to) = (run[k].0, end_of(j, run));
            match script {
                Script::Cjk if j > k => {
                    for p in k..j {
                        push(run[p].0, end_of(p + 1, run), out);
                    }
                }
                Script::Complex => {
                    let mut words = BREAKER.segment_str(&text[from..to]);
                    let mut start = 0;
                    while let Some(end) = words.next() {
                        if end > start && words.is_word_like() {
                            push(from + start, from + end, out);
                        }
                        start = end;
                    }
                }
                _ => push(from, to, out),
            }
            k = j + 1;
        }
        run.clear();
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() || is_complex(c) {
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

    #[test]
    fn thai_lao_khmer_and_burmese_are_cut_into_their_words() {
        assert_eq!(words("ทุกสองสัปดาห์"), ["ทุก", "สอง", "สัปดาห์"], "ICU's own example");
        let thai = words("ฉันชอบเขียนโปรแกรมด้วยภาษา Rust มาก");
        assert!(thai.contains(&"โปรแกรม".to_string()) && thai.contains(&"ภาษา".to_string()), "{thai:?}");
        assert!(thai.contains(&"Rust".to_string()));
        // Each word of a sentence is a token of it, in Khmer, Lao and Burmese too.
        for (sentence, word) in
            [("ខ្ញុំស្រលាញ់ប្រទេសកម្ពុជា", "ប្រទេស"), ("ຂ້ອຍຮັກປະເທດລາວ", "ປະເທດ"), ("ကျွန်တော်မြန်မာစာကိုလေ့လာတယ်", "မြန်မာ")]
        {
            let cut = words(sentence);
            assert!(cut.len() > 1, "{sentence}: {cut:?}");
            assert!(cut.iter().any(|w| w.contains(word)), "{word} in {cut:?}");
        }
        assert_eq!(words("ภาษาไทย, ๑๒๓!"), ["ภาษา", "ไทย", "๑๒๓"], "punctuation is no word");
        assert!(is_complex('ั') && is_complex('ក') && !is_complex('a') && !is_complex('館'));
    }
}
