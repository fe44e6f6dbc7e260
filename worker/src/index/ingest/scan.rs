//! One pulldown-cmark pass over the body collecting headings, fenced code
//! blocks, links and inline tags.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType as MdLinkType, Options, Parser, Tag, TagEnd};

use super::lines::{ColCursor, LineIndex};
use super::links::{markdown_target, wiki_target, Target};
use super::tags::scan_hashtags;
use super::{to_u32, Link, LinkKind};

/// A top-level heading (not inside a list, block quote or footnote).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Heading {
    pub(super) level: u8,
    /// 0-based body lines (inclusive); setext headings span 2+ lines.
    pub(super) start_line: usize,
    pub(super) end_line: usize,
    /// Inline text with Markdown markup removed.
    pub(super) text: String,
    /// ATX (`# x`) rather than setext.
    pub(super) atx: bool,
}

#[derive(Debug, Default)]
pub(super) struct Scanned {
    pub(super) headings: Vec<Heading>,
    /// 0-based body line ranges (inclusive) of fenced code blocks.
    pub(super) fences: Vec<(usize, usize)>,
    /// Links with canonical positions.
    pub(super) links: Vec<Link>,
    /// Normalized inline tags (may contain duplicates).
    pub(super) inline_tags: Vec<String>,
    /// Block ids (`^id` at the end of a line), lowercased: anchors a link can name.
    pub(super) blocks: Vec<String>,
}

struct PendingLink {
    /// `None` for links that are not reported (still tracked for nesting).
    target: Option<(LinkKind, Target)>,
    range: Range<usize>,
    text: String,
    alias: Option<String>,
    /// Text inside is not link text / tags (wiki links, autolinks, embeds).
    skips_text: bool,
    /// An embed (`![[Note]]`, `![alt](pic.png)`): its alt text is its own.
    embed: bool,
}

struct PendingHeading {
    level: u8,
    range: Range<usize>,
    text: String,
    top_level: bool,
}

fn level_u8(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Last line (0-based) covered by a byte range.
fn last_line(idx: &LineIndex, range: &Range<usize>) -> usize {
    idx.line_of(range.end.saturating_sub(1).max(range.start))
}

/// Byte offset of the last char in `text[range]`.
fn last_char_start(text: &str, range: &Range<usize>) -> usize {
    text.get(range.start..range.end)
        .and_then(|s| s.char_indices().next_back())
        .map_or(range.start, |(i, _)| range.start + i)
}

/// Scans `body` (canonical text after front matter). `line_offset` is the
/// canonical line number of body line 0.
pub(super) fn scan(body: &str, idx: &LineIndex, rel_path: &str, line_offset: u32) -> Scanned {
    if body.trim().is_empty() {
        return Scanned::default();
    }
    let mut s = Scanner::new(body, idx, rel_path, line_offset);
    for (event, range) in Parser::new_ext(body, Options::ENABLE_WIKILINKS).into_offset_iter() {
        match event {
            Event::Start(tag) => s.start(tag, range),
            Event::End(tag) => s.end(tag),
            Event::Text(text) => s.text(&text, range),
            Event::Code(code) if s.skip_text_depth == 0 => s.append_text(&code),
            Event::SoftBreak | Event::HardBreak => s.append_text(" "),
            _ => {}
        }
    }
    s.out
}

/// The state of one pass: what encloses the current event, and what has been collected.
struct Scanner<'a> {
    body: &'a str,
    idx: &'a LineIndex,
    rel_path: &'a str,
    line_offset: u32,
    out: Scanned,
    container_depth: usize,
    code_depth: usize,
    /// Text inside wiki links, autolinks and images is neither tags nor link text of an
    /// enclosing link.
    skip_text_depth: usize,
    links: Vec<PendingLink>,
    heading: Option<PendingHeading>,
    cursor: ColCursor,
}

impl<'a> Scanner<'a> {
    fn new(body: &'a str, idx: &'a LineIndex, rel_path: &'a str, line_offset: u32) -> Self {
        Scanner {
            body,
            idx,
            rel_path,
            line_offset,
            out: Scanned::default(),
            container_depth: 0,
            code_depth: 0,
            skip_text_depth: 0,
            links: Vec::new(),
            heading: None,
            cursor: ColCursor::new(),
        }
    }

