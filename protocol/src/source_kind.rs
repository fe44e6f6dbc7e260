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
    /// Mail: one message (`.eml`) or a mailbox (`.mbox`, a document per message).
    Mail,
    /// A file of records, a document per record: JSON Lines (`.jsonl`, `.ndjson`, a record per
    /// line), the path of a record `<file>/<key>.jsonl`.
    Records,
    /// A calendar (`.ics`): a document per event, at `<file>/<uid>.ics`.
    Calendar,
    /// A bookmark: an Internet shortcut (`.url`), or one bookmark of a browser's bookmark
    /// export (a Netscape bookmark file saved as `.html`) at `<file>/<key>.url`.
    Bookmark,
    /// A transcript with cue times (`.vtt`, `.srt`): one document, a section per stretch of
    /// time headed by its start (`## 12:31`).
    Transcript,
    /// A picture (`.png`, `.jpg`, `.webp`, `.tiff`, `.bmp`, `.gif`): its text is what OCR
    /// reads in it, found in the background after the file is indexed by its name.
    Image,
    /// Source code or a data file, read as text and cut at its syntax where the language
    /// has a grammar; never written through the API.
    Code(CodeLanguage),
}

/// The language of a code file, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeLanguage {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    Shell,
    Sql,
    Json,
    Yaml,
    Toml,
}

impl CodeLanguage {
    /// Every language, for tables and filters.
    pub const ALL: [CodeLanguage; 14] = [
        CodeLanguage::Rust,
        CodeLanguage::Python,
        CodeLanguage::JavaScript,
        CodeLanguage::TypeScript,
        CodeLanguage::Tsx,
        CodeLanguage::Go,
        CodeLanguage::Java,
        CodeLanguage::C,
        CodeLanguage::Cpp,
        CodeLanguage::Shell,
        CodeLanguage::Sql,
        CodeLanguage::Json,
        CodeLanguage::Yaml,
        CodeLanguage::Toml,
    ];

    /// The language's name in results and filters.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeLanguage::Rust => "rust",
            CodeLanguage::Python => "python",
            CodeLanguage::JavaScript => "javascript",
            CodeLanguage::TypeScript => "typescript",
            CodeLanguage::Tsx => "tsx",
            CodeLanguage::Go => "go",
            CodeLanguage::Java => "java",
            CodeLanguage::C => "c",
            CodeLanguage::Cpp => "cpp",
            CodeLanguage::Shell => "shell",
            CodeLanguage::Sql => "sql",
            CodeLanguage::Json => "json",
            CodeLanguage::Yaml => "yaml",
            CodeLanguage::Toml => "toml",
        }
    }

    /// The language a name (`as_str`, any case) stands for.
    pub fn parse(name: &str) -> Option<CodeLanguage> {
        let name = name.trim().to_ascii_lowercase();
        CodeLanguage::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The language of a file extension (lowercase, without the dot).
    pub fn of_extension(ext: &str) -> Option<CodeLanguage> {
        match kind_of_extension(ext)? {
            SourceKind::Code(lang) => Some(lang),
            _ => None,
        }
    }
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
            SourceKind::Markdown
                | SourceKind::Spreadsheet
                | SourceKind::Html
                | SourceKind::Slides
                | SourceKind::Mail
                | SourceKind::Records
                | SourceKind::Calendar
                | SourceKind::Bookmark
                | SourceKind::Transcript
        )
    }
}

