//! Markdown / plain-text ingestion: canonicalization, front matter, tags,
//! links, sections, chunks and snippets.
//!
//! Everything in this module is pure (no I/O) and never panics on input
//! text. Sibling modules are referenced as `super::x` only, so the module can
//! be compiled standalone as well as inside the worker crate.

mod canonical;
mod chunk;
mod code;
mod dates;
mod front_matter;
mod highlight;
mod keyword;
mod lines;
mod links;
pub mod org;
mod scan;
mod sections;
mod snippet;
mod tags;

use crate::stores::catalog;
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

pub use canonical::{canonicalize, decode_text, decode_utf8, mirror_of};
pub(crate) use chunk::TARGET_CHARS as CHUNK_TARGET_CHARS;
use code::parse_code;
pub use highlight::code_tokens;
pub use keyword::{body_of, keyword_body, keyword_text};
pub use sections::section_anchor;
pub use snippet::snippet;
pub use tags::normalize_tag;

/// Errors produced while ingesting raw file content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestError {
    /// The bytes are not valid UTF-8 (nor the encoding their byte-order mark names).
    NotUtf8,
    /// The bytes hold NUL bytes and no byte-order mark: not text.
    Binary,
}

impl fmt::Display for IngestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IngestError::NotUtf8 => f.write_str("file content is not valid UTF-8"),
            IngestError::Binary => f.write_str("file content is binary (it holds NUL bytes), not text"),
        }
    }
}

impl std::error::Error for IngestError {}

/// Everything extracted from one note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParsedDoc {
    pub title: String,
    /// Canonical text with the front matter block removed (what gets indexed).
    pub body: String,
    /// 1-based line in the canonical text where `body` starts.
    pub body_start_line: u32,
    pub front_matter_present: bool,
    /// Normalized, deduplicated, sorted.
    pub tags: Vec<String>,
    pub author: Option<String>,
    /// Lowercased, deduplicated, sorted.
    pub categories: Vec<String>,
    /// Front-matter `type`, lowercased: it names the content type when a rule has that id.
    pub doc_type: Option<String>,
    /// Front-matter `lang` or `language`, as written: the language the note says it is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// RFC 3339 UTC.
    pub date: Option<String>,
    /// snake_case front matter key -> RFC 3339 UTC.
    pub date_fields: BTreeMap<String, String>,
    pub links: Vec<Link>,
    pub chunks: Vec<Chunk>,
    pub sections: Vec<Section>,
    /// Block ids (`^id` at a line's end), lowercased: anchors a link can name besides the
    /// sections' headings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<String>,
}

impl ParsedDoc {
    /// What the catalog keeps of the parse.
    pub fn stored(&self) -> catalog::Parsed<'_> {
        catalog::Parsed {
            title: &self.title,
            author: self.author.as_deref(),
            categories: &self.categories,
            date: self.date.as_deref(),
            date_fields: &self.date_fields,
            body_start_line: self.body_start_line,
            doc_type: self.doc_type.as_deref(),
            tags: &self.tags,
            links: &self.links,
            chunks: &self.chunks,
        }
    }
}

/// A link's kind: the contract's own type, from the parser to the catalog and the replies.
pub use protocol::LinkKind;

/// The Markdown a stored text of `kind` reads as, the one rule for parsing, sections and
/// headings: a Markdown note or a document converted to Markdown (a sheet, a page, a deck,
/// mail) as it is; an
/// org note line for line ([`org::to_markdown`]); `None` for the kinds read as plain text.
pub fn as_markdown(kind: protocol::source_kind::SourceKind, text: &str) -> Option<std::borrow::Cow<'_, str>> {
    use protocol::source_kind::SourceKind;
    match kind {
        SourceKind::Org => Some(std::borrow::Cow::Owned(org::to_markdown(text))),
        kind if reads_as_markdown(kind) => Some(std::borrow::Cow::Borrowed(text)),
        _ => None,
    }
}

/// Whether a stored text of `kind` reads as Markdown ([`as_markdown`] gives it).
pub fn reads_as_markdown(kind: protocol::source_kind::SourceKind) -> bool {
    kind == protocol::source_kind::SourceKind::Org || kind.stores_markdown()
}

