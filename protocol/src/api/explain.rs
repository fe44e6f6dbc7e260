//! `GET /api/explain`: whether a path is indexed and, when it is not, the one rule that left
//! it out.

use serde::{Deserialize, Serialize};

/// Where a path stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExplainVerdict {
    /// A document of the index.
    Indexed,
    /// A rule leaves it out (`rule` says which).
    LeftOut,
    /// No rule leaves it out: the next sync or the watcher indexes it.
    NotYetIndexed,
    /// No file is there (in a collection's folder).
    Missing,
    /// No collection's folder holds it.
    Outside,
}

/// The kinds of rule that leave a file out, in the order they are asked.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutKind {
    /// An editor's or a tool's temporary file (swap file, backup, lock file).
    Litter,
    /// A name that is never notes (`.git`, `node_modules`, `.venv`, `__pycache__`…).
    NeverNotes,
    /// A hidden file or folder (its name starts with a dot).
    Hidden,
    /// A folder on the way holds a `CACHEDIR.TAG` (build output, caches).
    CacheDir,
    /// A line of `.svcignore`, `.ignore` or `.gitignore`.
    IgnoreFile,
    /// The collection's pattern and include globs do not take it.
    NotIncluded,
    /// One of the collection's exclude globs takes it.
    Excluded,
    /// Over the size limit.
    TooLarge,
    /// A format svc does not read.
    UnsupportedFormat,
    /// It could not be read or converted (`detail` has the message).
    Unreadable,
}

/// The rule that leaves a file out.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeftOutBy {
    pub kind: LeftOutKind,
    /// Where the rule is written: the ignore file (absolute path), the folder holding the
    /// `CACHEDIR.TAG` or bearing the name (relative to the collection).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The ignore file's line (from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The ignore file's line as written, or the collection's glob.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The parse error, or the size against the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// `GET /api/explain?path=`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExplainResponse {
    /// The path asked about, absolute (a `svc://` URI as its file).
    pub path: String,
    pub verdict: ExplainVerdict,
    pub indexed: bool,
    /// The collection whose folder holds the path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// Its `svc://` URI (inside a collection).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The document, when indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docid: Option<String>,
    /// The rule that leaves it out (`verdict: left_out`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<LeftOutBy>,
    /// The verdict in one sentence, for a person.
    pub message: String,
}
