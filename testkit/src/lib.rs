//! Test fixtures shared by the worker's unit tests and the black-box tests: real PDF and
//! DOCX files built in memory (lopdf, zip), so both suites feed the converters the same bytes.
//! A fixture that cannot be built is a broken test, so these functions panic.

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, Stream};
use std::io::Write;

fn dict(pairs: Vec<(&str, Object)>) -> Dictionary {
    let mut d = Dictionary::new();
    for (k, v) in pairs {
        d.set(k, v);
    }
    d
}

fn name(n: &str) -> Object {
    Object::Name(n.as_bytes().to_vec())
}

/// A one-page PDF (Helvetica) with `lines` top to bottom and an optional Info `Title`.
pub fn pdf(title: Option<&str>, lines: &[&str]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id =
        doc.add_object(dict(vec![("Type", name("Font")), ("Subtype", name("Type1")), ("BaseFont", name("Helvetica"))]));
    let resources_id =
        doc.add_object(dict(vec![("Font", Object::Dictionary(dict(vec![("F1", Object::Reference(font_id))])))]));
    let mut ops = vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec![name("F1"), 14.into()]),
        Operation::new("Td", vec![72.into(), 760.into()]),
    ];
    for line in lines {
        ops.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
        ops.push(Operation::new("Td", vec![0.into(), (-24).into()]));
    }
    ops.push(Operation::new("ET", vec![]));
    let bytes = Content { operations: ops }.encode().expect("encode the test PDF content");
    let content_id = doc.add_object(Stream::new(Dictionary::new(), bytes));
    let page_id = doc.add_object(dict(vec![
        ("Type", name("Page")),
        ("Parent", Object::Reference(pages_id)),
        ("Contents", Object::Reference(content_id)),
    ]));
    let pages = dict(vec![
        ("Type", name("Pages")),
        ("Kids", Object::Array(vec![Object::Reference(page_id)])),
        ("Count", 1.into()),
        ("Resources", Object::Reference(resources_id)),
        ("MediaBox", Object::Array(vec![0.into(), 0.into(), 612.into(), 792.into()])),
    ]);
    doc.objects.insert(pages_id, Object::Dictionary(pages));
    let catalog_id = doc.add_object(dict(vec![("Type", name("Catalog")), ("Pages", Object::Reference(pages_id))]));
    doc.trailer.set("Root", Object::Reference(catalog_id));
    if let Some(t) = title {
        let info_id = doc.add_object(dict(vec![("Title", lopdf::text_string(t))]));
        doc.trailer.set("Info", Object::Reference(info_id));
    }
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save the test PDF");
    out
}

/// One DOCX paragraph: `(style id, text)`; `None` for body text.
pub type Para<'a> = (Option<&'a str>, &'a str);

/// A minimal valid DOCX (deflated parts) with these paragraphs and an optional core title.
pub fn docx(title: Option<&str>, paras: &[Para]) -> Vec<u8> {
    let mut body = String::new();
    for (style, text) in paras {
        body.push_str("<w:p>");
        if let Some(s) = style {
            body.push_str(&format!("<w:pPr><w:pStyle w:val=\"{s}\"/></w:pPr>"));
        }
        body.push_str(&format!("<w:r><w:t xml:space=\"preserve\">{}</w:t></w:r></w:p>", xml_escape(text)));
    }
    docx_with_body(title, &body)
}

/// A DOCX whose `<w:body>` holds `body_xml` verbatim.
pub fn docx_with_body(title: Option<&str>, body_xml: &str) -> Vec<u8> {
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body_xml}</w:body></w:document>"
    );
    let mut parts: Vec<(&str, String)> = vec![
        ("[Content_Types].xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>".into()),
        ("_rels/.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/></Relationships>".into()),
        ("word/document.xml", document),
    ];
    if let Some(t) = title {
        parts.push((
            "docProps/core.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>{}</dc:title></cp:coreProperties>", xml_escape(t)),
        ));
    }
    zip_parts(&parts)
}

/// A zip archive of `(name, content)` parts, deflated.
pub fn zip_parts(parts: &[(&str, String)]) -> Vec<u8> {
    let parts: Vec<(&str, Vec<u8>)> = parts.iter().map(|(name, text)| (*name, text.as_bytes().to_vec())).collect();
    zip_bytes(&parts)
}

/// A zip archive of `(name, bytes)` parts (pictures beside XML), deflated.
pub fn zip_bytes(parts: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in parts {
        w.start_file(*name, opts).expect("start a zip part");
        w.write_all(content).expect("write a zip part");
    }
    w.finish().expect("finish the zip").into_inner()
}

/// Sets the uncompressed size every local and central header of the archive `zip` declares
/// to `size`, as a zip bomb's headers do (to lie, or to announce gigabytes).
pub fn declare_uncompressed_size(zip: &mut [u8], size: u32) {
    for i in 0..zip.len().saturating_sub(46) {
        let at = match &zip[i..i + 4] {
            [0x50, 0x4b, 0x03, 0x04] => i + 22,
            [0x50, 0x4b, 0x01, 0x02] => i + 24,
            _ => continue,
        };
        zip[at..at + 4].copy_from_slice(&size.to_le_bytes());
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// An XLSX workbook written by `rust_xlsxwriter`: each sheet's rows of cells, a cell that
/// parses as a number written as a number, an empty string left empty.
pub fn xlsx(sheets: &[(&str, &[&[&str]])]) -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    for (name, rows) in sheets {
        let sheet = book.add_worksheet();
        sheet.set_name(*name).expect("a valid sheet name");
        for (r, row) in rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let (r, c) = (r as u32, c as u16);
                if cell.is_empty() {
                    continue;
                }
                match cell.parse::<f64>() {
                    Ok(n) => sheet.write_number(r, c, n).map(drop),
                    Err(_) => sheet.write_string(r, c, *cell).map(drop),
                }
                .expect("a cell within the sheet");
            }
        }
    }
    book.save_to_buffer().expect("an XLSX workbook")
}
