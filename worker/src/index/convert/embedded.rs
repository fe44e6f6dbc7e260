//! Pictures embedded in documents (DOCX, PPTX, ODP), in the order they appear and with the
//! slide each stands on: what OCR reads of a document besides its own text
//! (`index::pictures::read_embedded`).

use super::package::{attr, resolve_target, Package};
use super::{docx, slides, ConvertError, Format};
use quick_xml::events::Event;
use quick_xml::Reader;

/// The most pictures of one document read (a deck of screenshots is read up to here).
pub const MAX_PICTURES: usize = 100;
/// The folders of a package that hold its pictures, by format.
const MEDIA_FOLDERS: [&str; 3] = ["word/media/", "ppt/media/", "Pictures/"];

/// A picture of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddedPicture {
    /// The slide it stands on (1 for the first); `None` in a text document.
    pub slide: Option<u32>,
    /// Its part in the package (`word/media/image1.png`).
    pub part: String,
    pub bytes: Vec<u8>,
}

/// Whether a document of `format` holds pictures at all, from its package's directory alone
/// (nothing is decompressed): only then is it given to OCR.
pub fn has_pictures(format: Format, bytes: &[u8]) -> bool {
    if !matches!(format, Format::Docx | Format::Slides) {
        return false;
    }
    Package::open(bytes, ConvertError::Docx)
        .is_ok_and(|p| p.names().iter().any(|n| MEDIA_FOLDERS.iter().any(|m| n.starts_with(m) && n.len() > m.len())))
}

