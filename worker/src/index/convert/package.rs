//! Zip-packaged documents (DOCX, PPTX, ODP): their parts, read within size limits whatever
//! the archive declares (a guard against zip bombs), and the XML helpers their readers share.

use super::ConvertError;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;
use quick_xml::XmlVersion;
use std::collections::HashMap;
use std::io::{Cursor, Read};

/// The largest uncompressed part read.
pub(super) const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;
/// The most uncompressed bytes read from one package, all parts together.
const MAX_PACKAGE_BYTES: u64 = 256 * 1024 * 1024;

/// An open package; its errors are those of the format it holds (`error`).
pub(super) struct Package<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    error: fn(String) -> ConvertError,
    /// Uncompressed bytes read so far.
    read: u64,
}

impl<'a> Package<'a> {
    pub(super) fn open(bytes: &'a [u8], error: fn(String) -> ConvertError) -> Result<Self, ConvertError> {
        let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| error(e.to_string()))?;
        Ok(Package { zip, error, read: 0 })
    }

    /// The names of the parts, in archive order.
    pub(super) fn names(&self) -> Vec<String> {
        self.zip.file_names().filter_map(|n| n.ok().map(|n| n.into_owned())).collect()
    }

    /// A part's text, `None` when the package has no such part.
    pub(super) fn part(&mut self, name: &str) -> Result<Option<String>, ConvertError> {
        self.part_within(name, MAX_PART_BYTES)
    }

    /// An optional part's text: `None` when it is missing or broken (it only improves the
    /// result); a part past the limits is still an error of the whole file (a zip bomb).
    pub(super) fn optional_part(&mut self, name: &str) -> Result<Option<String>, ConvertError> {
        match self.part(name) {
            Err(e @ ConvertError::TooLarge { .. }) => Err(e),
            found => Ok(found.ok().flatten()),
        }
    }

    /// A part's text, refused past `limit` uncompressed bytes (or past the package's budget),
    /// whatever the archive declares.
    pub(super) fn part_within(&mut self, name: &str, limit: u64) -> Result<Option<String>, ConvertError> {
        let error = self.error;
        let Some(raw) = self.bytes_within(name, limit)? else { return Ok(None) };
        let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&raw);
        String::from_utf8(raw.to_vec()).map(Some).map_err(|_| error(format!("{name} is not UTF-8")))
    }

    /// The relationships of the part `part` (`dir/file`, from `dir/_rels/file.rels`): id →
    /// (type, target), each target resolved against the part's folder; empty when it has none.
    pub(super) fn relationships_of(&mut self, part: &str) -> Result<HashMap<String, (String, String)>, ConvertError> {
        let Some((dir, file)) = part.rsplit_once('/') else { return Ok(HashMap::new()) };
        let Some(rels) = self.optional_part(&format!("{dir}/_rels/{file}.rels"))? else { return Ok(HashMap::new()) };
        Ok(relationships(&rels)
            .into_iter()
            .map(|(id, (kind, target))| (id, (kind, resolve_target(dir, &target))))
            .collect())
    }

    /// A part's bytes (a picture), within the same limits as [`Package::part`].
    pub(super) fn bytes(&mut self, name: &str) -> Result<Option<Vec<u8>>, ConvertError> {
        self.bytes_within(name, MAX_PART_BYTES)
    }

    fn bytes_within(&mut self, name: &str, limit: u64) -> Result<Option<Vec<u8>>, ConvertError> {
        let error = self.error;
        let file = match self.zip.by_name(name) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(error(format!("{name}: {e}"))),
        };
        let left = MAX_PACKAGE_BYTES.saturating_sub(self.read);
        let too_large = |limit| ConvertError::TooLarge { part: name.to_string(), limit };
        if file.size() > limit {
            return Err(too_large(limit));
        }
        if file.size() > left {
            return Err(too_large(MAX_PACKAGE_BYTES));
        }
        let cap = limit.min(left);
        let mut raw = Vec::new();
        // The declared size may lie: never read past the cap.
        file.take(cap + 1).read_to_end(&mut raw).map_err(|e| error(format!("{name}: {e}")))?;
        self.read = self.read.saturating_add(raw.len() as u64);
        if raw.len() as u64 > cap {
            return Err(too_large(if cap == limit { limit } else { MAX_PACKAGE_BYTES }));
        }
        Ok(Some(raw))
    }
}

