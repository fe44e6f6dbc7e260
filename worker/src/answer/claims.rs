//! The deterministic layer of verified answers: a draft split into claims (sentences, with
//! their citation markers and UTF-16 offsets), and each claim held against a passage: are
//! its content words, numbers and negations there?

use crate::evidence::facets::content_words;

/// A citation marker in the draft: `[n]` (one number each; `[1, 2]` gives two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub number: usize,
    /// The marker as written.
    pub text: String,
    /// UTF-16 offsets in the draft.
    pub start: u32,
    pub end: u32,
}

/// One sentence of the draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The sentence as written, markers included (trimmed).
    pub text: String,
    /// The sentence without its markers.
    pub plain: String,
    pub start: u32,
    pub end: u32,
    pub markers: Vec<Marker>,
}

impl Claim {
    /// A claim that says something: it has a content word.
    pub fn is_substantive(&self) -> bool {
        !content_words(&self.plain).is_empty()
    }
}

/// A claim's content words a passage must hold for the claim to rest on it.
pub const MIN_COVERAGE: f64 = 0.8;

/// Words that turn a statement into its opposite.
const NEGATIONS: &[&str] = &["not", "no", "never", "none", "neither", "nor", "cannot", "without"];

fn utf16_len(s: &str) -> u32 {
    s.encode_utf16().count() as u32
}

/// The markers of `text` (offsets relative to `text`), and `text` without them.
pub fn markers_of(text: &str) -> (Vec<Marker>, String) {
    let mut markers = Vec::new();
    let mut plain = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with('[') {
            if let Some(close) = rest.find(']') {
                let inside = &rest[1..close];
                let numbers: Option<Vec<usize>> = inside
                    .split(',')
                    .map(|p| {
                        let p = p.trim();
                        (!p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
                            .then(|| p.parse().ok())
                            .flatten()
                    })
                    .collect();
                if let Some(numbers) = numbers {
                    let whole = &rest[..=close];
                    let start = utf16_len(&text[..i]);
                    let end = start + utf16_len(whole);
                    for number in numbers {
                        markers.push(Marker { number, text: whole.to_string(), start, end });
                    }
                    i += close + 1;
                    continue;
                }
            }
        }
        let Some(c) = rest.chars().next() else { break };
        plain.push(c);
        i += c.len_utf8();
    }
    (markers, plain.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The claims of `draft`: sentences ending at `.`, `!` or `?` before whitespace (or at the
/// end), or at a line break. Markers right after a sentence's end (`Paris. [1]`) belong to
/// it. Offsets are UTF-16 code units of `draft`.
pub fn split(draft: &str) -> Vec<Claim> {
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = draft.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (b, c) = chars[k];
        let ends = match c {
            '\n' => true,
            '.' | '!' | '?' => {
                chars.get(k + 1).is_none_or(|(_, n)| n.is_whitespace()) && !is_abbreviation(&draft[start..b])
            }
            _ => false,
        };
        if ends {
            let mut end = b + c.len_utf8();
            // Markers after the end, separated by spaces only.
            let mut j = k + 1;
            loop {
                let mut m = j;
                while m < chars.len() && chars[m].1 == ' ' {
                    m += 1;
                }
                if m < chars.len() && chars[m].1 == '[' {
                    if let Some(close) = draft[chars[m].0..].find(']') {
                        let (found, _) = markers_of(&draft[chars[m].0..chars[m].0 + close + 1]);
                        if !found.is_empty() {
                            end = chars[m].0 + close + 1;
                            while j < chars.len() && chars[j].0 < end {
                                j += 1;
                            }
                            continue;
                        }
                    }
                }
                break;
            }
            bounds.push((start, end));
            start = end;
            k = j;
            continue;
        }
        k += 1;
    }
    if start < draft.len() {
        bounds.push((start, draft.len()));
    }
    let mut out = Vec::new();
    for (s, e) in bounds {
        let piece = &draft[s..e];
        let lead = piece.len() - piece.trim_start().len();
        let text = piece.trim();
        if text.is_empty() {
            continue;
        }
        let offset = utf16_len(&draft[..s + lead]);
        let (mut markers, plain) = markers_of(text);
        for m in &mut markers {
            m.start += offset;
            m.end += offset;
        }
        out.push(Claim { text: text.to_string(), plain, start: offset, end: offset + utf16_len(text), markers });
    }
    out
}

/// "e.g." and single capital initials do not end a sentence.
fn is_abbreviation(before: &str) -> bool {
    let last = before.rsplit(|c: char| c.is_whitespace()).next().unwrap_or("");
    matches!(last.to_lowercase().as_str(), "e.g" | "i.e" | "etc" | "vs" | "dr" | "mr" | "mrs" | "st")
        || (last.chars().count() == 1 && last.chars().all(|c| c.is_uppercase()))
}

/// How a claim stands against one passage, by its words alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lexical {
    /// Share of the claim's content words the passage holds (a passage word starting with it).
    pub coverage: f64,
    /// Every number of the claim is in the passage.
    pub numbers_present: bool,
    /// The passage states otherwise: the claim's words are there (at least half) but a
    /// negation is in one and not the other within the best-matching sentence, or the claim
    /// has a number where that sentence has a different one.
    pub conflicts: bool,
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches('\'').to_lowercase())
        .collect()
}

