//! Converters from document formats (PDF, DOCX, spreadsheets, HTML, slides, mail, records,
//! transcripts) to text plus a title, and the splitters of files that hold many records
//! ([`records`]).
//!
//! A converter only turns bytes into text: canonicalization and parsing are the ingest
//! module's job, exactly as for a plain-text note. Conversion runs on a thread of its own,
//! behind `catch_unwind` and a deadline, so a file that makes a parser panic or spin never
//! takes the worker (or the sync) down with it: it becomes a `ConvertError`, the indexer
//! counts the file as errored and keeps its previously indexed version.

mod docx;
mod embedded;
mod html;
mod mail;
mod package;
mod pdf;
pub mod records;
mod sheet;
mod slides;
mod transcript;

use protocol::source_kind::SourceKind;
use std::sync::mpsc;
use std::time::Duration;

/// The longest a single file may take to convert.
pub const CONVERT_TIMEOUT: Duration = Duration::from_secs(30);
/// The stack of a conversion thread (reserved, used as needed).
const CONVERT_STACK_BYTES: usize = 64 * 1024 * 1024;
/// Converted text beyond this many bytes is cut off (the rest of the file is not indexed).
pub const MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;
/// A title taken from the first line of the text is cut to this many characters.
const MAX_TITLE_CHARS: usize = 200;

/// The kinds of file that have a converter: the [`SourceKind`]s converted to text on indexing,
/// so that [`convert`] cannot be asked to convert a note that is text already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pdf,
    Docx,
    /// XLSX, XLSM, XLSB, XLS and ODS: one Markdown table per sheet.
    Spreadsheet,
    /// HTML pages, as Markdown.
    Html,
    /// PPTX and ODP: a section per slide.
    Slides,
    /// One message (`.eml`), a mailbox split into messages (`.mbox`, [`record_parts`]) or
    /// another mail file holding a mailbox (a section per message).
    Mail,
    /// JSON Lines read whole: a section per record (a file is split into its records,
    /// [`records::Split`]; this is its text when it is read as one).
    Records,
    /// A calendar read whole: a section per event.
    Calendar,
    /// An Internet shortcut (`.url`).
    Bookmark,
    /// WebVTT and SRT: a section per stretch of time.
    Transcript,
}

impl Format {
    /// The converter of a kind of file, if it is converted to text on indexing.
    pub fn of(kind: SourceKind) -> Option<Format> {
        match kind {
            SourceKind::Pdf => Some(Format::Pdf),
            SourceKind::Docx => Some(Format::Docx),
            SourceKind::Spreadsheet => Some(Format::Spreadsheet),
            SourceKind::Html => Some(Format::Html),
            SourceKind::Slides => Some(Format::Slides),
            SourceKind::Mail => Some(Format::Mail),
            SourceKind::Records => Some(Format::Records),
            SourceKind::Calendar => Some(Format::Calendar),
            SourceKind::Bookmark => Some(Format::Bookmark),
            SourceKind::Transcript => Some(Format::Transcript),
            SourceKind::Markdown
            | SourceKind::PlainText
            | SourceKind::Org
            | SourceKind::Code(_)
            | SourceKind::Image => None,
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Format::Pdf => "application/pdf",
            Format::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            Format::Spreadsheet => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Format::Html => "text/html",
            Format::Slides => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            Format::Mail => "message/rfc822",
            Format::Records => "application/jsonl",
            Format::Calendar => "text/calendar",
            Format::Bookmark => "application/internet-shortcut",
            Format::Transcript => "text/vtt",
        }
    }
}

