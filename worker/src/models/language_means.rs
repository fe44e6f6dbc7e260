//! Where each language's passages lie in the multilingual embedder's space, so a query can be
//! moved away from its own language before it is searched.
//!
//! multilingual-e5-small puts the texts of one language near a point of their own: a question
//! in Chinese lies nearer to every Chinese passage, and to the English passages nearest to
//! those (short, generic pages: hubs), than its meaning says. Searching `query - w * mean`,
//! where `mean` is the mean passage vector of the query's language, takes that pull away
//! (docs/retrieval.md, stop 53). The means are data of the model, made once by
//! `scripts/language_means.py` from Debian's translated program messages (neither notes nor an
//! evaluation set) and compiled in: nothing is read or fetched at run time.

use crate::stores::vectors::similarity;
use std::sync::LazyLock;
use whatlang::{Lang, Script};

/// The means of multilingual-e5-small (384 dimensions), 58 languages.
static E5_SMALL: LazyLock<LanguageMeans> =
    LazyLock::new(|| LanguageMeans::parse(include_bytes!("../../data/e5-language-means.bin"), 384));

/// multilingual-e5-small's language means.
pub fn e5_small() -> &'static LanguageMeans {
    &E5_SMALL
}

/// One language's mean passage vector.
struct LanguageMean {
    /// ISO 639-1, as a request's `lang` names it ("de").
    short: String,
    lang: Lang,
    mean: Vec<f32>,
}

/// What a query is taken to be written in (one language, or either of two; the notes' own when
/// `langs` is empty), and the mean its search moves it away from.
pub struct QueryLanguage<'a> {
    pub mean: &'a [f32],
    pub langs: Vec<Lang>,
}

/// Each known language's mean, the mean of each writing system's languages, and of all.
pub struct LanguageMeans {
    languages: Vec<LanguageMean>,
    scripts: Vec<(Script, Vec<f32>)>,
    all: Vec<f32>,
}

impl LanguageMeans {
    /// The means of a file of rows: ISO 639-1 code (2 ASCII bytes), whatlang's code (3
    /// bytes), `dim` little-endian f32s. A row that does not read so is left out.
    fn parse(bytes: &[u8], dim: usize) -> Self {
        let languages: Vec<LanguageMean> = bytes
            .chunks_exact(5 + 4 * dim)
            .filter_map(|row| {
                let short = std::str::from_utf8(&row[..2]).ok()?.to_string();
                let lang = Lang::from_code(std::str::from_utf8(&row[2..5]).ok()?)?;
                let mean = row[5..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                Some(LanguageMean { short, lang, mean })
            })
            .collect();
        let scripts = Script::all()
            .iter()
            .filter_map(|script| {
                let of_script: Vec<&[f32]> =
                    languages.iter().filter(|l| script.langs().contains(&l.lang)).map(|l| l.mean.as_slice()).collect();
                mean_of(&of_script).map(|mean| (*script, mean))
            })
            .collect();
        let all = mean_of(&languages.iter().map(|l| l.mean.as_slice()).collect::<Vec<_>>()).unwrap_or_default();
        LanguageMeans { languages, scripts, all }
    }

    /// The language of a query `text` whose vector is `vector`: the one `declared` names (ISO
    /// 639-1 or 639-3, a region after it ignored) when it is known, else the one whatlang
    /// tells reliably. A query whatlang is unsure of (most short ones in a Latin script) is
    /// moved away from the mean of its script's languages, and taken to be in whatlang's
    /// guess or the language whose mean its vector lies nearest to. One of no script known
    /// is moved away from the mean of all and taken to be in the notes' language.
    pub fn of_query(&self, text: &str, declared: Option<&str>, vector: &[f32]) -> QueryLanguage<'_> {
        if let Some(l) = declared.and_then(|code| self.declared(code)) {
            return QueryLanguage { mean: &l.mean, langs: vec![l.lang] };
        }
        let Some(info) = whatlang::detect(text) else { return QueryLanguage { mean: &self.all, langs: Vec::new() } };
        let language = info.is_reliable().then(|| self.languages.iter().find(|l| l.lang == info.lang())).flatten();
        if let Some(l) = language {
            return QueryLanguage { mean: &l.mean, langs: vec![l.lang] };
        }
        let mut langs = vec![info.lang()];
        langs.extend(self.nearest(vector).filter(|l| *l != info.lang()));
        let mean = self.scripts.iter().find(|(s, _)| *s == info.script()).map_or(&self.all, |(_, mean)| mean);
        QueryLanguage { mean, langs }
    }

    /// The language whose mean `vector` (a passage's) lies nearest to.
    pub fn nearest(&self, vector: &[f32]) -> Option<Lang> {
        let closeness = |l: &LanguageMean| similarity(&l.mean, vector);
        self.languages.iter().max_by(|a, b| closeness(a).total_cmp(&closeness(b))).map(|l| l.lang)
    }

