//! Files that hold many records, each indexed as a document of its own: a *part* of the file,
//! at `<file>/<key>` (`svc://c/cal.ics/standup-example.com.ics`). A mailbox's messages, a JSON
//! Lines file's records, a calendar's events and a browser's bookmark export's bookmarks.
//!
//! A splitter finds a file's records, each with a key unique in the file and the bytes its
//! hash is taken of; [`into_parts`] converts each record whose bytes are not the ones already
//! indexed at its key, on its own (a record that makes a parser panic is that record's error,
//! not the file's). The same records rendered one after another are the file's text when it is
//! read whole (`explain`'s check that it can be read, [`whole`]).

pub mod bookmarks;
pub mod calendar;
pub mod jsonl;

use super::{not_a_heading, ConvertError, Converted};
use crate::index::ingest::collapse_whitespace;
use protocol::source_kind::SourceKind;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A file's records past this many are left out (the file is still indexed).
pub const MAX_RECORDS: usize = 10_000;
/// A key made from a record's own id is cut to this many bytes.
const MAX_KEY_BYTES: usize = 96;

/// How a file is split into documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// `.mbox`: a document per message, keyed by position (`00002.eml`).
    Mailbox,
    /// `.jsonl`, `.ndjson`: a document per line, keyed by its id field, else its line number.
    JsonLines,
    /// `.ics`: a document per event, keyed by its UID (and recurrence id).
    Calendar,
    /// A Netscape bookmark file (a browser's bookmark export, saved as `.html`): a document
    /// per bookmark, keyed by its address.
    Bookmarks,
}

impl Split {
    /// The kind of each part's document (its key's extension says the same).
    pub fn part_kind(self) -> SourceKind {
        match self {
            Split::Mailbox => SourceKind::Mail,
            Split::JsonLines => SourceKind::Records,
            Split::Calendar => SourceKind::Calendar,
            Split::Bookmarks => SourceKind::Bookmark,
        }
    }

    /// The split a file's name asks for, and whether a page must be looked into.
    fn by_name(rel: &str) -> Option<ByName> {
        let ext = Path::new(rel).extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "mbox" => ByName::Is(Split::Mailbox),
            "jsonl" | "ndjson" => ByName::Is(Split::JsonLines),
            "ics" => ByName::Is(Split::Calendar),
            "html" | "htm" => ByName::PageMayBe,
            _ => return None,
        })
    }
}

enum ByName {
    Is(Split),
    /// A saved page is a bookmark export when its first bytes say so.
    PageMayBe,
}

/// How the file at `rel` (on disk at `abs`) is split into documents, if it is: by its
/// extension, and for a saved page (`.html`, `.htm`) by its first bytes (a Netscape bookmark
/// file's doctype). A page that cannot be read is not split.
pub fn split_of(rel: &str, abs: &Path) -> Option<Split> {
    match Split::by_name(rel)? {
        ByName::Is(split) => Some(split),
        ByName::PageMayBe => bookmarks::is_bookmark_file(abs).then_some(Split::Bookmarks),
    }
}

/// Whether a file of this name may be split (its extension is one [`split_of`] looks at): a
/// file whose parts may have been indexed before.
pub fn may_split(rel: &str) -> bool {
    Split::by_name(rel).is_some()
}

/// One record of a file: its key (the last segment of its document's path), its bytes' hash
/// and size, and the record converted or why it cannot be (`None`: not converted, its bytes
/// are the ones already indexed at that key).
#[derive(Debug)]
pub struct Part {
    pub key: String,
    pub source_hash: String,
    pub size: u64,
    pub converted: Option<Result<Converted, String>>,
}

/// A record as a splitter finds it.
pub(super) trait Record {
    /// The bytes the record's hash is taken of: the same bytes, the same document.
    fn raw(&self) -> &[u8];
    fn convert(&self) -> Result<Converted, ConvertError>;
}

