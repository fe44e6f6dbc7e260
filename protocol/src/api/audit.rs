//! `GET /api/audit` and `svc audit`: read-only findings over the index and the folders it
//! reads, bounded per kind and in a stable order.

use super::LeftOutBy;
use serde::{Deserialize, Serialize};

/// What a finding is about, in the order findings are listed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// A file that cannot be read or converted (the index keeps its previous version, if any).
    Unreadable,
    /// A link that reaches no document.
    BrokenLink,
    /// A link to a heading or block that its note does not have.
    MissingAnchor,
    /// Notes that share a file name which links name bare: each such link reaches one of them
    /// by rule (the linking note's folder, else the shortest path).
    AmbiguousName,
    /// A file whose size or modification time differs from what the index holds.
    ChangedOnDisk,
    /// A document of the index whose file is gone.
    GoneFromDisk,
    /// A file the rules take that the index does not hold.
    NotIndexed,
    /// A document the embedding model has not embedded: waiting for it, or failed on.
    NoVectors,
    /// A file or folder a rule leaves out (`rule` says which).
    LeftOut,
}

/// How much a finding asks of its reader.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditSeverity {
    /// Something is lost to search: a file svc cannot read.
    Error,
    /// Something a user may want to mend, or that the index has not caught up with.
    Warning,
    /// A rule at work, or work under way.
    Info,
}

impl AuditKind {
    pub const ALL: [AuditKind; 9] = [
        AuditKind::Unreadable,
        AuditKind::BrokenLink,
        AuditKind::MissingAnchor,
        AuditKind::AmbiguousName,
        AuditKind::ChangedOnDisk,
        AuditKind::GoneFromDisk,
        AuditKind::NotIndexed,
        AuditKind::NoVectors,
        AuditKind::LeftOut,
    ];

    pub fn severity(self) -> AuditSeverity {
        match self {
            AuditKind::Unreadable => AuditSeverity::Error,
            AuditKind::BrokenLink
            | AuditKind::MissingAnchor
            | AuditKind::AmbiguousName
            | AuditKind::ChangedOnDisk
            | AuditKind::GoneFromDisk
            | AuditKind::NotIndexed => AuditSeverity::Warning,
            AuditKind::NoVectors | AuditKind::LeftOut => AuditSeverity::Info,
        }
    }

    /// The kind's name on the wire (`broken_link`).
    pub fn name(self) -> &'static str {
        match self {
            AuditKind::Unreadable => "unreadable",
            AuditKind::BrokenLink => "broken_link",
            AuditKind::MissingAnchor => "missing_anchor",
            AuditKind::AmbiguousName => "ambiguous_name",
            AuditKind::ChangedOnDisk => "changed_on_disk",
            AuditKind::GoneFromDisk => "gone_from_disk",
            AuditKind::NotIndexed => "not_indexed",
            AuditKind::NoVectors => "no_vectors",
            AuditKind::LeftOut => "left_out",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditFinding {
    pub kind: AuditKind,
    pub severity: AuditSeverity,
    pub collection: String,
    /// The file, or the folder (ending in `/`), relative to the collection's folder.
    pub path: String,
    /// The document's address, when the finding is about a document of the index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Where the link is written (from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// What the link names, as written (`Note` of `[[Note#Heading]]`), or the shared name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The heading or block the link names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// The rule that leaves the file or folder out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<LeftOutBy>,
    /// The notes that share the name, the one bare links reach from the root first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// The finding in one sentence, for a person.
    pub message: String,
}

/// How many findings of one kind there are, and how many of them are listed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditCount {
    pub kind: AuditKind,
    pub severity: AuditSeverity,
    pub count: u64,
    pub listed: u64,
}

/// `GET /api/audit`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditResponse {
    /// The collections looked at.
    pub collections: Vec<String>,
    pub checked_at: String,
    /// Findings of each kind listed at most.
    pub limit_per_kind: u32,
    /// No finding of severity `error` or `warning`.
    pub clean: bool,
    /// Every kind, in listing order, with its count (zero included).
    pub counts: Vec<AuditCount>,
    /// Ordered by kind, collection, path, line and column.
    pub findings: Vec<AuditFinding>,
    /// Whether documents without vectors were looked for (an embedding model is loaded).
    pub vectors_checked: bool,
    /// The walk of the folders for files left out stopped at its bound: `left_out` counts
    /// what it saw.
    pub walk_truncated: bool,
}
