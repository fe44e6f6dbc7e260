//! The text the keyword index holds for a document, built in one place for a sync and for the
//! index's convergence (after a rebuild, a rename, a reactivation), so what is searchable
//! never depends on which of them indexed the document last.

use protocol::source_kind::SourceKind;
use std::borrow::Cow;

/// The keyword text of a document's body as parsing reads it ([`super::ParsedDoc::body`]:
/// after the front matter, Markdown for the kinds that read as Markdown, an org note's comment
/// lines blank): without link destinations ([`without_link_targets`]) where it is Markdown (a
/// link's text is the note's words, its target an address); as it is for plain text and code.
pub fn keyword_text(body: &str, kind: Option<SourceKind>) -> Cow<'_, str> {
    if kind.is_some_and(super::reads_as_markdown) {
        Cow::Owned(without_link_targets(body))
    } else {
        Cow::Borrowed(body)
    }
}

/// [`keyword_text`] from a stored canonical text (the keyword index's convergence): its body
/// found again as parsing found it, from 1-based line `body_start_line` of the text as
/// Markdown reads it ([`super::as_markdown`]).
pub fn keyword_body(canonical: &str, body_start_line: u32, kind: Option<SourceKind>) -> String {
    match kind.and_then(|k| super::as_markdown(k, canonical)) {
        Some(markdown) => keyword_text(body_of(&markdown, body_start_line), kind).into_owned(),
        None => body_of(canonical, body_start_line).to_string(),
    }
}

/// The canonical text without its front matter: from 1-based line `start` on.
pub fn body_of(canonical: &str, start: u32) -> &str {
    if start <= 1 {
        return canonical;
    }
    let mut line = 1;
    for (i, b) in canonical.bytes().enumerate() {
        if b == b'\n' {
            line += 1;
            if line == start {
                return &canonical[i + 1..];
            }
        }
    }
    ""
}

/// Markdown without the addresses its links point at: `[text](dest "title")` and
/// `![alt](src)` keep their text, a reference definition `[label]: dest` its label,
/// `[[target|alias]]` its alias (`[[Target]]` is its text), and an autolink `<https://…>`
/// goes. Lines stay where they were.
pub fn without_link_targets(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for (i, line) in markdown.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match reference_label(line) {
            Some(label) => out.push_str(label),
            None => inline(line, &mut out),
        }
    }
    out
}

/// `[label]:` of a reference definition line (up to three spaces in), without its destination.
fn reference_label(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if indent > 3 || !rest.starts_with('[') || rest.starts_with("[[") || rest.starts_with("[^") {
        return None;
    }
    let close = rest.find("]:")?;
    (!rest[1..close].contains(']')).then(|| &line[..indent + close + 2])
}

fn inline(line: &str, out: &mut String) {
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        if let Some(end) = rest.strip_prefix("](").and_then(closing_paren) {
            out.push(']');
            i += 2 + end + 1;
            continue;
        }
        if let Some(inner) = rest.strip_prefix("[[").and_then(|r| r.find("]]").map(|c| &r[..c])) {
            let shown = inner.rsplit_once('|').map_or(inner, |(_, alias)| alias);
            out.push_str("[[");
            out.push_str(shown);
            out.push_str("]]");
            i += 2 + inner.len() + 2;
            continue;
        }
        if let Some(inner) = rest.strip_prefix('<').and_then(|r| r.find('>').map(|c| &r[..c])) {
            let address = ["http://", "https://", "mailto:"].iter().any(|s| inner.starts_with(s));
            if address && !inner.contains(char::is_whitespace) {
                i += 1 + inner.len() + 1;
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
}

/// The byte offset of the `)` that closes a link destination starting at `s` (parentheses
/// inside it balanced), if the line has one.
fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_targets_go_and_link_texts_stay() {
        let md = "See [the meeting](../../meetings/2023/meeting-02.md) and ![plan](img/plan(v2).png).\n\
                  [[Beta]], [[notes/gamma|Gamma]] and <https://example.com/meeting-notes>.\n\
                  [ref]: https://example.com/meeting \"Title\"\n\
                  An unclosed [text](oops and a (paren) stay.";
        assert_eq!(
            without_link_targets(md),
            "See [the meeting] and ![plan].\n[[Beta]], [[Gamma]] and .\n[ref]:\nAn unclosed [text](oops and a (paren) stay."
        );
    }

    #[test]
    fn the_keyword_body_starts_after_the_front_matter_and_reads_org_as_markdown() {
        let md = "---\ntitle: x\n---\n# Head\n[a](b.md)\n";
        assert_eq!(keyword_body(md, 4, Some(SourceKind::Markdown)), "# Head\n[a]\n");
        assert_eq!(keyword_body("plain [a](b)", 1, Some(SourceKind::PlainText)), "plain [a](b)");
        let org = "* Head\n# a comment line\nbody\n";
        assert!(!keyword_body(org, 1, Some(SourceKind::Org)).contains("comment"));
        // From a parsed body, the same text as from the stored text.
        let doc = crate::index::ingest::parse(md, "n.md", SourceKind::Markdown);
        assert_eq!(
            keyword_text(&doc.body, Some(SourceKind::Markdown)),
            keyword_body(md, doc.body_start_line, Some(SourceKind::Markdown))
        );
        let doc = crate::index::ingest::parse(org, "n.org", SourceKind::Org);
        assert_eq!(
            keyword_text(&doc.body, Some(SourceKind::Org)),
            keyword_body(org, doc.body_start_line, Some(SourceKind::Org))
        );
    }

    #[test]
    fn body_skips_front_matter_lines() {
        let t = "---\ntitle: x\n---\n# Head\nbody\n";
        assert_eq!(body_of(t, 4), "# Head\nbody\n");
        assert_eq!(body_of(t, 1), t);
        assert_eq!(body_of(t, 99), "");
    }
}