/// Parses canonical text by its kind: code at its syntax, Markdown where the kind reads as
/// Markdown ([`as_markdown`]), else plain text. The one parser of indexing and of reads.
pub fn parse(canonical: &str, rel_path: &str, kind: protocol::source_kind::SourceKind) -> ParsedDoc {
    if let protocol::source_kind::SourceKind::Code(lang) = kind {
        if code_symbols_on() {
            return parse_code(canonical, rel_path, lang);
        }
        return parse_plain_text(canonical, rel_path);
    }
    match as_markdown(kind, canonical) {
        Some(markdown) => parse_markdown(&markdown, rel_path),
        None => parse_plain_text(canonical, rel_path),
    }
}

/// The symbols of a code file's canonical text (its sections, by [`parse`]); none for any
/// other kind. For keyword titles fed again after indexing (a chunk's own symbol is stored
/// with it).
pub fn code_symbols(canonical: &str, rel_path: &str) -> Vec<Section> {
    match protocol::source_kind::source_kind(rel_path) {
        Some(kind @ protocol::source_kind::SourceKind::Code(_)) => parse(canonical, rel_path, kind).sections,
        _ => Vec::new(),
    }
}

/// Whether code is cut at its symbols: yes, unless `SVC_CODE_SYMBOLS=0` (an evaluation switch,
/// `scripts/eval --mode code` with and without symbols; read once).
fn code_symbols_on() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("SVC_CODE_SYMBOLS").map_or(true, |v| v.trim() != "0"))
}

/// The parts of a document the catalog keeps as they are parsed.
pub use crate::stores::catalog::{Chunk, Link};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub anchor: String,
    pub level: u8,
    /// 1-based line in the canonical text.
    pub line: u32,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snippet {
    pub text: String,
    /// Number of '\n' in the source text before the window start.
    pub line_offset: u32,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `s` on one line: runs of whitespace (newlines too) become one space, ends trimmed.
pub fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// File stem of a relative path ("notes/My Note.md" -> "My Note").
fn file_stem(rel_path: &str) -> String {
    let name = rel_path.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or("");
    let stem = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    };
    let stem = stem.trim();
    if stem.is_empty() {
        "Untitled".to_string()
    } else {
        stem.to_string()
    }
}

/// Builds chunks (with canonical line numbers) from body byte ranges.
fn build_chunks(
    body: &str,
    idx: &lines::LineIndex,
    line_offset: u32,
    headings: &[(usize, usize)],
    fences: &[(usize, usize)],
) -> Vec<Chunk> {
    chunk::chunk_spans(body, idx, headings, fences)
        .into_iter()
        .enumerate()
        .filter_map(|(seq, (start, end))| {
            let text = body.get(start..end)?;
            let start_line = to_u32(idx.line_of(start)).saturating_add(line_offset);
            let end_line = to_u32(idx.line_of(end.saturating_sub(1).max(start))).saturating_add(line_offset);
            Some(Chunk { seq: to_u32(seq), text: text.to_string(), start_line, end_line, symbol: None })
        })
        .collect()
}

/// The language a canonical Markdown text declares in its front matter (`lang`, `language`).
pub fn declared_language(canonical: &str) -> Option<String> {
    front_matter::split(canonical).meta.and_then(|m| m.language)
}

/// Parses a canonical Markdown note.
pub fn parse_markdown(canonical: &str, rel_path: &str) -> ParsedDoc {
    let fm = front_matter::split(canonical);
    let body = fm.body;
    // canonical line = body line (0-based) + line_offset
    let line_offset = fm.body_start_line;
    let meta = fm.meta.unwrap_or_default();

    let idx = lines::LineIndex::new(body);
    let scanned = scan::scan(body, &idx, rel_path, line_offset);

    // Title: front matter, then first ATX H1, then first setext H1, then stem.
    let title = meta
        .title
        .clone()
        .or_else(|| scanned.headings.iter().find(|h| h.level == 1 && h.atx).map(|h| h.text.clone()))
        .or_else(|| scanned.headings.iter().find(|h| h.level == 1 && !h.atx).map(|h| h.text.clone()))
        .unwrap_or_else(|| file_stem(rel_path));

    let mut tags = meta.tags;
    tags.extend(scanned.inline_tags);
    tags.sort();
    tags.dedup();

    let sections = sections::build_sections(&scanned.headings, line_offset);

    let heading_lines: Vec<(usize, usize)> = scanned.headings.iter().map(|h| (h.start_line, h.end_line)).collect();
    let chunks = build_chunks(body, &idx, line_offset, &heading_lines, &scanned.fences);

    ParsedDoc {
        title,
        body: body.to_string(),
        body_start_line: line_offset,
        front_matter_present: fm.present,
        tags,
        author: meta.author,
        categories: meta.categories,
        doc_type: meta.doc_type,
        language: meta.language,
        date: meta.date,
        date_fields: meta.date_fields,
        links: scanned.links,
        chunks,
        sections,
        blocks: scanned.blocks,
    }
}

