//! Stems by the language a text is written in. A document's text is stemmed with the Snowball
//! stemmer of its language, detected from its first characters (`whatlang`); a text whose
//! language is not told reliably, or has no stemmer here, is stemmed as English, as every text
//! was before, and a short one also by the language it is likely in ([`guesses`]). A query is too short to tell its language: each of its words is looked for in
//! its stem in every language the index holds documents of ([`variants`]), and a document
//! matches it by the one its own language gives ("Entwicklung" finds "Entwicklungen" in a
//! German note: both stem to "entwickl"). An index of English notes looks for English stems
//! alone, as before.

use frostem::{Algorithm, Stemmer};
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};
use whatlang::Lang;

/// A language stemmed by its own rules: the languages the question's words are read in
/// ([`crate::question::language::Language`], one list of them), each with its Snowball
/// stemmer here. English is the stem of a text whose language is not told.
pub use crate::question::language::Language as Stemming;

/// Characters read to tell a text's language: enough for a reliable guess, cheap on a long one.
/// (2,000 made whatlang a fifth of a first index's CPU; the manual pages' keyword recall is the
/// same with 1,000.)
const SAMPLE_CHARS: usize = 1_000;

/// Characters whatlang reads to confirm the language a text's common words plainly tell
/// ([`Stemming::told`]).
const CONFIRM_CHARS: usize = 300;

/// Common words of one language a text holds at least, for them alone to tell its language
/// ([`Stemming::glance`]).
const GLANCE_HITS: usize = 8;

/// Texts shorter than this (a title, a heading) are stemmed as English: a few words do not
/// tell their language, and a guess would stem an English title by another language's rules.
const MIN_CHARS: usize = 200;

/// whatlang over the languages stemmed here alone.
static STEMMED_ONLY: std::sync::LazyLock<whatlang::Detector> =
    std::sync::LazyLock::new(|| whatlang::Detector::with_allowlist(Stemming::ALL.iter().map(|s| s.lang()).collect()));

/// Every language's common words ([`Stemming::common_words`]), each with the languages it is
/// common in, as bits of their places in [`Stemming::ALL`]: one lookup per word of a paragraph
/// [`Stemming::reading`] reads.
static COMMON_WORDS: std::sync::LazyLock<std::collections::HashMap<&'static str, u16>> =
    std::sync::LazyLock::new(|| {
        let mut map = std::collections::HashMap::new();
        for (i, language) in Stemming::ALL.iter().enumerate() {
            for word in language.common_words() {
                *map.entry(*word).or_insert(0u16) |= 1 << i;
            }
        }
        map
    });

impl Stemming {
    pub const ALL: [Stemming; 9] = [
        Stemming::English,
        Stemming::German,
        Stemming::French,
        Stemming::Spanish,
        Stemming::Italian,
        Stemming::Portuguese,
        Stemming::Dutch,
        Stemming::Russian,
        Stemming::Swedish,
    ];

    /// The stemming of `text`: its language's when whatlang tells it reliably and it has one
    /// here, else English.
    pub fn of(text: &str) -> Stemming {
        Stemming::told(text).unwrap_or(Stemming::English)
    }