/// The pictures a document shows, in order, each once (where it first stands), at most
/// [`MAX_PICTURES`]; past the package's read budget the rest are left out. Other formats have
/// none.
pub fn pictures(format: Format, bytes: &[u8]) -> Result<Vec<EmbeddedPicture>, ConvertError> {
    let error: fn(String) -> ConvertError = match format {
        Format::Docx => ConvertError::Docx,
        Format::Slides => ConvertError::Slides,
        _ => return Ok(Vec::new()),
    };
    let mut package = Package::open(bytes, error)?;
    let places = if format == Format::Docx {
        docx_places(&mut package)?
    } else {
        let names = package.names();
        if slides::is_pptx(&names) {
            pptx_places(&mut package, &names)?
        } else {
            odp_places(&mut package)?
        }
    };
    let mut out: Vec<EmbeddedPicture> = Vec::new();
    for (slide, part) in places {
        if out.len() == MAX_PICTURES {
            break;
        }
        // A picture shown again (a logo on every slide) is read where it first stands.
        if out.iter().any(|p| p.part == part) {
            continue;
        }
        match package.bytes(&part) {
            Ok(Some(bytes)) => out.push(EmbeddedPicture { slide, part, bytes }),
            // A link to a file outside the package, or a missing part: nothing to read.
            Ok(None) => {}
            // The package's budget is spent: the pictures read so far are what it gives.
            Err(ConvertError::TooLarge { .. }) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The relationship ids of the pictures an XML part draws (`a:blip r:embed`), in order;
/// the copies under `mc:Fallback` are left out.
fn blip_ids(xml: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    let mut fallback_depth = 0usize;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "Fallback" => fallback_depth += 1,
            Ok(Event::End(e)) if e.local_name().as_ref() == "Fallback" => {
                fallback_depth = fallback_depth.saturating_sub(1)
            }
            Ok(Event::Start(e) | Event::Empty(e)) if fallback_depth == 0 && e.local_name().as_ref() == "blip" => {
                if let Some(id) = attr(&e, "embed") {
                    out.push(id);
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// The picture parts an XML part (`dir/file`) draws, through its relationships.
fn drawn_parts(package: &mut Package<'_>, part: &str, xml: &str) -> Result<Vec<String>, ConvertError> {
    let targets = package.relationships_of(part)?;
    Ok(blip_ids(xml)
        .iter()
        .filter_map(|id| targets.get(id))
        .filter(|(kind, _)| kind.ends_with("/image"))
        .map(|(_, target)| target.clone())
        .collect())
}

fn docx_places(package: &mut Package<'_>) -> Result<Vec<(Option<u32>, String)>, ConvertError> {
    let Some(xml) = package.part(docx::DOCUMENT)? else { return Ok(Vec::new()) };
    Ok(drawn_parts(package, docx::DOCUMENT, &xml)?.into_iter().map(|part| (None, part)).collect())
}

fn pptx_places(package: &mut Package<'_>, names: &[String]) -> Result<Vec<(Option<u32>, String)>, ConvertError> {
    let mut out = Vec::new();
    for (i, slide) in slides::pptx_slide_parts(package, names)?.iter().enumerate() {
        let Some(xml) = package.part(slide)? else { continue };
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        out.extend(drawn_parts(package, slide, &xml)?.into_iter().map(|part| (Some(number), part)));
    }
    Ok(out)
}

/// An ODP deck's pictures: `draw:image xlink:href` inside each `draw:page`.
fn odp_places(package: &mut Package<'_>) -> Result<Vec<(Option<u32>, String)>, ConvertError> {
    let Some(xml) = package.part(slides::ODP_CONTENT)? else { return Ok(Vec::new()) };
    let mut reader = Reader::from_str(&xml);
    let mut out = Vec::new();
    let mut page = 0u32;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "page" => page = page.saturating_add(1),
            Ok(Event::Start(e) | Event::Empty(e)) if page > 0 && e.local_name().as_ref() == "image" => {
                if let Some(href) = attr(&e, "href").filter(|h| !h.contains("://")) {
                    out.push((Some(page), resolve_target("", &href)));
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGE_REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image";

    fn rels(items: &[(&str, &str)]) -> String {
        let body: String = items
            .iter()
            .map(|(id, target)| format!(r#"<Relationship Id="{id}" Type="{IMAGE_REL}" Target="{target}"/>"#))
            .collect();
        format!("<Relationships>{body}</Relationships>")
    }

    fn blip(id: &str) -> String {
        format!(r#"<w:drawing><a:blip r:embed="{id}"/></w:drawing>"#)
    }

    #[test]
    fn a_docx_gives_its_pictures_in_order_each_once_without_fallback_copies() {
        let document = format!(
            "<w:document><w:body><w:p>{}</w:p><mc:AlternateContent><mc:Choice>{}</mc:Choice>\
             <mc:Fallback>{}</mc:Fallback></mc:AlternateContent><w:p>{}</w:p></w:body></w:document>",
            blip("rId7"),
            blip("rId5"),
            blip("rId9"),
            blip("rId7")
        );
        let bytes = testkit::zip_bytes(&[
            ("word/document.xml", document.into_bytes()),
            (
                "word/_rels/document.xml.rels",
                rels(&[("rId5", "media/b.png"), ("rId7", "media/a.png"), ("rId9", "media/c.png")]).into_bytes(),
            ),
            ("word/media/a.png", b"A".to_vec()),
            ("word/media/b.png", b"B".to_vec()),
            ("word/media/c.png", b"C".to_vec()),
        ]);
        assert!(has_pictures(Format::Docx, &bytes));
        let found = pictures(Format::Docx, &bytes).unwrap();
        let parts: Vec<(&str, &[u8])> = found.iter().map(|p| (p.part.as_str(), p.bytes.as_slice())).collect();
        assert_eq!(parts, [("word/media/a.png", b"A".as_slice()), ("word/media/b.png", b"B".as_slice())]);
        assert!(found.iter().all(|p| p.slide.is_none()));
    }

    #[test]
    fn a_deck_gives_each_slides_pictures_with_its_number() {
        let slide = |id: &str| format!("<p:sld><p:pic><p:blipFill>{}</p:blipFill></p:pic></p:sld>", blip(id));
        let bytes = testkit::zip_bytes(&[
            ("ppt/presentation.xml", "<p:presentation/>".to_string().into_bytes()),
            ("ppt/slides/slide1.xml", "<p:sld/>".to_string().into_bytes()),
            ("ppt/slides/slide2.xml", slide("rId2").into_bytes()),
            ("ppt/slides/_rels/slide2.xml.rels", rels(&[("rId2", "../media/image1.jpg")]).into_bytes()),
            ("ppt/media/image1.jpg", b"J".to_vec()),
        ]);
        assert!(has_pictures(Format::Slides, &bytes));
        let found = pictures(Format::Slides, &bytes).unwrap();
        assert_eq!(
            found,
            [EmbeddedPicture { slide: Some(2), part: "ppt/media/image1.jpg".into(), bytes: b"J".to_vec() }]
        );
        let odp = testkit::zip_bytes(&[
            (
                "content.xml",
                r#"<office:document-content><draw:page><draw:frame><draw:image xlink:href="Pictures/p.png"/></draw:frame></draw:page><draw:page><draw:image xlink:href="https://example.com/x.png"/></draw:page></office:document-content>"#
                    .to_string()
                    .into_bytes(),
            ),
            ("Pictures/p.png", b"P".to_vec()),
        ]);
        let found = pictures(Format::Slides, &odp).unwrap();
        assert_eq!(found, [EmbeddedPicture { slide: Some(1), part: "Pictures/p.png".into(), bytes: b"P".to_vec() }]);
    }

    #[test]
    fn a_document_without_pictures_says_so_from_its_directory() {
        let bytes = testkit::zip_bytes(&[("word/document.xml", b"<w:document/>".to_vec())]);
        assert!(!has_pictures(Format::Docx, &bytes));
        assert!(pictures(Format::Docx, &bytes).unwrap().is_empty());
        assert!(!has_pictures(Format::Pdf, &bytes));
        assert!(!has_pictures(Format::Docx, b"not a zip"));
    }
}
