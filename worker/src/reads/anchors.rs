//! The anchors a note offers a link (its headings and its block ids), and whether a link's
//! `#anchor` names one of them.

use crate::index::ingest;
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow};
use crate::stores::DocKey;
use percent_encoding::percent_decode_str;
use protocol::anchor::{anchor_target, section_anchor, AnchorTarget};
use protocol::source_kind::{source_kind, SourceKind};
use protocol::ApiError;
use std::collections::{HashMap, HashSet};

/// What `anchor`, as a link writes it (a Markdown link's `Part%201` escaped), names.
fn wanted(anchor: &str) -> Option<AnchorTarget> {
    anchor_target(&percent_decode_str(anchor).decode_utf8_lossy())
}

/// A note's anchors: every heading's slug (of its text and the unique one its section gets,
/// `intro-2`) and every block id.
#[derive(Debug, Default)]
struct Anchors {
    headings: HashSet<String>,
    blocks: HashSet<String>,
}

impl Anchors {
    fn of(parsed: ingest::ParsedDoc) -> Anchors {
        let mut headings = HashSet::new();
        for s in parsed.sections {
            headings.insert(section_anchor(&s.title));
            headings.insert(s.anchor);
        }
        Anchors { headings, blocks: parsed.blocks.into_iter().collect() }
    }

    fn has(&self, w: &AnchorTarget) -> bool {
        match w {
            AnchorTarget::Heading(h) => self.headings.contains(h),
            AnchorTarget::Block(b) => self.blocks.contains(b),
        }
    }
}

/// The anchors of the notes one read looks at, each note's text parsed once.
pub struct AnchorBook<'a> {
    w: &'a Shared,
    notes: HashMap<DocKey, Option<Anchors>>,
}

impl<'a> AnchorBook<'a> {
    pub fn new(w: &'a Shared) -> Self {
        AnchorBook { w, notes: HashMap::new() }
    }

    /// Whether note `doc` has `anchor`: `None` when that cannot be told (the document is not
    /// a Markdown or org note, its text is gone, or the anchor names nothing).
    pub fn has(&mut self, doc: &DocRow, anchor: &str) -> Result<Option<bool>, ApiError> {
        let Some(wanted) = wanted(anchor) else { return Ok(None) };
        if !self.notes.contains_key(&doc.id) {
            let anchors = self.read(doc)?;
            self.notes.insert(doc.id, anchors);
        }
        Ok(self.notes.get(&doc.id).and_then(Option::as_ref).map(|a| a.has(&wanted)))
    }

    fn read(&self, doc: &DocRow) -> Result<Option<Anchors>, ApiError> {
        let kind = match source_kind(&doc.rel_path) {
            Some(k @ (SourceKind::Markdown | SourceKind::Org)) => k,
            _ => return Ok(None),
        };
        let text = catalog::content_text(&self.w.stores.catalog.reader(), &doc.mirror_hash)?;
        Ok(text.map(|t| Anchors::of(ingest::parse(&t, &doc.rel_path, kind))))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn anchors_of(text: &str) -> Anchors {
        Anchors::of(ingest::parse_markdown(text, "n.md"))
    }

    #[test]
    fn a_link_names_a_heading_by_its_text_or_slug_and_a_block_by_its_id() {
        let a = anchors_of("# Title\n\n## Sub Heading: part 2\n\nText ^Blk-1\n\n## Intro\n\n## Intro\n");
        let has = |s: &str| a.has(&wanted(s).unwrap());
        assert!(has("Sub Heading: part 2") && has("sub heading part 2") && has("sub-heading-part-2"));
        assert!(has("Sub%20Heading%3A%20part%202"), "a Markdown link's escapes");
        assert!(has("Title#Sub Heading: part 2"), "a nested heading: the last one counts");
        assert!(has("^blk-1") && has("^BLK-1"));
        assert!(has("intro-2"), "the second of two headings of one text");
        assert!(!has("Missing") && !has("^nope") && !has("Blk-1"));
        assert_eq!(wanted("#"), None);
    }
}
