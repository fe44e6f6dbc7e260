//! The deterministic layer of verified answers: a draft split into claims (sentences, with
//! their citation markers and UTF-16 offsets), and each claim held against a passage: are
//! its content words, numbers and negations there?

use super::relevance::{self, same_spelling, Vocabulary};
use crate::question::language::{with_ascii_digits, Language};
use crate::question::words::{self, content_words};
use crate::question::Question;

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

/// The words of `text` with their apostrophes, where a negation is read ("don't"); what a
/// text holds is read by the one rule ([`crate::question::words`]).
fn negation_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches('\'').to_lowercase())
        .collect()
}

/// The numbers of `text`, in ASCII digits, each once: written in digits of any script
/// ([`with_ascii_digits`]: "๓๐" is "30"; thousands separators dropped: "10,000" is "10000"),
/// or as a word ([`number_words`]: "one second" holds 1, as "1 second" does; "zwei Sekunden"
/// holds 2 in a German text).
fn numbers(text: &str) -> Vec<String> {
    let text = &*with_ascii_digits(text);
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')) {
        let n = w.trim_matches(|c| c == '.' || c == ',').replace(',', "");
        if !n.is_empty() && n.bytes().any(|b| b.is_ascii_digit()) && !out.contains(&n) {
            out.push(n);
        }
    }
    for n in number_words(text, Language::of_words(&words::words(text))) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The words before "one" after which it always counts ("only one", "at least one").
const BEFORE_ONE_COUNTING: &[&str] = &["only", "exactly", "just", "most", "least"];
/// The words before "one" after which it stands for a thing ("the one", "no one").
const BEFORE_ONE_A_THING: &[&str] = &["the", "no", "any", "each", "every", "which", "this", "that", "new", "same"];
/// The words after "one" before which it stands for a thing or a person ("one of", "one
/// should"); the end of the text is one of them.
const AFTER_ONE_A_THING: &[&str] = &[
    "", "of", "another", "or", "and", "is", "that", "which", "can", "could", "may", "might", "must", "should", "would",
    "will", "needs",
];

