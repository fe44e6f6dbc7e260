//! The language a question, a claim or a passage is written in, and the words each language
//! reads by: its stopwords, its negations and its number words. A check of a draft against its
//! sources reads a German claim by German rules ("nicht" negates, "zwei" is 2, "wie" says
//! nothing), an English one as it always did.
//!
//! The stopword lists are Snowball's (as NLTK's stopwords corpus ships them, `stopwords/`);
//! they also tell a text's language: the language whose stopwords are the most of a text's
//! words, two at least and more than English's, is the text's. A text reads as English when
//! no other language does. The negations and number words are small tables here, each with a
//! test.

use std::collections::HashSet;
use std::sync::LazyLock;

/// A language read by its own words. English is the language of a text that tells none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    English,
    German,
    French,
    Spanish,
    Italian,
    Portuguese,
    Dutch,
    Russian,
    Swedish,
}

/// Snowball's stopword lists, one word a line (NLTK's stopwords corpus).
const STOPWORD_LISTS: [(Language, &str); 9] = [
    (Language::English, include_str!("stopwords/english.txt")),
    (Language::German, include_str!("stopwords/german.txt")),
    (Language::French, include_str!("stopwords/french.txt")),
    (Language::Spanish, include_str!("stopwords/spanish.txt")),
    (Language::Italian, include_str!("stopwords/italian.txt")),
    (Language::Portuguese, include_str!("stopwords/portuguese.txt")),
    (Language::Dutch, include_str!("stopwords/dutch.txt")),
    (Language::Russian, include_str!("stopwords/russian.txt")),
    (Language::Swedish, include_str!("stopwords/swedish.txt")),
];

static STOPWORDS: LazyLock<Vec<(Language, HashSet<&'static str>)>> = LazyLock::new(|| {
    STOPWORD_LISTS.iter().map(|(language, list)| (*language, list.lines().map(str::trim).collect())).collect()
});

impl Language {
    /// The language of `words` (lowercase, as [`super::words::words`] reads them): the one
    /// whose stopwords are the most of them, at least two and more than English's; English
    /// otherwise.
    pub fn of_words<S: AsRef<str>>(words: &[S]) -> Language {
        let mut best = (Language::English, 0usize);
        let mut english = 0usize;
        for (language, hits) in Language::stopword_hits(words) {
            if language == Language::English {
                english = hits;
            } else if hits > best.1 {
                best = (language, hits);
            }
        }
        if best.1 >= 2 && best.1 > english {
            best.0
        } else {
            Language::English
        }
    }

