//! Tags: the one rule that makes a tag, for indexed tags and for every front door's filters.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid tag: {0:?}. Tags are letters, digits, '-', '_' and '.', with '/' between levels")]
pub struct InvalidTag(pub String);

/// A normalized tag: trimmed, one leading '#' stripped, NFC, lowercase; '/'-separated
/// non-empty segments, each starting with a letter or digit and holding only letters,
/// digits, '-', '_' and '.'. Only [`Tag::parse`] makes one, so a filter or an indexed tag
/// cannot hold an unnormalized form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Tag(String);

impl Tag {
    pub fn parse(raw: &str) -> Result<Self, InvalidTag> {
        let t = raw.trim();
        let t = t.strip_prefix('#').unwrap_or(t);
        let t = crate::anchor::nfc(t).to_lowercase();
        let valid = !t.is_empty()
            && t.split('/').all(|seg| {
                let mut chars = seg.chars();
                chars.next().is_some_and(char::is_alphanumeric) && chars.all(is_segment_char)
            });
        if valid {
            Ok(Tag(t))
        } else {
            Err(InvalidTag(raw.to_string()))
        }
    }

    /// A filter's tags: each parsed, duplicates dropped, first occurrence kept.
    pub fn parse_all<S: AsRef<str>>(raw: &[S]) -> Result<Vec<Tag>, InvalidTag> {
        let mut out: Vec<Tag> = Vec::with_capacity(raw.len());
        for r in raw {
            let tag = Tag::parse(r.as_ref())?;
            if !out.contains(&tag) {
                out.push(tag);
            }
        }
        Ok(out)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

fn is_segment_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.')
}

crate::ids::parsed_text!(Tag, InvalidTag);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_normalized() {
        let n = |s: &str| Tag::parse(s).ok().map(Tag::into_string);
        assert_eq!(n("Rust").as_deref(), Some("rust"));
        assert_eq!(n("  #Project/Alpha ").as_deref(), Some("project/alpha"));
        assert_eq!(n("Cafe\u{301}").as_deref(), Some("caf\u{e9}"));
        assert_eq!(n("v1.2_x-y").as_deref(), Some("v1.2_x-y"));
        assert_eq!(n("v1.2_beta-x").as_deref(), Some("v1.2_beta-x"));
        assert_eq!(n("2024").as_deref(), Some("2024"));
        assert_eq!(n("Ünïcode").as_deref(), Some("ünïcode"));
        assert_eq!(n("日本語").as_deref(), Some("日本語"));
        for bad in ["", "#", "##a", "/a", "a/", "a//b", "-a", "a/_b", "a b", "a!", ".a", "#/", "a#b"] {
            assert!(Tag::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lists_drop_duplicates_and_stop_at_the_first_invalid_tag() {
        let tags = Tag::parse_all(&["A", "#a", "b"]).unwrap();
        assert_eq!(tags, vec![Tag::parse("a").unwrap(), Tag::parse("b").unwrap()]);
        assert_eq!(Tag::parse_all(&["a", "b c"]), Err(InvalidTag("b c".to_string())));
    }

    #[test]
    fn decoding_validates() {
        assert!(serde_json::from_str::<Tag>("\"Ok\"").is_ok_and(|t| t == "ok"));
        assert!(serde_json::from_str::<Tag>("\"not ok\"").is_err());
    }
}