/// What a converter extracted.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The document's own title (metadata, first heading, else first non-empty line); `None`
    /// when the document has none, so the file name is used.
    pub title: Option<String>,
    /// Plain text, paragraphs separated by blank lines; not yet canonical.
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("not a readable PDF: {0}")]
    Pdf(String),
    #[error("the PDF is encrypted")]
    Encrypted,
    #[error("not a readable DOCX: {0}")]
    Docx(String),
    #[error("not a readable spreadsheet: {0}")]
    Spreadsheet(String),
    #[error("not a readable HTML page: {0}")]
    Html(String),
    #[error("not a readable slide deck: {0}")]
    Slides(String),
    #[error("not a readable mail message or mailbox: {0}")]
    Mail(String),
    #[error("{0}")]
    Records(String),
    #[error("not a readable transcript: {0}")]
    Transcript(String),
    #[error("the part {part} is larger than {limit} bytes")]
    TooLarge { part: String, limit: u64 },
    #[error("the converter crashed: {0}")]
    Panicked(String),
    #[error("the conversion took longer than {0:?}")]
    TimedOut(Duration),
    #[error("could not start the converter thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Converts a file's bytes, isolated from the caller: a panic or an overrun is an error.
///
/// On a timeout the conversion thread is left to finish on its own (a thread cannot be
/// stopped safely); its result is dropped.
pub fn convert(format: Format, bytes: Vec<u8>) -> Result<Converted, ConvertError> {
    isolated(
        move || match format {
            Format::Pdf => pdf::convert(&bytes),
            Format::Docx => docx::convert(&bytes),
            Format::Spreadsheet => sheet::convert(&bytes),
            Format::Html => html::convert(&bytes),
            Format::Slides => slides::convert(&bytes),
            Format::Mail => mail::convert(&bytes),
            Format::Records => records::whole(records::jsonl::records(&bytes)?),
            Format::Calendar => records::whole(records::calendar::records(&bytes)?),
            Format::Bookmark => records::bookmarks::shortcut(&bytes),
            Format::Transcript => transcript::convert(&bytes),
        },
        CONVERT_TIMEOUT,
    )
}

/// Runs `job` on a thread of its own behind `catch_unwind`, waiting at most `timeout`.
pub use pdf::{is_scan, PagePicture, PictureData};

/// The page pictures of a scanned PDF ([`pdf::page_pictures`]), under the same isolation and
/// time budget as [`convert`].
pub fn scanned_pages(bytes: Vec<u8>) -> Result<Vec<PagePicture>, ConvertError> {
    isolated(move || pdf::page_pictures(&bytes), CONVERT_TIMEOUT)
}

pub use embedded::{has_pictures, EmbeddedPicture};

/// The pictures a document shows ([`embedded::pictures`]), under the same isolation and time
/// budget as [`convert`].
pub fn embedded_pictures(format: Format, bytes: Vec<u8>) -> Result<Vec<EmbeddedPicture>, ConvertError> {
    isolated(move || embedded::pictures(format, &bytes), CONVERT_TIMEOUT)
}

pub use records::{may_split, split_of, Part, Split};

/// A file's records ([`records::parts`]), each converted on its own unless `indexed` (source
/// hashes by part key) holds its bytes at its key, under the same isolation and time budget
/// as [`convert`] (for the whole file).
pub fn record_parts(
    split: Split,
    bytes: Vec<u8>,
    indexed: std::collections::HashMap<String, String>,
) -> Result<Vec<Part>, ConvertError> {
    isolated(move || records::parts(split, &bytes, &indexed), CONVERT_TIMEOUT)
}

fn isolated<T, F>(job: F, timeout: Duration) -> Result<T, ConvertError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ConvertError> + Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    // Parsers recurse per level of nesting: room for deep (but bounded) documents.
    std::thread::Builder::new().name("svc-convert".into()).stack_size(CONVERT_STACK_BYTES).spawn(move || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
            .unwrap_or_else(|payload| Err(ConvertError::Panicked(panic_message(payload.as_ref()))));
        // The receiver is gone after a timeout: nothing left to tell.
        let _ = tx.send(result);
    })?;
    match rx.recv_timeout(timeout) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(ConvertError::TimedOut(timeout)),
        // The thread ended without sending: only a panic that escaped catch_unwind does that.
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(ConvertError::Panicked("the converter thread died".into())),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic without a message".to_string())
}

