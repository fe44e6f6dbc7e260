//! A note's Markdown as safe HTML for the reader.
//!
//! Safe by construction rather than by filtering: raw HTML in a note is shown as text (no
//! tag of the note's ever reaches the page), link targets are rewritten to workspace links
//! or kept only for `http`, `https` and `mailto`, and images load only through
//! `/api/doc-asset` (a remote image becomes a link, so reading a note makes no request
//! off the machine).

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use pulldown_cmark::{html, CowStr, Event, LinkType, MetadataBlockKind, Options, Parser, Tag, TagEnd};
use std::collections::HashMap;

/// Where the links of one note go: its outgoing links as the worker resolved them.
#[derive(Default)]
pub struct LinkTargets {
    by_ref: HashMap<String, Option<String>>,
}

impl LinkTargets {
    /// `target` as written (and lower-cased) → the resolved `svc://` URI, `None` when broken.
    pub fn insert(&mut self, target: &str, resolved_uri: Option<String>) {
        self.by_ref.entry(target.to_string()).or_insert_with(|| resolved_uri.clone());
        self.by_ref.entry(target.to_lowercase()).or_insert(resolved_uri);
    }

    /// `Some(Some(uri))` resolved, `Some(None)` a known broken link, `None` unknown.
    fn lookup(&self, dest: &str) -> Option<Option<&str>> {
        let base = dest.split('#').next().unwrap_or(dest);
        let decoded = percent_encoding::percent_decode_str(base).decode_utf8_lossy();
        let after_colon = base.split_once(':').map(|(_, t)| t).unwrap_or(base);
        let keys = [dest, base, decoded.as_ref(), after_colon];
        let found = keys.iter().flat_map(|k| [k.to_string(), k.to_lowercase()]).find_map(|k| self.by_ref.get(&k));
        found.map(|v| v.as_deref())
    }
}

/// The rendered note.
pub struct Rendered {
    pub html: String,
    /// The first line of each top-level element of `html`, in order: the reader maps a
    /// citation's `#L<line>` to the element holding it without an anchor element per block.
    pub block_lines: Vec<u32>,
    /// The front matter's top-level `key: value` lines, in order.
    pub front_matter: Vec<(String, String)>,
}

/// The workspace page of a document.
pub fn doc_href(uri: &str) -> String {
    format!("/doc?uri={}", utf8_percent_encode(uri, NON_ALPHANUMERIC))
}

/// `/api/doc-asset` for a note's own file, or for a file beside it (`path`).
pub fn asset_href(doc_uri: &str, path: Option<&str>) -> String {
    let uri = utf8_percent_encode(doc_uri, NON_ALPHANUMERIC);
    match path {
        Some(p) => format!("/api/doc-asset?uri={uri}&path={}", utf8_percent_encode(p, NON_ALPHANUMERIC)),
        None => format!("/api/doc-asset?uri={uri}"),
    }
}

/// Text for an HTML attribute or element (pulldown-cmark's own escaping).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Writing to a `String` cannot fail.
    let _ = pulldown_cmark_escape::escape_html(&mut out, s);
    out
}

/// The id a heading of the note gets on the page: the worker's anchor behind a prefix, so
/// a heading called "Editor" never takes the id of the page's own editor.
pub fn heading_id(anchor: &str) -> String {
    format!("h-{anchor}")
}

/// The id a block of the note (`^id` at a line's end) gets on the page: a prefix of its
/// own, so a block never takes a heading's id.
pub fn block_element_id(id: &str) -> String {
    format!("b-{id}")
}

/// `#…` of a link into a note's section (the heading id of the anchor's slug) or block
/// (`^id`; of a nested `Heading#Sub`, the last part).
fn section_fragment(anchor: &str) -> String {
    use protocol::anchor::{anchor_target, section_anchor, AnchorTarget};
    match anchor_target(anchor) {
        Some(AnchorTarget::Block(id)) => format!("#{}", block_element_id(&id)),
        Some(AnchorTarget::Heading(slug)) => format!("#{}", heading_id(&slug)),
        None => format!("#{}", heading_id(&section_anchor(anchor))),
    }
}

