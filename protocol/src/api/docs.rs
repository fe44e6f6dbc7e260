//! Tags, document lists, one document, sections and assets.

use crate::messages::SortOrder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An entry of `GET /api/tags`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct TagCount {
    pub tag: String,
    pub count: u64,
}

/// `meta` of `GET /api/tags`: the filters echoed (`null` when not given).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct TagsMeta {
    pub total: u64,
    pub collection: Option<String>,
    pub prefix: Option<String>,
}

/// `GET /api/tags`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct TagsResponse {
    pub tags: Vec<TagCount>,
    pub meta: TagsMeta,
}

/// An entry of `GET /api/docs`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocSummary {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
    pub rel_path: String,
    pub source_ext: String,
    pub source_mime: String,
    pub updated_at: String,
    pub tags: Vec<String>,
    pub document_date: Option<String>,
    pub date_fields: BTreeMap<String, String>,
}

/// `GET /api/docs`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocsResponse {
    pub documents: Vec<DocSummary>,
    pub total: u64,
    pub limit: u32,
    pub offset: u32,
    /// Sorted.
    pub available_date_fields: Vec<String>,
    pub sort_field: String,
    pub sort_order: SortOrder,
}

/// `source` of `GET /api/doc`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocSource {
    pub mime: String,
    pub ext: String,
    pub modified_at: String,
    pub size_bytes: u64,
    pub source_hash: String,
    /// Only when the file exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abs_path: Option<String>,
    /// The file this document is a part of (a message's mailbox), relative to the collection;
    /// absent for a document that is a whole file. Such a document is read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_of: Option<String>,
    /// For a picture: its text was read by OCR (or is still to be); absent for other files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr: Option<OcrSource>,
}

/// Where a picture's text stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OcrState {
    /// Waiting for OCR: the picture is found by its name only.
    Pending,
    /// Read: the document's text is what OCR found.
    Read,
    /// The picture could not be read (`error` says why).
    Failed,
}

/// `source.ocr` of `GET /api/doc`: how a picture's text was made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OcrSource {
    pub state: OcrState,
    /// The OCR engine (`PP-OCRv4`).
    pub engine: String,
    /// The mean confidence of the recognized lines, 0 to 1.
    pub confidence: f32,
    pub lines: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `GET /api/doc`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocResponse {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub content_available: bool,
    pub content: String,
    pub collection: String,
    pub rel_path: String,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub categories: Vec<String>,
    pub document_date: Option<String>,
    pub date_fields: BTreeMap<String, String>,
    pub source: DocSource,
}

/// An entry of `GET /api/doc/{id}/sections`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct DocSection {
    pub anchor: String,
    pub level: u8,
    /// 1-based line in the canonical text.
    pub line: u32,
    pub title: String,
}

/// The colouring of a code file, for the workspace's code view (the gateway asks for it with
/// `Request::CodeTokens`; no HTTP route serves it). Tokens are in text order, never overlap,
/// and lie within one line each; what no token covers is plain.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CodeTokensResponse {
    pub tokens: Vec<CodeToken>,
}

/// A highlighted stretch of one line of code.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct CodeToken {
    /// 1-based line in the canonical text.
    pub line: u32,
    /// Byte offsets within the line (its end excluded).
    pub start: u32,
    pub end: u32,
    pub class: TokenClass,
}

/// What a highlighted stretch of code is: its colour in the code view.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TokenClass {
    Keyword,
    String,
    Escape,
    Comment,
    Number,
    Constant,
    Type,
    Function,
    Property,
    Attribute,
    Operator,
    /// `self`, `this` and the like.
    Builtin,
    Label,
    Tag,
}

impl TokenClass {
    /// The name the code view's stylesheet knows it by (`tok-<name>`).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenClass::Keyword => "keyword",
            TokenClass::String => "string",
            TokenClass::Escape => "escape",
            TokenClass::Comment => "comment",
            TokenClass::Number => "number",
            TokenClass::Constant => "constant",
            TokenClass::Type => "type",
            TokenClass::Function => "function",
            TokenClass::Property => "property",
            TokenClass::Attribute => "attribute",
            TokenClass::Operator => "operator",
            TokenClass::Builtin => "builtin",
            TokenClass::Label => "label",
            TokenClass::Tag => "tag",
        }
    }
}

/// `meta` of `GET /api/doc/{id}/sections`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SectionsMeta {
    pub docid: String,
    pub uri: String,
}

/// `GET /api/doc/{id}/sections`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct SectionsResponse {
    pub sections: Vec<DocSection>,
    pub meta: SectionsMeta,
}

/// The file `GET /api/doc-asset` serves, as the worker resolved it for the gateway (not an
/// HTTP body: the gateway answers with the file's bytes).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetLocation {
    pub abs_path: String,
    pub mime: String,
    pub size: u64,
    pub name: String,
}

/// An entry of `GET /api/docs/autocomplete`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct AutocompleteDoc {
    pub docid: String,
    pub uri: String,
    pub title: String,
    pub collection: String,
}

/// `GET /api/docs/autocomplete`: titles that start with the query first, then titles with a
/// word that starts with it, each group by title.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct AutocompleteResponse {
    pub docs: Vec<AutocompleteDoc>,
}
