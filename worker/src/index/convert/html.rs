//! HTML → Markdown with `htmd` (html5ever's parser): the page's main text with its headings,
//! lists, tables, emphasis and links (links stay links, so those that point at notes join
//! the link graph); scripts, styles, navigation, forms and embedded media dropped. A page that
//! marks its main content (one `<main>`, else one element with `role="main"`, else one
//! `<article>`) gives that content alone: a documentation site's search box, help popup and
//! chapter list are not the page's text. The title is the page's `<title>`, else its first
//! heading.

use super::{non_empty_title, ConvertError, Converted};
use crate::index::ingest;
use markup5ever_rcdom::{Handle, NodeData};

/// Elements whose content is never the page's text.
const DROPPED: &[&str] = &[
    "head", "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "button", "select",
    "iframe", "object", "embed", "svg", "canvas", "video", "audio", "img", "picture",
];

/// Elements nested deeper than this are refused: parsing and converting recurse per level,
/// and a page this deep is generated, not written.
pub const MAX_DEPTH: usize = 2_000;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let html = ingest::decode_text(bytes).map_err(|e| ConvertError::Html(e.to_string()))?;
    if let Some(refused) = too_deep(&html, &[]) {
        return Err(ConvertError::Html(refused));
    }
    let converter = htmd::HtmlToMarkdown::builder().skip_tags(DROPPED.to_vec()).build();
    let page = converter.html_to_tree(&html).map_err(|e| ConvertError::Html(e.to_string()))?;
    // A main element left empty (filled by a script) does not hide the page's text.
    let text = main_content(&page)
        .map(|main| converter.tree_to_markdown(&main))
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| converter.tree_to_markdown(&page));
    let title = page_title(&html)
        .and_then(|t| htmd::HtmlToMarkdown::new().convert(&t).ok())
        .and_then(|t| non_empty_title(&t))
        .or_else(|| first_heading(&text));
    Ok(Converted { title, text })
}

/// The element a page marks as its main content: its one `<main>`, else its one element with
/// `role="main"`, else its one `<article>`. None when the page marks none, or several.
fn main_content(page: &Handle) -> Option<Handle> {
    let only = |found: Vec<Handle>| if found.len() == 1 { found.into_iter().next() } else { None };
    let named = |tag: &'static str| move |name: &str, _: &Handle| name == tag;
    let role_main = |_: &str, n: &Handle| match &n.data {
        NodeData::Element { attrs, .. } => {
            attrs.borrow().iter().any(|a| &*a.name.local == "role" && &*a.value == "main")
        }
        _ => false,
    };
    only(elements(page, &named("main")))
        .or_else(|| only(elements(page, &role_main)))
        .or_else(|| only(elements(page, &named("article"))))
}

/// The elements under `node` that `wanted` accepts (by local name, and the node for its
/// attributes), outermost only: an accepted element's descendants are not searched.
fn elements(node: &Handle, wanted: &dyn Fn(&str, &Handle) -> bool) -> Vec<Handle> {
    let mut found = Vec::new();
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        if let NodeData::Element { name, .. } = &n.data {
            if wanted(&name.local, &n) {
                found.push(n.clone());
                continue;
            }
        }
        stack.extend(n.children.borrow().iter().rev().cloned());
    }
    found
}

/// The inner HTML of the first `<title>` element.
fn page_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    Some(html[start..end].to_string())
}

fn first_heading(markdown: &str) -> Option<String> {
    markdown.lines().find_map(|l| {
        l.trim_start().strip_prefix('#').map(|h| h.trim_start_matches('#').trim()).and_then(non_empty_title)
    })
}

/// Why `html` is refused before it is parsed, if it is: its elements nest deeper than
/// [`MAX_DEPTH`] (see [`nesting_depth`] for `unclosed`). The parser's work grows with the
/// square of the depth: a 100,000-deep page kept a worker busy for a minute.
pub(in crate::index::convert) fn too_deep(html: &str, unclosed: &[&str]) -> Option<String> {
    let depth = nesting_depth(html, unclosed);
    (depth > MAX_DEPTH).then(|| format!("elements nested {depth} deep, over the limit of {MAX_DEPTH}"))
}

