//! Running a tool: its arguments parsed by the same types and rules as the HTTP route, one
//! or more worker requests, and the reply as JSON (plus a readable text where there is one).

use super::args::{
    parse_ref, ref_param, to_params, ChangesArgs, DocArgs, GetArgs, ImpactArgs, LinksArgs, MultiGetArgs, SimilarArgs,
};
use super::replies::{GetReply, MultiGetDoc, MultiGetReply, SkipReason, Skipped};
use super::tools::ToolId;
use super::Calls;
use crate::bodies::{
    context_error, int_in, AskBody, CapsuleFormat, CaptureBody, ContextBody, CreateDocBody, QueryBody, SearchBody,
    UpdateDocBody,
};
use crate::extract::{parse_object, read_fields};
use crate::routes::{changes_request, impact_request, links_request, similar_request};
use protocol::api::{capsule_markdown, DocResponse, DocsResponse, StatusSnapshot};
use protocol::{
    ApiError, AskCall, Backlinks, Call, CompileContext, DocRef, DocsQuery, ErrorCode, GetDoc, GetStatus, SortOrder,
    Typed, VectorSearch,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::Path;

/// What a tool answers: the reply as JSON, and a readable text when the JSON is not the
/// best thing to show (a capsule asked for as Markdown).
pub struct ToolOutput {
    pub json: Value,
    pub text: Option<String>,
}

const DEFAULT_MULTI_GET_BYTES: u32 = 64 * 1024;
const MAX_MULTI_GET_BYTES: u32 = 1024 * 1024;
/// At most this many notes in one `svc_multi_get`.
const MAX_MULTI_GET_DOCS: usize = 200;
const LIST_PAGE: u32 = 100;

fn typed<T: Serialize>(reply: &T) -> Result<ToolOutput, ApiError> {
    let json = serde_json::to_value(reply).map_err(|e| ApiError::runtime(e.to_string()))?;
    Ok(ToolOutput { json, text: None })
}

/// The reply to `call`, its bytes with their type.
async fn call_typed<K: Calls, C: Call>(calls: &K, call: C) -> Result<Typed<C::Reply>, ApiError> {
    Ok(Typed::arrived(calls.call_request(call.into()).await?))
}

/// The reply to `call`, as its type.
async fn call_as<K: Calls, C: Call>(calls: &K, call: C) -> Result<C::Reply, ApiError> {
    call_typed(calls, call).await?.decode()
}

/// The reply to `call` as the tool's output.
async fn call<K: Calls, C: Call>(calls: &K, call: C) -> Result<ToolOutput, ApiError> {
    typed(&call_as(calls, call).await?)
}

fn parse<T: DeserializeOwned>(args: &Map<String, Value>) -> Result<T, ApiError> {
    parse_object(Value::Object(args.clone()))
}

/// Runs tool `id` with `args`.
pub async fn run<C: Calls>(
    calls: &C,
    id: ToolId,
    args: Map<String, Value>,
    connectors_file: &Path,
) -> Result<ToolOutput, ApiError> {
    match id {
        ToolId::Search => call(calls, parse::<SearchBody>(&args)?.into_search()?).await,
        ToolId::VSearch => call(calls, VectorSearch(parse::<SearchBody>(&args)?.into_search()?)).await,
        ToolId::Query => call(calls, parse::<QueryBody>(&args)?.into_request()?).await,
        ToolId::Ask => match parse::<AskBody>(&args)?.into_request(false)?.into_call() {
            AskCall::Raw(ask) => call(calls, ask).await,
            AskCall::Verified(ask) => call(calls, ask).await,
        },
        ToolId::Status => {
            if let Some(k) = args.keys().next() {
                return Err(ApiError::validation(format!("unknown field `{k}`: svc_status takes no arguments")));
            }
            // As `/api/status` serves it: the worker's snapshot with the saved connector results.
            let mut status: StatusSnapshot = call_as(calls, GetStatus).await?;
            status.connector_projection = crate::connectors::receipts::projection(connectors_file);
            typed(&status)
        }
        ToolId::Get => get(calls, parse(&args)?).await,
        ToolId::MultiGet => multi_get(calls, parse(&args)?).await,
        ToolId::Context => context(calls, &args).await,
        ToolId::Links => {
            let a: LinksArgs = parse(&args)?;
            call(calls, links_request(parse_ref(&a.reference)?.doc, &to_params(&args, &["ref"]))?).await
        }
        ToolId::Backlinks => {
            let a: DocArgs = parse(&args)?;
            call(calls, Backlinks { doc: parse_ref(&a.reference)?.doc }).await
        }
        ToolId::Similar => {
            let a: SimilarArgs = parse(&args)?;
            call(calls, similar_request(parse_ref(&a.reference)?.doc, &to_params(&args, &["ref"]))?).await
        }
        ToolId::Changes => {
            let _: ChangesArgs = parse(&args)?;
            call(calls, changes_request(&to_params(&args, &[]))?).await
        }
        ToolId::Impact => {
            let a: ImpactArgs = parse(&args)?;
            let mut params = to_params(&args, &["ref"]);
            params.0.push(("ref".into(), ref_param(&parse_ref(&a.reference)?.doc)));
            call(calls, impact_request(&params)?).await
        }
        ToolId::Capture => call(calls, parse::<CaptureBody>(&args)?.into_request()?).await,
        ToolId::Create => call(calls, parse::<CreateDocBody>(&args)?.into_request()?).await,
        ToolId::Update => {
            let mut rest = args;
            let reference = match rest.remove("ref") {
                Some(Value::String(r)) => r,
                Some(_) => return Err(ApiError::validation("ref: expected a string")),
                None => return Err(ApiError::validation("ref is required")),
            };
            let doc = parse_ref(&reference)?.doc;
            call(calls, parse::<UpdateDocBody>(&rest)?.into_request(doc)?).await
        }
    }
}

/// `svc_context`: the capsule's JSON, and its Markdown as the text when `format: md`.
async fn context<C: Calls>(calls: &C, args: &Map<String, Value>) -> Result<ToolOutput, ApiError> {
    let body: ContextBody = read_fields(Value::Object(args.clone())).map_err(context_error)?;
    let (req, format) = body.into_request()?;
    // The capsule's canonical JSON as compiled: decoded as a Value, not re-serialized from
    // its type, so the tool shows the bytes its identity hash covers.
    let body = call_typed(calls, CompileContext(req)).await?;
    let text = match format {
        CapsuleFormat::Markdown => {
            let capsule = body.decode().map_err(|_| ApiError::context(ErrorCode::RuntimeError))?;
            Some(capsule_markdown(&capsule))
        }
        CapsuleFormat::Json => None,
    };
    Ok(ToolOutput { json: body.body().decode()?, text })
}

/// `svc_get`: the note, then the line range of its canonical text.
async fn get<C: Calls>(calls: &C, a: GetArgs) -> Result<ToolOutput, ApiError> {
    let r = parse_ref(&a.reference)?;
    let from = int_in("fromLine", a.from_line, 1, u32::MAX)?.or(r.line).unwrap_or(1);
    let count = int_in("lineCount", a.line_count, 1, u32::MAX)?;
    let doc: DocResponse = call_as(calls, GetDoc { doc: r.doc }).await?;
    typed(&line_range(doc, from, count))
}

fn line_range(doc: DocResponse, from: u32, count: Option<u32>) -> GetReply {
    let lines: Vec<&str> = doc.content.split_inclusive('\n').collect();
    let total = u32::try_from(lines.len()).unwrap_or(u32::MAX);
    let start = (from as usize - 1).min(lines.len());
    let end = count.map_or(lines.len(), |c| start.saturating_add(c as usize).min(lines.len()));
    let content: String = lines[start..end].concat();
    GetReply {
        docid: doc.docid,
        uri: doc.uri,
        title: doc.title,
        collection: doc.collection,
        rel_path: doc.rel_path,
        from_line: from,
        line_count: u32::try_from(end - start).unwrap_or(u32::MAX),
        total_lines: total,
        truncated: end < lines.len(),
        content,
    }
}

/// `svc_multi_get`: the named or matched notes in order, whole while the byte cap lasts; the
/// note that crosses it is cut at a character boundary, the ones after it are skipped.
async fn multi_get<C: Calls>(calls: &C, a: MultiGetArgs) -> Result<ToolOutput, ApiError> {
    let max_bytes =
        int_in("maxBytes", a.max_bytes, 1, MAX_MULTI_GET_BYTES)?.unwrap_or(DEFAULT_MULTI_GET_BYTES) as usize;
    let refs = a.refs.map(|r| r.into_vec()).unwrap_or_default();
    let glob = a.glob.filter(|g| !g.trim().is_empty());
    let mut skipped = Vec::new();
    let mut wanted: Vec<(String, DocRef)> = Vec::new();
    match (refs.is_empty(), glob) {
        (false, None) => {
            for r in refs {
                match parse_ref(&r) {
                    Ok(n) => wanted.push((r, n.doc)),
                    Err(_) => skipped.push(Skipped { reference: r, reason: SkipReason::InvalidRef }),
                }
            }
        }
        (true, Some(g)) => wanted = glob_matches(calls, &g).await?,
        _ => return Err(ApiError::validation("exactly one of refs or glob is required")),
    }
    if wanted.len() > MAX_MULTI_GET_DOCS {
        return Err(ApiError::validation(format!("at most {MAX_MULTI_GET_DOCS} notes per call")));
    }
    let mut documents = Vec::new();
    let mut total = 0usize;
    for (reference, doc) in wanted {
        if total >= max_bytes {
            skipped.push(Skipped { reference, reason: SkipReason::ByteCap });
            continue;
        }
        let d: DocResponse = match call_as(calls, GetDoc { doc }).await {
            Ok(d) => d,
            Err(e) if e.code == ErrorCode::NotFound => {
                skipped.push(Skipped { reference, reason: SkipReason::NotFound });
                continue;
            }
            Err(e) if e.code == ErrorCode::Validation => {
                skipped.push(Skipped { reference, reason: SkipReason::InvalidRef });
                continue;
            }
            Err(e) => return Err(e),
        };
        let room = max_bytes - total;
        let (content, truncated) = cut(d.content, room);
        total += content.len();
        documents.push(MultiGetDoc { docid: d.docid, uri: d.uri, title: d.title, content, truncated });
    }
    typed(&MultiGetReply { documents, skipped, total_bytes: total, max_bytes })
}

/// `text` within `room` bytes, cut at a character boundary.
fn cut(mut text: String, room: usize) -> (String, bool) {
    if text.len() <= room {
        return (text, false);
    }
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

/// The notes whose `collection/path` matches `glob`, in listing order.
async fn glob_matches<C: Calls>(calls: &C, glob: &str) -> Result<Vec<(String, DocRef)>, ApiError> {
    let matcher = globset::GlobBuilder::new(glob.trim())
        .literal_separator(true)
        .build()
        .map_err(|e| ApiError::validation(format!("glob: {e}")))?
        .compile_matcher();
    let mut out = Vec::new();
    let mut offset = 0u32;
    loop {
        let query = DocsQuery {
            collection: None,
            limit: LIST_PAGE,
            offset,
            tags_all: Vec::new(),
            tags_any: Vec::new(),
            sort_field: protocol::SortField::Modified,
            sort_order: SortOrder::Desc,
        };
        let page: DocsResponse = call_as(calls, query).await?;
        let n = page.documents.len() as u32;
        for d in page.documents {
            let path = format!("{}/{}", d.collection, d.rel_path);
            if matcher.is_match(&path) {
                if out.len() == MAX_MULTI_GET_DOCS {
                    return Err(ApiError::validation(format!(
                        "the glob matches more than {MAX_MULTI_GET_DOCS} notes; narrow it"
                    )));
                }
                out.push((path, DocRef::Uri(d.uri)));
            }
        }
        offset += n;
        if n < LIST_PAGE || u64::from(offset) >= page.total {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(content: &str) -> DocResponse {
        serde_json::from_value(serde_json::json!({
            "docid": "#abcdef", "uri": "svc://n/a.md", "title": "A", "contentAvailable": true,
            "content": content, "collection": "n", "relPath": "a.md", "tags": [], "author": null,
            "categories": [], "documentDate": null, "dateFields": {},
            "source": {"mime": "text/markdown", "ext": ".md", "modifiedAt": "2026-01-01T00:00:00Z",
                       "sizeBytes": 1, "sourceHash": "x"}
        }))
        .unwrap()
    }

    #[test]
    fn line_ranges_are_one_based_and_bounded() {
        let r = line_range(doc("a\nb\nc\n"), 2, Some(1));
        assert_eq!((r.content.as_str(), r.line_count, r.total_lines, r.truncated), ("b\n", 1, 3, true));
        let r = line_range(doc("a\nb\nc"), 2, None);
        assert_eq!((r.content.as_str(), r.truncated), ("b\nc", false));
        let r = line_range(doc("a\n"), 9, Some(3));
        assert_eq!((r.content.as_str(), r.line_count), ("", 0));
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut("héllo".into(), 2), ("h".into(), true));
        assert_eq!(cut("abc".into(), 3), ("abc".into(), false));
    }
}