/// The numbers `text` writes as words, in digits: "two" to "twelve" in English and in the
/// text's `language` ([`Language::number_words`]), and
/// "one" where it counts something ("one second", "only one of them") rather than standing for
/// a thing or a person. A number word joined to another by `-`, `_` or an apostrophe
/// ("one-time", "two's complement") is not a number. "one" is not a number at the start of a
/// sentence ("One way is…"), after a word of [`BEFORE_ONE_A_THING`], nor before one of
/// [`AFTER_ONE_A_THING`] (a modal verb among them: "one should") or the end of the text,
/// except after a word of [`BEFORE_ONE_COUNTING`] ("only", "exactly", "at most"), where it
/// always counts.
fn number_words(text: &str, language: Language) -> Vec<String> {
    // Each run of letters and digits, lowercase, with the characters either side of it.
    let mut runs: Vec<(String, Option<char>, Option<char>)> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        if c.is_alphanumeric() && i < text.len() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            runs.push((text[s..i].to_lowercase(), text[..s].trim_end().chars().next_back(), text[i..].chars().next()));
        }
    }
    let joined = |c: Option<char>| matches!(c, Some('-' | '_' | '\'' | '’'));
    let mut out: Vec<String> = Vec::new();
    for (k, (w, before_char, after_char)) in runs.iter().enumerate() {
        if joined(*before_char) || joined(*after_char) {
            continue;
        }
        let n = match Language::English.number_of(w).or_else(|| language.number_of(w)) {
            n @ Some(_) => n,
            None if w == "one" => {
                let before = k.checked_sub(1).map_or("", |b| runs[b].0.as_str());
                let after = runs.get(k + 1).map_or("", |r| r.0.as_str());
                let counted = BEFORE_ONE_COUNTING.contains(&before);
                let sentence_start = before_char.is_none_or(|c| matches!(c, '.' | '!' | '?' | ':'));
                let a_thing =
                    sentence_start || BEFORE_ONE_A_THING.contains(&before) || AFTER_ONE_A_THING.contains(&after);
                (counted || !a_thing).then_some(1)
            }
            None => None,
        };
        if let Some(n) = n.map(|n| n.to_string()) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The code spans of `text` (between single backticks), in [`plain_form`]. A fenced block
/// (a command or an example, between lines of three backticks) is not a name.
pub(super) fn code_spans(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    let mut prose = String::with_capacity(text.len());
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    for (k, part) in prose.split('`').enumerate() {
        let span = plain_form(part);
        if k % 2 == 1 && !span.is_empty() && !out.contains(&span) {
            out.push(span);
        }
    }
    out
}

/// `text` lowercase with its runs of white space as one space: how a name is compared.
pub(super) fn plain_form(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Whether `written` (a text in [`plain_form`]) writes the code span `name` (in plain form) as
/// a raw answer's check reads it: as written, or, for a command line of a few parts (`sysctl
/// -p`, `dpkg -L Paketname`), each part as a word of its own somewhere in it ([`words::writes_name`]:
/// `-l` is not written by `--listfiles`). A manual page writes the command in its title and
/// the option in its list, never the two together. Verified mode keeps the span whole
/// ([`Addition::held_by`]).
pub(super) fn writes_loosely(written: &str, name: &str) -> bool {
    const MOST_PARTS: usize = 4;
    if written.contains(name) {
        return true;
    }
    let parts: Vec<&str> = name.split(' ').collect();
    parts.len() > 1 && parts.len() <= MOST_PARTS && parts.iter().all(|p| words::writes_name(written, p))
}

/// Whether `text` holds a negation: an English one ("not", "doesn't"), or one of the
/// language it reads as ([`Language::negations`]: "nicht", "pas", "не").
fn negated(text: &str) -> bool {
    let language = Language::of_words(&words::words(text));
    negation_words(text).iter().any(|w| Language::English.negates(w) || language.negates(w))
}

pub use crate::stores::vectors::similarity;

/// The candidate (`(unit vector, tag)`) closest in meaning to `v`: its cosine and tag (the first
/// of equals).
pub fn closest<'v, T: Copy>(v: &[f32], candidates: impl IntoIterator<Item = (&'v [f32], T)>) -> Option<(f64, T)> {
    let mut best: Option<(f64, T)> = None;
    for (c, tag) in candidates {
        let sim = similarity(v, c);
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

/// What a claim adds to its question: the content words and numbers the question does not
/// hold. "Lindera was forked from kuromoji-rs" adds "kuromoji", "rs" to "Which project was
/// Lindera forked from?"; a claim that adds nothing restates the question and answers nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition {
    words: Vec<String>,
    numbers: Vec<String>,
    /// What the claim writes as code (between backticks) and the question does not: a name, a
    /// command, a setting. A name is atomic: `native-tls` is not `reqwest-native-tls`.
    names: Vec<String>,
    /// The question's language: the words are looked for in their forms by its rules too.
    language: Language,
}

/// `claim` without a leading "Yes," or "No,": the word answers a yes-or-no question and says
/// nothing a passage could hold ("No, it was built in 1890" states that it was).
pub fn without_particle(claim: &str) -> &str {
    let t = claim.trim_start();
    for particle in ["yes,", "no,"] {
        if t.get(..particle.len()).is_some_and(|p| p.eq_ignore_ascii_case(particle)) {
            return t[particle.len()..].trim_start();
        }
    }
    claim
}

impl Addition {
    pub fn of(claim: &str, question: &Question) -> Addition {
        let claim = without_particle(claim);
        let asked = question.content_words();
        let asked_numbers = numbers(question.text());
        let asked_as_written = plain_form(question.text());
        Addition {
            words: content_words(claim)
                .into_iter()
                // A number (digits, or a version's digits and dots) is read as one below.
                .filter(|w| !w.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
                .filter(|w| !asked.iter().any(|q| same_spelling(q, w)))
                .collect(),
            numbers: numbers(claim).into_iter().filter(|n| !asked_numbers.contains(n)).collect(),
            names: code_spans(claim).into_iter().filter(|n| !asked_as_written.contains(n.as_str())).collect(),
            language: question.language(),
        }
    }

    /// Nothing added: no word, number or name the question does not hold.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.numbers.is_empty() && self.names.is_empty()
    }

    /// The words, numbers and names of this addition that none of `texts` holds (the word in
    /// any of its forms, English's or the question's language's, [`Vocabulary::holds`], or as
    /// the comparison sign a source writes before a number, [`Comparison`]; the number as
    /// written, the name as [`writes_loosely`] reads it).
    pub fn not_in(&self, texts: &[&str]) -> Absent {
        let ws = Vocabulary::in_language(texts.iter().flat_map(|t| words::words(t)), self.language);
        let signs: Vec<Comparison> = texts.iter().flat_map(|t| Comparison::signs_in(t)).collect();
        let held = |w: &String| ws.holds(w) || Comparison::of_word(w).is_some_and(|c| signs.contains(&c));
        let ns: Vec<String> = texts.iter().flat_map(|t| numbers(t)).collect();
        let written: Vec<String> = texts.iter().map(|t| plain_form(t)).collect();
        Absent {
            words: self.words.iter().filter(|w| !held(w)).cloned().collect(),
            numbers: self.numbers.iter().filter(|n| !ns.contains(n)).cloned().collect(),
            names: self.names.iter().filter(|n| !written.iter().any(|t| writes_loosely(t, n))).cloned().collect(),
            of_words: self.words.len(),
        }
    }
}

/// A comparison a sentence makes in words ("less than 251") and a source may make as a sign
/// before a number (`u < 251`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Below,
    Above,
}

