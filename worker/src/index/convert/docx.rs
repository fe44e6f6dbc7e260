//! DOCX → text with `zip` and `quick-xml`: the paragraphs of `word/document.xml` (one per
//! line, blank lines between), heading paragraphs as `#` lines, and the title from
//! `docProps/core.xml` (`dc:title`), else the first heading, else the first line.

use super::package::{attr, element_text, resolve_ref, Package};
use super::{first_line_title, non_empty_title, ConvertError, Converted};
use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::HashMap;

/// The main part of a DOCX document.
pub(super) const DOCUMENT: &str = "word/document.xml";
const CORE: &str = "docProps/core.xml";
const STYLES: &str = "word/styles.xml";

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut package = Package::open(bytes, ConvertError::Docx)?;
    let document = package.part(DOCUMENT)?.ok_or_else(|| ConvertError::Docx(format!("{DOCUMENT} is missing")))?;
    // The optional parts only improve the result: a broken one is ignored.
    let styles = package.optional_part(STYLES)?.map(|x| heading_styles(&x)).unwrap_or_default();
    let core_title =
        package.optional_part(CORE)?.and_then(|x| element_text(&x, "title")).and_then(|t| non_empty_title(&t));
    let body = document_text(&document, &styles)?;
    let title = core_title.or(body.first_heading.clone()).or_else(|| first_line_title(&body.text));
    Ok(Converted { title, text: body.text })
}

/// The heading level a style name or id stands for: `heading 2` / `Heading2` → 2, `Title` → 1.
fn heading_level(style: &str) -> Option<u8> {
    let s = style.trim().to_ascii_lowercase();
    if s == "title" {
        return Some(1);
    }
    let digits = s.strip_prefix("heading")?.trim_start();
    let level: u8 = digits.parse().ok()?;
    (1..=9).contains(&level).then_some(level.min(6))
}

/// Style id → heading level, from `word/styles.xml` (style names are stable across the
/// languages Word is used in; style ids are not).
fn heading_styles(xml: &str) -> HashMap<String, u8> {
    let mut out = HashMap::new();
    let mut reader = Reader::from_str(xml);
    let mut current: Option<String> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "style" => current = attr(&e, "styleId"),
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "name" => {
                if let (Some(id), Some(level)) = (&current, attr(&e, "val").as_deref().and_then(heading_level)) {
                    out.insert(id.clone(), level);
                }
            }
            Ok(Event::End(e)) if e.local_name().as_ref() == "style" => current = None,
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

struct Body {
    text: String,
    first_heading: Option<String>,
}

/// The paragraphs of `word/document.xml`: `w:t` text, `w:tab` as a tab, `w:br`/`w:cr` as a
/// line break; deleted text, field codes, `mc:Fallback` copies and other markup are left out.
/// A paragraph nested in another (a text box) becomes a paragraph of its own.
fn document_text(xml: &str, styles: &HashMap<String, u8>) -> Result<Body, ConvertError> {
    let mut reader = Reader::from_str(xml);
    let mut text = String::new();
    let mut first_heading = None;
    // The open paragraphs, innermost last: (text, heading level).
    let mut open: Vec<(String, Option<u8>)> = Vec::new();
    let mut in_text = false;
    let mut fallback_depth = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| ConvertError::Docx(format!("{DOCUMENT}: {e}")))?;
        match &event {
            Event::Start(e) if e.local_name().as_ref() == "Fallback" => fallback_depth += 1,
            Event::End(e) if e.local_name().as_ref() == "Fallback" => fallback_depth = fallback_depth.saturating_sub(1),
            Event::Eof => break,
            _ if fallback_depth > 0 => {}
            Event::Start(e) if e.local_name().as_ref() == "p" => open.push((String::new(), None)),
            Event::Start(e) if e.local_name().as_ref() == "t" => in_text = true,
            Event::Start(e) | Event::Empty(e) => {
                let Some((para, level)) = open.last_mut() else { continue };
                match e.local_name().as_ref() {
                    "pStyle" => {
                        if let Some(id) = attr(e, "val") {
                            *level = styles.get(&id).copied().or_else(|| heading_level(&id));
                        }
                    }
                    "tab" => para.push('\t'),
                    "br" | "cr" => para.push('\n'),
                    _ => {}
                }
            }
            Event::Text(t) if in_text => push_to(&mut open, &t.xml10_content()),
            Event::CData(t) if in_text => push_to(&mut open, &t.xml10_content()),
            Event::GeneralRef(r) if in_text => push_to(&mut open, &resolve_ref(r)),
            Event::End(e) if e.local_name().as_ref() == "t" => in_text = false,
            Event::End(e) if e.local_name().as_ref() == "p" => {
                if let Some((para, level)) = open.pop() {
                    push_paragraph(&mut text, &mut first_heading, &para, level);
                }
            }
            _ => {}
        }
    }
    Ok(Body { text, first_heading })
}

fn push_to(open: &mut [(String, Option<u8>)], s: &str) {
    if let Some((para, _)) = open.last_mut() {
        para.push_str(s);
    }
}

