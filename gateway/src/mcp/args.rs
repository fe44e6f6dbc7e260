//! The arguments of the MCP tools that have no JSON body in the HTTP API (their HTTP routes
//! take a path and a query string). Each type is what parses the arguments and what the
//! tool's input schema is derived from; its values then pass through the same query-string
//! rules as the route ([`to_params`]), so bounds and defaults live in one place.

use crate::bodies::StringList;
use crate::extract::Params;
use protocol::{ApiError, DocRef};
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// What `ref` accepts, for the schemas and the error.
pub const REF_HELP: &str =
    "The note: a docid (#abcd1234), a svc:// URI, or collection/path (svc_get also takes a :line suffix)";

/// `svc_get`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetArgs {
    /// A docid (`#abcd1234`), a `svc://` URI, or `collection/path`; a `:line` suffix starts there.
    #[serde(rename = "ref")]
    pub reference: String,
    /// First line to return (1-based; default 1, or the `:line` of `ref`).
    #[schema(minimum = 1)]
    pub from_line: Option<i64>,
    /// How many lines (default: to the end).
    #[schema(minimum = 1)]
    pub line_count: Option<i64>,
}

/// `svc_multi_get`: named notes, or every note whose `collection/path` matches a glob.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MultiGetArgs {
    /// Docids, svc:// URIs or collection/paths (an array, or one comma-separated string).
    pub refs: Option<StringList>,
    /// A glob over `collection/path`, e.g. `notes/projects/**/*.md`.
    pub glob: Option<String>,
    /// Most bytes of note text in the reply (default 65536, at most 1048576); notes past it
    /// are listed in `skipped`.
    #[schema(minimum = 1)]
    pub max_bytes: Option<i64>,
}

/// `svc_backlinks` (and the base of the other single-note tools).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocArgs {
    /// A docid (`#abcd1234`), a `svc://` URI, or `collection/path`.
    #[serde(rename = "ref")]
    pub reference: String,
}

/// `svc_links`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
// Its fields are checked here (types, unknown keys) and read by the route's query parser.
#[allow(dead_code)]
pub struct LinksArgs {
    /// A docid (`#abcd1234`), a `svc://` URI, or `collection/path`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Only `wiki` or only `markdown` links.
    #[serde(rename = "type")]
    #[schema(pattern = "^(wiki|markdown)$")]
    pub kind: Option<String>,
}

/// `svc_similar`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
// Its fields are checked here (types, unknown keys) and read by the route's query parser.
#[allow(dead_code)]
pub struct SimilarArgs {
    /// A docid (`#abcd1234`), a `svc://` URI, or `collection/path`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Default 5; above 20 is clamped.
    #[schema(minimum = 1)]
    pub limit: Option<i64>,
    /// Default 0.5; above 1 is clamped.
    #[schema(minimum = 0.0)]
    pub threshold: Option<f64>,
    pub cross_collection: Option<bool>,
}

/// `svc_changes`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
// Its fields are checked here (types, unknown keys) and read by the route's query parser.
#[allow(dead_code)]
pub struct ChangesArgs {
    /// An ISO 8601 date or time, or the `nextCursor` of an earlier page.
    pub since: Option<String>,
    pub collection: Option<String>,
    /// Default 100; above 1000 is clamped.
    #[schema(minimum = 1)]
    pub limit: Option<i64>,
}

/// `svc_impact`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
// Its fields are checked here (types, unknown keys) and read by the route's query parser.
#[allow(dead_code)]
pub struct ImpactArgs {
    /// A docid (`#abcd1234`), a `svc://` URI, or `collection/path`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Default 3; above 6 is clamped.
    #[schema(minimum = 1)]
    pub max_depth: Option<i64>,
    /// Default 100; above 1000 is clamped.
    #[schema(minimum = 1)]
    pub max_nodes: Option<i64>,
    /// Default 250; above 5000 is clamped.
    #[schema(minimum = 1)]
    pub max_edges: Option<i64>,
    /// Default 100; above 1000 is clamped.
    #[schema(minimum = 1)]
    pub frontier_limit: Option<i64>,
    /// Default 500; above 5000 is clamped.
    #[schema(minimum = 1)]
    pub visited_limit: Option<i64>,
}