    /// The language's name in English, as an instruction written in English names it.
    pub fn english_name(self) -> &'static str {
        match self {
            Language::English => "English",
            Language::German => "German",
            Language::French => "French",
            Language::Spanish => "Spanish",
            Language::Italian => "Italian",
            Language::Portuguese => "Portuguese",
            Language::Dutch => "Dutch",
            Language::Russian => "Russian",
            Language::Swedish => "Swedish",
        }
    }

    /// How many of `words` (lowercase) are each language's stopwords, in the order of the
    /// lists.
    pub fn stopword_hits<S: AsRef<str>>(words: &[S]) -> impl Iterator<Item = (Language, usize)> + '_ {
        STOPWORDS.iter().map(|(language, list)| (*language, words.iter().filter(|w| list.contains(w.as_ref())).count()))
    }

    /// Whether `word` (lowercase) is one of this language's Snowball stopwords.
    pub fn is_stopword(self, word: &str) -> bool {
        STOPWORDS.iter().any(|(language, list)| *language == self && list.contains(word))
    }

    /// Words that turn a statement into its opposite, lowercase. English's also takes "n't"
    /// endings ([`Language::negates`]).
    pub fn negations(self) -> &'static [&'static str] {
        match self {
            Language::English => &["not", "no", "never", "none", "neither", "nor", "cannot", "without"],
            Language::German => &[
                "nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "nichts", "ohne",
                "weder",
            ],
            // "ne … pas": either word is enough; "n'" is read as "n" by the word split.
            Language::French => &["ne", "pas", "jamais", "aucun", "aucune", "sans", "ni", "rien", "non"],
            Language::Spanish => &["no", "nunca", "jamás", "ningún", "ninguno", "ninguna", "sin", "ni", "nada"],
            Language::Italian => &["non", "mai", "nessun", "nessuno", "nessuna", "senza", "né", "niente"],
            Language::Portuguese => &["não", "nunca", "jamais", "nenhum", "nenhuma", "sem", "nem", "nada"],
            Language::Dutch => &["niet", "geen", "nooit", "zonder", "noch", "niets"],
            Language::Russian => &["не", "нет", "никогда", "без", "ни", "ничего", "нельзя"],
            Language::Swedish => &["inte", "ej", "ingen", "inget", "inga", "aldrig", "utan", "varken"],
        }
    }

    /// Whether `word` (lowercase, apostrophes kept) negates in this language.
    pub fn negates(self, word: &str) -> bool {
        self.negations().contains(&word) || (self == Language::English && word.ends_with("n't"))
    }

    /// The number words from two to twelve, in order (index 0 is 2). "One" is left out but in
    /// English: in the others it is also the article ("ein", "un", "uno", "een", "en").
    pub fn number_words(self) -> &'static [&'static [&'static str]] {
        match self {
            Language::English => &[
                &["two"],
                &["three"],
                &["four"],
                &["five"],
                &["six"],
                &["seven"],
                &["eight"],
                &["nine"],
                &["ten"],
                &["eleven"],
                &["twelve"],
            ],
            Language::German => &[
                &["zwei"],
                &["drei"],
                &["vier"],
                &["fünf"],
                &["sechs"],
                &["sieben"],
                &["acht"],
                &["neun"],
                &["zehn"],
                &["elf"],
                &["zwölf"],
            ],
            Language::French => &[
                &["deux"],
                &["trois"],
                &["quatre"],
                &["cinq"],
                &["six"],
                &["sept"],
                &["huit"],
                &["neuf"],
                &["dix"],
                &["onze"],
                &["douze"],
            ],
            Language::Spanish => &[
                &["dos"],
                &["tres"],
                &["cuatro"],
                &["cinco"],
                &["seis"],
                &["siete"],
                &["ocho"],
                &["nueve"],
                &["diez"],
                &["once"],
                &["doce"],
            ],
            Language::Italian => &[
                &["due"],
                &["tre"],
                &["quattro"],
                &["cinque"],
                &["sei"],
                &["sette"],
                &["otto"],
                &["nove"],
                &["dieci"],
                &["undici"],
                &["dodici"],
            ],
            Language::Portuguese => &[
                &["dois", "duas"],
                &["três"],
                &["quatro"],
                &["cinco"],
                &["seis"],
                &["sete"],
                &["oito"],
                &["nove"],
                &["dez"],
                &["onze"],
                &["doze"],
            ],
            Language::Dutch => &[
                &["twee"],
                &["drie"],
                &["vier"],
                &["vijf"],
                &["zes"],
                &["zeven"],
                &["acht"],
                &["negen"],
                &["tien"],
                &["elf"],
                &["twaalf"],
            ],
            Language::Russian => &[
                &["два", "две", "двух"],
                &["три", "трёх", "трех"],
                &["четыре", "четырёх", "четырех"],
                &["пять"],
                &["шесть"],
                &["семь"],
                &["восемь"],
                &["девять"],
                &["десять"],
                &["одиннадцать"],
                &["двенадцать"],
            ],
            Language::Swedish => &[
                &["två"],
                &["tre"],
                &["fyra"],
                &["fem"],
                &["sex"],
                &["sju"],
                &["åtta"],
                &["nio"],
                &["tio"],
                &["elva"],
                &["tolv"],
            ],
        }
    }

    /// The number `word` (lowercase) writes from two to twelve in this language, if any.
    pub fn number_of(self, word: &str) -> Option<usize> {
        self.number_words().iter().position(|forms| forms.contains(&word)).map(|i| i + 2)
    }
}