    /// The stemming whatlang reliably tells from `text`'s first characters, if any: `None` for
    /// a text too short to tell, a guess it is unsure of, or a language with no stemmer here.
    ///
    /// Its common words are read first ([`Stemming::glance`]): a sample they say is plainly
    /// English is English without whatlang (its detection was a fifth of a first index's CPU,
    /// and whatever else it told of such a text, English or a language with no stemmer here,
    /// is stemmed as English); one they say is plainly another language is that language when
    /// whatlang tells the same from the first [`CONFIRM_CHARS`]. Anything else is told from
    /// the whole sample, as before.
    fn told(text: &str) -> Option<Stemming> {
        text.chars().nth(MIN_CHARS)?;
        let end = |chars: usize| text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i);
        let sample = &text[..end(SAMPLE_CHARS)];
        match Stemming::glance(sample) {
            Some(Stemming::English) => return Some(Stemming::English),
            Some(other) if Stemming::detected(&text[..end(CONFIRM_CHARS)]) == Some(other) => return Some(other),
            _ => {}
        }
        Stemming::detected(sample)
    }

    /// The stemmed language whatlang tells `text` is in, reliably, weighing every language it
    /// knows; `None` for a text it is unsure of or in a language not stemmed here.
    ///
    /// The nine stemmed languages are weighed first, in half the time of all of them: a
    /// language's score depends on the text alone, and its lead over the next is no narrower
    /// among fewer, so a text they do not tell reliably is not told reliably as one of them among
    /// all (the same answer on every sample of 4,000 manual pages in 25 languages and 20,000
    /// generated notes, docs/benchmarks.md).
    fn detected(text: &str) -> Option<Stemming> {
        STEMMED_ONLY.detect(text).filter(whatlang::Info::is_reliable)?;
        whatlang::detect(text).filter(whatlang::Info::is_reliable).and_then(|info| Stemming::of_lang(info.lang()))
    }

    /// The stemming a note declares (front matter `lang: de`): an ISO 639-1 or 639-3 code, with
    /// or without a region (`pt-BR`, `de_AT`), or the language's English name. `None` for
    /// another language or a value that names none: the text then tells.
    pub fn declared(value: &str) -> Option<Stemming> {
        let value = value.trim().to_lowercase();
        let base = value.split(['-', '_']).next().unwrap_or_default();
        Stemming::ALL.into_iter().find(|s| {
            let lang = s.lang();
            base == lang.code() || base == iso_639_1(lang) || value == lang.eng_name().to_lowercase()
        })
    }

    /// The language `text` plainly reads as by its common words, if any: at least
    /// [`GLANCE_HITS`] of them, one word in ten at least, and three times as many as any other
    /// language's.
    fn glance(text: &str) -> Option<Stemming> {
        let (hits, words) = Stemming::common_word_hits(text);
        let mut order: Vec<usize> = (0..hits.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(hits[i]), i));
        let (best, next) = (hits[order[0]], hits[order[1]]);
        (best >= GLANCE_HITS && best * 10 >= words && best >= next * 3).then_some(Stemming::ALL[order[0]])
    }

    /// How many of `text`'s words are each language's common words, and how many words it has.
    fn common_word_hits(text: &str) -> ([usize; Stemming::ALL.len()], usize) {
        let mut hits = [0usize; Stemming::ALL.len()];
        let mut words = 0usize;
        for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            words += 1;
            if w.chars().count() > 6 {
                continue;
            }
            // Only a word with capitals is lowercased (a common word has none).
            let lower;
            let w = if w.chars().any(char::is_uppercase) {
                lower = w.to_lowercase();
                lower.as_str()
            } else {
                w
            };
            if let Some(&languages) = COMMON_WORDS.get(w) {
                for (i, hit) in hits.iter_mut().enumerate() {
                    if languages & (1 << i) != 0 {
                        *hit += 1;
                    }
                }
            }
        }
        (hits, words)
    }

    /// The language `text` reads as at a glance, if any: the one whose commonest words
    /// (articles, conjunctions, prepositions particular to it) are the most of its words, at
    /// least one in twenty and two at least. Cheap enough to ask of every paragraph; a list, a
    /// table, code or a run of keywords reads as none.
    fn reading(text: &str) -> Option<Stemming> {
        let (hits, words) = Stemming::common_word_hits(text);
        let (best, n) = hits.iter().copied().enumerate().max_by_key(|&(i, n)| (n, usize::MAX - i))?;
        (n >= 2 && n * 20 >= words).then_some(Stemming::ALL[best])
    }

    /// Words so common in the language, and so rare in the others here, that a paragraph
    /// holding several of them is in it.
    fn common_words(self) -> &'static [&'static str] {
        match self {
            Stemming::English => &[
                "the", "and", "of", "is", "are", "was", "were", "that", "this", "with", "which", "from", "have", "has",
                "it", "be", "by", "not", "you", "for",
            ],
            Stemming::German => &[
                "der", "die", "das", "und", "ist", "nicht", "mit", "für", "ein", "eine", "sich", "auch", "wird",
                "werden", "dem", "den",
            ],
            Stemming::French => &[
                "le", "la", "les", "et", "est", "des", "une", "dans", "pour", "pas", "qui", "sur", "avec", "sont",
                "du", "au",
            ],
            Stemming::Spanish => &[
                "el", "los", "las", "y", "es", "una", "del", "por", "para", "con", "que", "se", "está", "son", "al",
                "como",
            ],
            Stemming::Italian => &[
                "il", "lo", "gli", "della", "che", "non", "per", "una", "sono", "del", "con", "più", "anche", "alla",
                "è",
            ],
            Stemming::Portuguese => {
                &["o", "os", "as", "uma", "não", "para", "com", "que", "do", "da", "dos", "das", "são", "em", "é"]
            }
            Stemming::Dutch => &[
                "de", "het", "een", "en", "van", "niet", "met", "voor", "zijn", "op", "dat", "die", "wordt", "ook",
                "te",
            ],
            Stemming::Russian => &["и", "в", "не", "на", "что", "с", "по", "это", "как", "для", "из", "или", "к", "же"],
            Stemming::Swedish => {
                &["och", "att", "det", "som", "en", "är", "för", "med", "inte", "på", "av", "till", "den", "har", "om"]
            }
        }
    }

    /// The language's ISO 639-3 code, as the index stores it.
    pub fn code(self) -> &'static str {
        self.lang().code()
    }

    /// What stands before this language's stems in a body's stems ([`super::stems`]): none for
    /// English, the stem of every text whose language is not told; `de:` for German and so on.
    /// A stem is then found only by the words of its own language: Spanish "activarse" and
    /// English "active" both stem to "activ", and without the tag a Spanish query word found
    /// every English note that says "active".
    pub fn tag(self) -> &'static str {
        match self {
            Stemming::English => "",
            Stemming::German => "de:",
            Stemming::French => "fr:",
            Stemming::Spanish => "es:",
            Stemming::Italian => "it:",
            Stemming::Portuguese => "pt:",
            Stemming::Dutch => "nl:",
            Stemming::Russian => "ru:",
            Stemming::Swedish => "sv:",
        }
    }

    /// `stem` as the body's stems hold it: behind this language's [`tag`](Self::tag).
    pub fn tagged(self, stem: &str) -> String {
        format!("{}{stem}", self.tag())
    }

    /// The stemming of whatlang's `lang`, if it is stemmed here.
    fn of_lang(lang: Lang) -> Option<Stemming> {
        Stemming::ALL.into_iter().find(|s| s.lang() == lang)
    }

    fn lang(self) -> Lang {
        match self {
            Stemming::English => Lang::Eng,
            Stemming::German => Lang::Deu,
            Stemming::French => Lang::Fra,
            Stemming::Spanish => Lang::Spa,
            Stemming::Italian => Lang::Ita,
            Stemming::Portuguese => Lang::Por,
            Stemming::Dutch => Lang::Nld,
            Stemming::Russian => Lang::Rus,
            Stemming::Swedish => Lang::Swe,
        }
    }

    /// `word` (lowercase) stemmed by this language's rules.
    pub fn stem(self, word: &str) -> std::borrow::Cow<'_, str> {
        self.stemmer().stem(word)
    }

    fn stemmer(self) -> Stemmer {
        Stemmer::new(match self {
            Stemming::English => Algorithm::English,
            Stemming::German => Algorithm::German,
            Stemming::French => Algorithm::French,
            Stemming::Spanish => Algorithm::Spanish,
            Stemming::Italian => Algorithm::Italian,
            Stemming::Portuguese => Algorithm::Portuguese,
            Stemming::Dutch => Algorithm::Dutch,
            Stemming::Russian => Algorithm::Russian,
            Stemming::Swedish => Algorithm::Swedish,
        })
    }
}