/// A note named by `ref`, and the line a `path:line` ref points at.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteRef {
    pub doc: DocRef,
    pub line: Option<u32>,
}

/// Parses a `ref`: `#<hex>` (a docid), `svc://collection/path`, or `collection/path`, each
/// with an optional `:<line>` suffix.
pub fn parse_ref(raw: &str) -> Result<NoteRef, ApiError> {
    let raw = raw.trim();
    let (name, line) = match raw.rsplit_once(':') {
        Some((name, n)) if !name.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            let line = n.parse::<u32>().ok().filter(|l| *l >= 1);
            (name, Some(line.ok_or_else(|| ApiError::validation("ref: the :line suffix must be at least 1"))?))
        }
        _ => (raw, None),
    };
    let doc = if name.starts_with('#') {
        DocRef::docid(name).map_err(|e| ApiError::validation(format!("ref: {e}")))?
    } else if name.starts_with(protocol::uri::SCHEME) {
        // The worker's own parser: `..`, empty segments and bad collection names fail here.
        protocol::uri::parse_uri(name).ok_or_else(invalid_ref)?;
        DocRef::Uri(name.to_string())
    } else {
        let (collection, rel) = name.split_once('/').ok_or_else(invalid_ref)?;
        if name.contains("://") {
            return Err(invalid_ref());
        }
        let uri = protocol::uri::doc_uri(collection, rel);
        protocol::uri::parse_uri(&uri).ok_or_else(invalid_ref)?;
        DocRef::Uri(uri)
    };
    Ok(NoteRef { doc, line })
}

fn invalid_ref() -> ApiError {
    ApiError::validation(format!("ref: {REF_HELP}"))
}

/// How a document reference reads in a query string (`ref=`).
pub fn ref_param(doc: &DocRef) -> String {
    doc.as_str().to_string()
}

/// The arguments as the query string of the tool's HTTP route: strings as they are, numbers
/// and booleans as their JSON text (the route's parser checks them again), other keys left out.
pub fn to_params(args: &Map<String, Value>, skip: &[&str]) -> Params {
    let pairs = args
        .iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k.clone(), s.clone())),
            Value::Number(n) => Some((k.clone(), n.to_string())),
            Value::Bool(b) => Some((k.clone(), b.to_string())),
            _ => None,
        })
        .collect();
    Params(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_name_notes_three_ways_with_an_optional_line() {
        assert_eq!(parse_ref("#ABCDEF12").unwrap().doc, DocRef::Docid("#abcdef12".into()));
        assert_eq!(parse_ref("svc://notes/a%20b.md").unwrap().doc, DocRef::Uri("svc://notes/a%20b.md".into()));
        assert_eq!(parse_ref("notes/C# tips.md").unwrap().doc, DocRef::Uri("svc://notes/C%23%20tips.md".into()));
        assert_eq!(parse_ref("notes/50%20off.md").unwrap().doc, DocRef::Uri("svc://notes/50%2520off.md".into()));
        let r = parse_ref("notes/dir/x.md:12").unwrap();
        assert_eq!(r.doc, DocRef::Uri("svc://notes/dir/x.md".into()));
        assert_eq!(r.line, Some(12));
        assert_eq!(parse_ref("svc://notes/x.md:3").unwrap().line, Some(3));
        for bad in [
            "",
            "x.md",
            "/etc/passwd",
            "#zz",
            "svc://",
            "notes/x.md:0",
            "http://x/y",
            "notes/../x.md",
            "svc://n/../x",
            "Bad Name/x.md",
        ] {
            assert!(parse_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn arguments_become_query_parameters() {
        let args: Map<String, Value> =
            serde_json::from_str(r##"{"ref":"#abcdef","maxDepth":2,"crossCollection":true,"x":[1]}"##).unwrap();
        let mut pairs = to_params(&args, &["ref"]).0;
        pairs.sort();
        assert_eq!(pairs, vec![("crossCollection".into(), "true".into()), ("maxDepth".into(), "2".into())]);
    }
}
