//! The tool catalog: each tool's name, description, hints and input schema. The schema is
//! derived from the type that parses the tool's arguments (an HTTP body of
//! [`crate::bodies`], or one of [`super::args`]).

use super::args::{ChangesArgs, DocArgs, GetArgs, ImpactArgs, LinksArgs, MultiGetArgs, SimilarArgs, REF_HELP};
use super::schema::{empty_object, input_schema, with_required_string};
use crate::bodies::{AskBody, CaptureBody, ContextBody, CreateDocBody, QueryBody, SearchBody, UpdateDocBody};
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// Every tool svc offers over MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolId {
    Search,
    VSearch,
    Query,
    Ask,
    Get,
    MultiGet,
    Status,
    Context,
    Links,
    Backlinks,
    Similar,
    Changes,
    Impact,
    Capture,
    Create,
    Update,
}

impl ToolId {
    pub const ALL: [ToolId; 16] = [
        ToolId::Search,
        ToolId::VSearch,
        ToolId::Query,
        ToolId::Ask,
        ToolId::Get,
        ToolId::MultiGet,
        ToolId::Status,
        ToolId::Context,
        ToolId::Links,
        ToolId::Backlinks,
        ToolId::Similar,
        ToolId::Changes,
        ToolId::Impact,
        ToolId::Capture,
        ToolId::Create,
        ToolId::Update,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ToolId::Search => "svc_search",
            ToolId::VSearch => "svc_vsearch",
            ToolId::Query => "svc_query",
            ToolId::Ask => "svc_ask",
            ToolId::Get => "svc_get",
            ToolId::MultiGet => "svc_multi_get",
            ToolId::Status => "svc_status",
            ToolId::Context => "svc_context",
            ToolId::Links => "svc_links",
            ToolId::Backlinks => "svc_backlinks",
            ToolId::Similar => "svc_similar",
            ToolId::Changes => "svc_changes",
            ToolId::Impact => "svc_impact",
            ToolId::Capture => "svc_capture",
            ToolId::Create => "svc_create",
            ToolId::Update => "svc_update",
        }
    }

    pub fn from_name(name: &str) -> Option<ToolId> {
        ToolId::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the tool changes notes (offered only when writes are enabled).
    pub fn writes(self) -> bool {
        matches!(self, ToolId::Capture | ToolId::Create | ToolId::Update)
    }

    fn description(self) -> &'static str {
        match self {
            ToolId::Search => "Keyword (BM25) search over the indexed notes. Returns ranked documents with snippets, docids and svc:// URIs.",
            ToolId::VSearch => "Vector (semantic) search over the indexed notes; needs the embedding model.",
            ToolId::Query => "Hybrid search: keyword and vector results fused (the best default for questions in natural language).",
            ToolId::Ask => "Answers a question from the notes with a local model, citing its sources; with verify: true, answers only what the sources support and abstains otherwise.",
            ToolId::Get => "Reads one note's text (or a line range of it). ref: a docid (#abcd1234), a svc:// URI, or collection/path, optionally with :line.",
            ToolId::MultiGet => "Reads several notes at once, named by refs or matched by a glob over collection/path, within a byte cap.",
            ToolId::Status => "The index: collections, document and chunk counts, models and health.",
            ToolId::Context => "Compiles a Context Capsule: exact, hashed passages for a goal within a token budget, which can be re-verified later.",
            ToolId::Links => "A note's outgoing links (wiki and markdown), resolved or broken.",
            ToolId::Backlinks => "The notes that link to a note.",
            ToolId::Similar => "Notes semantically similar to a note; needs vectors.",
            ToolId::Changes => "Changes to notes, oldest first, paged by cursors (since: an ISO date or the nextCursor of a page).",
            ToolId::Impact => "The notes that depend on a note (link to it, directly or through others), each with a path of links.",
            ToolId::Capture => "Captures text as a new note in a collection.",
            ToolId::Create => "Creates a note at a path in a collection.",
            ToolId::Update => "Replaces a note's content or tags; expectedSourceHash guards against overwriting a newer version.",
        }
    }

    fn input_schema(self) -> Map<String, Value> {
        match self {
            ToolId::Search | ToolId::VSearch => input_schema::<SearchBody>(),
            ToolId::Query => input_schema::<QueryBody>(),
            ToolId::Ask => input_schema::<AskBody>(),
            ToolId::Get => input_schema::<GetArgs>(),
            ToolId::MultiGet => input_schema::<MultiGetArgs>(),
            ToolId::Status => empty_object(),
            ToolId::Context => input_schema::<ContextBody>(),
            ToolId::Links => input_schema::<LinksArgs>(),
            ToolId::Backlinks => input_schema::<DocArgs>(),
            ToolId::Similar => input_schema::<SimilarArgs>(),
            ToolId::Changes => input_schema::<ChangesArgs>(),
            ToolId::Impact => input_schema::<ImpactArgs>(),
            ToolId::Capture => input_schema::<CaptureBody>(),
            ToolId::Create => input_schema::<CreateDocBody>(),
            ToolId::Update => with_required_string(input_schema::<UpdateDocBody>(), "ref", REF_HELP),
        }
    }

    /// The MCP description of the tool.
    pub fn tool(self) -> Tool {
        let hints = if self.writes() {
            ToolAnnotations::new()
                .read_only(false)
                .destructive(self == ToolId::Update)
                .idempotent(self == ToolId::Update)
                .open_world(false)
        } else {
            ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false)
        };
        Tool::new(self.name(), self.description(), self.input_schema()).with_annotations(hints)
    }
}

/// The tools offered: the read-only ones, and the write tools when `writes`.
pub fn catalog(writes: bool) -> Vec<Tool> {
    ToolId::ALL.into_iter().filter(|t| writes || !t.writes()).map(ToolId::tool).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_writes_are_opt_in() {
        for t in ToolId::ALL {
            assert_eq!(ToolId::from_name(t.name()), Some(t));
        }
        assert_eq!(catalog(false).len(), 13);
        assert_eq!(catalog(true).len(), 16);
        assert!(catalog(false).iter().all(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)));
    }

    #[test]
    fn every_schema_is_an_object_without_references() {
        for t in ToolId::ALL {
            let tool = t.tool();
            assert_eq!(tool.input_schema.get("type"), Some(&Value::String("object".into())), "{}", t.name());
            let text = serde_json::to_string(&*tool.input_schema).unwrap();
            assert!(!text.contains("$ref"), "{}: {text}", t.name());
        }
        let update = ToolId::Update.tool();
        assert!(update.input_schema["required"].as_array().unwrap().contains(&Value::String("ref".into())));
    }
}