/// A file's parts, each converted unless `indexed` (source hashes by key) holds its bytes at
/// its key already. An error when no record of the file can be read.
pub(super) fn into_parts<R: Record>(
    records: Vec<(String, R)>,
    indexed: &HashMap<String, String>,
    none_readable: impl FnOnce() -> ConvertError,
) -> Result<Vec<Part>, ConvertError> {
    let mut out = Vec::with_capacity(records.len());
    for (key, record) in records.into_iter().take(MAX_RECORDS) {
        let raw = record.raw();
        let source_hash = crate::digest::sha256_hex(raw);
        let converted = match indexed.get(&key) {
            Some(h) if *h == source_hash => None,
            _ => Some(match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| record.convert())) {
                Ok(converted) => converted.map_err(|e| e.to_string()),
                Err(_) => Err("the parser crashed on this record".to_string()),
            }),
        };
        out.push(Part { key, source_hash, size: raw.len() as u64, converted });
    }
    // A file with no record at all (an export emptied) has no parts: the ones it had leave.
    if !out.is_empty() && out.iter().all(|p| matches!(p.converted, Some(Err(_)))) {
        return Err(none_readable());
    }
    Ok(out)
}

/// A file's parts ([`into_parts`]) by its split.
pub fn parts(split: Split, bytes: &[u8], indexed: &HashMap<String, String>) -> Result<Vec<Part>, ConvertError> {
    match split {
        Split::Mailbox => super::mail::parts(bytes, indexed),
        Split::JsonLines => into_parts(jsonl::records(bytes)?, indexed, || {
            ConvertError::Records("the file holds no readable JSON record".into())
        }),
        Split::Calendar => into_parts(calendar::records(bytes)?, indexed, || {
            ConvertError::Records("the calendar holds no readable event".into())
        }),
        Split::Bookmarks => into_parts(bookmarks::records(bytes)?, indexed, || {
            ConvertError::Records("the file holds no bookmark".into())
        }),
    }
}

/// A file of records read whole: its records' texts one after another, each under its own
/// heading, front matter left out.
pub(super) fn whole<R: Record>(records: Vec<(String, R)>) -> Result<Converted, ConvertError> {
    let mut text = String::new();
    for (_, record) in records.into_iter().take(MAX_RECORDS) {
        let Ok(converted) = record.convert() else { continue };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(without_front_matter(&converted.text));
    }
    if text.is_empty() {
        return Err(ConvertError::Records("no readable record".into()));
    }
    Ok(Converted { title: None, text })
}

fn without_front_matter(text: &str) -> &str {
    text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---\n")).map_or(text, |(_, body)| body.trim_start())
}

/// What a record's document says about itself: its front matter.
#[derive(Debug, Default, Serialize)]
pub(super) struct FrontMatter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A record rendered: front matter, `# heading`, `Name: value` lines, then its text.
#[derive(Debug, Default)]
pub(super) struct Rendered {
    pub front: FrontMatter,
    pub heading: String,
    pub fields: Vec<(String, String)>,
    pub text: String,
}

impl Rendered {
    pub fn into_converted(self) -> Result<Converted, ConvertError> {
        let yaml = serde_norway::to_string(&self.front).map_err(|e| ConvertError::Records(e.to_string()))?;
        let mut out = if yaml.trim() == "{}" { String::new() } else { format!("---\n{yaml}---\n\n") };
        out.push_str(&format!("# {}\n\n", collapse_whitespace(&self.heading)));
        for (name, value) in &self.fields {
            let name = collapse_whitespace(name);
            out.push_str(&format!("{}: {}  \n", not_a_heading(&name), collapse_whitespace(value)));
        }
        let text = self.text.trim();
        if !text.is_empty() {
            if !self.fields.is_empty() {
                out.push('\n');
            }
            for line in text.lines() {
                out.push_str(&not_a_heading(line.trim_end()));
                out.push('\n');
            }
        }
        Ok(Converted { title: self.front.title, text: out })
    }
}

/// A key made of a record's own id: letters, digits and `-_.` kept, any other character a
/// `-`, with the parts' extension; an id longer than [`MAX_KEY_BYTES`] is cut and ends with a
/// hash of the whole id (ids that share a long beginning stay apart). `None` for an id with
/// nothing to keep.
pub(super) fn key_from_id(id: &str, ext: &str) -> Option<String> {
    let id = id.trim();
    let mut key = String::new();
    let mut cut = false;
    for c in id.chars() {
        if key.len() + c.len_utf8() > MAX_KEY_BYTES {
            cut = true;
            break;
        }
        key.push(if c.is_alphanumeric() || "-_.".contains(c) { c } else { '-' });
    }
    let mut key = key.trim_matches(|c| c == '-' || c == '.').to_string();
    if key.is_empty() {
        return None;
    }
    if cut {
        key.push('-');
        key.push_str(&crate::digest::sha256_hex(id.as_bytes())[..10]);
    }
    Some(format!("{key}.{ext}"))
}

