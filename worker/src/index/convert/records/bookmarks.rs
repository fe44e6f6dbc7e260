//! Bookmarks. A browser's bookmark export (the Netscape bookmark file every browser writes:
//! `<!DOCTYPE NETSCAPE-Bookmark-file-1>`, saved as `.html`) is a document per bookmark: its
//! name as title and heading, its address, the folders it sits in (`Bookmarks bar / Rust`), the
//! time it was added as the document's date, its tags (Firefox's `TAGS`) and its description
//! (`<DD>`) as text. A bookmark's key is made of its address, so it keeps its path when others
//! are added or moved around it (the same address twice gets `-2`). An Internet shortcut
//! (`.url`) is one bookmark.

use super::{epoch_to_rfc3339, key_from_id, unique_keys, FrontMatter, Record, Rendered};
use crate::index::convert::{non_empty_title, ConvertError, Converted};
use markup5ever_rcdom::{Handle, NodeData};
use std::io::Read;
use std::path::Path;

/// Folders nested deeper than this are read as if they were at this depth's folder.
const MAX_FOLDER_DEPTH: usize = 64;
/// Elements nested deeper than this are not read (the walk recurses per level: a hostile file
/// of a million nested lists must not overflow the converter's stack).
const MAX_ELEMENT_DEPTH: usize = 512;
/// The elements a bookmark file opens and never closes (each is closed by the next).
const UNCLOSED: &[&str] = &["p", "dt", "dd"];
/// How far into a page its doctype is looked for.
const SNIFF_BYTES: u64 = 1024;

/// Whether the file at `abs` is a Netscape bookmark file (by its doctype, in its first bytes).
pub fn is_bookmark_file(abs: &Path) -> bool {
    let mut head = Vec::new();
    let read = std::fs::File::open(abs).and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut head));
    read.is_ok() && is_bookmark_page(&head)
}

/// The doctype first (after a byte-order mark, white space and comments).
fn is_bookmark_page(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    while let Some(comment) = rest.strip_prefix("<!--") {
        rest = comment.split_once("-->").map_or("", |(_, after)| after).trim_start();
    }
    rest.starts_with("<!doctype netscape-bookmark-file")
}

/// One bookmark, as the export holds it.
#[derive(Debug, Default)]
pub(in crate::index::convert) struct Bookmark {
    folders: Vec<String>,
    address: String,
    name: String,
    added: Option<i64>,
    tags: Vec<String>,
    description: String,
    raw: String,
}

impl Record for Bookmark {
    fn raw(&self) -> &[u8] {
        self.raw.as_bytes()
    }

    fn convert(&self) -> Result<Converted, ConvertError> {
        let title = non_empty_title(&self.name);
        let mut fields = vec![("Address".to_string(), format!("<{}>", self.address))];
        if !self.folders.is_empty() {
            fields.push(("Folder".to_string(), self.folders.join(" / ")));
        }
        let date = self.added.and_then(epoch_to_rfc3339);
        Rendered {
            front: FrontMatter { title: title.clone(), author: None, date, tags: self.tags.clone() },
            heading: title.unwrap_or_else(|| self.address.clone()),
            fields,
            text: self.description.clone(),
        }
        .into_converted()
    }
}

/// The export's bookmarks, in file order, keyed by their addresses.
pub(in crate::index::convert) fn records(bytes: &[u8]) -> Result<Vec<(String, Bookmark)>, ConvertError> {
    let html = crate::index::ingest::decode_text(bytes).map_err(|e| ConvertError::Records(e.to_string()))?;
    if !is_bookmark_page(&bytes[..bytes.len().min(SNIFF_BYTES as usize)]) {
        return Err(ConvertError::Records("not a bookmark file (no NETSCAPE-Bookmark-file doctype)".into()));
    }
    if let Some(refused) = crate::index::convert::html::too_deep(&html, UNCLOSED) {
        return Err(ConvertError::Records(refused));
    }
    let tree = htmd::HtmlToMarkdown::new().html_to_tree(&html).map_err(|e| ConvertError::Records(e.to_string()))?;
    let mut found = Vec::new();
    collect(&tree, 0, &mut Vec::new(), &mut found);
    let records = found
        .into_iter()
        .take(super::MAX_RECORDS)
        .map(|mut b| {
            b.raw = [
                b.folders.join("/"),
                b.address.clone(),
                b.name.clone(),
                format!("{:?}", b.added),
                b.tags.join(","),
                b.description.clone(),
            ]
            .join("\n");
            let digest = crate::digest::sha256_hex(b.address.as_bytes());
            let key = key_from_id(&digest[..12], "url").unwrap_or_else(|| "bookmark.url".into());
            (key, b)
        })
        .collect();
    Ok(unique_keys(records))
}