    /// Text that belongs to the open link and the open heading, if any.
    fn append_text(&mut self, s: &str) {
        if let Some(l) = self.links.last_mut() {
            l.text.push_str(s);
        }
        if let Some(h) = self.heading.as_mut() {
            h.text.push_str(s);
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        match tag {
            Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_) => self.container_depth += 1,
            Tag::CodeBlock(kind) => {
                self.code_depth += 1;
                if let CodeBlockKind::Fenced(_) = kind {
                    self.out.fences.push((self.idx.line_of(range.start), last_line(self.idx, &range)));
                }
            }
            Tag::Heading { level, .. } => {
                self.heading = Some(PendingHeading {
                    level: level_u8(level),
                    range,
                    text: String::new(),
                    top_level: self.container_depth == 0,
                });
            }
            Tag::Image { link_type, dest_url, .. } => self.start_embed(link_type, &dest_url, range),
            Tag::Link { link_type, dest_url, .. } => self.start_link(link_type, &dest_url, range),
            _ => {}
        }
    }

    fn start_link(&mut self, link_type: MdLinkType, dest_url: &str, range: Range<usize>) {
        let mut alias = None;
        let mut skips_text = false;
        let target = match link_type {
            MdLinkType::WikiLink { has_pothole } => {
                skips_text = true;
                if has_pothole {
                    alias = self.wiki_alias(&range);
                }
                wiki_target(dest_url).map(|t| (LinkKind::Wiki, t))
            }
            MdLinkType::Inline => markdown_target(dest_url, self.rel_path).map(|t| (LinkKind::Markdown, t)),
            MdLinkType::Autolink | MdLinkType::Email => {
                skips_text = true;
                None
            }
            _ => None,
        };
        if skips_text {
            self.skip_text_depth += 1;
        }
        self.links.push(PendingLink { target, range, text: String::new(), alias, skips_text, embed: false });
    }

    /// The text after `|` of the wiki link at `range`, if any.
    fn wiki_alias(&self, range: &Range<usize>) -> Option<String> {
        self.body
            .get(range.start..range.end)
            .and_then(|s| s.strip_suffix("]]"))
            .and_then(|s| s.split_once('|'))
            .map(|(_, a)| a.trim().to_string())
            .filter(|a| !a.is_empty())
    }

    /// An embed: `![[Note]]`, `![[Note#Heading]]`, `![[image.png|300]]` (a size after `|` is
    /// not link text) or `![alt](pic.png)` (its alt text is).
    fn start_embed(&mut self, link_type: MdLinkType, dest_url: &str, range: Range<usize>) {
        let mut alias = None;
        let target = match link_type {
            MdLinkType::WikiLink { has_pothole } => {
                if has_pothole {
                    alias = self.wiki_alias(&range).filter(|a| !is_size(a));
                }
                wiki_target(dest_url).map(|t| (LinkKind::Wiki, t))
            }
            MdLinkType::Inline => markdown_target(dest_url, self.rel_path).map(|t| (LinkKind::Markdown, t)),
            _ => None,
        };
        self.skip_text_depth += 1;
        self.links.push(PendingLink { target, range, text: String::new(), alias, skips_text: true, embed: true });
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition => {
                self.container_depth = self.container_depth.saturating_sub(1);
            }
            TagEnd::CodeBlock => self.code_depth = self.code_depth.saturating_sub(1),
            TagEnd::Heading(_) => self.end_heading(),
            TagEnd::Link | TagEnd::Image => self.end_link(),
            _ => {}
        }
    }

    /// A top-level heading with some text becomes a [`Heading`].
    fn end_heading(&mut self) {
        let Some(h) = self.heading.take() else { return };
        let text = super::collapse_whitespace(&h.text);
        if h.top_level && !text.is_empty() {
            let first = self.body.get(h.range.start..).unwrap_or("");
            self.out.headings.push(Heading {
                level: h.level,
                start_line: self.idx.line_of(h.range.start),
                end_line: last_line(self.idx, &h.range),
                text,
                atx: first.trim_start_matches(' ').starts_with('#'),
            });
        }
    }

    /// A link with a target becomes a [`Link`] with canonical positions.
    fn end_link(&mut self) {
        let Some(p) = self.links.pop() else { return };
        if p.skips_text {
            self.skip_text_depth = self.skip_text_depth.saturating_sub(1);
        }
        let Some((link_type, t)) = p.target else { return };
        let link_text = match link_type {
            LinkKind::Wiki => p.alias,
            LinkKind::Markdown => {
                let t = super::collapse_whitespace(&p.text);
                (!t.is_empty()).then_some(t)
            }
        };
        let end_char = last_char_start(self.body, &p.range);
        let (start_line, start_col) = self.cursor.locate(self.idx, self.body, p.range.start);
        let (end_line, end_col) = self.cursor.locate(self.idx, self.body, end_char);
        self.out.links.push(Link {
            link_type,
            target_ref: t.target_ref,
            target_ref_norm: t.target_ref_norm,
            target_anchor: t.anchor,
            target_collection: t.collection,
            link_text,
            start_line: to_u32(start_line).saturating_add(self.line_offset),
            start_col: to_u32(start_col),
            end_line: to_u32(end_line).saturating_add(self.line_offset),
            end_col: to_u32(end_col),
            embed: p.embed,
        });
    }

    /// Plain text: link and heading text, and inline tags, unless inside code (or, for
    /// tags and link text, inside a wiki link, autolink or image).
    fn text(&mut self, text: &str, range: Range<usize>) {
        if self.code_depth > 0 {
            return;
        }
        if let Some((_, id)) = protocol::anchor::block_id_ending_line(self.body, range.end, text) {
            self.out.blocks.push(id);
        }
        if self.skip_text_depth == 0 {
            self.append_text(text);
            scan_hashtags(self.body, range.start, range.end, &mut self.out.inline_tags);
            return;
        }
        if let Some(l) = self.links.last_mut().filter(|l| l.embed) {
            l.text.push_str(text);
        }
        if let Some(h) = self.heading.as_mut() {
            h.text.push_str(text);
        }
    }
}