/// The parts of a note and the stemming of each: a note that holds paragraphs in several
/// languages (a German summary above English minutes) has each paragraph stemmed by its own.
/// The note's language is told from its first characters ([`Stemming::of`]); a paragraph
/// (text between blank lines) that reads as another language at a glance
/// ([`Stemming::reading`]: its commonest words) and that whatlang then tells reliably keeps
/// its own; the others take the note's. A note in one language costs one detection, as
/// before. In text order, covering `text`.
pub fn parts(text: &str) -> Vec<(std::ops::Range<usize>, Stemming)> {
    parts_and_told(text).0
}

/// [`parts`], and the language the whole text tells reliably, if it tells one.
pub fn parts_and_told(text: &str) -> (Vec<(std::ops::Range<usize>, Stemming)>, Option<Stemming>) {
    let told = Stemming::told(text);
    let whole = told.unwrap_or(Stemming::English);
    let mut out: Vec<(std::ops::Range<usize>, Stemming)> = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text[start..].find("\n\n").map_or(text.len(), |i| start + i + 2);
        let paragraph = &text[start..end];
        let stemming = match Stemming::reading(paragraph) {
            Some(other) if other != whole => Stemming::told(paragraph).unwrap_or(whole),
            _ => whole,
        };
        match out.last_mut() {
            Some((range, s)) if *s == stemming => range.end = end,
            _ => out.push((start..end, stemming)),
        }
        start = end;
    }
    (out, told)
}

