//! The replies of the MCP tools that have no HTTP route of their own (`svc_get` reads a line
//! range, `svc_multi_get` several notes under a byte cap). The others answer the route's reply.

use serde::Serialize;

/// `svc_get`: a line range of one note's canonical text.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetReply {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    pub rel_path: String,
    /// The first line returned (1-based).
    pub from_line: u32,
    /// Lines returned.
    pub line_count: u32,
    /// Lines in the whole note.
    pub total_lines: u32,
    /// True when lines after the range were left out.
    pub truncated: bool,
    pub content: String,
}

/// One note of `svc_multi_get`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiGetDoc {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub content: String,
    /// True when the byte cap cut this note's text (at a character boundary).
    pub truncated: bool,
}

/// Why a note named or matched was not returned.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    NotFound,
    InvalidRef,
    ByteCap,
}

#[derive(Debug, Serialize)]
pub struct Skipped {
    #[serde(rename = "ref")]
    pub reference: String,
    pub reason: SkipReason,
}

/// `svc_multi_get`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiGetReply {
    pub documents: Vec<MultiGetDoc>,
    pub skipped: Vec<Skipped>,
    /// Bytes of note text returned.
    pub total_bytes: usize,
    pub max_bytes: usize,
}