/// The value of an attribute by local name (`w:val` → `val`), whatever its prefix.
pub(super) fn attr(e: &BytesStart, local: &str) -> Option<String> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .and_then(|a| a.normalized_value(XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

/// A relationships part: id → (type, target).
pub(super) fn relationships(xml: &str) -> HashMap<String, (String, String)> {
    let mut reader = Reader::from_str(xml);
    let mut out = HashMap::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "Relationship" => {
                if let (Some(id), Some(target)) = (attr(&e, "Id"), attr(&e, "Target")) {
                    out.insert(id, (attr(&e, "Type").unwrap_or_default(), target));
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// A relationship target resolved against the folder of the part that names it.
pub(super) fn resolve_target(base_dir: &str, target: &str) -> String {
    if let Some(absolute) = target.strip_prefix('/') {
        return absolute.to_string();
    }
    let mut parts: Vec<&str> = base_dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// `&amp;`, `&#233;` and friends; an unknown entity stays as written.
pub(super) fn resolve_ref(r: &BytesRef) -> String {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return c.to_string();
    }
    let name = r.clone().into_inner();
    quick_xml::escape::resolve_predefined_entity(&name).map(str::to_string).unwrap_or_else(|| format!("&{name};"))
}

/// The text of the first element named `local` (any prefix), e.g. `dc:title` of a
/// package's metadata part.
pub(super) fn element_text(xml: &str, local: &str) -> Option<String> {
    let mut reader = Reader::from_str(xml);
    let mut inside = false;
    let mut text = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == local => inside = true,
            Ok(Event::End(e)) if inside && e.local_name().as_ref() == local => break,
            Ok(Event::Text(t)) if inside => text.push_str(&t.xml10_content()),
            Ok(Event::CData(t)) if inside => text.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if inside => text.push_str(&resolve_ref(&r)),
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    inside.then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PART: &str = "word/document.xml";

    #[test]
    fn a_part_past_the_limit_is_refused_even_when_its_size_lies() {
        let big = testkit::zip_parts(&[(PART, "<w:p/>".repeat(2_000))]);
        let mut package = Package::open(&big, ConvertError::Docx).unwrap();
        let honest = package.part_within(PART, 1_000);
        assert!(matches!(honest, Err(ConvertError::TooLarge { limit: 1_000, .. })), "{honest:?}");
        let mut lying = big.clone();
        testkit::declare_uncompressed_size(&mut lying, 100);
        let mut package = Package::open(&lying, ConvertError::Docx).unwrap();
        let bomb = package.part_within(PART, 1_000);
        // The zip crate itself stops at the declared size ("larger than its declared
        // uncompressed size"); the limit holds either way.
        assert!(matches!(bomb, Err(ConvertError::TooLarge { .. }) | Err(ConvertError::Docx(_))), "{bomb:?}");
        let mut package = Package::open(&big, ConvertError::Docx).unwrap();
        assert!(package.part_within(PART, 100_000).unwrap().is_some());
        assert!(package.part("missing.xml").unwrap().is_none());
    }

    #[test]
    fn the_package_budget_counts_every_part_read() {
        let parts: Vec<(String, String)> = (0..3).map(|i| (format!("p{i}.xml"), "x".repeat(1_000))).collect();
        let refs: Vec<(&str, String)> = parts.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        let bytes = testkit::zip_parts(&refs);
        let mut package = Package::open(&bytes, ConvertError::Slides).unwrap();
        package.read = MAX_PACKAGE_BYTES - 1_500;
        assert!(package.part("p0.xml").unwrap().is_some());
        assert!(matches!(package.part("p1.xml"), Err(ConvertError::TooLarge { .. })));
    }

    #[test]
    fn element_text_with_entities() {
        let xml = "<cp:coreProperties><dc:title>Q3 &amp; beyond</dc:title></cp:coreProperties>";
        assert_eq!(element_text(xml, "title").as_deref(), Some("Q3 & beyond"));
        assert_eq!(element_text(xml, "subject"), None);
    }
}