impl Comparison {
    /// The comparison a word makes, if it makes one.
    fn of_word(word: &str) -> Option<Comparison> {
        match word {
            "less" | "fewer" | "below" | "under" | "lower" | "smaller" => Some(Comparison::Below),
            "more" | "greater" | "above" | "over" | "higher" | "larger" | "least" | "exceeding" => {
                Some(Comparison::Above)
            }
            _ => None,
        }
    }

    /// The comparisons `text` writes as a sign directly before a number (`< 251`, `>=1.49`,
    /// `≤ 8`): a sign elsewhere is code (`Vec<u8>`), not a comparison.
    fn signs_in(text: &str) -> Vec<Comparison> {
        let mut out = Vec::new();
        for (i, c) in text.char_indices() {
            let comparison = match c {
                '<' | '≤' => Comparison::Below,
                '>' | '≥' => Comparison::Above,
                _ => continue,
            };
            let rest = text[i + c.len_utf8()..].trim_start_matches('=').trim_start();
            if rest.starts_with(|d: char| d.is_ascii_digit()) && !out.contains(&comparison) {
                out.push(comparison);
            }
        }
        out
    }
}

/// What of an [`Addition`] a set of texts lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    pub words: Vec<String>,
    pub numbers: Vec<String>,
    /// Names (code spans) the texts do not write as the claim does.
    pub names: Vec<String>,
    /// How many words the addition has.
    pub of_words: usize,
}

impl Absent {
    /// The texts hold the addition loosely: every number, every name as written and at least
    /// half of the words, anywhere in them.
    pub fn mostly_held(&self) -> bool {
        self.numbers.is_empty() && self.names.is_empty() && self.words.len() * 2 <= self.of_words
    }
}

impl Addition {
    /// Whether a passage (with its document's `title`) gives this addition as the answer to
    /// `question`: one sentence holds all of it, and that sentence, read as
    /// `about_the_question` reads it (with the sentences either side, its heading and the
    /// title), holds at least [`relevance::ABOUT_THE_QUESTION`] of the question's weight. The
    /// answer must come from one place that speaks of what was asked, not from words scattered
    /// over the passage, nor from a sentence about something else. Every name the claim writes
    /// as code stands in the passage as written.
    pub fn held_by(&self, question: &relevance::Weighed, title: &str, passage: &str) -> bool {
        if self.is_empty() {
            return false;
        }
        let written = plain_form(passage);
        if !self.names.iter().all(|n| written.contains(n.as_str())) {
            return false;
        }
        let holds_all = |text: &str| {
            let ws = Vocabulary::of(words::words(text));
            let ns = numbers(text);
            let written = plain_form(text);
            self.words.iter().all(|w| ws.holds(w))
                && self.numbers.iter().all(|n| ns.contains(n))
                && self.names.iter().all(|n| written.contains(n.as_str()))
        };
        about_the_question(question, title, passage).iter().any(|s| holds_all(s))
    }

