//! The keyword index's words, cut by the one rule of [`crate::question::script`]: runs of
//! letters and digits, CJK runs in overlapping pairs ("図書館" is indexed as "図書" and
//! "書館"), Thai, Lao, Khmer and Burmese runs in their dictionary words. A query is cut the
//! same way, so its pairs are found where the word is.

use crate::question::script::for_each_word;
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
        let mut tokens: Vec<Token> = Vec::new();
        for_each_word(text, &mut |range| {
            tokens.push(Token {
                offset_from: range.start,
                offset_to: range.end,
                position: tokens.len(),
                text: text[range].to_string(),
                position_length: 1,
            })
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::script::{is_cjk, is_complex};
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