fn push_paragraph(text: &mut String, first_heading: &mut Option<String>, para: &str, level: Option<u8>) {
    let trimmed = para.trim();
    if trimmed.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push('\n');
    }
    match level {
        Some(n) => {
            let heading = crate::index::ingest::collapse_whitespace(trimmed);
            if first_heading.is_none() {
                *first_heading = non_empty_title(&heading);
            }
            text.push_str(&"#".repeat(usize::from(n)));
            text.push(' ');
            text.push_str(&heading);
        }
        None => text.push_str(trimmed),
    }
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_headings_and_core_title() {
        let bytes = testkit::docx(
            Some("Design Review"),
            &[
                (Some("Heading1"), "Overview"),
                (None, "The pangolin service & its <friends>."),
                (Some("Heading2"), "Details"),
                (None, "Second paragraph."),
            ],
        );
        let c = convert(&bytes).expect("converts");
        assert_eq!(c.title.as_deref(), Some("Design Review"));
        assert_eq!(c.text, "# Overview\n\nThe pangolin service & its <friends>.\n\n## Details\n\nSecond paragraph.\n");
    }

    #[test]
    fn title_falls_back_to_first_heading_then_first_line() {
        let with_heading = testkit::docx(None, &[(None, "preface words"), (Some("Heading1"), "Real Title")]);
        assert_eq!(convert(&with_heading).expect("converts").title.as_deref(), Some("Real Title"));
        let plain = testkit::docx(Some("  "), &[(None, ""), (None, "First words here"), (None, "more")]);
        assert_eq!(convert(&plain).expect("converts").title.as_deref(), Some("First words here"));
        let empty = testkit::docx(None, &[]);
        let c = convert(&empty).expect("converts");
        assert_eq!((c.title, c.text.as_str()), (None, ""));
    }

    #[test]
    fn runs_tabs_breaks_entities_and_deleted_text() {
        let body =
            "<w:p><w:r><w:t>Hel</w:t></w:r><w:r><w:t>lo</w:t><w:tab/><w:t>w&#246;rld</w:t><w:br/><w:t>next</w:t></w:r>\
                    <w:del><w:r><w:delText>gone</w:delText></w:r></w:del>\
                    <w:r><w:instrText>PAGE</w:instrText></w:r></w:p>";
        let c = convert(&testkit::docx_with_body(None, body)).expect("converts");
        assert_eq!(c.text, "Hello\twörld\nnext\n");
    }

    #[test]
    fn text_boxes_are_paragraphs_and_fallback_copies_are_skipped() {
        let body = "<w:p><w:r><w:t>outer start</w:t></w:r><w:r><mc:AlternateContent><mc:Choice><w:txbxContent>\
                    <w:p><w:r><w:t>boxed words</w:t></w:r></w:p></w:txbxContent></mc:Choice>\
                    <mc:Fallback><w:p><w:r><w:t>boxed words</w:t></w:r></w:p></mc:Fallback></mc:AlternateContent></w:r>\
                    <w:r><w:t> outer end</w:t></w:r></w:p>";
        let c = convert(&testkit::docx_with_body(None, body)).expect("converts");
        assert_eq!(c.text, "boxed words\n\nouter start outer end\n");
    }

    #[test]
    fn localized_heading_styles_come_from_styles_xml() {
        let doc = "<?xml version=\"1.0\"?><w:document xmlns:w=\"w\"><w:body><w:p><w:pPr><w:pStyle w:val=\"berschrift1\"/></w:pPr><w:r><w:t>Einleitung</w:t></w:r></w:p></w:body></w:document>";
        let styles = "<?xml version=\"1.0\"?><w:styles xmlns:w=\"w\"><w:style w:type=\"paragraph\" w:styleId=\"berschrift1\"><w:name w:val=\"heading 1\"/></w:style></w:styles>";
        let bytes = testkit::zip_parts(&[("word/document.xml", doc.into()), ("word/styles.xml", styles.into())]);
        let c = convert(&bytes).expect("converts");
        assert_eq!(c.text, "# Einleitung\n");
        assert_eq!(c.title.as_deref(), Some("Einleitung"));
    }

    #[test]
    fn heading_levels() {
        assert_eq!(heading_level("Heading1"), Some(1));
        assert_eq!(heading_level("heading 3"), Some(3));
        assert_eq!(heading_level("Heading9"), Some(6));
        assert_eq!(heading_level("Title"), Some(1));
        assert_eq!(heading_level("Heading0"), None);
        assert_eq!(heading_level("Normal"), None);
        assert_eq!(heading_level("HeadingX"), None);
    }

    #[test]
    fn broken_archives_are_errors() {
        assert!(matches!(convert(b"PK\x03\x04 not really a zip"), Err(ConvertError::Docx(_))));
        let no_document = testkit::zip_parts(&[("word/other.xml", "<x/>".into())]);
        assert!(matches!(convert(&no_document), Err(ConvertError::Docx(m)) if m.contains("missing")));
        let bad_xml = testkit::zip_parts(&[("word/document.xml", "<w:document><w:body><w:p></w:body>".into())]);
        assert!(matches!(convert(&bad_xml), Err(ConvertError::Docx(_))));
        let truncated = testkit::docx(None, &[(None, "words")]);
        assert!(convert(&truncated[..truncated.len() / 2]).is_err());
    }
}
