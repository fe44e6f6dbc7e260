//! Slide decks → Markdown: PPTX (`zip` + `quick-xml` over PresentationML) and ODP (the
//! OpenDocument `content.xml`). A section per slide, `## Slide N: title`, then the slide's
//! text (placeholders in the deck's order, then free text boxes top to bottom, left to
//! right; a table row as `a | b | c`), then its speaker notes under `### Speaker notes`.
//! Footers, dates and slide numbers are left out. The deck's title is its metadata title,
//! else the first slide's title.

use super::package::{attr, element_text, relationships, resolve_ref, resolve_target, Package};
use super::{first_line_title, non_empty_title, ConvertError, Converted};
use crate::index::ingest::collapse_whitespace;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

const PRESENTATION: &str = "ppt/presentation.xml";
const PRESENTATION_RELS: &str = "ppt/_rels/presentation.xml.rels";
const PPTX_CORE: &str = "docProps/core.xml";
/// The content part of an ODP deck.
pub(super) const ODP_CONTENT: &str = "content.xml";
const ODP_META: &str = "meta.xml";
/// Placeholders that repeat on every slide and say nothing of its content.
const CHROME_PLACEHOLDERS: [&str; 5] = ["sldNum", "dt", "ftr", "hdr", "sldImg"];

/// One slide's text.
#[derive(Debug, Default, PartialEq)]
struct Slide {
    title: Option<String>,
    paragraphs: Vec<String>,
    notes: Vec<String>,
}

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut package = Package::open(bytes, ConvertError::Slides)?;
    let names = package.names();
    let (meta_title, slides) = if is_pptx(&names) {
        let meta_title = package.optional_part(PPTX_CORE)?.and_then(|x| element_text(&x, "title"));
        (meta_title, pptx_slides(&mut package, &names)?)
    } else if names.iter().any(|n| n == ODP_CONTENT) {
        let meta_title = package.optional_part(ODP_META)?.and_then(|x| element_text(&x, "title"));
        let content = package.part(ODP_CONTENT)?.unwrap_or_default();
        (meta_title, odp_slides(&content)?)
    } else {
        return Err(ConvertError::Slides(format!("neither {PRESENTATION} (PPTX) nor {ODP_CONTENT} (ODP) is there")));
    };
    let text = render(&slides);
    let title = meta_title
        .and_then(|t| non_empty_title(&t))
        .or_else(|| slides.iter().find_map(|s| s.title.as_deref().and_then(non_empty_title)))
        .or_else(|| first_line_title(&text));
    Ok(Converted { title, text })
}

fn render(slides: &[Slide]) -> String {
    let mut out = String::new();
    for (i, slide) in slides.iter().enumerate() {
        if !out.is_empty() {
            out.push('\n');
        }
        match &slide.title {
            Some(t) => out.push_str(&format!("## Slide {}: {}\n", i + 1, collapse_whitespace(t))),
            None => out.push_str(&format!("## Slide {}\n", i + 1)),
        }
        push_paragraphs(&mut out, &slide.paragraphs);
        if !slide.notes.is_empty() {
            out.push_str("\n### Speaker notes\n");
            push_paragraphs(&mut out, &slide.notes);
        }
    }
    out
}

/// Each paragraph after a blank line.
fn push_paragraphs(out: &mut String, paragraphs: &[String]) {
    for p in paragraphs {
        out.push('\n');
        out.push_str(&as_paragraph(p));
        out.push('\n');
    }
}

