//! How text in each script is cut into words, the one rule of the keyword index and of the
//! question's words: runs of letters and digits, as tantivy's `SimpleTokenizer` cuts them,
//! except that Chinese, Japanese and Korean text, written without spaces between its words, is
//! cut into overlapping pairs of characters (as Lucene's CJK analyzer does): "図書館" is
//! "図書" and "書館", so the word is found inside a sentence, and "부산에서" ("in Busan") holds
//! "부산". A run of one such character is one word.
//!
//! Thai, Lao, Khmer and Burmese, also written without spaces, are cut into their words by
//! ICU's dictionary word breaker (`icu_segmenter`, its data compiled in): "ทุกสองสัปดาห์" is
//! "ทุก", "สอง", "สัปดาห์". Their vowel signs and tone marks are not letters to Rust's
//! `is_alphanumeric`, so a run of these scripts is taken whole, marks included, and the
//! breaker keeps the word-like parts.

use icu_segmenter::options::WordBreakInvariantOptions;
use icu_segmenter::{WordSegmenter, WordSegmenterBorrowed};
use std::ops::Range;
use std::sync::LazyLock;

/// The dictionary word breaker for the scripts [`is_complex`] names (its data is static).
static BREAKER: LazyLock<WordSegmenterBorrowed<'static>> =
    LazyLock::new(|| WordSegmenter::new_dictionary(WordBreakInvariantOptions::default()));

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

/// The words of `text`, as byte ranges in text order: runs of letters and digits, a CJK run
/// cut into its overlapping pairs, a Thai, Lao, Khmer or Burmese run into its dictionary words.
pub fn cut(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for_each_word(text, &mut |range| out.push(range));
    out
}

/// Hands each word of `text` ([`cut`]'s) to `each`, in text order, without collecting them:
/// the keyword index's tokenizer builds its tokens as they come.
pub fn for_each_word(text: &str, each: &mut impl FnMut(Range<usize>)) {
    // A run of letters and digits, split where it passes between CJK and other characters.
    let mut run: Vec<(usize, char)> = Vec::new();
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() || is_complex(c) {
            run.push((i, c));
        } else {
            words_of_run(text, &run, each);
            run.clear();
        }
    }
    words_of_run(text, &run, each);
}

/// The words of one run of `text` (its characters with their byte offsets), each to `each`.
fn words_of_run(text: &str, run: &[(usize, char)], each: &mut impl FnMut(Range<usize>)) {
    let end_of = |k: usize| run[k].0 + run[k].1.len_utf8();
    let mut k = 0;
    while k < run.len() {
        let script = script_of(run[k].1);
        let mut j = k;
        while j + 1 < run.len() && script_of(run[j + 1].1) == script {
            j += 1;
        }
        let (from, to) = (run[k].0, end_of(j));
        match script {
            Script::Cjk if j > k => {
                for pair in run[k..=j].windows(2) {
                    each(pair[0].0..pair[1].0 + pair[1].1.len_utf8());
                }
            }
            Script::Complex => {
                let mut words = BREAKER.segment_str(&text[from..to]);
                let mut start = 0;
                while let Some(end) = words.next() {
                    if end > start && words.is_word_like() {
                        each(from + start..from + end);
                    }
                    start = end;
                }
            }
            _ => each(from..to),
        }
        k = j + 1;
    }
}
