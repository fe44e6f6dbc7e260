//! Section list and heading anchors.

use std::collections::{HashMap, HashSet};

use super::canonical::nfc;
use super::scan::Heading;
use super::{to_u32, Section};

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

/// Builds sections with unique anchors ("x", "x-2", "x-3", ...).
pub(super) fn build_sections(headings: &[Heading], line_offset: u32) -> Vec<Section> {
    let mut used: HashSet<String> = HashSet::with_capacity(headings.len());
    // next suffix to try per base anchor (keeps many duplicates linear)
    let mut next: HashMap<String, u32> = HashMap::new();
    headings
        .iter()
        .map(|h| {
            let base = section_anchor(&h.text);
            let mut anchor = base.clone();
            if used.contains(&anchor) {
                let mut n = next.get(&base).copied().unwrap_or(2);
                loop {
                    anchor = format!("{base}-{n}");
                    n = n.saturating_add(1);
                    if !used.contains(&anchor) || n == u32::MAX {
                        break;
                    }
                }
                next.insert(base, n);
            }
            used.insert(anchor.clone());
            Section {
                anchor,
                level: h.level,
                line: to_u32(h.start_line).saturating_add(line_offset),
                title: h.text.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn h(text: &str, line: usize, level: u8) -> Heading {
        Heading { level, start_line: line, end_line: line, text: text.to_string(), atx: true }
    }

    #[test]
    fn duplicates() {
        let hs = vec![
            h("Intro", 0, 1),
            h("Intro", 2, 2),
            h("Intro 2", 4, 2),
            h("intro", 6, 3),
            h("???", 8, 2),
            h("!!!", 9, 2),
        ];
        let s = build_sections(&hs, 3);
        let a: Vec<&str> = s.iter().map(|s| s.anchor.as_str()).collect();
        assert_eq!(a, vec!["intro", "intro-2", "intro-2-2", "intro-3", "section", "section-2"]);
        assert_eq!(s[0].line, 3);
        assert_eq!(s[3].line, 9);
        assert_eq!(s[3].level, 3);
        assert_eq!(s[1].title, "Intro");
    }
}