/// What the last `<DT>` among a list's entries was: a `<DD>` after it belongs to it.
enum Last {
    None,
    Bookmark(usize),
    Folder(String),
}

/// The bookmarks under `node`, in document order. A `<DT>` holds a bookmark (`<A>`) or a
/// folder (`<H3>`, its list inside the `<DT>` or, after a folder's description, inside the
/// `<DD>` that follows).
fn collect(node: &Handle, depth: usize, folders: &mut Vec<String>, out: &mut Vec<Bookmark>) {
    if depth > MAX_ELEMENT_DEPTH {
        return;
    }
    let mut last = Last::None;
    for child in node.children.borrow().iter() {
        let Some(tag) = element_name(child) else { continue };
        match tag.as_str() {
            "dt" => {
                last = Last::None;
                if let Some(a) = first_child_element(child, "a") {
                    if let Some(b) = bookmark(&a, folders) {
                        out.push(b);
                        last = Last::Bookmark(out.len() - 1);
                    }
                }
                let folder = first_child_element(child, "h3").map(|h| text_of(&h));
                descend(child, depth, folder.clone(), folders, out);
                if let Some(name) = folder {
                    last = Last::Folder(name);
                }
            }
            "dd" => match &last {
                Last::Bookmark(i) => {
                    out[*i].description = text_of(child);
                    // A list inside the description is read as the folder's own.
                    descend(child, depth, None, folders, out);
                }
                Last::Folder(name) => descend(child, depth, Some(name.clone()), folders, out),
                Last::None => descend(child, depth, None, folders, out),
            },
            _ => descend(child, depth, None, folders, out),
        }
    }
}

fn descend(node: &Handle, depth: usize, folder: Option<String>, folders: &mut Vec<String>, out: &mut Vec<Bookmark>) {
    // Past MAX_FOLDER_DEPTH what is inside is read at the deepest folder, not nested further.
    let pushed = match folder {
        Some(name) if folders.len() < MAX_FOLDER_DEPTH => {
            folders.push(name);
            true
        }
        _ => false,
    };
    collect(node, depth + 1, folders, out);
    if pushed {
        folders.pop();
    }
}

fn bookmark(a: &Handle, folders: &[String]) -> Option<Bookmark> {
    let address = attr(a, "href").map(|h| h.trim().to_string()).filter(|h| !h.is_empty())?;
    // Smart bookmarks and separators of some browsers are not pages.
    if address.starts_with("place:") {
        return None;
    }
    let tags = attr(a, "tags")
        .map(|t| t.split(',').map(str::trim).filter(|t| !t.is_empty()).map(String::from).collect())
        .unwrap_or_default();
    Some(Bookmark {
        folders: folders.to_vec(),
        name: text_of(a),
        added: attr(a, "add_date").and_then(|d| d.trim().parse().ok()),
        address,
        tags,
        ..Bookmark::default()
    })
}

fn element_name(node: &Handle) -> Option<String> {
    match &node.data {
        NodeData::Element { name, .. } => Some(name.local.to_string()),
        _ => None,
    }
}

fn first_child_element(node: &Handle, tag: &str) -> Option<Handle> {
    node.children.borrow().iter().find(|c| element_name(c).as_deref() == Some(tag)).cloned()
}

fn attr(node: &Handle, name: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => {
            attrs.borrow().iter().find(|a| a.name.local.eq_ignore_ascii_case(&name.into())).map(|a| a.value.to_string())
        }
        _ => None,
    }
}

/// The text directly inside an element and its inline children, not inside nested lists.
fn text_of(node: &Handle) -> String {
    let mut out = String::new();
    let mut stack = vec![node.clone()];
    while let Some(n) = stack.pop() {
        match &n.data {
            NodeData::Text { contents } => out.push_str(&contents.borrow()),
            NodeData::Element { name, .. } if n.children.borrow().is_empty() || &*name.local == "dl" => {}
            _ => stack.extend(n.children.borrow().iter().rev().cloned()),
        }
    }
    crate::index::ingest::collapse_whitespace(&out)
}

