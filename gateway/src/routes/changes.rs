//! Change reads: `/api/changes` (the journal, paged by opaque cursors), `/api/diff` (one
//! document's change, metadata only) and `/api/impact` (who depends on a note).

use super::call;
use crate::bodies::collection;
use crate::dates::{parse_bound, Bound};
use crate::error::ApiReply;
use crate::extract::Params;
use crate::AppState;
use axum::extract::State;
use protocol::api::{ChangesResponse, DiffResponse, ImpactResponse};
use protocol::{ApiError, ChangeCursor, ChangesQuery, ChangesSince, DocRef, ErrorEnvelope, ImpactBounds};

/// `ref`: a docid (`#abcd1234`, the `#` sent as `%23` or left out) or a `svc://` URI.
fn doc_param(p: &Params) -> Result<DocRef, ApiError> {
    match p.str_opt("ref") {
        None => Err(ApiError::validation("ref is required: a docid (#abcd1234) or a svc:// URI")),
        Some(r) => DocRef::parse(&r).map_err(|e| ApiError::validation(format!("ref: {e}"))),
    }
}

fn cursor(key: &str, raw: &str) -> Result<ChangeCursor, ApiError> {
    ChangeCursor::parse(raw)
        .ok_or_else(|| ApiError::validation(format!("{key} is not a change cursor this server issued")))
}

/// Changes to documents, oldest first, paged by opaque cursors.
#[utoipa::path(get, path = "/api/changes", tag = "changes",
    params(("since" = Option<String>, Query, description = "An ISO 8601 date or time, or a cursor (`svc-change-v1.`…) from an earlier page; absent: from the oldest retained change"),
           ("collection" = Option<String>, Query),
           ("limit" = Option<i64>, Query, minimum = 1, description = "Default 100; above 1000 is clamped")),
    responses((status = 200, description = "A page of changes (`changes@1.0`)", body = ChangesResponse),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope)))]
pub async fn changes(State(s): State<AppState>, p: Params) -> ApiReply {
    call(&s, changes_request(&p)).await
}

/// `ListChanges` from `since`, `collection` and `limit` (also the `svc_changes` MCP tool).
pub(crate) fn changes_request(p: &Params) -> Result<ChangesQuery, ApiError> {
    let since = match p.str_opt("since") {
        None => ChangesSince::Start,
        Some(v) if ChangeCursor::looks_like_cursor(&v) => ChangesSince::Cursor(cursor("since", &v)?),
        Some(v) => ChangesSince::Time(parse_bound(&v, Bound::Since, time::OffsetDateTime::now_utc())?),
    };
    Ok(ChangesQuery {
        since,
        collection: p.str_opt("collection").map(|c| collection(&c)).transpose()?,
        limit: p.int("limit", ChangesQuery::DEFAULT_LIMIT, 1, ChangesQuery::MAX_LIMIT)?,
    })
}

/// One change of a document: identity, hashes and structure (bodies are never retained).
#[utoipa::path(get, path = "/api/diff", tag = "changes",
    params(("ref" = String, Query, description = "A docid (`#abcd1234`) or a svc:// URI"),
           ("change" = Option<String>, Query, description = "A change id from `/api/changes`; absent: the document's newest change")),
    responses((status = 200, description = "The change (`document-diff@1.0`)", body = DiffResponse),
              (status = 404, description = "Unknown document, or a change of another document", body = ErrorEnvelope)))]
pub async fn diff(State(s): State<AppState>, p: Params) -> ApiReply {
    let r = (|| -> Result<protocol::Diff, ApiError> {
        let change = p.str_opt("change").map(|c| cursor("change", &c)).transpose()?;
        Ok(protocol::Diff { doc: doc_param(&p)?, change })
    })();
    call(&s, r).await
}

/// The notes that depend on a note (link to it, directly or through others), each with one
/// path of links; every bound is enforced and reported.
#[utoipa::path(get, path = "/api/impact", tag = "changes",
    params(("ref" = String, Query, description = "A docid (`#abcd1234`) or a svc:// URI"),
           ("maxDepth" = Option<i64>, Query, minimum = 1, description = "Default 3; above 6 is clamped"),
           ("maxNodes" = Option<i64>, Query, minimum = 1, description = "Default 100; above 1000 is clamped"),
           ("maxEdges" = Option<i64>, Query, minimum = 1, description = "Default 250; above 5000 is clamped"),
           ("frontierLimit" = Option<i64>, Query, minimum = 1, description = "Default 100; above 1000 is clamped"),
           ("visitedLimit" = Option<i64>, Query, minimum = 1, description = "Default 500; above 5000 is clamped")),
    responses((status = 200, description = "Dependents (`impact@1.0`)", body = ImpactResponse),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn impact(State(s): State<AppState>, p: Params) -> ApiReply {
    call(&s, impact_request(&p)).await
}

/// `Impact` of `ref` within the bounds of `p` (also the `svc_impact` MCP tool).
pub(crate) fn impact_request(p: &Params) -> Result<protocol::Impact, ApiError> {
    let (d, m) = (ImpactBounds::DEFAULT, ImpactBounds::MAX);
    let bounds = ImpactBounds {
        max_depth: p.int("maxDepth", d.max_depth, 1, m.max_depth)?,
        max_nodes: p.int("maxNodes", d.max_nodes, 1, m.max_nodes)?,
        max_edges: p.int("maxEdges", d.max_edges, 1, m.max_edges)?,
        frontier_limit: p.int("frontierLimit", d.frontier_limit, 1, m.frontier_limit)?,
        visited_limit: p.int("visitedLimit", d.visited_limit, 1, m.visited_limit)?,
    };
    Ok(protocol::Impact { doc: doc_param(p)?, bounds })
}