/// The first non-empty line of `text`, trimmed and cut to a title's length.
pub(crate) fn first_line_title(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(clean_title(line))
}

/// Collapses runs of whitespace and cuts to `MAX_TITLE_CHARS`.
pub(crate) fn clean_title(raw: &str) -> String {
    let collapsed = crate::index::ingest::collapse_whitespace(raw);
    match collapsed.char_indices().nth(MAX_TITLE_CHARS) {
        Some((cut, _)) => collapsed[..cut].trim_end().to_string(),
        None => collapsed,
    }
}

/// A line of converted text kept as text: a `#` that would open a Markdown heading (first on
/// the line, after any white space) gets a backslash, so a message's, a slide's or a record's
/// text never becomes a section of its document.
pub(crate) fn not_a_heading(line: &str) -> std::borrow::Cow<'_, str> {
    let text = line.trim_start();
    if text.starts_with('#') {
        std::borrow::Cow::Owned(format!("{}\\{text}", &line[..line.len() - text.len()]))
    } else {
        std::borrow::Cow::Borrowed(line)
    }
}

/// A non-empty title, or `None`.
pub(crate) fn non_empty_title(raw: &str) -> Option<String> {
    let t = clean_title(raw);
    (!t.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_titles_skip_blank_lines_and_are_cut() {
        assert_eq!(first_line_title("\n  \n  Hello   world \nsecond"), Some("Hello world".into()));
        assert_eq!(first_line_title(" \n\t\n"), None);
        let long = "x".repeat(500);
        assert_eq!(first_line_title(&long).map(|t| t.chars().count()), Some(MAX_TITLE_CHARS));
        assert_eq!(non_empty_title("  "), None);
    }

    #[test]
    fn lines_that_would_be_headings_are_escaped() {
        assert_eq!(not_a_heading("# x"), "\\# x");
        assert_eq!(not_a_heading("  ## x"), "  \\## x");
        assert_eq!(not_a_heading("a # b"), "a # b");
        assert_eq!(not_a_heading(""), "");
    }

    #[test]
    fn garbage_is_an_error_for_both_formats() {
        let junk: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        assert!(matches!(convert(Format::Pdf, junk.clone()), Err(ConvertError::Pdf(_))));
        assert!(matches!(convert(Format::Docx, junk), Err(ConvertError::Docx(_))));
        assert!(matches!(convert(Format::Pdf, Vec::new()), Err(ConvertError::Pdf(_))));
    }

    #[test]
    fn a_panicking_converter_is_an_error_not_a_crash() {
        let r = isolated(|| -> Result<Converted, ConvertError> { panic!("boom {}", 7) }, Duration::from_secs(5));
        match r {
            Err(ConvertError::Panicked(m)) => assert_eq!(m, "boom 7"),
            other => panic!("expected a Panicked error, got {other:?}"),
        }
        let r = isolated(|| -> Result<Converted, ConvertError> { std::panic::panic_any(42u8) }, Duration::from_secs(5));
        assert!(matches!(r, Err(ConvertError::Panicked(m)) if m == "panic without a message"));
    }

    #[test]
    fn an_overrun_times_out() {
        let slow = || {
            std::thread::sleep(Duration::from_secs(2));
            Ok(Converted { title: None, text: String::new() })
        };
        let started = std::time::Instant::now();
        assert!(matches!(isolated(slow, Duration::from_millis(50)), Err(ConvertError::TimedOut(_))));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_result_within_the_deadline_is_returned() {
        let ok = isolated(|| Ok(Converted { title: Some("T".into()), text: "x".into() }), Duration::from_secs(5));
        assert_eq!(ok.ok().and_then(|c| c.title), Some("T".into()));
    }

    #[test]
    fn mime_types() {
        assert_eq!(Format::Pdf.mime(), "application/pdf");
        assert!(Format::Docx.mime().ends_with("wordprocessingml.document"));
    }
}
