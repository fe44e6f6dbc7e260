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

/// What a link's `#anchor` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorTarget {
    /// A heading, by its slug ([`section_anchor`]).
    Heading(String),
    /// A block id, lowercased, without its `^`.
    Block(String),
}

/// What a link's anchor (as written, its escapes already decoded) names: of Obsidian's nested
/// `Parent#Child`, the last part that is not empty, trimmed; `^id` a block, anything else a
/// heading. `None` when the anchor is only `#`s and spaces. The one rule of the worker's
/// anchor check and the reader's fragments.
pub fn anchor_target(anchor: &str) -> Option<AnchorTarget> {
    let last = anchor.rsplit('#').map(str::trim).find(|s| !s.is_empty())?;
    Some(match last.strip_prefix('^') {
        Some(block) => AnchorTarget::Block(block.trim().to_ascii_lowercase()),
        None => AnchorTarget::Heading(section_anchor(last)),
    })
}

/// The block id that `text`, a piece of `source` ending at byte `end`, closes its line with:
/// [`block_id`] of a text that ends where its line does (the parser's and the reader's rule).
pub fn block_id_ending_line(source: &str, end: usize, text: &str) -> Option<(usize, String)> {
    let ends_line = source.get(end..).is_none_or(|rest| rest.is_empty() || rest.starts_with(['\n', '\r']));
    if ends_line {
        block_id(text)
    } else {
        None
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
    fn an_anchor_names_its_last_part_a_block_or_a_heading() {
        assert_eq!(anchor_target("Sub Heading: part 2"), Some(AnchorTarget::Heading("sub-heading-part-2".into())));
        assert_eq!(anchor_target("Parent # Child "), Some(AnchorTarget::Heading("child".into())));
        assert_eq!(anchor_target("^B1"), Some(AnchorTarget::Block("b1".into())));
        assert_eq!(anchor_target("Part#^b-2#"), Some(AnchorTarget::Block("b-2".into())));
        assert_eq!(anchor_target("# "), None);
        let text = "Line ^a1\nmid ^a2 more\n";
        assert_eq!(block_id_ending_line(text, 8, &text[..8]), Some((5, "a1".into())));
        assert_eq!(block_id_ending_line(text, 16, &text[9..16]), None, "the line goes on");
        assert_eq!(block_id_ending_line("x ^z", 4, "x ^z"), Some((2, "z".into())), "at the end of the text");
    }

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