/// The first code point of each run of ten decimal digits (Unicode category Nd) outside ASCII
/// that svc reads as digits: Arabic-Indic, Devanagari and the other Indic scripts, Thai, Lao,
/// Tibetan, Myanmar, Khmer, Mongolian and the fullwidth forms.
const DIGIT_ZEROS: &[u32] = &[
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50,
    0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0xFF10,
];

/// The ASCII digit `c` writes, if it is a decimal digit of a script in [`DIGIT_ZEROS`] or
/// ASCII.
pub fn ascii_digit(c: char) -> Option<char> {
    if c.is_ascii_digit() {
        return Some(c);
    }
    let code = c as u32;
    DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .and_then(|zero| char::from_digit(code - zero, 10))
}

/// `text` with every decimal digit of another script written in ASCII ("๓๐" is "30",
/// "３" is "3"); the rest as it is.
pub fn with_ascii_digits(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() || !text.chars().any(|c| !c.is_ascii_digit() && ascii_digit(c).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().map(|c| ascii_digit(c).unwrap_or(c)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::words::words;

    fn of(text: &str) -> Language {
        Language::of_words(&words(text))
    }

    #[test]
    fn a_question_tells_its_language_by_its_stopwords() {
        assert_eq!(of("Wie kann ich bei ls die Dateien nach Größe sortieren?"), Language::German);
        assert_eq!(of("Comment trier les fichiers par taille avec ls ?"), Language::French);
        assert_eq!(of("¿Cómo puedo ordenar los archivos por tamaño con ls?"), Language::Spanish);
        assert_eq!(of("Как отсортировать файлы по размеру в ls?"), Language::Russian);
        assert_eq!(of("How do I sort the files by size in ls?"), Language::English);
        // Too few words of any language: English, as before.
        assert_eq!(of("ls Größe"), Language::English);
        assert_eq!(of("tantivy 0.27 BM25"), Language::English);
    }

    #[test]
    fn stopwords_are_each_languages_own() {
        assert!(Language::German.is_stopword("wie") && !Language::English.is_stopword("wie"));
        assert!(Language::French.is_stopword("avec") && !Language::German.is_stopword("avec"));
        assert!(!Language::German.is_stopword("datei"));
    }

    #[test]
    fn negations_per_language() {
        for (language, _) in STOPWORD_LISTS {
            assert!(!language.negations().is_empty(), "{language:?}");
        }
        assert!(Language::German.negates("nicht") && !Language::English.negates("nicht"));
        assert!(Language::French.negates("pas") && Language::Russian.negates("не"));
        assert!(Language::English.negates("doesn't") && !Language::German.negates("doesn't"));
    }

    #[test]
    fn number_words_from_two_to_twelve_in_every_language() {
        for (language, _) in STOPWORD_LISTS {
            assert_eq!(language.number_words().len(), 11, "{language:?}");
        }
        assert_eq!(Language::German.number_of("zwölf"), Some(12));
        assert_eq!(Language::French.number_of("trois"), Some(3));
        assert_eq!(Language::Russian.number_of("две"), Some(2));
        assert_eq!(Language::Portuguese.number_of("duas"), Some(2));
        // "once" is eleven in Spanish only.
        assert_eq!(Language::Spanish.number_of("once"), Some(11));
        assert_eq!(Language::English.number_of("once"), None);
    }

    #[test]
    fn digits_of_other_scripts_read_as_ascii() {
        assert_eq!(with_ascii_digits("รอ ๓๐ วินาที"), "รอ 30 วินาที");
        assert_eq!(with_ascii_digits("最大３２文字"), "最大32文字");
        assert_eq!(with_ascii_digits("٤٢"), "42");
        assert_eq!(with_ascii_digits("plain 42"), "plain 42");
        assert_eq!(ascii_digit('x'), None);
    }
}
