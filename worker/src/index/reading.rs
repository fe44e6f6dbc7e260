//! A file's way into a sync: its kind and media type, its size limit, its text (read,
//! converted, or a picture's OCR reading), a mailbox's or a record file's parts, and the parse of that text.

use crate::index::convert;
use crate::index::ingest::{self, ParsedDoc};
use crate::index::pictures;
use crate::index::walk::{self, FoundFile};
use crate::stores::catalog::FileState;
use protocol::source_kind::{source_kind, SourceKind};
use std::collections::HashMap;
use std::path::Path;

/// Files larger than this are skipped (counted in `filesSkipped`).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

pub fn mime_and_ext(rel: &str) -> (String, String) {
    let ext = Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{}", e.to_ascii_lowercase()))
        .unwrap_or_default();
    let mime = match source_kind(rel) {
        Some(SourceKind::Markdown) => "text/markdown".to_string(),
        Some(SourceKind::PlainText) => "text/plain".to_string(),
        Some(SourceKind::Org) => "text/org".to_string(),
        // By the extension where it has a type of its own (`application/json`), else text.
        Some(SourceKind::Code(_)) => match mime_guess::from_path(rel).first() {
            Some(m) if m.type_() == "text" || m.subtype() == "json" || m.subtype() == "javascript" => {
                m.essence_str().to_string()
            }
            _ => "text/plain".to_string(),
        },
        Some(
            kind @ (SourceKind::Pdf
            | SourceKind::Docx
            | SourceKind::Html
            | SourceKind::Records
            | SourceKind::Calendar
            | SourceKind::Bookmark),
        ) => convert::Format::of(kind).map(|f| f.mime()).unwrap_or_default().to_string(),
        // One kind, several formats: by the extension.
        Some(
            SourceKind::Spreadsheet
            | SourceKind::Slides
            | SourceKind::Mail
            | SourceKind::Image
            | SourceKind::Transcript,
        ) => mime_guess::from_path(rel).first_or_octet_stream().essence_str().to_string(),
        None => mime_guess::from_path(rel).first_or_octet_stream().essence_str().to_string(),
    };
    (mime, ext)
}

/// A file's text and, for converted documents, the title the converter found; else why
/// there is none.
pub(super) fn text_of(bytes: Vec<u8>, kind: SourceKind, rel: &str) -> Result<(String, Option<String>), String> {
    let found = match convert::Format::of(kind) {
        // A picture's text is its OCR reading (`Indexer::read_picture`); here only whether
        // it can be read.
        None if kind == SourceKind::Image => pictures::refusal(&bytes).map_or(Ok((String::new(), None)), Err),
        None => ingest::decode_text(&bytes).map(|t| (t, None)).map_err(|e| e.to_string()),
        Some(format) => convert::convert(format, bytes).map(|c| (c.text, c.title)).map_err(|e| e.to_string()),
    };
    if let Err(e) = &found {
        tracing::warn!("{rel}: {e}");
    }
    found
}

/// How a file of `size` bytes is over [`MAX_FILE_BYTES`], if it is: what a sync reports for
/// it and `explain` names as its rule.
pub fn over_size_limit(size: u64) -> Option<String> {
    (size > MAX_FILE_BYTES).then(|| format!("{} MB, over the {} MB limit", size >> 20, MAX_FILE_BYTES >> 20))
}

/// Why the file at `abs` cannot be read or converted, when it cannot (a sync counts it as
/// errored).
pub fn unreadable(abs: &Path, kind: SourceKind, rel: &str) -> Option<String> {
    match std::fs::read(abs) {
        Err(e) => Some(format!("cannot be read: {e}")),
        Ok(bytes) => text_of(bytes, kind, rel).err(),
    }
}

/// A file (or a part of one) read and parsed, waiting for its batch to be written.
pub(super) struct Parsed {
    /// The document's own path, size and mtime (a part's path is `<file>/<part key>`).
    pub(super) file: FoundFile,
    /// The file this document is a part of; `None`: the whole file.
    pub(super) part_of: Option<String>,
    pub(super) source_hash: String,
    pub(super) canonical: String,
    pub(super) mirror_hash: String,
    pub(super) doc: ParsedDoc,
    pub(super) previous: Option<FileState>,
    /// A vanished document with the same bytes: this file is that one, renamed or moved.
    pub(super) renamed_from: Option<FileState>,
}

pub(super) enum FileOutcome {
    Parsed(Box<Parsed>),
    /// The bytes equal what the catalog holds (only the mtime moved).
    SameBytes(FoundFile),
    /// Unreadable, binary, or a conversion failed (why): counted as errored, the previous
    /// version stays.
    Failed(String),
}

