//! Section list and heading anchors.

use std::collections::{HashMap, HashSet};

use super::scan::Heading;
use super::{to_u32, Section};
pub use protocol::anchor::section_anchor;

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
