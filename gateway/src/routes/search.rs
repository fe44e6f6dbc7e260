//! `POST /api/search`: validates and normalizes the body, then asks the worker.

use crate::dates::{parse_bound, Bound};
use crate::error::ApiReply;
use crate::extract::Payload;
use crate::AppState;
use axum::extract::State;
use protocol::{ApiError, Request, SearchFilters, SearchRequest};

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

/// The search body (`/api/search`; later also vsearch and query).
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
    match search_request(&body, 10, 50) {
        Ok(r) => ApiReply::ok(s.worker.call(Request::Search(r)).await),
        Err(e) => e.into(),
    }
}
