//! What a file of a collection holds, by its extension: the one rule the worker indexes and
//! writes by and the workspace shows and edits by.

use std::path::Path;

/// The kind of content a file holds, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Markdown,
    PlainText,
    /// An org-mode note: read as the Markdown it means, line for line; never written through
    /// the API (its syntax is its own).
    Org,
    /// Converted to text on indexing; never written through the API.
    Pdf,
    Docx,
    /// XLSX, XLSM, XLSB, XLS, ODS.
    Spreadsheet,
    /// A saved web page (`.html`, `.htm`): indexed as the Markdown of its main text.
    Html,
    /// A slide deck (`.pptx`, `.odp`): a section per slide.
    Slides,
    /// Mail: one message (`.eml`) or a mailbox (`.mbox`, a section per message).
    Mail,
}

impl SourceKind {
    /// A text note that the API may create and edit (the others are converted documents).
    pub fn is_text_note(self) -> bool {
        matches!(self, SourceKind::Markdown | SourceKind::PlainText)
    }

    /// Whether the stored text of this kind is Markdown as it is: a Markdown note, or a
    /// document its converter turned into Markdown (a sheet, a page, a deck, mail). An org
    /// note reads as Markdown after its own translation; the others are plain text.
    pub fn stores_markdown(self) -> bool {
        matches!(
            self,
            SourceKind::Markdown | SourceKind::Spreadsheet | SourceKind::Html | SourceKind::Slides | SourceKind::Mail
        )
    }
}

/// The kind of the file at `rel` (a path or a file name), `None` for any other extension.
pub fn source_kind(rel: &str) -> Option<SourceKind> {
    let ext = Path::new(rel).extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "md" | "markdown" | "mdx" => Some(SourceKind::Markdown),
        "txt" | "text" => Some(SourceKind::PlainText),
        "org" => Some(SourceKind::Org),
        "pdf" => Some(SourceKind::Pdf),
        "docx" => Some(SourceKind::Docx),
        "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => Some(SourceKind::Spreadsheet),
        "html" | "htm" => Some(SourceKind::Html),
        "pptx" | "odp" => Some(SourceKind::Slides),
        "eml" | "mbox" => Some(SourceKind::Mail),
        _ => None,
    }
}

/// Whether `rel` names a text note the API may create or edit.
pub fn is_text_note(rel: &str) -> bool {
    source_kind(rel).is_some_and(SourceKind::is_text_note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension() {
        assert_eq!(source_kind("a/b.MD"), Some(SourceKind::Markdown));
        assert_eq!(source_kind("a.txt"), Some(SourceKind::PlainText));
        assert_eq!(source_kind("a.PDF"), Some(SourceKind::Pdf));
        assert_eq!(source_kind("a.docx"), Some(SourceKind::Docx));
        assert_eq!(source_kind("a.doc"), None);
        assert_eq!(source_kind("plan.org"), Some(SourceKind::Org));
        assert_eq!(source_kind("Budget.XLSX"), Some(SourceKind::Spreadsheet));
        assert_eq!(source_kind("b.ods"), Some(SourceKind::Spreadsheet));
        assert_eq!(source_kind("saved/Page.HTM"), Some(SourceKind::Html));
        assert_eq!(source_kind("Deck.PPTX"), Some(SourceKind::Slides));
        assert_eq!(source_kind("talk.odp"), Some(SourceKind::Slides));
        assert_eq!(source_kind("mail/hello.eml"), Some(SourceKind::Mail));
        assert_eq!(source_kind("Inbox.mbox"), Some(SourceKind::Mail));
        assert!(!is_text_note("plan.org"));
        assert!(is_text_note("a.md") && is_text_note("a.txt"));
        assert!(!is_text_note("a.pdf") && !is_text_note("a.docx") && !is_text_note("a.png"));
    }
}