/// How sure whatlang must be of a short text's language (over the languages stemmed here) for
/// the text to be indexed under that language's stems as well as English's. Chosen on 515
/// two-line snippets (60 to 190 characters) of Debian's manual pages in the nine languages:
/// at 0.3, 71% of the non-English ones are told right and 0.4% wrong, and 5% of the English
/// ones gain another language's stems (at 0.9, 64% and 0%; at 0, 73%, 2.9% and 10%).
const GUESS_CONFIDENCE: f64 = 0.3;

/// The languages besides English a text too short to tell ([`MIN_CHARS`]) is likely in: a
/// two-line German note is indexed under its German stems as well as its English ones, so
/// "Entwicklung" finds "Entwicklungen" in it. At most one (whatlang's guess over the languages
/// stemmed here, when it is [`GUESS_CONFIDENCE`] sure); none for a longer text, which tells
/// its own ([`parts`]).
pub fn guesses(text: &str) -> Vec<Stemming> {
    if !is_short(text) {
        return Vec::new();
    }
    STEMMED_ONLY
        .detect(text)
        .filter(|info| info.confidence() >= GUESS_CONFIDENCE)
        .and_then(|info| Stemming::of_lang(info.lang()))
        .filter(|s| *s != Stemming::English)
        .into_iter()
        .collect()
}

/// Whether `text` is too short for its language to be told ([`MIN_CHARS`]): it is stemmed as
/// English and, besides, by the languages it is likely in ([`guesses`], its folder's).
pub fn is_short(text: &str) -> bool {
    text.chars().nth(MIN_CHARS).is_none()
}

/// What the keyword index read of a note's language, as the catalog keeps it
/// (`documents.keyword_lang`): the notes beside a short one tell the language it is likely in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordLanguage {
    /// Declared (front matter, collection) or told reliably by its text.
    Told(Stemming),
    /// Long enough to tell but not told reliably: stemmed as English.
    Untold,
    /// Too short to tell ([`is_short`]); `folder`: the language of the notes beside it it was
    /// indexed under too, if they had one ([`folder_language`]).
    Short { folder: Option<Stemming> },
}

impl KeywordLanguage {
    /// What the stored value of a short note starts with.
    pub const SHORT_PREFIX: &'static str = "~";
    const UNTOLD: &'static str = "?";

    /// The value the catalog keeps: the language's code (`deu`), `?`, or `~` and the folder's
    /// language's code, if any (`~deu`).
    pub fn stored(self) -> String {
        match self {
            KeywordLanguage::Told(s) => s.code().to_string(),
            KeywordLanguage::Untold => Self::UNTOLD.to_string(),
            KeywordLanguage::Short { folder } => {
                format!("{}{}", Self::SHORT_PREFIX, folder.map_or("", Stemming::code))
            }
        }
    }