fn has_scheme(dest: &str) -> Option<&str> {
    let (scheme, _) = dest.split_once(':')?;
    let ok = !scheme.is_empty()
        && scheme.len() < 32
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

/// The workspace page of the document at `uri` that the link `dest` resolved to, at the
/// heading or block its `#anchor` names.
fn internal_href(dest: &str, uri: &str) -> String {
    let href = doc_href(uri);
    match dest.split_once('#').map(|(_, a)| a).filter(|a| !a.is_empty()) {
        Some(a) => format!("{href}{}", section_fragment(&percent_encoding::percent_decode_str(a).decode_utf8_lossy())),
        None => href,
    }
}

/// An `<a>` start tag for a link of the note.
fn link_start(dest: &str, wiki: bool, links: &LinkTargets) -> String {
    // A section of this note, wiki (`[[#Part]]`) or Markdown (`[x](#part)`).
    if let Some(a) = dest.strip_prefix('#') {
        return format!("<a href=\"{}\">", escape(&section_fragment(a)));
    }
    if !wiki {
        match has_scheme(dest).map(|s| s.to_ascii_lowercase()) {
            Some(s) if s == "http" || s == "https" || s == "mailto" => {
                return format!("<a href=\"{}\" rel=\"noopener noreferrer\" class=\"external\">", escape(dest));
            }
            Some(s) if s == "svc" => return format!("<a href=\"{}\">", escape(&doc_href(dest))),
            Some(_) => return "<a class=\"blocked\" title=\"link scheme not allowed\">".into(),
            None => {}
        }
    }
    match links.lookup(dest) {
        Some(Some(uri)) => format!("<a href=\"{}\" class=\"internal\">", escape(&internal_href(dest, uri))),
        _ => format!("<a class=\"broken\" title=\"{}\">", escape(&format!("unresolved link: {dest}"))),
    }
}

/// Renders `source` (a Markdown note at `doc_uri`); `anchors` are the worker's section
/// anchors, given to the headings in order so the outline's links land.
pub fn render(source: &str, doc_uri: &str, links: &LinkTargets, anchors: &[String]) -> Rendered {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_WIKILINKS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    // The front matter's text, parsed once at its end (CRLF text comes in several events).
    let mut meta: Option<String> = None;
    let mut front_matter = Vec::new();
    let mut heading = 0usize;
    // Inside an image or an embed: its alt text is collected, then one element is written.
    let mut image: Option<Embed> = None;
    let mut events: Vec<Event<'_>> = Vec::new();
    let lines = LineIndex::new(source);
    let mut block_lines = Vec::new();
    // Open tags: a `Start` (or a rule) at depth 0 is a top-level element of the HTML.
    let mut depth = 0usize;
    let mut in_code = false;
    for (ev, range) in Parser::new_ext(source, opts).into_offset_iter() {
        match &ev {
            Event::Start(Tag::MetadataBlock(_)) => {}
            Event::Start(_) | Event::Rule if depth == 0 => block_lines.push(lines.line_of(range.start)),
            _ => {}
        }
        match &ev {
            Event::Start(tag) => {
                depth += 1;
                in_code |= matches!(tag, Tag::CodeBlock(_));
            }
            Event::End(tag) => {
                depth = depth.saturating_sub(1);
                in_code &= !matches!(tag, TagEnd::CodeBlock);
            }
            _ => {}
        }
        if let Some(embed) = image.as_mut() {
            match ev {
                Event::End(TagEnd::Image) => {
                    let html = embed.html(doc_uri, links);
                    image = None;
                    events.push(Event::Html(CowStr::from(html)));
                }
                Event::Text(t) | Event::Code(t) => embed.alt.push_str(&t),
                _ => {}
            }
            continue;
        }
        match ev {
            Event::Start(Tag::MetadataBlock(MetadataBlockKind::YamlStyle)) => meta = Some(String::new()),
            Event::End(TagEnd::MetadataBlock(_)) => front_matter = front_matter_pairs(&meta.take().unwrap_or_default()),
            Event::Text(t) if meta.is_some() => meta.get_or_insert_with(String::new).push_str(&t),
            // Footnotes keep their pairing under a prefix of their own.
            Event::FootnoteReference(label) => events.push(Event::FootnoteReference(format!("fn-{label}").into())),
            Event::Start(Tag::FootnoteDefinition(label)) => {
                events.push(Event::Start(Tag::FootnoteDefinition(format!("fn-{label}").into())))
            }
            // Raw HTML is shown as text; a block of it as preformatted text (one element, as
            // `block_lines` counts it).
            Event::Start(Tag::HtmlBlock) => events.push(Event::Html(CowStr::from("<pre class=\"raw-html\">"))),
            Event::End(TagEnd::HtmlBlock) => events.push(Event::Html(CowStr::from("</pre>"))),
            Event::Html(h) | Event::InlineHtml(h) => events.push(Event::Text(h)),
            Event::Start(Tag::Heading { level, id: _, classes, attrs }) => {
                let id = anchors.get(heading).map(|a| CowStr::from(heading_id(a)));
                heading += 1;
                events.push(Event::Start(Tag::Heading { level, id, classes, attrs }));
            }
            Event::Start(Tag::Link { link_type, dest_url, .. }) => {
                let wiki = matches!(link_type, LinkType::WikiLink { .. });
                events.push(Event::Html(CowStr::from(link_start(&dest_url, wiki, links))));
            }
            Event::End(TagEnd::Link) => events.push(Event::Html(CowStr::from("</a>"))),
            Event::Start(Tag::Image { link_type, dest_url, .. }) => {
                let wiki = matches!(link_type, LinkType::WikiLink { .. });
                image = Some(Embed { src: dest_url.to_string(), alt: String::new(), wiki });
            }
            // A block id ends its line: the block gets an id a link can land on, and the
            // marker is not shown (as in Obsidian).
            Event::Text(t) if !in_code => match protocol::anchor::block_id_ending_line(source, range.end, &t) {
                Some((at, id)) => {
                    events.push(Event::Text(CowStr::from(t[..at].trim_end().to_string())));
                    let span = format!("<span class=\"block-id\" id=\"{}\"></span>", escape(&block_element_id(&id)));
                    events.push(Event::Html(CowStr::from(span)));
                }
                None => events.push(Event::Text(t)),
            },
            other => events.push(other),
        }
    }
    let mut html_out = String::with_capacity(source.len() + source.len() / 4);
    html::push_html(&mut html_out, events.into_iter());
    Rendered { html: html_out, block_lines, front_matter }
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(source: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line_of(&self, offset: usize) -> u32 {
        let idx = self.starts.partition_point(|&s| s <= offset);
        u32::try_from(idx).unwrap_or(u32::MAX)
    }
}

/// An image or an embed being read: its target, its alt text so far, and whether it is a
/// wiki embed (`![[…]]`, whose target is a name the worker resolved, not a path).
struct Embed {
    src: String,
    alt: String,
    wiki: bool,
}

impl Embed {
    /// The element it becomes: a Markdown image loads through `/api/doc-asset` by its path
    /// beside the note; a wiki embed of a picture loads that picture (wherever the vault keeps
    /// it), of a note links to it (at its heading or block), and of nothing known is broken.
    fn html(&self, doc_uri: &str, links: &LinkTargets) -> String {
        if !self.wiki {
            return image_html(&self.src, &self.alt, doc_uri);
        }
        let name = self.src.split('#').next().unwrap_or(&self.src);
        let shown = if self.alt.is_empty() || self.alt == self.src { name } else { &self.alt };
        let picture = protocol::source_kind::source_kind(name) == Some(protocol::source_kind::SourceKind::Image);
        match links.lookup(&self.src) {
            Some(Some(uri)) if picture => {
                format!("<img src=\"{}\" alt=\"{}\" loading=\"lazy\">", escape(&asset_href(uri, None)), escape(name))
            }
            Some(Some(uri)) => format!(
                "<a href=\"{}\" class=\"internal embed\">{}</a>",
                escape(&internal_href(&self.src, uri)),
                escape(shown)
            ),
            _ => format!(
                "<span class=\"broken embed\" title=\"{}\">{}</span>",
                escape(&format!("unresolved embed: {}", self.src)),
                escape(shown)
            ),
        }
    }
}

fn image_html(src: &str, alt: &str, doc_uri: &str) -> String {
    match has_scheme(src) {
        Some(s) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => format!(
            "<a href=\"{}\" rel=\"noopener noreferrer\" class=\"external remote-image\">[image: {}]</a>",
            escape(src),
            escape(if alt.is_empty() { src } else { alt })
        ),
        Some(_) => format!("<span class=\"blocked\">[image: {}]</span>", escape(alt)),
        None => {
            let path = percent_encoding::percent_decode_str(src).decode_utf8_lossy();
            format!(
                "<img src=\"{}\" alt=\"{}\" loading=\"lazy\">",
                escape(&asset_href(doc_uri, Some(&path))),
                escape(alt)
            )
        }
    }
}

/// Top-level `key: value` lines of a YAML front matter (nested values are shown as written).
fn front_matter_pairs(yaml: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in yaml.lines() {
        if line.starts_with([' ', '\t', '-']) {
            if let Some(last) = out.last_mut() {
                let item = line.trim().trim_start_matches('-').trim();
                if !item.is_empty() {
                    if !last.1.is_empty() {
                        last.1.push_str(", ");
                    }
                    last.1.push_str(item);
                }
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            if !k.trim().is_empty() && !k.trim_start().starts_with('#') {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> LinkTargets {
        let mut l = LinkTargets::default();
        l.insert("Other Note", Some("svc://notes/other note.md".into()));
        l.insert("missing", None);
        l.insert("sub/b.md", Some("svc://notes/sub/b.md".into()));
        l
    }

    #[test]
    fn raw_html_is_text_and_scripts_never_run() {
        let r = render("<script>alert(1)</script>\n\nx <img src=x onerror=alert(1)>", "svc://n/a.md", &links(), &[]);
        assert!(!r.html.contains("<script"), "{}", r.html);
        assert!(!r.html.contains("<img src=x"), "{}", r.html);
        assert!(r.html.contains("&lt;script&gt;"), "{}", r.html);
    }

    #[test]
    fn links_become_workspace_links() {
        let r = render(
            "[[Other Note]] [[missing]] [b](sub/b.md) [w](https://example.org) [j](javascript:alert(1)) [[Other Note#Part|alias]]",
            "svc://notes/a.md",
            &links(),
            &[],
        );
        assert!(r.html.contains("href=\"/doc?uri=svc%3A%2F%2Fnotes%2Fother%20note%2Emd\""), "{}", r.html);
        assert!(r.html.contains("class=\"broken\""), "{}", r.html);
        assert!(r.html.contains("/doc?uri=svc%3A%2F%2Fnotes%2Fsub%2Fb%2Emd"), "{}", r.html);
        assert!(r.html.contains("href=\"https://example.org\" rel=\"noopener noreferrer\""), "{}", r.html);
        assert!(!r.html.contains("javascript:"), "{}", r.html);
        assert!(r.html.contains("other%20note%2Emd#h-part\""), "{}", r.html);
        assert!(r.html.contains(">alias</a>"), "{}", r.html);
    }

    #[test]
    fn images_load_only_through_doc_asset() {
        let r = render("![a cat](img/cat.png) ![remote](https://example.org/x.png)", "svc://n/a.md", &links(), &[]);
        assert!(r
            .html
            .contains("<img src=\"/api/doc-asset?uri=svc%3A%2F%2Fn%2Fa%2Emd&amp;path=img%2Fcat%2Epng\" alt=\"a cat\""));
        assert!(!r.html.contains("<img src=\"https"), "{}", r.html);
    }

    #[test]
    fn wiki_embeds_show_the_picture_or_link_the_note_and_blocks_take_their_ids() {
        let mut l = links();
        l.insert("pic.png", Some("svc://notes/Attachments/pic.png".into()));
        let r = render(
            "![[pic.png|300]] ![[Other Note#^b1]] ![[gone]]\n\nA line ^B1\n\nSee [[#^b1]] and [[Other Note#Part#Sub]].\n\n```\ncode ^c1\n```\n",
            "svc://notes/a.md",
            &l,
            &[],
        );
        assert!(
            r.html.contains("<img src=\"/api/doc-asset?uri=svc%3A%2F%2Fnotes%2FAttachments%2Fpic%2Epng\""),
            "{}",
            r.html
        );
        assert!(r.html.contains("class=\"internal embed\""), "{}", r.html);
        assert!(r.html.contains("other%20note%2Emd#b-b1\""), "{}", r.html);
        assert!(r.html.contains("class=\"broken embed\""), "{}", r.html);
        assert!(r.html.contains("<p>A line<span class=\"block-id\" id=\"b-b1\"></span></p>"), "{}", r.html);
        assert!(r.html.contains("href=\"#b-b1\""), "{}", r.html);
        assert!(r.html.contains("other%20note%2Emd#h-sub\""), "{}", r.html);
        assert!(r.html.contains("code ^c1") && !r.html.contains("b-c1"), "code keeps its text: {}", r.html);
    }

    #[test]
    fn front_matter_is_a_table_and_headings_get_the_worker_anchors() {
        let r = render(
            "---\ntitle: T\ntags:\n  - a\n  - b\n---\n# One\n## Two\n",
            "svc://n/a.md",
            &links(),
            &["one".into(), "two".into()],
        );
        assert_eq!(r.front_matter, vec![("title".into(), "T".into()), ("tags".into(), "a, b".into())]);
        assert!(r.html.contains("<h1 id=\"h-one\">One</h1>"), "{}", r.html);
        assert!(r.html.contains("<h2 id=\"h-two\">Two</h2>"), "{}", r.html);
        assert!(!r.html.contains("title: T"), "{}", r.html);
    }

    #[test]
    fn crlf_front_matter_keeps_its_lists_and_note_ids_never_collide_with_the_page() {
        let md = "---\r\ntitle: T\r\ntags:\r\n  - a\r\n  - b\r\n---\r\n# Editor\r\n\r\nSee [[#My Part]] and [x](#Editor) and a note[^1].\r\n\r\n[^1]: The note.\r\n";
        let r = render(md, "svc://n/a.md", &links(), &["editor".into()]);
        assert_eq!(r.front_matter, vec![("title".into(), "T".into()), ("tags".into(), "a, b".into())]);
        assert!(r.html.contains("<h1 id=\"h-editor\">"), "{}", r.html);
        assert!(!r.html.contains("id=\"editor\""), "{}", r.html);
        assert!(r.html.contains("href=\"#h-editor\""), "{}", r.html);
        assert!(r.html.contains("href=\"#h-my-part\""), "{}", r.html);
        assert!(r.html.contains("id=\"fn-1\""), "{}", r.html);
        assert!(r.html.contains("href=\"#fn-1\""), "{}", r.html);
    }

    #[test]
    fn top_level_elements_know_their_first_line() {
        let md = "---\ntitle: x\n---\npara one\n\n- a\n- b\n\n---\n\n<div>raw\n</div>\n\n```\ncode\n```\n\nline **18**";
        let r = render(md, "svc://n/a.md", &links(), &[]);
        assert_eq!(r.block_lines, vec![4, 6, 9, 11, 14, 18], "{}", r.html);
        // One top-level element per entry: p, ul, hr, pre (raw HTML as text), pre, p.
        let top = ["<p>", "<ul>", "<hr />", "<pre class=\"raw-html\">", "<pre><code>", "<p>"];
        let mut at = 0;
        for tag in top {
            at += r.html[at..].find(tag).unwrap_or_else(|| panic!("{tag} in {}", r.html));
        }
        assert!(r.html.contains("&lt;div&gt;raw"), "{}", r.html);
    }
}