    /// Whether a passage gives this addition as the grounding check reads a draft, in one
    /// place: one sentence about `question` (as for [`Addition::held_by`]) holds every number
    /// of the addition, or, for an addition without numbers, at least half of its words
    /// ([`Absent::mostly_held`]). A number is the fact itself ("2 MB", "1.31.0"): the words
    /// around it in a small model's sentence are often its own ("Microsoft's", a link's
    /// address), while the number stands in the source only where the source gives it. Looser
    /// than [`Addition::held_by`], the verifier's rule: it credits a raw answer's sentence to
    /// its source, it does not verify it.
    pub fn mostly_held_by(&self, question: &relevance::Weighed, title: &str, passage: &str) -> bool {
        if self.is_empty() {
            return false;
        }
        about_the_question(question, title, passage).iter().any(|s| {
            let absent = self.not_in(&[s.as_str()]);
            if self.numbers.is_empty() {
                absent.mostly_held()
            } else {
                absent.numbers.is_empty() && absent.names.is_empty()
            }
        })
    }

    /// Whether this addition writes a name as code and every name it writes stands (as
    /// [`writes_loosely`] reads it) in one of the sentences `about` the question, read with
    /// its document's title. The name is then the answer, as a number is: the words around it
    /// are the generator's own ("utilisez la commande `--background`" over "-b, --background:
    /// utilisé pour les programmes qui ne se détachent pas"), in whichever language it drafted.
    pub fn names_stand_in(&self, about: &SentencesAbout) -> bool {
        !self.names.is_empty()
            && self.names.iter().all(|n| about.sentences.iter().any(|(_, titled)| writes_loosely(titled, n)))
    }

    /// The numbers of this addition that none of the sentences `about` the question holds: a
    /// number from a sentence about something else ("Rust 1.41 or higher" in another crate's
    /// section) does not answer the question.
    pub fn numbers_off_the_question(&self, about: &SentencesAbout) -> Vec<String> {
        self.numbers.iter().filter(|n| !about.sentences.iter().any(|(ns, _)| ns.contains(n))).cloned().collect()
    }
}

/// The sentences of some sources that are about a question ([`about_the_question`]), read once
/// for every addition of a draft that is held against them: each sentence's numbers, and the
/// sentence with its document's title in [`plain_form`], where a name is looked for.
pub struct SentencesAbout {
    sentences: Vec<(Vec<String>, String)>,
}

impl SentencesAbout {
    /// The sentences about `question` in `sources` (`(title, passage)`).
    pub fn of(question: &relevance::Weighed, sources: &[(&str, &str)]) -> SentencesAbout {
        let sentences = sources
            .iter()
            .flat_map(|(title, passage)| {
                about_the_question(question, title, passage)
                    .into_iter()
                    .map(move |s| (numbers(&s), plain_form(&format!("{title} {s}"))))
            })
            .collect();
        SentencesAbout { sentences }
    }
}

/// The sentences of `passage` about `question`: the sentence, the ones either side of it, the
/// heading it stands under in the passage and the document's `title` hold at least
/// [`relevance::ABOUT_THE_QUESTION`] of the question's weight. A section's heading says what
/// its sentences are about ("Enable the parallel frontend" over "We recommend at most 8"), and
/// so may the sentence after ("…defaults to one second. When that wait expires, ureq proceeds
/// with the upload."); a heading after it starts another section, and a heading is not read
/// with the section under it (it asks or names, it does not answer).
fn about_the_question(question: &relevance::Weighed, title: &str, passage: &str) -> Vec<String> {
    let sentences = prose_sentences(passage);
    let about = |k: usize| {
        let before = if k > 0 { sentences[k - 1].as_str() } else { "" };
        let after = sentences
            .get(k + 1)
            .filter(|s| !s.starts_with('#') && !sentences[k].starts_with('#'))
            .map_or("", String::as_str);
        let heading = sentences[..k].iter().rev().find(|s| s.starts_with('#')).map_or("", String::as_str);
        question.held_by(&format!("{title} {heading} {before} {} {after}", sentences[k]))
            >= relevance::ABOUT_THE_QUESTION
    };
    (0..sentences.len()).filter(|&k| about(k)).map(|k| sentences[k].clone()).collect()
}

