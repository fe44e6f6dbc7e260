//! Content types: what kind of note a document is (`meeting`, `spec`, a configured id…) and
//! the ranking nudge its rule asks for. One place resolves a document's type and one place
//! maps a rule's `searchBoost` to the score.
//!
//! Resolution, first match wins: (1) front-matter `type` equal to a configured id; (2) the
//! longest configured prefix of the document's path in its collection (`meetings/`);
//! (3) the file's kind: code is `code`, workbooks `spreadsheet`, saved web pages `web`, decks
//! `slides`, mail `mail`; then the path: `meeting|standup|retro|minutes` in the path is
//! `meeting`, `spec|rfc|adr|design` is `spec`, `notes|journal|log` is `notes`; (4) `prose`.

use crate::config::ContentTypeConfig;
use crate::stores::bm25::language_category;
use protocol::api::{ContentTypeBoost, ContentTypeBoostRule, ContentTypeSource};
use protocol::source_kind::{source_kind, SourceKind};
use sha2::{Digest, Sha256};

/// The additive score of the strongest boost (`searchBoost: 2`) and of the weakest (`0.5`).
pub const MAX_ADDITIVE: f64 = 0.05;
pub const MIN_SEARCH_BOOST: f64 = 0.5;
pub const MAX_SEARCH_BOOST: f64 = 2.0;

const PATH_TYPES: [(&str, &[&str]); 3] = [
    ("meeting", &["meeting", "standup", "retro", "minutes"]),
    ("spec", &["spec", "rfc", "adr", "design"]),
    ("notes", &["notes", "journal", "log"]),
];

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    id: String,
    prefixes: Vec<String>,
    search_boost: f64,
}

/// The configured rules, compiled once per worker.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentTypes {
    rules: Vec<Rule>,
    fingerprint: String,
}

impl Default for ContentTypes {
    fn default() -> Self {
        ContentTypes::from_config(&[])
    }
}

/// A path segment test: `needle` as a whole word of `path` (split on `/`, `-`, `_`, `.`, space).
fn has_word(path: &str, needle: &str) -> bool {
    path.split(['/', '-', '_', '.', ' '])
        .any(|w| w.eq_ignore_ascii_case(needle) || w.eq_ignore_ascii_case(&format!("{needle}s")))
}

impl ContentTypes {
    /// Compiles `contentTypes` of index.yml: ids trimmed and lowercased (empty ones and
    /// repeats dropped), prefixes without a leading `/`, boosts clamped to 0.5..2 (1 when absent).
    pub fn from_config(cfg: &[ContentTypeConfig]) -> Self {
        let mut rules: Vec<Rule> = Vec::new();
        for c in cfg {
            let id = c.id.trim().to_lowercase();
            if id.is_empty() || rules.iter().any(|r| r.id == id) {
                continue;
            }
            let boost = c.search_boost.filter(|b| b.is_finite()).unwrap_or(1.0);
            if !(MIN_SEARCH_BOOST..=MAX_SEARCH_BOOST).contains(&boost) {
                tracing::warn!("contentTypes {id}: searchBoost {boost} is outside 0.5..2; clamped");
            }
            let prefixes = c
                .prefixes
                .iter()
                .map(|p| p.trim().trim_start_matches('/').to_string())
                .filter(|p| !p.is_empty())
                .collect();
            rules.push(Rule { id, prefixes, search_boost: boost.clamp(MIN_SEARCH_BOOST, MAX_SEARCH_BOOST) });
        }
        let fingerprint = if rules.is_empty() {
            "none".to_string()
        } else {
            let mut h = Sha256::new();
            for r in &rules {
                h.update(r.id.as_bytes());
                h.update([0]);
                for p in &r.prefixes {
                    h.update(p.as_bytes());
                    h.update([1]);
                }
                h.update(r.search_boost.to_bits().to_be_bytes());
                h.update([2]);
            }
            format!("ctr1:{}", &hex::encode(h.finalize())[..16])
        };
        ContentTypes { rules, fingerprint }
    }

    /// The fingerprint of the rules (`none` without rules): it changes with any id, prefix
    /// or boost, so a ranking can name the rules it was made under.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The content type of a document and what it was read from.
    pub fn resolve(&self, fm_type: Option<&str>, rel_path: &str) -> (String, ContentTypeSource) {
        if let Some(t) = fm_type.map(|t| t.trim().to_lowercase()) {
            if self.rules.iter().any(|r| r.id == t) {
                return (t, ContentTypeSource::FrontmatterType);
            }
        }
        let best = self
            .rules
            .iter()
            .flat_map(|r| r.prefixes.iter().map(move |p| (r, p)))
            .filter(|(_, p)| rel_path.starts_with(p.as_str()))
            .max_by_key(|(_, p)| p.len());
        if let Some((r, _)) = best {
            return (r.id.clone(), ContentTypeSource::Prefix);
        }
        // Formats that say what a document is whatever its path (their extensions are
        // `source_kind`'s).
        match source_kind(rel_path) {
            Some(SourceKind::Code(_)) => return ("code".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Spreadsheet) => return ("spreadsheet".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Html) => return ("web".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Slides) => return ("slides".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Mail) => return ("mail".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Image) => return ("image".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Records) => return ("record".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Calendar) => return ("event".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Bookmark) => return ("bookmark".into(), ContentTypeSource::PathExt),
            Some(SourceKind::Transcript) => return ("transcript".into(), ContentTypeSource::PathExt),
            _ => {}
        }
        for (id, words) in PATH_TYPES {
            if words.iter().any(|w| has_word(rel_path, w)) {
                return (id.into(), ContentTypeSource::PathExt);
            }
        }
        ("prose".into(), ContentTypeSource::Fallback)
    }

