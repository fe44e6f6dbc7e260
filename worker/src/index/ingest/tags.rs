//! Tag normalization and inline `#hashtag` detection.

/// A tag as indexed, by the one rule of [`protocol::Tag`]: `None` when no tag can be made.
pub fn normalize_tag(raw: &str) -> Option<String> {
    protocol::Tag::parse(raw).ok().map(protocol::Tag::into_string)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_hashtag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.')
}

/// Whether the whitespace-delimited token ending at `pos` looks like a URL
/// (so a '#' at `pos` is a URL fragment, not a tag).
fn in_url_token(text: &str, pos: usize) -> bool {
    let before = text.get(..pos).unwrap_or("");
    let token_start = before.rfind(|c: char| c.is_whitespace() || c == '(' || c == '<').map_or(0, |i| i + 1);
    before.get(token_start..).is_some_and(|tok| tok.contains("://"))
}

/// Scans `text[start..end]` for hashtags and pushes normalized tags into
/// `out`. The preceding char and the tag's continuation are read from the
/// full `text`, so a tag may straddle parser event boundaries.
///
/// Rule: '#' not preceded by a word char, '/', '&', '\\' or '#', followed by
/// a letter or digit, then `[\p{L}\p{N}_\-/.]*`; trailing '/' and '.' are
/// trimmed; pure digits ("#123") are not tags.
pub(super) fn scan_hashtags(text: &str, start: usize, end: usize, out: &mut Vec<String>) {
    let Some(region) = text.get(start..end) else {
        return;
    };
    for (rel, _) in region.match_indices('#') {
        let pos = start + rel;
        let prev = text.get(..pos).and_then(|s| s.chars().next_back());
        if prev.is_some_and(|p| is_word_char(p) || matches!(p, '/' | '&' | '\\' | '#')) {
            continue;
        }
        let after = text.get(pos + 1..).unwrap_or("");
        if !after.chars().next().is_some_and(char::is_alphanumeric) {
            continue;
        }
        let len = after.char_indices().find(|&(_, c)| !is_hashtag_char(c)).map_or(after.len(), |(i, _)| i);
        let raw = after[..len].trim_end_matches(['/', '.']);
        if raw.is_empty() || raw.chars().all(|c| c.is_numeric()) {
            continue;
        }
        if in_url_token(text, pos) {
            continue;
        }
        if let Some(tag) = normalize_tag(raw) {
            out.push(tag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        scan_hashtags(text, 0, text.len(), &mut v);
        v
    }

    #[test]
    fn hashtags() {
        assert_eq!(scan("a #tag and #Other."), vec!["tag", "other"]);
        assert_eq!(scan("#project/alpha/ end"), vec!["project/alpha"]);
        assert_eq!(scan("(#x) #y, #z!"), vec!["x", "y", "z"]);
        assert_eq!(scan("#über #日本"), vec!["über", "日本"]);
        assert_eq!(scan("#1st #2024-q1"), vec!["1st", "2024-q1"]);
    }

    #[test]
    fn not_hashtags() {
        assert!(scan("issue #123 and #42.").is_empty());
        assert!(scan("C# a#b a/#b &#35; \\#esc ##x").is_empty());
        assert!(scan("# heading-like #- #").is_empty());
        assert!(scan("see https://x.com/a-#frag and http://y.org/#top").is_empty());
        assert!(scan("#a//b").is_empty());
    }

    #[test]
    fn range_limited() {
        let t = "#a #b #c";
        let mut v = Vec::new();
        scan_hashtags(t, 3, 5, &mut v);
        assert_eq!(v, vec!["b"]);
        scan_hashtags(t, 100, 200, &mut v);
        assert_eq!(v, vec!["b"]);
    }
}