/// Parses a canonical plain-text file: title = file stem, chunks by paragraphs.
pub fn parse_plain_text(canonical: &str, rel_path: &str) -> ParsedDoc {
    let idx = lines::LineIndex::new(canonical);
    let chunks = build_chunks(canonical, &idx, 1, &[], &[]);
    ParsedDoc::without_metadata(file_stem(rel_path), canonical, chunks, Vec::new())
}

impl ParsedDoc {
    /// A document read as a whole with no front matter, tags, links or dates (plain text,
    /// code): its title, text, chunks and sections.
    fn without_metadata(title: String, canonical: &str, chunks: Vec<Chunk>, sections: Vec<Section>) -> ParsedDoc {
        ParsedDoc {
            title,
            body: canonical.to_string(),
            body_start_line: 1,
            front_matter_present: false,
            tags: Vec::new(),
            author: None,
            categories: Vec::new(),
            doc_type: None,
            language: None,
            date: None,
            date_fields: BTreeMap::new(),
            links: Vec::new(),
            chunks,
            sections,
            blocks: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_display() {
        let e = IngestError::NotUtf8;
        assert_eq!(e.to_string(), "file content is not valid UTF-8");
        let _: &dyn std::error::Error = &e;
    }

    #[test]
    fn link_type_str() {
        assert_eq!(LinkKind::Wiki.as_str(), "wiki");
        assert_eq!(LinkKind::Markdown.as_str(), "markdown");
    }

    #[test]
    fn stem() {
        assert_eq!(file_stem("a/b/My Note.md"), "My Note");
        assert_eq!(file_stem("x.tar.gz"), "x.tar");
        assert_eq!(file_stem(".hidden"), ".hidden");
        assert_eq!(file_stem("dir/"), "dir");
        assert_eq!(file_stem(""), "Untitled");
        assert_eq!(file_stem("a\\b\\c.txt"), "c");
    }

    #[test]
    fn full_document() {
        let raw = "\u{feff}---\r\ntitle: Hello\r\ntags: [Rust, project/Alpha]\r\nauthor: Ann\r\ncategory: Notes, Dev\r\ndate: 2024-03-01\r\ndueDate: 2024-03-05 10:00\r\n---\r\n\r\n# Heading Ü\r\n\r\nSee [[Other Note|alias]] and [doc](../b/c%20d.md#sec) #inline-tag.\r\n\r\n```\r\n[[not a link]] #nottag\r\n```\r\n";
        let c = canonicalize(raw);
        let d = parse_markdown(&c, "a/x.md");
        assert_eq!(d.title, "Hello");
        assert!(d.front_matter_present);
        assert_eq!(d.body_start_line, 9);
        assert!(d.body.starts_with("\n# Heading"));
        assert_eq!(d.tags, vec!["inline-tag", "project/alpha", "rust"]);
        assert_eq!(d.author.as_deref(), Some("Ann"));
        assert_eq!(d.categories, vec!["dev", "notes"]);
        assert_eq!(d.date.as_deref(), Some("2024-03-01T00:00:00Z"));
        assert_eq!(d.date_fields.get("due_date").map(String::as_str), Some("2024-03-05T10:00:00Z"));
        assert_eq!(d.date_fields.get("date").map(String::as_str), Some("2024-03-01T00:00:00Z"));
        assert_eq!(d.links.len(), 2);
        let w = &d.links[0];
        assert_eq!(w.link_type, LinkKind::Wiki);
        assert_eq!(w.target_ref, "Other Note");
        assert_eq!(w.target_ref_norm, "other note");
        assert_eq!(w.link_text.as_deref(), Some("alias"));
        assert_eq!((w.start_line, w.start_col, w.end_line, w.end_col), (12, 5, 12, 24));
        let m = &d.links[1];
        assert_eq!(m.link_type, LinkKind::Markdown);
        assert_eq!(m.target_ref, "../b/c%20d.md");
        assert_eq!(m.target_ref_norm, "b/c d.md");
        assert_eq!(m.target_anchor.as_deref(), Some("sec"));
        assert_eq!(m.link_text.as_deref(), Some("doc"));
        assert_eq!(d.sections.len(), 1);
        assert_eq!(d.sections[0].anchor, "heading-ü");
        assert_eq!(d.sections[0].line, 10);
        assert_eq!(d.chunks.len(), 1);
        assert_eq!(d.chunks[0].start_line, 10);
        assert_eq!(d.chunks[0].end_line, 16);
        assert!(d.chunks[0].text.starts_with("# Heading Ü"));
        assert!(d.chunks[0].text.ends_with("```"));
    }

    #[test]
    fn front_matter_offsets_and_exclusion() {
        // Links/tags written inside front matter are not body links/tags.
        let c = "---\nnote: \"[[InFm]] #fmtag\"\nlist:\n  - x\n---\nÄ [[Ünï Ziel#Teil|Alias]] [m](sub/ü%C3%BC.md)\n";
        let d = parse_markdown(c, "dir/n.md");
        assert_eq!(d.body_start_line, 6);
        assert!(d.tags.is_empty(), "{:?}", d.tags);
        assert_eq!(d.links.len(), 2);
        let w = &d.links[0];
        assert_eq!(w.target_ref, "Ünï Ziel");
        assert_eq!(w.target_ref_norm, "ünï ziel");
        assert_eq!(w.target_anchor.as_deref(), Some("Teil"));
        assert_eq!((w.start_line, w.start_col, w.end_line, w.end_col), (6, 3, 6, 25));
        let m = &d.links[1];
        assert_eq!(m.target_ref_norm, "dir/sub/üü.md");
        assert_eq!((m.start_line, m.start_col, m.end_col), (6, 27, 45));
        assert_eq!(d.chunks[0].start_line, 6);
    }

    #[test]
    fn inline_tags_rules() {
        let c = "---\ntags: [fm]\n---\n# Heading #htag\n\nText #Body/Sub. and #123 but `#code` and [x](y.md#frag)\n\n```\n#fenced\n```\n\n    #indented\n\n<https://a.b/#auto> https://a.b/c#d &#35;ent \\#esc a#b\n";
        let d = parse_markdown(c, "n.md");
        assert_eq!(d.tags, vec!["body/sub", "fm", "htag"]);
    }

    #[test]
    fn link_in_heading_and_code_spans() {
        let c = "# See [[Target]]\n\n`[[no]]` and ``[x](no.md)``\n\n~~~~\n[[no]]\n~~~~\n\n    [[no]]\n";
        let d = parse_markdown(c, "n.md");
        assert_eq!(d.links.len(), 1);
        assert_eq!(d.links[0].target_ref, "Target");
        assert_eq!(d.sections[0].title, "See Target");
        assert_eq!(d.title, "See Target");
    }

    #[test]
    fn sections_with_lines_and_duplicates() {
        let c = "---\na: 1\n---\n# Intro\n\n## Part\n\ntext\n\n## Part\n\nSetext\n------\n";
        let d = parse_markdown(c, "n.md");
        let s: Vec<(&str, u8, u32)> = d.sections.iter().map(|s| (s.anchor.as_str(), s.level, s.line)).collect();
        assert_eq!(s, vec![("intro", 1, 4), ("part", 2, 6), ("part-2", 2, 10), ("setext", 2, 12)]);
    }

    #[test]
    fn escaping_links_dropped() {
        let d = parse_markdown("[up](../../x.md) [ok](../x.md)\n", "a/n.md");
        assert_eq!(d.links.len(), 1);
        assert_eq!(d.links[0].target_ref_norm, "x.md");
    }

    #[test]
    fn title_fallbacks() {
        let d = parse_markdown("Intro\n\n# First *bold* ##\n\n# Second\n", "n.md");
        assert_eq!(d.title, "First bold");
        let d = parse_markdown("Setext\n======\n\ntext\n", "n.md");
        assert_eq!(d.title, "Setext");
        let d = parse_markdown("Setext\n======\n\n# Atx\n", "n.md");
        assert_eq!(d.title, "Atx");
        let d = parse_markdown("```\n# not title\n```\n\nplain\n", "dir/My File.md");
        assert_eq!(d.title, "My File");
        let d = parse_markdown("---\ntitle: \"\"\n---\n# H\n", "n.md");
        assert_eq!(d.title, "H");
        let d = parse_markdown("---\ntitle: [bad\n---\n# H\n", "n.md");
        assert_eq!(d.title, "H");
        assert!(!d.front_matter_present);
        assert_eq!(d.body_start_line, 1);
    }

    #[test]
    fn empty_inputs() {
        let d = parse_markdown("", "e.md");
        assert_eq!(d.title, "e");
        assert!(d.chunks.is_empty());
        assert!(d.links.is_empty());
        let d = parse_markdown("---\na: 1\n---\n", "e.md");
        assert!(d.front_matter_present);
        assert_eq!(d.body, "");
        assert_eq!(d.body_start_line, 4);
        assert!(d.chunks.is_empty());
        let d = parse_plain_text("", "e.txt");
        assert!(d.chunks.is_empty());
    }

    #[test]
    fn plain_text() {
        let text = "---\ntitle: no\n---\n# not a heading #tag [[link]]\n\nsecond para\n";
        let d = parse_plain_text(text, "docs/readme.txt");
        assert_eq!(d.title, "readme");
        assert_eq!(d.body, text);
        assert_eq!(d.body_start_line, 1);
        assert!(!d.front_matter_present);
        assert!(d.tags.is_empty());
        assert!(d.links.is_empty());
        assert!(d.sections.is_empty());
        assert_eq!(d.chunks.len(), 1);
        assert_eq!((d.chunks[0].start_line, d.chunks[0].end_line), (1, 6));

        let para = "word ".repeat(100);
        let para = para.trim_end();
        let text = format!("{para}\n\n{para}\n\n{para}\n\n{para}\n");
        let d = parse_plain_text(&text, "a.txt");
        assert_eq!(d.chunks.len(), 2);
        assert_eq!((d.chunks[0].start_line, d.chunks[0].end_line), (1, 3));
        assert_eq!((d.chunks[1].start_line, d.chunks[1].end_line), (5, 7));
        assert!(d.chunks.iter().all(|c| c.text.chars().count() <= 1200));
    }

    #[test]
    fn serializes() {
        let d = parse_markdown("# T\n\n[[x]]\n", "n.md");
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["links"][0]["link_type"], "wiki");
    }

    #[test]
    fn garbage_does_not_panic() {
        let inputs = [
            "---\n",
            "---\n---\n",
            "---\n...\n",
            "[[",
            "[[]]",
            "[[|]]",
            "[[#]]",
            "[[a:]]",
            "[](",
            "[x]()",
            "[x](#)",
            "[x](../../..)",
            "#",
            "# ",
            "#\u{301}",
            "```",
            "~~~~\n```\n",
            "    code\n\n\n",
            "> # q\n> [[a]]\n",
            "- [[a\n]]",
            "\u{0}\u{7f}\u{85}",
            "#a/#b #/ #a/ #.",
        ];
        for s in inputs {
            let c = canonicalize(s);
            assert_eq!(canonicalize(&c), c, "canonical text is a fixed point: {s:?}");
            let lines = to_u32(c.lines().count().max(1));
            for doc in [parse_markdown(&c, "a.md"), parse_markdown(s, "a.md"), parse_plain_text(s, "a.txt")] {
                assert!(!doc.title.trim().is_empty(), "a title for {s:?}");
                for chunk in &doc.chunks {
                    assert!(chunk.start_line >= 1 && chunk.start_line <= chunk.end_line, "{s:?}: {chunk:?}");
                }
                for section in &doc.sections {
                    assert!(section.line >= 1, "{s:?}: {section:?}");
                }
            }
            let doc = parse_markdown(&c, "a.md");
            assert!(c.ends_with(&doc.body), "the body is the text after the front matter: {s:?}");
            for chunk in &doc.chunks {
                assert!(chunk.end_line <= lines + 1, "{s:?}: {chunk:?} past line {lines}");
            }
            let snip = snippet(s, &["a".to_string()], 10);
            assert!(snip.text.chars().count() <= 12, "{s:?}: {:?}", snip.text);
        }
    }
}