/// Reads, hashes, converts (PDF, DOCX…) and parses a file. A picture, and a PDF that is a
/// scan (no text, pages that are pictures), take their text from OCR ([`read_picture`]); a
/// document that shows pictures has their text after its own once OCR has read them.
pub(super) fn read_and_parse(
    file: FoundFile,
    prev: Option<&FileState>,
    kind: SourceKind,
    pictures: Pictures,
) -> FileOutcome {
    let bytes = match std::fs::read(&file.abs) {
        Ok(bytes) => bytes,
        Err(e) => return FileOutcome::Failed(format!("cannot be read: {e}")),
    };
    let source_hash = crate::digest::sha256_hex(&bytes);
    if kind == SourceKind::Image {
        let reading = pictures.readings.get(&source_hash);
        return read_picture(file, prev, source_hash, None, reading, || pictures::refusal(&bytes), pictures);
    }
    // A PDF is a scan when it has no text; once OCR has read it, its reading is its text. A
    // document that shows pictures (DOCX, slides) has their text after its own once OCR has
    // read them.
    let embeds = pictures::embeds(&file.rel);
    let reading = if kind == SourceKind::Pdf || embeds.is_some() { pictures.readings.get(&source_hash) } else { None };
    // Whether the text may differ from what was indexed of the same bytes: a scan's is its
    // reading; a document's own text with its pictures' is known once converted.
    let read_since = |p: &FileState| match &reading {
        Some(r) if kind == SourceKind::Pdf => ingest::mirror_of(&r.text) != p.mirror_hash,
        Some(r) => !r.text.trim().is_empty(),
        None => false,
    };
    if prev.is_some_and(|p| p.source_hash == source_hash && !read_since(p)) {
        return FileOutcome::SameBytes(file);
    }
    let to_read = embeds.filter(|format| reading.is_none() && convert::has_pictures(*format, &bytes));
    match text_of(bytes, kind, &file.rel) {
        Ok((text, title)) if kind == SourceKind::Pdf && convert::is_scan(&text) => {
            read_picture(file, prev, source_hash, title, reading, || None, pictures)
        }
        Ok((text, title)) => {
            if to_read.is_some() {
                pictures.readings.request(pictures.collection, &file.rel, &source_hash);
            }
            let text = pictures::with_text_in_pictures(text, reading.as_ref());
            if prev.is_some_and(|p| p.source_hash == source_hash && p.mirror_hash == ingest::mirror_of(&text)) {
                return FileOutcome::SameBytes(file);
            }
            FileOutcome::Parsed(parse_text(file, None, source_hash, &text, title, kind, prev))
        }
        Err(reason) => FileOutcome::Failed(reason),
    }
}

/// Where a sync finds pictures' readings and asks for new ones: the readings and the
/// collection synced.
#[derive(Clone, Copy)]
pub(super) struct Pictures<'a> {
    pub(super) readings: &'a pictures::Readings,
    pub(super) collection: &'a str,
}

/// A picture's (or a scan's) document: its text is its OCR `reading` once there is one; until
/// then it is indexed by its name, and a reading is asked for (unless `refusal` says why the
/// file cannot be read: then it is that file's error). Unchanged only when both its bytes and
/// its text are (the reading arriving changes the text).
pub(super) fn read_picture(
    file: FoundFile,
    prev: Option<&FileState>,
    source_hash: String,
    title: Option<String>,
    reading: Option<pictures::Reading>,
    refusal: impl FnOnce() -> Option<String>,
    pictures: Pictures,
) -> FileOutcome {
    let text = match reading {
        Some(reading) => reading.text,
        None => {
            if let Some(why) = refusal() {
                tracing::warn!("{}: {why}", file.rel);
                return FileOutcome::Failed(why);
            }
            pictures.readings.request(pictures.collection, &file.rel, &source_hash);
            String::new()
        }
    };
    if prev.is_some_and(|p| p.source_hash == source_hash && p.mirror_hash == ingest::mirror_of(&text)) {
        return FileOutcome::SameBytes(file);
    }
    let kind = source_kind(&file.rel).unwrap_or(SourceKind::Image);
    FileOutcome::Parsed(parse_text(file, None, source_hash, &text, title, kind, prev))
}

/// Reads a file indexed by its parts (a mailbox, a file of records) and parses each part
/// whose bytes changed: each part's outcome, by the part's path (`<file>/<part key>`).
/// `parts`: the paths of the parts indexed so far, their states in `known`. `Err`: the file as
/// a whole cannot be read or split (why).
pub(super) fn read_and_parse_parts(
    file: &FoundFile,
    split: convert::Split,
    known: &HashMap<String, FileState>,
    parts: &[&str],
) -> Result<Vec<(String, FileOutcome)>, String> {
    let bytes = std::fs::read(&file.abs).map_err(|e| format!("cannot be read: {e}"))?;
    let prefix = format!("{}/", file.rel);
    // What each part key holds now, so unchanged records are not converted again.
    let indexed = parts
        .iter()
        .filter_map(|rel| Some((rel.strip_prefix(&prefix)?.to_string(), known.get(*rel)?.source_hash.clone())))
        .collect();
    let parts = convert::record_parts(split, bytes, indexed).map_err(|e| {
        tracing::warn!("{}: {e}", file.rel);
        e.to_string()
    })?;
    let outcomes = parts.into_iter().map(|part| {
        let rel = format!("{prefix}{}", part.key);
        let found = FoundFile { rel: rel.clone(), abs: file.abs.clone(), size: part.size, mtime_ns: file.mtime_ns };
        let prev = known.get(&rel);
        let outcome = match part.converted {
            None => FileOutcome::SameBytes(found),
            Some(Ok(c)) => {
                let part_of = Some(file.rel.clone());
                FileOutcome::Parsed(parse_text(
                    found,
                    part_of,
                    part.source_hash,
                    &c.text,
                    c.title,
                    split.part_kind(),
                    prev,
                ))
            }
            Some(Err(reason)) => FileOutcome::Failed(reason),
        };
        (rel, outcome)
    });
    Ok(outcomes.collect())
}

