//! PDF → text with `pdf-extract` (on `lopdf`): the Info dictionary's `Title` and the text of
//! every page. Encrypted files open only when the empty user password works.

use super::{first_line_title, non_empty_title, ConvertError, Converted, MAX_TEXT_BYTES};
use pdf_extract::{Document, Object, OutputError, PlainTextOutput};

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut doc = Document::load_mem(bytes).map_err(|e| ConvertError::Pdf(e.to_string()))?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(ConvertError::Encrypted);
    }
    let mut sink = CappedText::default();
    let result = {
        let mut out = PlainTextOutput::new(&mut sink);
        pdf_extract::output_doc(&doc, &mut out)
    };
    match result {
        Ok(()) => {}
        // The cap was reached: keep what fits.
        Err(OutputError::FormatError(_)) if sink.full => {}
        Err(e) => return Err(ConvertError::Pdf(e.to_string())),
    }
    let title = info_title(&doc).or_else(|| first_line_title(&sink.text));
    Ok(Converted { title, text: sink.text })
}

/// Whether converted text is that of a scanned document: nothing but whitespace (its pages
/// are pictures, for OCR: [`page_pictures`]).
pub fn is_scan(text: &str) -> bool {
    text.trim().is_empty()
}

/// The pictures of a scanned PDF, one per page in page order (the largest image a page
/// draws: a scanner puts the page in one), as encoded bytes a decoder reads (JPEG as stored)
/// or as decoded pixels. Pages without a picture are skipped.
pub fn page_pictures(bytes: &[u8]) -> Result<Vec<PagePicture>, ConvertError> {
    let mut doc = Document::load_mem(bytes).map_err(|e| ConvertError::Pdf(e.to_string()))?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(ConvertError::Encrypted);
    }
    let mut out = Vec::new();
    for (number, page) in doc.get_pages() {
        let Ok(images) = doc.get_page_images(page) else { continue };
        let Some(image) = images.iter().max_by_key(|i| i.width.saturating_mul(i.height)) else { continue };
        let filters = image.filters.clone().unwrap_or_default();
        let picture = if filters.iter().any(|f| f == "DCTDecode" || f == "JPXDecode") {
            Some(PictureData::Encoded(image.content.to_vec()))
        } else {
            raw_pixels(&doc, image)
        };
        if let Some(data) = picture {
            out.push(PagePicture { page: number, data });
        }
    }
    Ok(out)
}

/// A page's picture.
pub struct PagePicture {
    /// The page's number, from 1.
    pub page: u32,
    pub data: PictureData,
}

/// A picture as a PDF holds it.
pub enum PictureData {
    /// A file format's bytes (JPEG).
    Encoded(Vec<u8>),
    /// 8-bit samples, row by row: `channels` of 1 (gray) or 3 (RGB).
    Pixels { width: u32, height: u32, channels: u8, samples: Vec<u8> },
}

/// The 8-bit gray or RGB samples of an image stream (decompressed), when it is one.
fn raw_pixels(doc: &Document, image: &pdf_extract::xobject::PdfImage) -> Option<PictureData> {
    let channels = match image.color_space.as_deref() {
        Some("DeviceGray") => 1u8,
        Some("DeviceRGB") => 3,
        _ => return None,
    };
    if image.bits_per_component != Some(8) {
        return None;
    }
    let (width, height) = (u32::try_from(image.width).ok()?, u32::try_from(image.height).ok()?);
    let stream = doc.get_object(image.id).ok()?.as_stream().ok()?;
    let samples = stream.decompressed_content().unwrap_or_else(|_| stream.content.clone());
    let needed = (width as usize).checked_mul(height as usize)?.checked_mul(usize::from(channels))?;
    (samples.len() >= needed).then_some(PictureData::Pixels { width, height, channels, samples })
}

/// The Info dictionary's `Title`, when it is a non-empty text string.
fn info_title(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let (_, info) = doc.dereference(info).ok()?;
    let title = info.as_dict().ok()?.get(b"Title").ok()?;
    let (_, title) = doc.dereference(title).ok()?;
    match title {
        Object::String(..) => non_empty_title(&pdf_extract::decode_text_string(title).ok()?),
        _ => None,
    }
}

/// Collects text up to `MAX_TEXT_BYTES`, then refuses more (which stops the extraction).
#[derive(Default)]
struct CappedText {
    text: String,
    full: bool,
}

impl std::fmt::Write for CappedText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.text.len() + s.len() > MAX_TEXT_BYTES {
            self.full = true;
            return Err(std::fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}

impl<'a> pdf_extract::ConvertToFmt for &'a mut CappedText {
    type Writer = &'a mut CappedText;
    fn convert(self) -> Self::Writer {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::convert::{convert as convert_isolated, Format};

    #[test]
    fn text_and_info_title() {
        let bytes =
            testkit::pdf(Some("Quarterly Report"), &["Revenue grew in the aardvark segment", "Second line here"]);
        let c = convert(&bytes).expect("converts");
        assert_eq!(c.title.as_deref(), Some("Quarterly Report"));
        assert!(c.text.contains("aardvark"), "{:?}", c.text);
        assert!(c.text.contains("Second line"), "{:?}", c.text);
        let a = c.text.find("Revenue").unwrap_or(usize::MAX);
        let b = c.text.find("Second").unwrap_or(0);
        assert!(a < b, "lines keep their order: {:?}", c.text);
    }

    #[test]
    fn non_ascii_title_decodes_from_utf16() {
        let bytes = testkit::pdf(Some("Über Zürich"), &["body"]);
        assert_eq!(convert(&bytes).expect("converts").title.as_deref(), Some("Über Zürich"));
    }

    #[test]
    fn without_a_title_the_first_line_is_the_title() {
        let bytes = testkit::pdf(None, &["Opening Line", "more text"]);
        assert_eq!(convert(&bytes).expect("converts").title.as_deref(), Some("Opening Line"));
        let blank_title = testkit::pdf(Some("   "), &["Fallback Line"]);
        assert_eq!(convert(&blank_title).expect("converts").title.as_deref(), Some("Fallback Line"));
    }

    #[test]
    fn a_page_without_text_has_no_title() {
        let bytes = testkit::pdf(None, &[]);
        let c = convert(&bytes).expect("converts");
        assert_eq!(c.title, None);
        assert!(c.text.trim().is_empty());
    }

    #[test]
    fn truncated_and_corrupt_files_are_errors() {
        let bytes = testkit::pdf(Some("T"), &["text"]);
        let cut = bytes[..bytes.len() / 3].to_vec();
        assert!(convert_isolated(Format::Pdf, cut).is_err());
        assert!(matches!(convert(b"%PDF-1.4 quokka"), Err(ConvertError::Pdf(_))));
        assert!(matches!(convert(b"hello"), Err(ConvertError::Pdf(_))));
    }

    #[test]
    fn the_text_cap_stops_extraction_without_failing() {
        let mut sink = CappedText::default();
        let big = "x".repeat(MAX_TEXT_BYTES);
        assert!(std::fmt::Write::write_str(&mut sink, &big).is_ok());
        assert!(std::fmt::Write::write_str(&mut sink, "y").is_err());
        assert!(sink.full);
        assert_eq!(sink.text.len(), MAX_TEXT_BYTES);
    }
}