/// Keys made unique in their file: a key seen before gets `-2`, `-3`… before its extension.
pub(super) fn unique_keys<R>(records: Vec<(String, R)>) -> Vec<(String, R)> {
    let mut seen: HashSet<String> = HashSet::new();
    records
        .into_iter()
        .map(|(key, r)| {
            let mut candidate = key.clone();
            let (stem, ext) = key.rsplit_once('.').unwrap_or((key.as_str(), ""));
            let mut n = 2;
            while !seen.insert(candidate.clone()) {
                candidate = format!("{stem}-{n}.{ext}");
                n += 1;
            }
            (candidate, r)
        })
        .collect()
}

/// A time given as seconds (or milliseconds, or microseconds, by its size) since 1970, as
/// RFC 3339.
pub(super) fn epoch_to_rfc3339(n: i64) -> Option<String> {
    let secs = match n.unsigned_abs() {
        a if a > 100_000_000_000_000 => n / 1_000_000,
        a if a > 100_000_000_000 => n / 1000,
        _ => n,
    };
    let t = time::OffsetDateTime::from_unix_timestamp(secs).ok()?;
    t.format(&time::format_description::well_known::Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_ids_readable_and_unique() {
        assert_eq!(key_from_id("abc@example.com", "ics").as_deref(), Some("abc-example.com.ics"));
        assert_eq!(key_from_id(" a/b c ", "jsonl").as_deref(), Some("a-b-c.jsonl"));
        assert_eq!(key_from_id("../..", "jsonl"), None);
        assert_eq!(key_from_id("", "jsonl"), None);
        let (long_a, long_b) = (format!("{}a", "x".repeat(500)), format!("{}b", "x".repeat(500)));
        let (a, b) = (key_from_id(&long_a, "ics").unwrap(), key_from_id(&long_b, "ics").unwrap());
        assert!(a.len() <= MAX_KEY_BYTES + 16 && a != b, "{a} {b}");
        let keys: Vec<String> = unique_keys(vec![
            ("a.ics".to_string(), ()),
            ("a.ics".into(), ()),
            ("b.ics".into(), ()),
            ("a.ics".into(), ()),
        ])
        .into_iter()
        .map(|(k, _)| k)
        .collect();
        assert_eq!(keys, ["a.ics", "a-2.ics", "b.ics", "a-3.ics"]);
    }

    #[test]
    fn splits_by_name_and_pages_by_their_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("page.html");
        std::fs::write(&page, "<!doctype html><title>x</title>").unwrap();
        let marks = dir.path().join("bookmarks_12_4_26.html");
        std::fs::write(&marks, "\u{feff}<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<TITLE>Bookmarks</TITLE>").unwrap();
        assert_eq!(split_of("page.html", &page), None);
        assert_eq!(split_of("bookmarks_12_4_26.html", &marks), Some(Split::Bookmarks));
        assert_eq!(split_of("gone.htm", &dir.path().join("gone.htm")), None);
        assert!(may_split("gone.htm"));
        assert_eq!(split_of("a/Inbox.MBOX", Path::new("/nowhere")), Some(Split::Mailbox));
        assert_eq!(split_of("x.ndjson", Path::new("/nowhere")), Some(Split::JsonLines));
        assert_eq!(split_of("cal.ics", Path::new("/nowhere")), Some(Split::Calendar));
        assert_eq!(split_of("notes.md", Path::new("/nowhere")), None);
        assert!(!may_split("talk.vtt"));
    }

    #[test]
    fn epochs_in_seconds_or_milliseconds() {
        assert_eq!(epoch_to_rfc3339(1_700_000_000).as_deref(), Some("2023-11-14T22:13:20Z"));
        assert_eq!(epoch_to_rfc3339(1_700_000_000_000).as_deref(), Some("2023-11-14T22:13:20Z"));
        assert_eq!(epoch_to_rfc3339(1_700_000_000_000_000).as_deref(), Some("2023-11-14T22:13:20Z"));
    }
}