/// `300` or `300x200` after an embed's `|`: a picture's size.
fn is_size(s: &str) -> bool {
    let mut parts = s.split('x');
    parts.next().is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
        && parts.next().is_none_or(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit()))
        && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(body: &str) -> Scanned {
        let idx = LineIndex::new(body);
        scan(body, &idx, "dir/note.md", 1)
    }

    fn targets(s: &Scanned) -> Vec<(&str, &str)> {
        s.links.iter().map(|l| (l.link_type.as_str(), l.target_ref.as_str())).collect()
    }

    #[test]
    fn wiki_forms() {
        let s = run("[[A]] [[B|Alias B]] [[C#Head]] [[D#Head|Al]] [[Coll:E]] [[https://x.y]] [[#local]]\n");
        assert_eq!(
            targets(&s),
            vec![("wiki", "A"), ("wiki", "B"), ("wiki", "C"), ("wiki", "D"), ("wiki", "E"), ("wiki", "")]
        );
        assert_eq!(s.links[5].target_anchor.as_deref(), Some("local"), "a link to the note's own heading");
        assert_eq!(s.links[1].link_text.as_deref(), Some("Alias B"));
        assert_eq!(s.links[0].link_text, None);
        assert_eq!(s.links[2].target_anchor.as_deref(), Some("Head"));
        assert_eq!(s.links[3].target_anchor.as_deref(), Some("Head"));
        assert_eq!(s.links[3].link_text.as_deref(), Some("Al"));
        assert_eq!(s.links[4].target_collection.as_deref(), Some("coll"));
        assert!(s.inline_tags.is_empty(), "{:?}", s.inline_tags);
    }

    #[test]
    fn markdown_forms() {
        let s = run("[one](a.md) ![img](p.png) [two *em*](../up.md#x) [web](https://x.org) [top](#t) <https://auto.link/#frag> [ref][r]\n\n[r]: r.md\n");
        assert_eq!(targets(&s), vec![("markdown", "a.md"), ("markdown", "p.png"), ("markdown", "../up.md")]);
        assert_eq!(s.links[0].target_ref_norm, "dir/a.md");
        assert!(s.links[1].embed && !s.links[0].embed && !s.links[2].embed);
        assert_eq!(s.links[1].link_text.as_deref(), Some("img"), "an embedded picture's alt text");
        assert_eq!(s.links[2].target_ref_norm, "up.md");
        assert_eq!(s.links[2].link_text.as_deref(), Some("two em"));
        assert!(s.inline_tags.is_empty(), "{:?}", s.inline_tags);
    }

    #[test]
    fn image_inside_link() {
        let s = run("[![alt #t](i.png)](doc.md)\n");
        assert_eq!(targets(&s), vec![("markdown", "i.png"), ("markdown", "doc.md")]);
        assert_eq!(s.links[0].link_text.as_deref(), Some("alt #t"));
        assert!(s.links[0].embed);
        assert_eq!(s.links[1].link_text, None, "the picture's alt text is not the link's");
        assert!(s.inline_tags.is_empty());
    }

    #[test]
    fn embeds_are_links_that_show_their_target() {
        let s = run("![[Note]] ![[Note#Part]] ![[Note#^b1]] ![[pic.png|300]] ![[pic.png|200x100]] ![[Doc|Shown]]\n");
        let t: Vec<(&str, Option<&str>, Option<&str>, bool)> = s
            .links
            .iter()
            .map(|l| (l.target_ref.as_str(), l.target_anchor.as_deref(), l.link_text.as_deref(), l.embed))
            .collect();
        assert_eq!(
            t,
            vec![
                ("Note", None, None, true),
                ("Note", Some("Part"), None, true),
                ("Note", Some("^b1"), None, true),
                ("pic.png", None, None, true),
                ("pic.png", None, None, true),
                ("Doc", None, Some("Shown"), true),
            ]
        );
        assert!(s.links.iter().all(|l| l.link_type == LinkKind::Wiki));
        assert_eq!((s.links[0].start_col, s.links[0].end_col), (1, 9), "the span starts at the '!'");
    }

    #[test]
    fn block_ids_end_a_line() {
        let body =
            "A paragraph ^p-1\n\n- item ^Item2\n\n| a |\n\n^own\n\nnot^mid here\n\n`code ^c`\n\n```\nx ^fenced\n```\n";
        let s = run(body);
        assert_eq!(s.blocks, vec!["p-1", "item2", "own"]);
    }

    #[test]
    fn nothing_in_code() {
        let body = "```\n[[A]] [b](b.md) #t1\n```\n\n~~~~md\n[[A2]]\n~~~~\n\n    [[B]] #t2\n\n`[[C]]` `#t3` `[d](d.md)`\n\n<div>[[E]] #t4</div>\n\nok [[F]] #t5\n";
        let s = run(body);
        assert_eq!(targets(&s), vec![("wiki", "F")]);
        assert_eq!(s.inline_tags, vec!["t5"]);
        assert_eq!(s.fences, vec![(0, 2), (4, 6)]);
    }

    #[test]
    fn positions_non_ascii() {
        // line 1: "héllo [[Ünï|ß]] x"
        // line 2: "日本 [t](a.md)"
        let body = "héllo [[Ünï|ß]] x\n日本 [t](a.md)\n";
        let idx = LineIndex::new(body);
        let s = scan(body, &idx, "n.md", 5);
        let w = &s.links[0];
        assert_eq!((w.start_line, w.start_col, w.end_line, w.end_col), (5, 7, 5, 15));
        assert_eq!(w.target_ref_norm, "ünï");
        let m = &s.links[1];
        assert_eq!((m.start_line, m.start_col, m.end_line, m.end_col), (6, 4, 6, 12));
    }

    #[test]
    fn multiline_link_position() {
        let body = "a [multi\nline](x.md) b\n";
        let s = run(body);
        let m = &s.links[0];
        assert_eq!((m.start_line, m.start_col, m.end_line, m.end_col), (1, 3, 2, 11));
        assert_eq!(m.link_text.as_deref(), Some("multi line"));
    }

    #[test]
    fn headings() {
        let s = run("# One #\n\ntext\n\nSetext *H*\n---\n\n> # quoted\n\n- # in list\n\n```\n# code\n```\n\n###### Six `c`\n#\n");
        let h: Vec<(u8, usize, usize, &str, bool)> =
            s.headings.iter().map(|h| (h.level, h.start_line, h.end_line, h.text.as_str(), h.atx)).collect();
        assert_eq!(h, vec![(1, 0, 0, "One", true), (2, 4, 5, "Setext H", false), (6, 15, 15, "Six c", true)]);
    }

    #[test]
    fn tags_in_text_and_headings() {
        let s = run("# Title #h1tag\n\nSome #a, **#b** [#c](x.md) #123 http://x.org/p#frag\n\n> quoted #d\n");
        let mut t = s.inline_tags.clone();
        t.sort();
        assert_eq!(t, vec!["a", "b", "c", "d", "h1tag"]);
    }
}
