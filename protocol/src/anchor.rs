//! Heading anchors: the one slug rule, shared by the worker's sections and the workspace's
//! rendered headings and section links.

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// NFC-normalizes `s`, avoiding work when it is already NFC (the worker's canonical text
/// uses it too).
pub fn nfc(s: &str) -> String {
    if is_nfc_quick(s.chars()) == IsNormalized::Yes {
        s.to_string()
    } else {
        s.nfc().collect()
    }
}

/// Anchor for a heading title: NFC, lowercase, keep letters, digits, '-',
/// '_' and spaces (whitespace becomes '-'), collapse and trim '-';
/// "section" if nothing is left.
pub fn section_anchor(title: &str) -> String {
    let lower = nfc(title).to_lowercase();
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else if (c == '-' || c.is_whitespace()) && !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "section".to_string()
    } else {
        out
    }
}

/// The block id a line's text ends with (`^id`, letters, digits and `-`, alone or after a
/// space, as Obsidian writes it): where its `^` starts, and the id lowercased. A link names
/// it as `#^id`.
pub fn block_id(line: &str) -> Option<(usize, String)> {
    let line = line.trim_end();
    let (before, id) = line.rsplit_once('^')?;
    let ok = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    (ok && (before.is_empty() || before.ends_with([' ', '\t']))).then(|| (before.len(), id.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_ids() {
        assert_eq!(block_id("A paragraph ^p-1"), Some((12, "p-1".to_string())));
        assert_eq!(block_id("^Own  "), Some((0, "own".to_string())));
        assert_eq!(block_id("x ^a_b"), None);
        assert_eq!(block_id("2^10"), None);
        assert_eq!(block_id("x ^"), None);
    }

    #[test]
    fn anchors() {
        assert_eq!(section_anchor("Hello World"), "hello-world");
        assert_eq!(section_anchor("  C++ & Rust: a -- b  "), "c-rust-a-b");
        assert_eq!(section_anchor("snake_case Name"), "snake_case-name");
        assert_eq!(section_anchor("Ünïcode Straße 日本"), "ünïcode-straße-日本");
        assert_eq!(section_anchor("e\u{301}te\u{301}"), "été");
        assert_eq!(section_anchor("!!!"), "section");
        assert_eq!(section_anchor(""), "section");
        assert_eq!(section_anchor("-a-"), "a");
        assert_eq!(section_anchor("1. Intro"), "1-intro");
        assert_eq!(section_anchor("a\tb"), "a-b");
    }
}