    /// Whether a query in `language` is asked of notes in another: fewer than half of its
    /// nearest passages (`vectors`) lie nearest to one of its languages' means. A query of
    /// no known language is taken to be in the notes' own.
    pub fn across(&self, language: &QueryLanguage<'_>, vectors: &[Vec<f32>]) -> bool {
        if language.langs.is_empty() || vectors.is_empty() {
            return false;
        }
        let same = vectors.iter().filter(|v| self.nearest(v).is_some_and(|l| language.langs.contains(&l))).count();
        same * 2 < vectors.len()
    }

    fn declared(&self, code: &str) -> Option<&LanguageMean> {
        let code = code.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
        self.languages.iter().find(|l| l.short == code || l.lang.code() == code)
    }
}

fn mean_of(vectors: &[&[f32]]) -> Option<Vec<f32>> {
    let first = vectors.first()?;
    let mut sum = vec![0f64; first.len()];
    for v in vectors {
        for (s, x) in sum.iter_mut().zip(v.iter()) {
            *s += f64::from(*x);
        }
    }
    Some(sum.iter().map(|s| (s / vectors.len() as f64) as f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(short: &str, code: &str, mean: &[f32]) -> Vec<u8> {
        let mut out = format!("{short}{code}").into_bytes();
        out.extend(mean.iter().flat_map(|x| x.to_le_bytes()));
        out
    }

    fn means() -> LanguageMeans {
        let bytes = [
            row("de", "deu", &[1.0, 0.0]),
            row("en", "eng", &[0.0, 1.0]),
            row("zh", "cmn", &[0.5, 0.5]),
            row("ru", "rus", &[0.2, 0.0]),
            row("uk", "ukr", &[0.4, 0.0]),
        ]
        .concat();
        LanguageMeans::parse(&bytes, 2)
    }

    #[test]
    fn a_query_takes_its_declared_or_reliably_told_language() {
        let m = means();
        assert_eq!(m.of_query("预算是多少", None, &[0.0, 1.0]).mean, &[0.5, 0.5]);
        let english = m.of_query(
            "What does the budget for the library say about the new building? The council was asked \
             about it twice this year, and the answer was that the work would start in the spring.",
            None,
            &[1.0, 0.0],
        );
        assert_eq!((english.mean, english.langs.as_slice()), (&[0.0, 1.0][..], &[Lang::Eng][..]));
        assert_eq!(m.of_query("anything", Some("de-AT"), &[]).mean, &[1.0, 0.0]);
        assert_eq!(m.of_query("anything", Some("deu"), &[]).langs, [Lang::Deu]);
    }

    #[test]
    fn an_unsure_query_takes_its_scripts_languages_then_all() {
        let m = means();
        // Too short for whatlang to be sure which Cyrillic language: Russian and Ukrainian's mean.
        let cyrillic = m.of_query("бюджет", None, &[0.0, 1.0]);
        assert!((cyrillic.mean[0] - 0.3).abs() < 1e-6 && cyrillic.mean[1].abs() < 1e-6, "{:?}", cyrillic.mean);
        assert_eq!(cyrillic.langs.len(), 2, "whatlang's guess and the vector's nearest: {:?}", cyrillic.langs);
        assert!(cyrillic.langs.contains(&Lang::Eng), "{:?}", cyrillic.langs);
        let unknown = m.of_query("1234 5678", Some("xx"), &[1.0, 0.0]);
        assert_eq!((unknown.mean.len(), unknown.langs.len()), (2, 0), "no language: the mean of all");
        assert_eq!(m.all.len(), 2);
    }

    #[test]
    fn the_compiled_in_means_read_whole() {
        let m = e5_small();
        assert_eq!(m.all.len(), 384);
        assert!(m.languages.len() >= 50, "{}", m.languages.len());
        for l in &m.languages {
            let norm: f32 = l.mean.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((0.8..1.0).contains(&norm), "{}: |mean| {norm}", l.short);
        }
        assert_ne!(
            m.of_query("如何列出目录内容", None, &[]).mean,
            m.of_query("Verzeichnisinhalte auflisten", Some("de"), &[]).mean
        );
    }

    #[test]
    fn a_query_is_across_languages_when_most_of_its_nearest_notes_are_in_another() {
        let m = means();
        let german = m.of_query("", Some("de"), &[]);
        let (de, en) = (vec![0.9, 0.1], vec![0.1, 0.9]);
        assert_eq!((m.nearest(&de), m.nearest(&en)), (Some(Lang::Deu), Some(Lang::Eng)));
        assert!(m.across(&german, &[en.clone(), en.clone(), de.clone()]));
        assert!(!m.across(&german, &[en.clone(), de.clone()]), "half in its own language");
        assert!(!m.across(&german, &[]));
        assert!(!m.across(&m.of_query("1234", None, &[0.0, 1.0]), &[en]), "a query of no known language");
    }
}