/// Every extension svc reads (lowercase, without the dot) and what it holds: the one table
/// [`source_kind`], [`known_extensions`] and [`CodeLanguage::of_extension`] read.
const EXTENSIONS: &[(&str, SourceKind)] = {
    use CodeLanguage::*;
    use SourceKind::*;
    &[
        ("md", Markdown),
        ("markdown", Markdown),
        ("mdx", Markdown),
        ("txt", PlainText),
        ("text", PlainText),
        ("org", Org),
        ("pdf", Pdf),
        ("docx", Docx),
        ("xlsx", Spreadsheet),
        ("xlsm", Spreadsheet),
        ("xlsb", Spreadsheet),
        ("xls", Spreadsheet),
        ("ods", Spreadsheet),
        ("html", Html),
        ("htm", Html),
        ("pptx", Slides),
        ("odp", Slides),
        ("eml", Mail),
        ("mbox", Mail),
        ("jsonl", Records),
        ("ndjson", Records),
        ("ics", Calendar),
        ("url", Bookmark),
        ("vtt", Transcript),
        ("srt", Transcript),
        ("png", Image),
        ("jpg", Image),
        ("jpeg", Image),
        ("webp", Image),
        ("tif", Image),
        ("tiff", Image),
        ("bmp", Image),
        ("gif", Image),
        ("rs", Code(Rust)),
        ("py", Code(Python)),
        ("pyi", Code(Python)),
        ("js", Code(JavaScript)),
        ("mjs", Code(JavaScript)),
        ("cjs", Code(JavaScript)),
        ("jsx", Code(JavaScript)),
        ("ts", Code(TypeScript)),
        ("mts", Code(TypeScript)),
        ("cts", Code(TypeScript)),
        ("tsx", Code(Tsx)),
        ("go", Code(Go)),
        ("java", Code(Java)),
        ("c", Code(C)),
        ("h", Code(C)),
        ("cc", Code(Cpp)),
        ("cpp", Code(Cpp)),
        ("cxx", Code(Cpp)),
        ("hpp", Code(Cpp)),
        ("hh", Code(Cpp)),
        ("hxx", Code(Cpp)),
        ("sh", Code(Shell)),
        ("bash", Code(Shell)),
        ("zsh", Code(Shell)),
        ("sql", Code(Sql)),
        ("json", Code(Json)),
        ("yaml", Code(Yaml)),
        ("yml", Code(Yaml)),
        ("toml", Code(Toml)),
    ]
};

/// Every extension svc reads: what a collection indexes when its `include` is left empty.
pub fn known_extensions() -> impl Iterator<Item = &'static str> {
    EXTENSIONS.iter().map(|(ext, _)| *ext)
}

/// The kind of a file extension (lowercase, without the dot).
fn kind_of_extension(ext: &str) -> Option<SourceKind> {
    EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|(_, kind)| *kind)
}

/// The kind of the file at `rel` (a path or a file name), `None` for any other extension.
pub fn source_kind(rel: &str) -> Option<SourceKind> {
    kind_of_extension(&Path::new(rel).extension()?.to_str()?.to_ascii_lowercase())
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
        assert_eq!(source_kind("scans/Whiteboard.JPEG"), Some(SourceKind::Image));
        assert_eq!(source_kind("mail/hello.eml"), Some(SourceKind::Mail));
        assert_eq!(source_kind("Inbox.mbox"), Some(SourceKind::Mail));
        assert_eq!(source_kind("export.NDJSON"), Some(SourceKind::Records));
        assert_eq!(source_kind("cal.ics/abc@example.com.ics"), Some(SourceKind::Calendar));
        assert_eq!(source_kind("bookmarks.html/3f2a9c01.url"), Some(SourceKind::Bookmark));
        assert_eq!(source_kind("talk.srt"), Some(SourceKind::Transcript));
        assert_eq!(source_kind("src/main.rs"), Some(SourceKind::Code(CodeLanguage::Rust)));
        assert_eq!(source_kind("web/App.TSX"), Some(SourceKind::Code(CodeLanguage::Tsx)));
        assert_eq!(source_kind("ci.yml"), Some(SourceKind::Code(CodeLanguage::Yaml)));
        assert!(!is_text_note("lib.rs"));
        for ext in known_extensions() {
            assert!(source_kind(&format!("f.{ext}")).is_some(), "{ext}");
        }
        assert_eq!(CodeLanguage::of_extension("hxx"), Some(CodeLanguage::Cpp));
        assert_eq!(CodeLanguage::of_extension("md"), None);
        for lang in CodeLanguage::ALL {
            assert!(EXTENSIONS.iter().any(|(_, k)| *k == SourceKind::Code(lang)), "{lang:?} has an extension");
        }
        assert_eq!(CodeLanguage::parse(" Rust "), Some(CodeLanguage::Rust));
        assert_eq!(CodeLanguage::parse("cobol"), None);
        for lang in CodeLanguage::ALL {
            assert_eq!(CodeLanguage::parse(lang.as_str()), Some(lang));
            assert!(CodeLanguage::ALL.iter().filter(|l| l.as_str() == lang.as_str()).count() == 1);
        }
        assert!(!is_text_note("plan.org"));
        assert!(is_text_note("a.md") && is_text_note("a.txt"));
        assert!(!is_text_note("a.pdf") && !is_text_note("a.docx") && !is_text_note("a.png"));
    }
}