    /// The value [`stored`](Self::stored) wrote; `None` for one it did not (or none: a row fed
    /// before the column, or gone from the index).
    pub fn from_stored(value: &str) -> Option<KeywordLanguage> {
        let by_code = |code: &str| Stemming::ALL.into_iter().find(|s| s.code() == code);
        if let Some(folder) = value.strip_prefix(Self::SHORT_PREFIX) {
            return match folder {
                "" => Some(KeywordLanguage::Short { folder: None }),
                code => by_code(code).map(|s| KeywordLanguage::Short { folder: Some(s) }),
            };
        }
        match value {
            Self::UNTOLD => Some(KeywordLanguage::Untold),
            code => by_code(code).map(KeywordLanguage::Told),
        }
    }

    /// The language told, for a note that tells one.
    pub fn told(self) -> Option<Stemming> {
        match self {
            KeywordLanguage::Told(s) => Some(s),
            _ => None,
        }
    }
}

/// Notes of a folder whose language is told that must agree for the folder to have one.
const FOLDER_MIN_TOLD: usize = 2;

/// The language besides English a folder's short notes are indexed under, from what the
/// keyword index read of its notes (`stored` values, [`KeywordLanguage::stored`]): the
/// language at least [`FOLDER_MIN_TOLD`] of them are told in and two thirds at least of those
/// told. `None` when they tell none, disagree, or are English (whose stems every short note
/// has: a folder of English notes never feeds its short notes again).
pub fn folder_language<'a>(stored: impl IntoIterator<Item = &'a str>) -> Option<Stemming> {
    let mut counts = [0usize; Stemming::ALL.len()];
    for told in stored.into_iter().filter_map(KeywordLanguage::from_stored).filter_map(KeywordLanguage::told) {
        if let Some(i) = Stemming::ALL.iter().position(|s| *s == told) {
            counts[i] += 1;
        }
    }
    let total: usize = counts.iter().sum();
    let (best, n) = counts.iter().copied().enumerate().max_by_key(|&(i, n)| (n, usize::MAX - i))?;
    (n >= FOLDER_MIN_TOLD && n * 3 >= total * 2).then_some(Stemming::ALL[best]).filter(|s| *s != Stemming::English)
}

/// The two-letter code of a language stemmed here.
fn iso_639_1(lang: Lang) -> &'static str {
    match lang {
        Lang::Eng => "en",
        Lang::Deu => "de",
        Lang::Fra => "fr",
        Lang::Spa => "es",
        Lang::Ita => "it",
        Lang::Por => "pt",
        Lang::Nld => "nl",
        Lang::Rus => "ru",
        Lang::Swe => "sv",
        _ => "",
    }
}

/// The stems of `word` (lowercase) in `languages` (those the index holds), each language
/// once, with the language it is the stem in; its English stem first, always.
pub fn variants(word: &str, languages: &[Stemming]) -> Vec<(Stemming, String)> {
    let mut out: Vec<(Stemming, String)> = vec![(Stemming::English, Stemming::English.stem(word).into_owned())];
    for language in languages {
        if !out.iter().any(|(l, _)| l == language) {
            out.push((*language, language.stem(word).into_owned()));
        }
    }
    out
}

/// The language a query's own words tell, when they tell one: the language whose stopwords
/// are at least two of its words and more than any other's ("wie funktioniert die
/// Entwicklung" is German, "how do sockets connect" English), else Russian for a query
/// written in Cyrillic, the one script here only one language is stemmed in. `None` for a
/// few keywords, which tell no language.
pub fn of_query<S: AsRef<str>>(words: &[S]) -> Option<Stemming> {
    let lower: Vec<String> = words.iter().map(|w| w.as_ref().to_lowercase()).collect();
    let mut counts: Vec<(Stemming, usize)> = Stemming::stopword_hits(&lower).collect();
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    match counts.as_slice() {
        [(best, n), (_, next), ..] if *n >= 2 && n > next => return Some(*best),
        _ => {}
    }
    let letters = || lower.iter().flat_map(|w| w.chars()).filter(|c| c.is_alphabetic());
    let cyrillic = |c: char| ('\u{0400}'..='\u{052f}').contains(&c);
    (letters().next().is_some() && letters().all(cyrillic)).then_some(Stemming::Russian)
}