/// A paragraph as Markdown text: its lines kept, a leading `#` escaped so that slide text
/// never reads as a heading of the deck.
fn as_paragraph(p: &str) -> String {
    p.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| super::not_a_heading(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The slides of a PPTX deck in the deck's order ([`pptx_slide_parts`]).
fn pptx_slides(package: &mut Package<'_>, names: &[String]) -> Result<Vec<Slide>, ConvertError> {
    let parts = pptx_slide_parts(package, names)?;
    let mut slides = Vec::with_capacity(parts.len());
    for part in parts {
        let Some(xml) = package.part(&part)? else { continue };
        let mut slide = slide_text(&xml, &part)?;
        if let Some(notes_part) = notes_part_of(package, &part)? {
            if let Some(notes_xml) = package.optional_part(&notes_part)? {
                // Notes only add to a slide: broken notes are left out.
                slide.notes = slide_text(&notes_xml, &notes_part).map(|n| n.paragraphs).unwrap_or_default();
            }
        }
        slides.push(slide);
    }
    Ok(slides)
}

/// Whether a package is a PPTX deck (else an ODP one, or neither), by its part names.
pub(super) fn is_pptx(names: &[String]) -> bool {
    names.iter().any(|n| n == PRESENTATION)
}

/// The slide parts of a PPTX deck in the deck's order: `p:sldIdLst` through the
/// presentation's relationships, else by the number in the part's name.
pub(super) fn pptx_slide_parts(package: &mut Package<'_>, names: &[String]) -> Result<Vec<String>, ConvertError> {
    let ordered = package
        .part(PRESENTATION)?
        .zip(package.optional_part(PRESENTATION_RELS)?)
        .map(|(presentation, rels)| {
            let targets = relationships(&rels);
            slide_rel_ids(&presentation)
                .iter()
                .filter_map(|id| targets.get(id))
                .map(|(_, target)| resolve_target("ppt", target))
                .collect::<Vec<_>>()
        })
        .filter(|parts| !parts.is_empty());
    let parts = ordered.unwrap_or_else(|| {
        let mut numbered: Vec<(u32, String)> = names
            .iter()
            .filter_map(|n| {
                let num = n.strip_prefix("ppt/slides/slide")?.strip_suffix(".xml")?.parse().ok()?;
                Some((num, n.clone()))
            })
            .collect();
        numbered.sort();
        numbered.into_iter().map(|(_, n)| n).collect()
    });
    Ok(parts)
}

/// The `r:id`s of `p:sldId` in `ppt/presentation.xml`, in order.
fn slide_rel_ids(xml: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "sldId" => {
                if let Some(id) = prefixed_attr(&e, "id") {
                    out.push(id);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// An attribute by local name that carries a namespace prefix (`r:id`, not `id`).
fn prefixed_attr(e: &BytesStart, local: &str) -> Option<String> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.prefix().is_some() && a.key.local_name().as_ref() == local)
        .and_then(|a| a.normalized_value(XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

/// The notes part of a slide part, through the slide's relationships.
fn notes_part_of(package: &mut Package<'_>, slide_part: &str) -> Result<Option<String>, ConvertError> {
    Ok(package
        .relationships_of(slide_part)?
        .into_values()
        .find(|(kind, _)| kind.ends_with("/notesSlide"))
        .map(|(_, target)| target))
}

/// A shape of a slide while it is read.
#[derive(Default)]
struct Shape {
    placeholder: Option<String>,
    offset: Option<(i64, i64)>,
    paragraphs: Vec<String>,
}

/// The text of a slide (or notes) part: the title placeholder's text as the title, the
/// other shapes' paragraphs in reading order.
fn slide_text(xml: &str, part: &str) -> Result<Slide, ConvertError> {
    let mut reader = Reader::from_str(xml);
    let mut depth = 0usize;
    // The open top-level shape and the depth it opened at.
    let mut shape: Option<(Shape, usize)> = None;
    let mut shapes: Vec<Shape> = Vec::new();
    let mut para: Option<String> = None;
    let mut cells: Option<Vec<String>> = None;
    let mut in_text = false;
    loop {
        let event = reader.read_event().map_err(|e| ConvertError::Slides(format!("{part}: {e}")))?;
        match &event {
            Event::Start(e) => {
                depth += 1;
                let name = e.local_name();
                match name.as_ref() {
                    "sp" | "graphicFrame" | "grpSp" if shape.is_none() => shape = Some((Shape::default(), depth)),
                    "p" if shape.is_some() => para = Some(String::new()),
                    "t" => in_text = true,
                    "tr" => cells = Some(Vec::new()),
                    "tc" => {
                        if let Some(c) = cells.as_mut() {
                            c.push(String::new());
                        }
                    }
                    _ => shape_attrs(e, shape.as_mut()),
                }
            }
            Event::Empty(e) => match e.local_name().as_ref() {
                "br" => {
                    if let Some(p) = para.as_mut() {
                        p.push('\n');
                    }
                }
                _ => shape_attrs(e, shape.as_mut()),
            },
            Event::Text(t) if in_text => push_text(&mut para, &t.xml10_content()),
            Event::CData(t) if in_text => push_text(&mut para, &t.xml10_content()),
            Event::GeneralRef(r) if in_text => push_text(&mut para, &resolve_ref(r)),
            Event::End(e) => {
                match e.local_name().as_ref() {
                    "t" => in_text = false,
                    "p" => {
                        let text = para.take().unwrap_or_default();
                        match (cells.as_mut().and_then(|c| c.last_mut()), shape.as_mut()) {
                            (Some(cell), _) => {
                                if !cell.is_empty() && !text.trim().is_empty() {
                                    cell.push(' ');
                                }
                                cell.push_str(text.trim());
                            }
                            (None, Some((s, _))) if !text.trim().is_empty() => s.paragraphs.push(text),
                            _ => {}
                        }
                    }
                    "tr" => {
                        let row: Vec<String> = cells.take().unwrap_or_default();
                        if let (Some((s, _)), true) = (shape.as_mut(), row.iter().any(|c| !c.is_empty())) {
                            s.paragraphs.push(row.join(" | "));
                        }
                    }
                    _ => {}
                }
                if shape.as_ref().is_some_and(|(_, d)| *d == depth) {
                    if let Some((s, _)) = shape.take() {
                        shapes.push(s);
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(arrange(shapes))
}

/// Records what a shape's own elements say of it: its placeholder kind and its position.
fn shape_attrs(e: &BytesStart, shape: Option<&mut (Shape, usize)>) {
    let Some((s, _)) = shape else { return };
    match e.local_name().as_ref() {
        // A placeholder with no type is the body placeholder.
        "ph" if s.placeholder.is_none() => s.placeholder = Some(attr(e, "type").unwrap_or_else(|| "body".into())),
        "off" if s.offset.is_none() => {
            let coord = |name| attr(e, name).and_then(|v| v.parse::<i64>().ok());
            if let (Some(x), Some(y)) = (coord("x"), coord("y")) {
                s.offset = Some((y, x));
            }
        }
        _ => {}
    }
}

fn push_text(para: &mut Option<String>, s: &str) {
    if let Some(p) = para.as_mut() {
        p.push_str(s);
    }
}

/// The title placeholder's text as the title; the other shapes (chrome left out):
/// placeholders in the deck's order, then shapes with a position top to bottom, left to right.
fn arrange(shapes: Vec<Shape>) -> Slide {
    let mut slide = Slide::default();
    let mut placed: Vec<Shape> = Vec::new();
    for shape in shapes {
        match shape.placeholder.as_deref() {
            Some("title" | "ctrTitle") if slide.title.is_none() => {
                slide.title = Some(collapse_whitespace(&shape.paragraphs.join(" "))).filter(|t| !t.is_empty());
            }
            Some(kind) if CHROME_PLACEHOLDERS.contains(&kind) => {}
            _ if shape.offset.is_none() => slide.paragraphs.extend(shape.paragraphs),
            _ => placed.push(shape),
        }
    }
    placed.sort_by_key(|s| s.offset);
    slide.paragraphs.extend(placed.into_iter().flat_map(|s| s.paragraphs));
    slide
}

/// The slides of an ODP's `content.xml`: one per `draw:page`; the frame of class `title`
/// gives the title, `presentation:notes` the speaker notes.
fn odp_slides(xml: &str) -> Result<Vec<Slide>, ConvertError> {
    let mut reader = Reader::from_str(xml);
    let mut slides: Vec<Slide> = Vec::new();
    let mut in_page = false;
    let mut in_notes = false;
    let mut frame_class: Option<String> = None;
    let mut para: Option<String> = None;
    loop {
        let event = reader.read_event().map_err(|e| ConvertError::Slides(format!("{ODP_CONTENT}: {e}")))?;
        match &event {
            Event::Start(e) => match e.local_name().as_ref() {
                "page" => {
                    in_page = true;
                    slides.push(Slide::default());
                }
                "notes" if in_page => in_notes = true,
                "frame" => frame_class = attr(e, "class"),
                "p" | "h" if in_page => para = Some(String::new()),
                _ => {}
            },
            Event::Empty(e) => {
                let Some(p) = para.as_mut() else { continue };
                match e.local_name().as_ref() {
                    "s" => {
                        let n = attr(e, "c").and_then(|c| c.parse::<usize>().ok()).unwrap_or(1).min(64);
                        p.push_str(&" ".repeat(n));
                    }
                    "tab" => p.push('\t'),
                    "line-break" => p.push('\n'),
                    _ => {}
                }
            }
            Event::Text(t) => push_text(&mut para, &t.xml10_content()),
            Event::CData(t) => push_text(&mut para, &t.xml10_content()),
            Event::GeneralRef(r) => push_text(&mut para, &resolve_ref(r)),
            Event::End(e) => match e.local_name().as_ref() {
                "page" => in_page = false,
                "notes" => in_notes = false,
                "frame" => frame_class = None,
                "p" | "h" => {
                    let text = para.take().unwrap_or_default();
                    let Some(slide) = slides.last_mut().filter(|_| in_page && !text.trim().is_empty()) else {
                        continue;
                    };
                    if in_notes {
                        slide.notes.push(text);
                    } else if frame_class.as_deref() == Some("title") && slide.title.is_none() {
                        slide.title = Some(collapse_whitespace(&text));
                    } else if !matches!(frame_class.as_deref(), Some("page-number" | "footer" | "date-time" | "header"))
                    {
                        slide.paragraphs.push(text);
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(slides)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;

    fn sp(ph: Option<&str>, off: Option<(i64, i64)>, paras: &[&str]) -> String {
        let ph = ph.map(|t| format!(r#"<p:nvPr><p:ph type="{t}"/></p:nvPr>"#)).unwrap_or_default();
        let off = off
            .map(|(x, y)| format!(r#"<p:spPr><a:xfrm><a:off x="{x}" y="{y}"/></a:xfrm></p:spPr>"#))
            .unwrap_or_default();
        let paras: String = paras.iter().map(|p| format!("<a:p><a:r><a:t>{p}</a:t></a:r></a:p>")).collect();
        format!("<p:sp><p:nvSpPr>{ph}</p:nvSpPr>{off}<p:txBody>{paras}</p:txBody></p:sp>")
    }

    fn slide(shapes: &[String]) -> String {
        format!("<p:sld {NS}><p:cSld><p:spTree>{}</p:spTree></p:cSld></p:sld>", shapes.concat())
    }

    fn deck(slides: &[(String, Option<String>)], order: &[usize]) -> Vec<u8> {
        let mut parts: Vec<(String, String)> = Vec::new();
        let ids: String = order.iter().map(|i| format!(r#"<p:sldId id="{}" r:id="rId{i}"/>"#, 256 + i)).collect();
        parts.push((
            PRESENTATION.into(),
            format!("<p:presentation {NS}><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"),
        ));
        let rels: String = (1..=slides.len())
            .map(|i| format!(r#"<Relationship Id="rId{i}" Type="http://x/slide" Target="slides/slide{i}.xml"/>"#))
            .collect();
        parts.push((PRESENTATION_RELS.into(), format!("<Relationships>{rels}</Relationships>")));
        for (i, (xml, notes)) in slides.iter().enumerate() {
            let n = i + 1;
            parts.push((format!("ppt/slides/slide{n}.xml"), xml.clone()));
            if let Some(notes) = notes {
                parts.push((
                    format!("ppt/slides/_rels/slide{n}.xml.rels"),
                    format!(r#"<Relationships><Relationship Id="rId9" Type="http://x/notesSlide" Target="../notesSlides/notesSlide{n}.xml"/></Relationships>"#),
                ));
                let body = slide(&[
                    sp(Some("sldImg"), None, &[]),
                    sp(Some("body"), None, &[notes]),
                    sp(Some("sldNum"), None, &["7"]),
                ]);
                parts.push((format!("ppt/notesSlides/notesSlide{n}.xml"), body));
            }
        }
        let refs: Vec<(&str, String)> = parts.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        testkit::zip_parts(&refs)
    }

    #[test]
    fn pptx_slides_in_deck_order_with_titles_text_and_notes() {
        let first = slide(&[
            sp(Some("title"), None, &["Pangolin &amp; friends"]),
            sp(None, Some((100, 5000)), &["lower box"]),
            sp(None, Some((100, 1000)), &["upper box"]),
            sp(Some("body"), None, &["First point", "# not a heading"]),
            sp(Some("sldNum"), None, &["1"]),
        ]);
        let second = slide(&[sp(Some("ctrTitle"), None, &["Closing"])]);
        // The deck shows slide 2 first.
        let bytes = deck(&[(first, Some("Mention the scales".into())), (second, None)], &[2, 1]);
        let c = convert(&bytes).expect("converts");
        assert_eq!(
            c.text,
            "## Slide 1: Closing\n\n## Slide 2: Pangolin & friends\n\nFirst point\n\n\\# not a heading\n\nupper box\n\nlower box\n\n### Speaker notes\n\nMention the scales\n"
        );
        assert_eq!(c.title.as_deref(), Some("Closing"));
    }

    #[test]
    fn tables_are_rows_and_the_core_title_wins() {
        let table = "<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Year</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Yield</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr><a:tc><a:txBody><a:p><a:r><a:t>2024</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>12 t</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>";
        let mut bytes_parts = vec![
            ("ppt/presentation.xml", format!("<p:presentation {NS}/>")),
            ("ppt/slides/slide1.xml", slide(&[table.to_string()])),
            ("docProps/core.xml", "<cp:coreProperties><dc:title>Harvest</dc:title></cp:coreProperties>".to_string()),
        ];
        let c = convert(&testkit::zip_parts(&bytes_parts)).expect("converts");
        assert_eq!(c.text, "## Slide 1\n\nYear | Yield\n\n2024 | 12 t\n");
        assert_eq!(c.title.as_deref(), Some("Harvest"));
        bytes_parts[1].1 = "<p:sld><p:cSld></p:sld>".into();
        assert!(matches!(convert(&testkit::zip_parts(&bytes_parts)), Err(ConvertError::Slides(_))));
    }

    #[test]
    fn odp_pages_titles_and_notes() {
        let content = r#"<office:document-content xmlns:office="o" xmlns:draw="d" xmlns:text="t" xmlns:presentation="p"><office:body><office:presentation>
            <draw:page draw:name="p1"><draw:frame presentation:class="title"><draw:text-box><text:p>Soil &amp; water</text:p></draw:text-box></draw:frame>
            <draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item><text:p>Mulch<text:s text:c="2"/>keeps<text:line-break/>moisture</text:p></text:list-item></text:list></draw:text-box></draw:frame>
            <draw:frame presentation:class="page-number"><draw:text-box><text:p>1</text:p></draw:text-box></draw:frame>
            <presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>Ask about clay</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>
            <draw:page draw:name="p2"><draw:frame><draw:text-box><text:p>Untitled page</text:p></draw:text-box></draw:frame></draw:page>
            </office:presentation></office:body></office:document-content>"#;
        let bytes = testkit::zip_parts(&[
            ("mimetype", "application/vnd.oasis.opendocument.presentation".into()),
            (ODP_CONTENT, content.into()),
        ]);
        let c = convert(&bytes).expect("converts");
        assert_eq!(
            c.text,
            "## Slide 1: Soil & water\n\nMulch  keeps\nmoisture\n\n### Speaker notes\n\nAsk about clay\n\n## Slide 2\n\nUntitled page\n"
        );
        assert_eq!(c.title.as_deref(), Some("Soil & water"));
    }

    #[test]
    fn neither_format_is_an_error() {
        assert!(matches!(convert(b"no zip"), Err(ConvertError::Slides(_))));
        let other = testkit::zip_parts(&[("word/document.xml", "<w:document/>".into())]);
        assert!(matches!(convert(&other), Err(ConvertError::Slides(m)) if m.contains("neither")));
    }

    #[test]
    fn targets_resolve_against_their_folder() {
        assert_eq!(resolve_target("ppt", "slides/slide1.xml"), "ppt/slides/slide1.xml");
        assert_eq!(resolve_target("ppt/slides", "../notesSlides/n1.xml"), "ppt/notesSlides/n1.xml");
        assert_eq!(resolve_target("ppt/slides", "/ppt/x.xml"), "ppt/x.xml");
    }
}