/// The sentences of a Markdown passage: lines wrapped inside a paragraph are joined first; a
/// blank line, a heading, a list item, a table row or a quote starts a new block.
pub fn prose_sentences(passage: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    let mut open = false;
    for line in passage.lines() {
        let t = line.trim();
        if t.is_empty() {
            open = false;
            continue;
        }
        let starts_block = t.starts_with(['#', '-', '*', '|', '>', '+'])
            || t.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        match blocks.last_mut() {
            Some(last) if open && !starts_block && !last.starts_with(['#', '|']) => {
                last.push(' ');
                last.push_str(t);
            }
            _ => blocks.push(t.to_string()),
        }
        open = true;
    }
    blocks.iter().flat_map(|b| sentences(b)).collect()
}

/// `claim` (its text without markers) against `passage`.
pub fn lexical(claim: &str, passage: &str) -> Lexical {
    let claim = without_particle(claim);
    let content = content_words(claim);
    let passage_words = Vocabulary::of(words::words(passage));
    let held = |w: &String| passage_words.holds(w);
    let coverage =
        if content.is_empty() { 0.0 } else { content.iter().filter(|w| held(w)).count() as f64 / content.len() as f64 };
    let claim_numbers = numbers(claim);
    let passage_numbers = numbers(passage);
    let numbers_present = claim_numbers.iter().all(|n| passage_numbers.contains(n));
    // The sentences of the passage that speak of what the claim does (at least half its
    // content words): the passage contradicts the claim when one of them says otherwise (the
    // other negation, other numbers) and none says what the claim says (its negation, and
    // every number it gives). A list of options ("DWARF version 2 … 4 (the default) … 5 …
    // version 1 is not supported") holds the claim's next to others.
    //
    // Other numbers say otherwise only in a sentence that (with the one before it) holds every
    // other content word of the claim: "a maximum of 300 features" does not contradict
    // "crates.io allows a maximum of 5 keywords" (the numbers count other things), "a maximum
    // of 10 keywords" does.
    let claim_negated = negated(claim);
    let language = Language::of_words(&words::words(claim));
    let is_number = |w: &str| w.bytes().any(|b| b.is_ascii_digit()) || !number_words(w, language).is_empty();
    let (mut differs, mut says) = (false, false);
    let mut previous = String::new();
    for sentence in sentences(passage) {
        let alone = Vocabulary::of(words::words(&sentence));
        let about = !content.is_empty() && content.iter().filter(|w| alone.holds(w)).count() * 2 >= content.len();
        // For its numbers, a sentence is read with the one before it ("The Old Bridge is 120
        // metres long. It was built in 1890." says when the bridge was built).
        let window = Vocabulary::of(words::words(&format!("{previous} {sentence}")));
        previous.clone_from(&sentence);
        let of_the_same = !content.is_empty() && content.iter().filter(|w| !is_number(w)).all(|w| window.holds(w));
        if !about && !of_the_same {
            continue;
        }
        let sentence_numbers = numbers(&sentence);
        let same_negation = negated(&sentence) == claim_negated;
        let holds_numbers = claim_numbers.iter().all(|n| sentence_numbers.contains(n));
        differs |= (about && !same_negation)
            || (of_the_same && !claim_numbers.is_empty() && !sentence_numbers.is_empty() && !holds_numbers);
        says |= about && same_negation && holds_numbers;
    }
    let conflicts = differs && !says;
    Lexical { coverage, numbers_present, conflicts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_of_unit_vectors_and_the_closest() {
        assert!((similarity(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!(similarity(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-12);
        let (a, b) = ([0.6f32, 0.8], [0.8f32, 0.6]);
        assert_eq!(closest(&[1.0, 0.0], [(&a[..], 'a'), (&b[..], 'b')]).map(|(_, t)| t), Some('b'));
    }

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
    fn a_number_written_as_a_word_is_a_number() {
        assert_eq!(numbers("It defaults to one second, or two with 10,000 rows."), ["10000", "1", "2"]);
        assert_eq!(numbers("Only one crate; rustc has six levels."), ["1", "6"]);
        assert!(numbers("Pick one of them: the one that fits, no one else, or one another.").is_empty());
        assert!(numbers("Someone is done; the tone is fine.").is_empty());
        // A word of a thing, a person or a compound, not a count.
        assert!(numbers("One way is a new one; one should use each one, or this one-time two's flag.").is_empty());
        assert!(numbers("It is one.").is_empty());
        // After "only", "exactly", "at most": always a count.
        assert_eq!(numbers("Enable exactly one of them, at most one can run."), ["1"]);
        assert_eq!(numbers("It waits one second: three tries."), ["1", "3"]);
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
        // One sentence that says it is enough, beside others that say otherwise; one that
        // says neither (no number) does not agree.
        let options =
            "* `2`: DWARF version 2.\n* `4`: DWARF version 4 (the default).\n\nDWARF version 1 is not supported.";
        assert!(!lexical("The default is DWARF version 4.", options).conflicts);
        assert!(
            lexical("The tower is 400 metres tall.", "The tower is tall and old. The tower is 330 metres tall.")
                .conflicts
        );
        // Other numbers of other things: no conflict.
        let features = "New crates published on crates.io are limited to a maximum of 300 features.";
        assert!(!lexical("Crates.io allows a maximum of 5 keywords.", features).conflicts);
        assert!(
            lexical("Crates.io allows a maximum of 5 keywords.", "Crates.io allows a maximum of 10 keywords.")
                .conflicts
        );
    }

    #[test]
    fn a_claim_in_another_language_is_read_by_its_own_negations_and_numbers() {
        let p = "Die Option -S sortiert die Dateien nach ihrer Größe. Es werden zwei Durchläufe gemacht.";
        let ok = lexical("Die Option -S sortiert die Dateien nach Größe.", p);
        assert_eq!((ok.coverage, ok.numbers_present, ok.conflicts), (1.0, true, false));
        assert!(lexical("Die Option -S sortiert die Dateien nicht nach Größe.", p).conflicts);
        let three = lexical("Es werden drei Durchläufe gemacht.", p);
        assert!(!three.numbers_present && three.conflicts);
        assert!(lexical("Es werden 2 Durchläufe gemacht.", p).numbers_present);
        // German stopwords are not content: "wie", "ich", "die" need not be in the passage.
        assert!(content_words("Wie sortiere ich die Dateien?").iter().all(|w| w == "sortiere" || w == "dateien"));
        let fr = "Cette option ne modifie pas le fichier. Le délai est de trois secondes.";
        assert!(lexical("Cette option modifie le fichier.", fr).conflicts);
        assert!(lexical("Le délai est de 3 secondes.", fr).numbers_present);
        assert_eq!(numbers("รอ ๓๐ วินาที"), ["30"]);
        // English reads as before: "once" is not eleven, "die" not a stopword.
        assert!(numbers("It runs once.").is_empty());
        assert_eq!(content_words("The processes die."), ["processes", "die"]);
    }

    #[test]
    fn an_addition_is_what_the_claim_says_beyond_the_question() {
        let uniform = |q: &str| relevance::weighed(q, |words| vec![1.0; words.len()]);
        let q = "Which project was Lindera forked from?";
        let added = Addition::of("Lindera was forked from kuromoji-rs.", &Question::read(q));
        assert_eq!(added.words, vec!["kuromoji", "rs"]);
        let asked = uniform(q);
        assert!(added.held_by(&asked, "Lindera", "A morphological analyzer.\nThis project is\na fork of kuromoji-rs."));
        // The words are in the passage, but not in one place.
        assert!(!added.held_by(
            &asked,
            "Lindera",
            "Kuromoji is a Java library. Many rs crates exist. Lindera is fast."
        ));
        // A restatement adds nothing and is held by nothing.
        let q = "By default, how many file descriptors does walkdir keep open at most?";
        let restated = Addition::of("walkdir keeps open file descriptors at most.", &Question::read(q));
        assert!(restated.is_empty());
        assert!(!restated.held_by(&uniform(q), "walkdir", "walkdir keeps open file descriptors at most"));
        // A true sentence of the passage that does not speak of what was asked.
        let q = "As which integer type does bincode encode enum variants?";
        let aside = Addition::of("Bincode does not respect `#[repr(u8)]`.", &Question::read(q));
        let passage =
            "### Why does bincode not respect `#[repr(u8)]`?\n\nBincode will encode enum variants as a `u32`.";
        assert!(!aside.held_by(&uniform(q), "readme", passage));
        assert!(Addition::of("Bincode encodes enum variants as a u32.", &Question::read(q)).held_by(
            &uniform(q),
            "readme",
            passage
        ));
        // "No" answers a yes-or-no question; what follows it is what a passage must hold.
        let q = "Was the Old Bridge built in 1950?";
        let no = Addition::of("No, the Old Bridge was built in 1890.", &Question::read(q));
        let passage = "The Old Bridge is 120 metres long. It was built in 1890.";
        assert!(no.held_by(&uniform(q), "Old Bridge", passage));
        let one = "The Old Bridge was built in 1890.";
        assert!(!lexical("No, the Old Bridge was built in 1890.", one).conflicts);
        assert!(lexical("No, the Old Bridge was not built in 1890.", one).conflicts);
        // Another crate's answer to the same kind of question: its rarest word is missing.
        let q = "What is the minimum supported Rust version of lancedb?";
        let rare =
            relevance::weighed(q, |words| words.iter().map(|w| if w == "lancedb" { 8.0 } else { 1.0 }).collect());
        let other = "## Minimum Supported Rust Version\n\nRust 1.41 or higher.";
        assert!(!Addition::of("lancedb needs Rust 1.41.", &Question::read(q)).held_by(
            &rare,
            "RustCrypto: Common Traits",
            other
        ));
    }

    #[test]
    fn a_sentence_holding_the_numbers_or_half_the_words_mostly_holds_an_addition() {
        let uniform = |q: &str| relevance::weighed(q, |words| vec![1.0; words.len()]);
        let q = "Which rustc version does tracing 0.1.44 require?";
        let asked = uniform(q);
        let name = "svc://c/tracing-0.1.44/README.md tracing";
        let passage = "# tracing\n\n*Compiler support: [requires `rustc` 1.65+][msrv]*\n\nOther text.";
        let loose = Addition::of("tracing 0.1.44 requires rustc 1.65+ [msrv] and tracing-log.", &Question::read(q));
        assert!(!loose.held_by(&asked, name, passage));
        assert!(loose.mostly_held_by(&asked, name, passage));
        // Words of the model's own around the number do not matter; the number does.
        let worded = Addition::of("tracing 0.1.44 targets the Microsoft toolchain, rustc 1.65.", &Question::read(q));
        assert!(worded.mostly_held_by(&asked, name, passage));
        let wrong = Addition::of("tracing 0.1.44 requires rustc 1.63+ [msrv].", &Question::read(q));
        assert!(!wrong.mostly_held_by(&asked, name, passage));
        // Nor is a sentence about something else.
        let other = "# castaway\n\nCastaway requires rustc 1.65 or newer.";
        assert!(!loose.mostly_held_by(&asked, "svc://c/castaway/README.md castaway", other));
        // Without a number, half of the words must stand in one sentence about the question.
        let q = "Which arrow feature adds reading and writing of compressed IPC streams?";
        let feature = Addition::of(
            "Arrow provides reading and writing of compressed IPC streams [ipc_compression].",
            &Question::read(q),
        );
        let readme = "## Features\n\n- `ipc_compression` - Enables reading and writing compressed IPC streams";
        assert!(feature.mostly_held_by(&uniform(q), "svc://c/arrow/README.md arrow", readme));
        assert!(!feature.mostly_held_by(&uniform(q), "svc://c/arrow/README.md arrow", "## Features\n\n- `ipc` - IPC"));
    }

    #[test]
    fn a_name_written_as_code_stands_in_the_passage_as_written() {
        let q = "Which reqwest feature compiles its own copy of OpenSSL on Linux?";
        let asked = relevance::weighed(q, |words| vec![1.0; words.len()]);
        let passage = "On Linux you can enable the `native-tls-vendored` feature to compile its own copy of OpenSSL.";
        let wrong = Addition::of(
            "The `reqwest-native-tls` feature compiles its own copy of OpenSSL on Linux.",
            &Question::read(q),
        );
        let right = Addition::of(
            "The `native-tls-vendored` feature compiles its own copy of OpenSSL on Linux.",
            &Question::read(q),
        );
        assert!(!wrong.held_by(&asked, "reqwest", passage));
        assert!(right.held_by(&asked, "reqwest", passage));
        assert_eq!(code_spans("Run `cargo  build` or `X`; `cargo build` again, ``"), ["cargo build", "x"]);
        assert_eq!(code_spans("Run:\n```bash\ncargo update\n```\nthen `cargo build`."), ["cargo build"]);
    }

    #[test]
    fn a_name_alone_is_an_answer() {
        // The name's parts are the question's words; the name itself is what it adds.
        let q = "Which environment variable makes libsqlite3-sys link SQLite statically?";
        let name = Addition::of("Set `SQLITE3_STATIC` to link it statically.", &Question::read(q));
        assert!(!name.is_empty());
        assert!(name.not_in(&["Set the `SQLITE3_STATIC` environment variable."]).mostly_held());
        let other = name.not_in(&["Set `SQLITE3_LIB_DIR` to the library's folder."]);
        assert_eq!(other.names, ["sqlite3_static"]);
        assert!(!other.mostly_held());
    }

    #[test]
    fn a_comparison_in_words_is_held_by_its_sign_before_a_number() {
        let q = "Which values does the decoder accept for the length?";
        let a = Addition::of("It accepts lengths less than 251.", &Question::read(q));
        assert!(a.not_in(&["The length `u < 251` is stored in one byte."]).mostly_held());
        assert!(!a.not_in(&["A `Vec<u8>` of 251 bytes."]).mostly_held(), "a generic is no comparison");
        assert_eq!(Comparison::signs_in("x >= 1.49 and y ≤ 8, Vec<T>"), [Comparison::Above, Comparison::Below]);
    }

    #[test]
    fn a_sentence_is_read_under_its_heading() {
        let q = "What is the maximum number of threads the Cargo book recommends when enabling the parallel frontend?";
        let asked = relevance::weighed(q, |words| vec![1.0; words.len()]);
        let eight = Addition::of("The Cargo book recommends at most 8 threads.", &Question::read(q));
        let body = "It tells the compiler to use `n` threads. The value of `n` depends on your cores. \
                    We recommend using at most `8` threads.";
        let title = "Build Performance - The Cargo Book";
        let sourced = [(title, format!("### Enable the parallel frontend\n\n{body}"))];
        let sourced: Vec<(&str, &str)> = sourced.iter().map(|(t, p)| (*t, p.as_str())).collect();
        assert!(eight.numbers_off_the_question(&SentencesAbout::of(&asked, &sourced)).is_empty());
        assert_eq!(eight.numbers_off_the_question(&SentencesAbout::of(&asked, &[(title, body)])), ["8"]);
    }

    #[test]
    fn a_sentence_is_read_with_the_one_after_it() {
        let q = "How long does ureq wait for a 100 Continue response by default before uploading the body?";
        let asked = relevance::weighed(q, |words| vec![1.0; words.len()]);
        let one = Addition::of("ureq waits one second before uploading the body.", &Question::read(q));
        assert_eq!(one.numbers, ["1"]);
        let said = "Limits default to `None`, except `timeout_await_100`, which defaults to one second.";
        let explained = format!("{said} When that wait expires, ureq proceeds with the upload of the body.");
        assert!(one.numbers_off_the_question(&SentencesAbout::of(&asked, &[("ureq", explained.as_str())])).is_empty());
        assert_eq!(one.numbers_off_the_question(&SentencesAbout::of(&asked, &[("ureq", said)])), ["1"]);
        // A heading after the sentence starts another section: it says nothing of it.
        let headed = format!("{said}\n\n## Waiting for a 100 Continue response before uploading the body");
        assert_eq!(one.numbers_off_the_question(&SentencesAbout::of(&asked, &[("ureq", headed.as_str())])), ["1"]);
    }

    #[test]
    fn prose_sentences_join_wrapped_lines_only() {
        let p = "# Title\nFIFO spawns are now supported using\n  the new functions. Second one.\n- item one\n| a | b |\n| c | d |";
        assert_eq!(
            prose_sentences(p),
            vec![
                "# Title",
                "FIFO spawns are now supported using the new functions.",
                "Second one.",
                "- item one",
                "| a | b |",
                "| c | d |"
            ]
        );
    }
}