    /// A document's categories for filtering: its front-matter categories and its content
    /// type (so `category: meeting` matches a note typed by a rule or by its path), and for
    /// code its language's term (the `language` filter's).
    pub fn categories_with_type(&self, categories: &[String], fm_type: Option<&str>, rel_path: &str) -> Vec<String> {
        let mut out = with_type(categories, self.resolve(fm_type, rel_path).0);
        if let Some(SourceKind::Code(lang)) = source_kind(rel_path) {
            out.push(language_category(lang));
        }
        out
    }

    /// The additive score of content type `id`: `searchBoost` 0.5 → −0.05, 1 → 0, 2 → +0.05,
    /// linear on each side of 1; 0 for a type without a rule.
    pub fn additive(&self, id: &str) -> f64 {
        let Some(r) = self.rules.iter().find(|r| r.id == id) else { return 0.0 };
        let b = r.search_boost;
        if b >= 1.0 {
            (b - 1.0) / (MAX_SEARCH_BOOST - 1.0) * MAX_ADDITIVE
        } else {
            (b - 1.0) / (1.0 - MIN_SEARCH_BOOST) * MAX_ADDITIVE
        }
    }

    /// `GET /api/status` `contentTypeBoost`: ids and boosts, never the prefixes.
    pub fn status(&self) -> ContentTypeBoost {
        ContentTypeBoost {
            rules: self
                .rules
                .iter()
                .map(|r| ContentTypeBoostRule { id: r.id.clone(), search_boost: r.search_boost })
                .collect(),
            rules_fingerprint: self.fingerprint.clone(),
        }
    }
}

/// `categories` and the content type `id` (once).
pub fn with_type(categories: &[String], id: String) -> Vec<String> {
    let mut out = categories.to_vec();
    if !out.contains(&id) {
        out.push(id);
    }
    out
}

/// `score + additive`, clamped to [0, 1].
pub fn boosted(score: f64, additive: f64) -> f64 {
    (score + additive).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(v: &[(&str, &[&str], Option<f64>)]) -> ContentTypes {
        let cfg: Vec<ContentTypeConfig> = v
            .iter()
            .map(|(id, prefixes, b)| ContentTypeConfig {
                id: id.to_string(),
                prefixes: prefixes.iter().map(|p| p.to_string()).collect(),
                search_boost: *b,
                extra: Default::default(),
            })
            .collect();
        ContentTypes::from_config(&cfg)
    }

    #[test]
    fn resolution_order_front_matter_then_longest_prefix_then_path() {
        let ct = rules(&[("recipe", &["food/"], Some(2.0)), ("dessert", &["food/sweet/"], None)]);
        use ContentTypeSource::*;
        assert_eq!(ct.resolve(Some("Recipe"), "x.md"), ("recipe".into(), FrontmatterType));
        assert_eq!(ct.resolve(Some("unknown"), "food/sweet/pie.md"), ("dessert".into(), Prefix));
        assert_eq!(ct.resolve(None, "food/bread.md"), ("recipe".into(), Prefix));
        assert_eq!(ct.resolve(None, "src/main.rs"), ("code".into(), PathExt));
        assert_eq!(ct.resolve(None, "meetings/budget.XLSX"), ("spreadsheet".into(), PathExt));
        assert_eq!(ct.resolve(None, "saved/page.htm"), ("web".into(), PathExt));
        assert_eq!(ct.resolve(None, "team/standup-2026-01.md"), ("meeting".into(), PathExt));
        assert_eq!(ct.resolve(None, "adr/0001-db.md"), ("spec".into(), PathExt));
        assert_eq!(ct.resolve(None, "journal/today.md"), ("notes".into(), PathExt));
        assert_eq!(ct.resolve(None, "essays/designer-tools.md"), ("prose".into(), Fallback));
    }

    #[test]
    fn boosts_map_to_plus_minus_five_hundredths_and_scores_stay_in_range() {
        let ct = rules(&[("a", &[], Some(2.0)), ("b", &[], Some(0.5)), ("c", &[], Some(1.0)), ("d", &[], Some(9.0))]);
        assert!((ct.additive("a") - 0.05).abs() < 1e-12);
        assert!((ct.additive("b") + 0.05).abs() < 1e-12);
        assert_eq!(ct.additive("c"), 0.0);
        assert!((ct.additive("d") - 0.05).abs() < 1e-12, "clamped to 2");
        assert_eq!(ct.additive("prose"), 0.0);
        assert_eq!(boosted(0.98, 0.05), 1.0);
        assert_eq!(boosted(0.01, -0.05), 0.0);
    }

    #[test]
    fn the_fingerprint_follows_the_rules_and_status_hides_prefixes() {
        let none = ContentTypes::default();
        assert_eq!(none.fingerprint(), "none");
        let a = rules(&[("a", &["x/"], Some(1.5))]);
        let b = rules(&[("a", &["y/"], Some(1.5))]);
        let c = rules(&[("a", &["x/"], Some(1.6))]);
        assert!(a.fingerprint().starts_with("ctr1:"));
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_eq!(a.fingerprint(), rules(&[("a", &["x/"], Some(1.5))]).fingerprint());
        let s = serde_json::to_string(&a.status()).unwrap();
        assert!(!s.contains("x/"), "{s}");
    }
}