/// An Internet shortcut (`.url`, `[InternetShortcut]` with a `URL=` line) as a bookmark.
pub fn shortcut(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = crate::index::ingest::decode_text(bytes).map_err(|e| ConvertError::Records(e.to_string()))?;
    let mut in_section = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line.eq_ignore_ascii_case("[InternetShortcut]");
        } else if let Some(url) = line.strip_prefix("URL=").or_else(|| line.strip_prefix("url=")) {
            if in_section && !url.trim().is_empty() {
                let mark = Bookmark { address: url.trim().to_string(), ..Bookmark::default() };
                let converted = mark.convert()?;
                // Titled by its file's name, as the desktop shows it.
                return Ok(Converted { title: None, text: converted.text });
            }
        }
    }
    Err(ConvertError::Records("not an Internet shortcut: no URL= line under [InternetShortcut]".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const EXPORT: &str = r#"<!DOCTYPE NETSCAPE-Bookmark-file-1>
<!-- This is an automatically generated file. -->
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 ADD_DATE="1700000000" PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>
    <DL><p>
        <DT><A HREF="https://docs.rs/tantivy" ADD_DATE="1700000000" TAGS="rust,search">tantivy - Rust</A>
        <DD>Full-text search engine library &amp; more
        <DT><H3>Reading</H3>
        <DD>Things to read later
        <DL><p>
            <DT><A HREF="https://example.com/essay">An essay</A>
        </DL><p>
    </DL><p>
    <DT><A HREF="https://example.com/essay">An essay, again</A>
    <DT><A HREF="place:sort=8">Recent tags</A>
</DL><p>
"#;

    #[test]
    fn a_document_per_bookmark_with_its_folders() {
        let parts = super::super::into_parts(records(EXPORT.as_bytes()).unwrap(), &HashMap::new(), || {
            ConvertError::Records("none".into())
        })
        .unwrap();
        assert_eq!(parts.len(), 3, "{parts:?}");
        let tantivy = parts[0].converted.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(tantivy.title.as_deref(), Some("tantivy - Rust"));
        let t = &tantivy.text;
        assert!(t.contains("Address: <https://docs.rs/tantivy>"), "{t}");
        assert!(t.contains("Folder: Bookmarks bar\n") || t.contains("Folder: Bookmarks bar  \n"), "{t}");
        assert!(t.contains("date: 2023-11-14T22:13:20Z"), "{t}");
        assert!(t.contains("- rust") && t.contains("- search"), "{t}");
        assert!(t.contains("Full-text search engine library & more"), "{t}");
        let essay = parts[1].converted.as_ref().unwrap().as_ref().unwrap();
        assert!(essay.text.contains("Folder: Bookmarks bar / Reading"), "{}", essay.text);
        assert!(parts[0].key.ends_with(".url") && parts[1].key.ends_with(".url"));
        assert_eq!(parts[2].key, parts[1].key.replace(".url", "-2.url"));
    }

    #[test]
    fn pages_and_shortcuts() {
        assert!(is_bookmark_page(b"\xef\xbb\xbf<!DOCTYPE NETSCAPE-Bookmark-file-1>"));
        assert!(!is_bookmark_page(b"<!doctype html><p>bookmarks</p>"));
        assert!(!is_bookmark_page(b"<p>how to read <!DOCTYPE NETSCAPE-Bookmark-file-1></p>"));
        let deep =
            format!("<!DOCTYPE NETSCAPE-Bookmark-file-1>{}<DT><A HREF=\"https://x\">x</A>", "<div>".repeat(100_000));
        assert!(
            matches!(records(deep.as_bytes()), Err(ConvertError::Records(e)) if e.contains("nested")),
            "a hostile nesting is refused before it is parsed"
        );
        let many: String = (0..3_000).map(|i| format!("<DT><A HREF=\"https://x/{i}\">{i}</A>\n<p>")).collect();
        let export = format!("<!DOCTYPE NETSCAPE-Bookmark-file-1><DL><p>{many}</DL><p>");
        assert_eq!(records(export.as_bytes()).map(|r| r.len()).ok(), Some(3_000), "unclosed <DT>s do not nest");
        assert!(records(b"<!doctype html><p>x</p>").is_err());
        let c = shortcut(b"[InternetShortcut]\r\nURL=https://example.com/a\r\nIconIndex=0\r\n").unwrap();
        assert_eq!(c.title, None);
        assert!(c.text.contains("Address: <https://example.com/a>"), "{}", c.text);
        assert!(shortcut(b"[Other]\nURL=https://x\n").is_err());
    }
}
