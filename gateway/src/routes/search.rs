//! `POST /api/search`: validates and normalizes the body, then asks the worker.

use super::call;
use crate::dates::{parse_bound, Bound};
use crate::error::ApiReply;
use crate::extract::Payload;
use crate::AppState;
use axum::extract::State;
use protocol::{ApiError, QueryMode, QueryModeKind, QueryRequest, Request, SearchFilters, SearchRequest};
use serde_json::Value;

pub const MAX_QUERY_CHARS: usize = 10_000;
pub const MAX_PROJECT_HINTS: usize = 16;

/// The filters every retrieval body shares.
pub fn filters(body: &Payload) -> Result<SearchFilters, ApiError> {
    let now = time::OffsetDateTime::now_utc();
    let since_ms = body.str_opt("since")?.map(|v| parse_bound(&v, Bound::Since, now)).transpose()?;
    let until_ms = body.str_opt("until")?.map(|v| parse_bound(&v, Bound::Until, now)).transpose()?;
    let lower = |v: Vec<String>| -> Vec<String> {
        let mut out: Vec<String> = v.into_iter().map(|s| s.to_lowercase()).collect();
        out.sort();
        out.dedup();
        out
    };
    Ok(SearchFilters {
        collection: body.str_opt("collection")?.map(|c| c.trim().to_lowercase()).filter(|c| !c.is_empty()),
        since_ms,
        until_ms,
        categories: lower(body.list_opt("category")?),
        author: body.str_opt("author")?.map(|a| a.trim().to_string()).filter(|a| !a.is_empty()),
        tags_all: body.list_opt("tagsAll")?,
        tags_any: body.list_opt("tagsAny")?,
    })
}

/// The search body (`/api/search`, `/api/vsearch`, and the base of `/api/query`).
pub fn search_request(body: &Payload, default_limit: u32, max_limit: u32) -> Result<SearchRequest, ApiError> {
    let query = body.str_req("query")?;
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::validation(format!("query is longer than {MAX_QUERY_CHARS} characters")));
    }
    if body.array_len("projectHints")? > MAX_PROJECT_HINTS {
        return Err(ApiError::validation(format!("projectHints takes at most {MAX_PROJECT_HINTS} entries")));
    }
    let mut exclude: Vec<String> = body.list_opt("exclude")?.into_iter().map(|s| s.to_lowercase()).collect();
    exclude.dedup();
    Ok(SearchRequest {
        query,
        limit: body.int_opt("limit", 1, max_limit)?.unwrap_or(default_limit),
        min_score: body.float_opt("minScore", 0.0, 1.0)?,
        filters: filters(body)?,
        intent: body.str_opt("intent")?.filter(|s| !s.trim().is_empty()),
        exclude,
        candidate_limit: body.int_opt("candidateLimit", 1, 100)?,
    })
}

pub async fn search(State(s): State<AppState>, body: Payload) -> ApiReply {
    call(&s, search_request(&body, 10, 50).map(Request::Search)).await
}

pub async fn vsearch(State(s): State<AppState>, body: Payload) -> ApiReply {
    call(&s, search_request(&body, 10, 50).map(Request::VectorSearch)).await
}

/// At most this many `queryModes` entries.
pub const MAX_QUERY_MODES: usize = 16;

/// `queryModes`: `[{mode: term|intent|hyde, text}]`.
fn query_modes(body: &Payload) -> Result<Vec<QueryMode>, ApiError> {
    let bad = |m: &str| ApiError::validation(format!("queryModes {m}"));
    let Some(v) = body.0.get("queryModes").filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let Value::Array(items) = v else { return Err(bad("must be an array of {mode, text} objects")) };
    if items.len() > MAX_QUERY_MODES {
        return Err(bad(&format!("takes at most {MAX_QUERY_MODES} entries")));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let (Some(mode), Some(text)) =
            (item.get("mode").and_then(Value::as_str), item.get("text").and_then(Value::as_str))
        else {
            return Err(bad("entries need a string mode and a string text"));
        };
        let kind = match mode {
            "term" => QueryModeKind::Term,
            "intent" => QueryModeKind::Intent,
            "hyde" => QueryModeKind::Hyde,
            other => return Err(bad(&format!("mode {other:?} is not one of term, intent, hyde"))),
        };
        if text.contains('\0') || text.chars().count() > MAX_QUERY_CHARS {
            return Err(bad("text must be at most 10000 characters without NUL bytes"));
        }
        out.push(QueryMode { kind, text: text.to_string() });
    }
    Ok(out)
}

/// The `/api/query` body.
pub fn query_request(body: &Payload) -> Result<QueryRequest, ApiError> {
    Ok(QueryRequest {
        search: search_request(body, 20, 50)?,
        lang: body.str_opt("lang")?.map(|l| l.trim().to_lowercase()).filter(|l| !l.is_empty() && l != "auto"),
        no_expand: body.bool_opt("noExpand")?.unwrap_or(false),
        no_rerank: body.bool_opt("noRerank")?.unwrap_or(false),
        query_modes: query_modes(body)?,
    })
}

pub async fn query(State(s): State<AppState>, body: Payload) -> ApiReply {
    call(&s, query_request(&body).map(Request::Query)).await
}

/// `POST /api/query/diagnose`: the query body plus a `target` document ref.
pub async fn diagnose(State(s): State<AppState>, body: Payload) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        let query = query_request(&body)?;
        let target = body.str_req("target")?.trim().to_string();
        if target.is_empty() {
            return Err(ApiError::validation("target is required: a docid (#abcd1234) or a svc:// uri"));
        }
        Ok(Request::Diagnose { query, target })
    })();
    call(&s, req).await
}