/// The token filter that stems every token of a text by the text's language (the title's
/// analyzer; a body's language is told once in `Bm25Index::entry`).
#[derive(Clone, Copy, Default)]
pub struct LanguageStemmer;

impl TokenFilter for LanguageStemmer {
    type Tokenizer<T: Tokenizer> = LanguageStemmerTokenizer<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> LanguageStemmerTokenizer<T> {
        LanguageStemmerTokenizer { inner }
    }
}

/// [`LanguageStemmer`] over a tokenizer.
#[derive(Clone)]
pub struct LanguageStemmerTokenizer<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for LanguageStemmerTokenizer<T> {
    type TokenStream<'a> = LanguageStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        LanguageStemmerStream { stemmer: Stemming::of(text).stemmer(), inner: self.inner.token_stream(text) }
    }
}

/// The tokens of one text, stemmed.
pub struct LanguageStemmerStream<S> {
    stemmer: Stemmer,
    inner: S,
}

impl<S: TokenStream> TokenStream for LanguageStemmerStream<S> {
    fn advance(&mut self) -> bool {
        if !self.inner.advance() {
            return false;
        }
        let token = self.inner.token_mut();
        // The stem may borrow a shorter part of the word: compare, then own it.
        let stem = self.stemmer.stem(&token.text);
        if stem != token.text.as_str() {
            token.text = stem.into_owned();
        }
        true
    }