fn numbers(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')) {
        let n = w.trim_matches(|c| c == '.' || c == ',').replace(',', "");
        if !n.is_empty() && n.bytes().any(|b| b.is_ascii_digit()) && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn negated(ws: &[String]) -> bool {
    ws.iter().any(|w| NEGATIONS.contains(&w.as_str()) || w.ends_with("n't"))
}

/// The candidate (`(unit vector, tag)`) closest in meaning to `v`: its cosine and tag (the first
/// of equals).
pub fn closest<'v, T: Copy>(v: &[f32], candidates: impl IntoIterator<Item = (&'v [f32], T)>) -> Option<(f64, T)> {
    let mut best: Option<(f64, T)> = None;
    for (c, tag) in candidates {
        let sim: f64 = v.iter().zip(c).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
        if best.is_none_or(|(b, _)| sim > b) {
            best = Some((sim, tag));
        }
    }
    best
}

/// The sentences of a passage (for the conflict check and the semantic layer).
pub fn sentences(passage: &str) -> Vec<String> {
    split(passage).into_iter().map(|c| c.plain).filter(|s| !s.is_empty()).collect()
}

/// `claim` (its text without markers) against `passage`.
pub fn lexical(claim: &str, passage: &str) -> Lexical {
    let content = content_words(claim);
    let passage_words = words(passage);
    let held = |w: &String| passage_words.iter().any(|p| p.starts_with(w.as_str()));
    let coverage =
        if content.is_empty() { 0.0 } else { content.iter().filter(|w| held(w)).count() as f64 / content.len() as f64 };
    let claim_numbers = numbers(claim);
    let passage_numbers = numbers(passage);
    let numbers_present = claim_numbers.iter().all(|n| passage_numbers.contains(n));
    // The sentence of the passage that shares the most content words with the claim.
    let best = sentences(passage)
        .into_iter()
        .map(|s| {
            let sw = words(&s);
            let shared = content.iter().filter(|w| sw.iter().any(|p| p.starts_with(w.as_str()))).count();
            (shared, s)
        })
        .max_by_key(|(shared, _)| *shared);
    let conflicts = match best {
        Some((shared, sentence)) if !content.is_empty() && shared * 2 >= content.len() => {
            let sentence_words = words(&sentence);
            let negation_differs = negated(&words(claim)) != negated(&sentence_words);
            let sentence_numbers = numbers(&sentence);
            let number_differs = !claim_numbers.is_empty()
                && !sentence_numbers.is_empty()
                && claim_numbers.iter().any(|n| !sentence_numbers.contains(n));
            negation_differs || number_differs
        }
        _ => false,
    };
    Lexical { coverage, numbers_present, conflicts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_with_their_markers_and_utf16_offsets() {
        let draft = "Paris is the capital [1]. It has the Eiffel Tower. [2]\nDone";
        let claims = split(draft);
        assert_eq!(claims.len(), 3);
        assert_eq!(claims[0].text, "Paris is the capital [1].");
        assert_eq!(claims[0].plain, "Paris is the capital .");
        assert_eq!(claims[0].markers.iter().map(|m| m.number).collect::<Vec<_>>(), vec![1]);
        assert_eq!(claims[1].text, "It has the Eiffel Tower. [2]");
        assert_eq!(claims[1].markers[0].number, 2);
        assert_eq!(claims[2].text, "Done");
        let utf16: Vec<u16> = draft.encode_utf16().collect();
        for c in &claims {
            assert_eq!(String::from_utf16(&utf16[c.start as usize..c.end as usize]).unwrap(), c.text);
            for m in &c.markers {
                assert_eq!(String::from_utf16(&utf16[m.start as usize..m.end as usize]).unwrap(), m.text);
            }
        }
    }

    #[test]
    fn offsets_count_utf16_units() {
        let claims = split("Café 😀 is open [1]. Next one.");
        assert_eq!(claims[0].start, 0);
        // "😀" is two UTF-16 units.
        assert_eq!(claims[0].end, "Café 😀 is open [1].".encode_utf16().count() as u32);
        assert_eq!(claims[1].start, claims[0].end + 1);
    }

    #[test]
    fn abbreviations_and_decimals_do_not_split() {
        assert_eq!(split("Use tools, e.g. a hammer. Pi is 3.14 exactly.").len(), 2);
    }

    #[test]
    fn grouped_markers_give_each_number() {
        let c = &split("Both hold [1, 3].")[0];
        assert_eq!(c.markers.iter().map(|m| m.number).collect::<Vec<_>>(), vec![1, 3]);
        assert!(!split("[1]")[0].is_substantive());
    }

    #[test]
    fn lexical_support_and_conflict() {
        let p = "Paris is the capital of France. The tower is 330 metres tall.";
        let ok = lexical("The capital of France is Paris.", p);
        assert_eq!((ok.coverage, ok.numbers_present, ok.conflicts), (1.0, true, false));
        let neg = lexical("Paris is not the capital of France.", p);
        assert!(neg.conflicts);
        let num = lexical("The tower is 400 metres tall.", p);
        assert!(!num.numbers_present && num.conflicts);
        let other = lexical("Berlin has many museums.", p);
        assert!(other.coverage < 0.5 && !other.conflicts);
    }
}