/// Canonicalizes and parses a document's text (a file's, or a part's).
pub(super) fn parse_text(
    file: FoundFile,
    part_of: Option<String>,
    source_hash: String,
    text: &str,
    title: Option<String>,
    kind: SourceKind,
    prev: Option<&FileState>,
) -> Box<Parsed> {
    let canonical = ingest::canonicalize(text);
    let mirror_hash = crate::digest::sha256_hex(canonical.as_bytes());
    let mut doc = ingest::parse(&canonical, &file.rel, kind);
    if let Some(title) = title {
        doc.title = title;
    }
    Box::new(Parsed {
        file,
        part_of,
        source_hash,
        canonical,
        mirror_hash,
        doc,
        previous: prev.cloned(),
        renamed_from: None,
    })
}

/// The file at `rel`, if there is a regular file there.
pub(super) fn found_file(root: &Path, rel: &str) -> Option<FoundFile> {
    let abs = root.join(rel);
    let md = std::fs::metadata(&abs).ok().filter(|m| m.is_file())?;
    Some(FoundFile { rel: rel.to_string(), size: md.len(), mtime_ns: walk::mtime_ns(&md), abs })
}

/// The paths of the documents that are parts of each file, by the file's path.
pub(super) fn parts_by_file(known: &HashMap<String, FileState>) -> HashMap<&str, Vec<&str>> {
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    for (rel, state) in known {
        if let Some(file) = &state.part_of {
            out.entry(file.as_str()).or_default().push(rel.as_str());
        }
    }
    out
}

/// How many active parts a file indexed by its parts has, when it is unchanged since they
/// were indexed: it has active parts and each holds the file's mtime (every sync that reads
/// the file stamps it on them). `None`: read the file again.
pub(super) fn unchanged_parts(known: &HashMap<String, FileState>, parts: &[&str], mtime_ns: i64) -> Option<u64> {
    let mut count = 0;
    for state in parts.iter().filter_map(|r| known.get(*r)).filter(|s| s.active) {
        if state.mtime_ns != mtime_ns {
            return None;
        }
        count += 1;
    }
    (count > 0).then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_file_is_unchanged_when_its_active_parts_hold_its_mtime() {
        let state = |id: i64, mtime_ns, active| FileState {
            id: crate::stores::DocKey(id),
            size: 10,
            mtime_ns,
            source_hash: format!("h{id}"),
            active,
            part_of: Some("box.mbox".into()),
            mirror_hash: String::new(),
        };
        let known: HashMap<String, FileState> = HashMap::from([
            ("box.mbox/00001.eml".to_string(), state(1, 7, true)),
            ("box.mbox/00002.eml".to_string(), state(2, 7, true)),
            // A message gone from the mailbox: its row stays, inactive, with an older mtime.
            ("box.mbox/00003.eml".to_string(), state(3, 5, false)),
        ]);
        let by_file = parts_by_file(&known);
        let mut parts = by_file.get("box.mbox").cloned().unwrap_or_default();
        parts.sort();
        assert_eq!(parts, ["box.mbox/00001.eml", "box.mbox/00002.eml", "box.mbox/00003.eml"]);
        assert_eq!(unchanged_parts(&known, &parts, 7), Some(2), "its two active parts");
        assert_eq!(unchanged_parts(&known, &parts, 8), None, "the file was written since");
        assert_eq!(unchanged_parts(&known, &[], 7), None, "never split: read it");
        let inactive: HashMap<String, FileState> =
            HashMap::from([("box.mbox/00001.eml".to_string(), state(1, 7, false))]);
        assert_eq!(unchanged_parts(&inactive, &["box.mbox/00001.eml"], 7), None, "no active part: read it");
    }

    #[test]
    fn mime_types_by_kind() {
        assert_eq!(mime_and_ext("x.md"), ("text/markdown".into(), ".md".into()));
        assert_eq!(mime_and_ext("x.Pdf"), ("application/pdf".into(), ".pdf".into()));
        assert_eq!(
            mime_and_ext("d/x.docx"),
            ("application/vnd.openxmlformats-officedocument.wordprocessingml.document".into(), ".docx".into())
        );
    }
}