/// How deep elements nest, counted from the tags as written: an opening tag goes one level
/// down, a closing one up; void and self-closed elements do not nest. Unclosed elements (a
/// sloppy `<p>`) count as nested, so this is an upper bound of what the parser builds, except
/// for the elements named in `unclosed`, which are not counted at all: a format that never
/// closes them (a bookmark file's `<DT>` and `<p>`) and in which the parser closes each at its
/// next sibling.
fn nesting_depth(html: &str, unclosed: &[&str]) -> usize {
    const VOID: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
    ];
    let bytes = html.as_bytes();
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let at = i + off + 1;
        i = at;
        let closing = bytes.get(at) == Some(&b'/');
        let name_start = if closing { at + 1 } else { at };
        let name: String = html[name_start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() || unclosed.contains(&name.as_str()) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
            continue;
        }
        let end = html[at..].find('>').map_or(html.len(), |e| at + e);
        if VOID.contains(&name.as_str()) || html[..end].ends_with('/') {
            continue;
        }
        depth += 1;
        deepest = deepest.max(depth);
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_text_headings_and_links_without_scripts_or_navigation() {
        let page = br#"<!doctype html><html><head><title>Tea &amp; Biscuits</title><style>p{color:red}</style>
<script>var secret = "scriptword";</script></head>
<body><nav><a href="/">Home</a> navword</nav>
<h1>Brewing</h1><p>Steep the <b>leaves</b> for three minutes. See <a href="kettle.md">the kettle note</a>.</p>
<ul><li>Green</li><li>Black</li></ul><footer>footerword</footer></body></html>"#;
        let c = convert(page).expect("converts");
        assert_eq!(c.title.as_deref(), Some("Tea & Biscuits"));
        assert!(c.text.contains("# Brewing"), "{}", c.text);
        assert!(c.text.contains("Steep the **leaves** for three minutes."), "{}", c.text);
        assert!(c.text.contains("[the kettle note](kettle.md)"), "{}", c.text);
        assert!(c.text.contains("Green") && c.text.contains("Black"), "{}", c.text);
        for dropped in ["scriptword", "navword", "footerword", "color:red"] {
            assert!(!c.text.contains(dropped), "{dropped} in {}", c.text);
        }
    }

    #[test]
    fn a_page_that_marks_its_main_content_gives_that_alone() {
        let page = br#"<html><head><title>Build Performance</title></head><body>
<div id="help-popup"><h2>Keyboard shortcuts</h2><p>Press S to search</p></div>
<div class="sidebar"><ol><li>Introduction</li><li>Chapter list</li></ol></div>
<main><h1>Build Performance</h1><p>We recommend at most <code>8</code> threads.</p></main></body></html>"#;
        let c = convert(page).expect("converts");
        assert!(c.text.contains("# Build Performance") && c.text.contains("at most `8` threads"), "{}", c.text);
        for dropped in ["Keyboard shortcuts", "Press S", "Chapter list"] {
            assert!(!c.text.contains(dropped), "{dropped} in {}", c.text);
        }
        let role = convert(br#"<div>menu</div><div role="main"><p>body text</p></div>"#).expect("converts");
        assert_eq!(role.text.trim(), "body text");
        // Two articles (a list of posts): none of them is the page.
        let posts =
            convert(b"<p>intro</p><article><p>one</p></article><article><p>two</p></article>").expect("converts");
        assert!(
            posts.text.contains("intro") && posts.text.contains("one") && posts.text.contains("two"),
            "{}",
            posts.text
        );
    }

    #[test]
    fn the_first_heading_titles_a_page_without_a_title() {
        let c = convert(b"<h2>Only Heading</h2><p>text</p>").expect("converts");
        assert_eq!(c.title.as_deref(), Some("Only Heading"));
        // Latin-1 bytes decode by the stated fallback.
        let c = convert(b"<p>caf\xe9</p>").expect("converts");
        assert!(c.text.contains("caf\u{e9}"), "{}", c.text);
    }

    #[test]
    fn deeply_nested_pages_are_refused_before_parsing() {
        let deep = "<div>".repeat(MAX_DEPTH + 10);
        assert!(matches!(convert(deep.as_bytes()), Err(ConvertError::Html(_))));
        assert_eq!(nesting_depth("<p>a<br>b<img src=x/></p><div><span/></div>", &[]), 1);
        assert_eq!(nesting_depth("<div><div><p>x</p></div></div>", &[]), 3);
        assert_eq!(nesting_depth("<dl><p><dt><a>x</a><dt><a>y</a></dl><p>", &["p", "dt"]), 2);
    }
}