    fn token(&self) -> &Token {
        self.inner.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.inner.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stems(text: &str) -> Vec<String> {
        let analyzer =
            tantivy::tokenizer::TextAnalyzer::from(LanguageStemmer.transform(super::super::words::WordsTokenizer));
        super::super::tokens_of(analyzer, text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn weighing_the_stemmed_languages_first_tells_what_weighing_all_of_them_told() {
        let all = |t: &str| {
            whatlang::detect(t).filter(whatlang::Info::is_reliable).and_then(|info| Stemming::of_lang(info.lang()))
        };
        let texts = [
            "The release was delayed because the migration of the index took longer than we had planned, \
             and the team decided to ship the search fixes first while the storage work continued.",
            "Die Entwicklungen der letzten Jahre haben gezeigt, dass eine gute Planung wichtig ist, und \
             deshalb werden wir die Arbeit an der Suche fortsetzen, bevor die Speicherung geändert wird.",
            "Udgivelsen blev forsinket, fordi migreringen af indekset tog længere tid end planlagt, og \
             holdet besluttede at sende rettelserne til søgningen først, mens arbejdet fortsatte.",
            "Wydanie zostało opóźnione, ponieważ migracja indeksu trwała dłużej, niż planowaliśmy, a \
             zespół postanowił najpierw wydać poprawki wyszukiwania, podczas gdy prace trwały dalej.",
            "Schema handler rust batch compaction stable node slow draft edge note transaction memory \
             tokio typescript stream hybrid request relevance semantic origin body index stores postings.",
        ];
        for text in texts {
            assert_eq!(Stemming::detected(text), all(text), "{text}");
        }
        assert_eq!(Stemming::detected(texts[1]), Some(Stemming::German));
        assert_eq!(Stemming::detected(texts[2]), None, "Danish is not stemmed here");
    }

    #[test]
    fn each_paragraph_long_enough_to_tell_is_stemmed_by_its_own_language() {
        let de = "Die Entwicklungen der letzten Jahre haben gezeigt, dass eine gute Planung wichtig ist. \
                  Wir haben deshalb beschlossen, die Arbeit im nächsten Jahr mit mehr Zeit für Gespräche \
                  und weniger Sitzungen fortzusetzen, damit alle mitkommen.";
        let en = "The developments of recent years have shown that good planning matters and stays \
                  important. We have therefore decided to continue the work next year with more time \
                  for talks and fewer meetings, so that everyone can keep up with it.";
        let text = format!("# Minutes\n\n{de}\n\n{en}\n\nShort line.\n\n{en}\n");
        let got = parts(&text);
        let langs: Vec<Stemming> = got.iter().map(|(_, s)| *s).collect();
        assert_eq!(langs, [Stemming::English, Stemming::German, Stemming::English], "{got:?}");
        assert_eq!(got[0].0.start, 0);
        assert_eq!(got.last().map(|(r, _)| r.end), Some(text.len()));
        assert!(got.windows(2).all(|w| w[0].0.end == w[1].0.start));
        assert_eq!(&text[got[1].0.clone()], format!("{de}\n\n"));
        assert_eq!(parts(""), []);
        assert_eq!(parts("kurz"), [(0..4, Stemming::English)], "nothing told: English");
        let german_first = format!("Kurz.\n\n{de}\n\n{de}");
        assert_eq!(parts(&german_first), [(0..german_first.len(), Stemming::German)], "the note's language");
        assert_eq!(Stemming::reading(en), Some(Stemming::English));
        assert_eq!(Stemming::reading(de), Some(Stemming::German));
        assert_eq!(Stemming::reading("Status row rarely recall semantic weight cache migration task."), None);
    }

    #[test]
    fn plain_common_words_tell_a_language_at_a_glance_and_whatlang_confirms_another_than_english() {
        let en = "The passwd command changes the passwords of user accounts. A user may only change the \
                  password of their own account, and this is what it does with the files that are there.";
        let de = "Der Befehl ändert das Passwort eines Benutzers. Ein Benutzer darf nur das Passwort für \
                  sein eigenes Konto ändern, und das ist auch alles, was mit dem Konto geschehen wird, \
                  wenn die Datei nicht mit den Rechten des Systems übereinstimmt.";
        assert_eq!(Stemming::glance(en), Some(Stemming::English));
        assert_eq!(Stemming::glance(de), Some(Stemming::German));
        assert_eq!(Stemming::of(en), Stemming::English);
        assert_eq!(Stemming::of(de), Stemming::German);
        // Keywords alone tell nothing at a glance: whatlang tells them, as before.
        let keywords = "Link origin tantivy tokio detail task documents rank response. Stream rarely terms \
                        request mostly chunks tokio body handler latency schema review stable. Migration \
                        disk rank latency tokio latency postings index score compaction origin sqlite.";
        assert_eq!(Stemming::glance(keywords), None);
        // Half English, half German: neither is three times the other.
        assert_eq!(Stemming::glance(&format!("{en} {de}")), None);
    }

    #[test]
    fn a_query_tells_its_language_by_its_stopwords_or_its_script() {
        assert_eq!(of_query(&["Wie", "ist", "die", "Entwicklung"]), Some(Stemming::German));
        assert_eq!(of_query(&["wie", "die"]), None, "as many German stop words as Dutch: none told");
        assert_eq!(of_query(&["how", "do", "the", "sockets", "connect"]), Some(Stemming::English));
        assert_eq!(of_query(&["comment", "est", "le", "fichier", "publié"]), Some(Stemming::French));
        assert_eq!(of_query(&["разработка"]), Some(Stemming::Russian), "Cyrillic");
        assert_eq!(of_query(&["activarse"]), None, "one keyword tells nothing");
        assert_eq!(of_query(&["unix", "sockets"]), None);
        assert_eq!(of_query::<&str>(&[]), None);
    }

    #[test]
    fn a_declared_language_is_read_by_code_region_or_name() {
        for (value, want) in [
            ("de", Some(Stemming::German)),
            ("DE-at", Some(Stemming::German)),
            ("pt_BR", Some(Stemming::Portuguese)),
            ("swe", Some(Stemming::Swedish)),
            (" French ", Some(Stemming::French)),
            ("en-GB", Some(Stemming::English)),
            ("ja", None),
            ("klingon", None),
            ("", None),
        ] {
            assert_eq!(Stemming::declared(value), want, "{value:?}");
        }
    }

    #[test]
    fn a_text_is_stemmed_by_its_language_and_a_query_word_by_every_one() {
        let de = "die entwicklungen der letzten jahre haben gezeigt, dass die planung wichtig ist und bleibt. \
                  Wir haben deshalb beschlossen, die Arbeit im nächsten Jahr mit mehr Zeit für Gespräche \
                  und weniger Sitzungen fortzusetzen, damit alle mitkommen.";
        let en = "the developments of recent years have shown that planning matters and stays important. \
                  We have therefore decided to continue the work next year with more time for talks and \
                  fewer meetings, so that everyone can keep up with it.";
        assert!(stems(de).contains(&"entwickl".to_string()), "{:?}", stems(de));
        assert!(stems(en).contains(&"develop".to_string()), "{:?}", stems(en));
        assert!(variants("entwicklung", &Stemming::ALL).contains(&(Stemming::German, "entwickl".to_string())));
        assert_eq!(variants("entwicklung", &[Stemming::English]), [(Stemming::English, "entwicklung".to_string())]);
        assert_eq!(variants("developments", &Stemming::ALL)[0], (Stemming::English, "develop".to_string()));
        assert_eq!(variants("developments", &Stemming::ALL).len(), Stemming::ALL.len(), "each language once");
        assert_eq!(Stemming::German.tagged("entwickl"), "de:entwickl");
        assert_eq!(Stemming::English.tagged("develop"), "develop");
        assert_eq!(Stemming::of(de), Stemming::German);
        assert_eq!(Stemming::of(en), Stemming::English);
        assert_eq!(Stemming::of("Die Entwicklungen"), Stemming::English, "too short to tell");
        // Too short to tell: English, as before.
        assert_eq!(stems("running"), ["run"]);
        assert_eq!(guesses(en), [], "told: no guess");
        assert_eq!(
            guesses("Die Entwicklungen der Kinder sind erstaunlich.\nWir sprechen morgen darüber."),
            [Stemming::German]
        );
        assert_eq!(guesses("L'article a été publié hier soir.\nIl parle des élections."), [Stemming::French]);
        assert_eq!(guesses("Los niños jugaban en el parque.\nMañana vamos a la playa."), [Stemming::Spanish]);
        assert_eq!(guesses("Meeting notes: ship the release on Friday."), []);
        assert_eq!(stems("die entwicklungen der letzten jahre"), ["die", "entwicklungen", "der", "letzten", "jahr"]);
    }

    /// The note of `search::a_short_note_takes_the_language_of_the_notes_beside_it`: its own
    /// text tells no German, its folder does.
    const SHORT_IN_A_GERMAN_FOLDER: &str = "Meeting notes from Tuesday: Entwicklungen\n";

    #[test]
    fn a_folders_language_is_the_one_two_thirds_of_its_told_notes_are_in() {
        use KeywordLanguage::*;
        for read in [
            Told(Stemming::German),
            Untold,
            Short { folder: None },
            Short { folder: Some(Stemming::French) },
            Short { folder: Some(Stemming::English) },
        ] {
            assert_eq!(KeywordLanguage::from_stored(&read.stored()), Some(read), "{read:?}");
        }
        assert_eq!(Short { folder: Some(Stemming::German) }.stored(), "~deu");
        for unknown in ["", "xx", "~xx", "~~"] {
            assert_eq!(KeywordLanguage::from_stored(unknown), None, "{unknown:?}");
        }
        for (stored, want) in [
            (&["deu", "deu", "eng"][..], Some(Stemming::German)),
            (&["deu", "deu", "~fra", "?", "~", "xx"], Some(Stemming::German)),
            (&["deu", "eng"], None),
            (&["deu", "deu", "eng", "eng", "fra"], None),
            (&["deu", "~deu", "~deu"], None),
            (&["eng", "eng"], None),
            (&[], None),
        ] {
            assert_eq!(folder_language(stored.iter().copied()), want, "{stored:?}");
        }
        assert!(!guesses(SHORT_IN_A_GERMAN_FOLDER).contains(&Stemming::German));
        assert!(is_short(SHORT_IN_A_GERMAN_FOLDER));
    }
}
