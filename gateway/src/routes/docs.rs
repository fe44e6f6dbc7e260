//! Documents, tags, links and the graph.

use super::call;
use crate::error::ApiReply;
use crate::extract::Params;
use crate::AppState;
use axum::extract::{Path, State};
use protocol::{ApiError, DocRef, DocsQuery, GraphQuery, LinkKind, Request, SimilarQuery, SortOrder};

/// `%23<hex>` (decoded to `#<hex>` by the router); the `#` may be omitted.
fn docid(raw: &str) -> Result<String, ApiError> {
    let hex = raw.strip_prefix('#').unwrap_or(raw);
    if (6..=64).contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(format!("#{}", hex.to_ascii_lowercase()))
    } else {
        Err(ApiError::validation(format!("Invalid document id {raw:?}: expected #<hex>, sent as %23<hex>")))
    }
}

/// `:id` plus an optional `?uri=` that wins.
pub(crate) fn doc_ref(id: &str, p: &Params) -> Result<DocRef, ApiError> {
    let uri = p.str_opt("uri");
    let docid = if uri.is_some() { docid(id).ok() } else { Some(docid(id)?) };
    Ok(DocRef { docid, uri })
}

pub async fn tags(State(s): State<AppState>, p: Params) -> ApiReply {
    let prefix = p
        .str_opt("prefix")
        .map(|x| x.trim().trim_start_matches('#').trim_end_matches('/').to_lowercase())
        .filter(|x| !x.is_empty());
    let collection = p.str_opt("collection").map(|c| c.to_lowercase());
    call(&s, Ok(Request::ListTags { collection, prefix })).await
}

pub async fn list(State(s): State<AppState>, p: Params) -> ApiReply {
    let q = (|| -> Result<DocsQuery, ApiError> {
        let sort_field = p.str_opt("sortField").unwrap_or_else(|| "modified".into());
        if !sort_field.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
            return Err(ApiError::validation("sortField must be `modified` or a front-matter date key"));
        }
        let sort_order = match p.str_opt("sortOrder").as_deref() {
            None | Some("desc") => SortOrder::Desc,
            Some("asc") => SortOrder::Asc,
            Some(_) => return Err(ApiError::validation("sortOrder must be asc or desc")),
        };
        Ok(DocsQuery {
            collection: p.str_opt("collection").map(|c| c.to_lowercase()),
            limit: p.int("limit", 20, 1, 100)?,
            offset: p.int("offset", 0, 0, u32::MAX)?,
            tags_all: p.list("tagsAll"),
            tags_any: p.list("tagsAny"),
            sort_field,
            sort_order,
        })
    })();
    call(&s, q.map(Request::ListDocs)).await
}

pub async fn doc(State(s): State<AppState>, p: Params) -> ApiReply {
    match p.str_opt("uri") {
        Some(uri) => call(&s, Ok(Request::GetDoc(DocRef { docid: None, uri: Some(uri) }))).await,
        None => ApiError::validation("uri is required").into(),
    }
}

pub async fn links(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    let r = (|| {
        let kind = match p.str_opt("type").as_deref() {
            None => None,
            Some("wiki") => Some(LinkKind::Wiki),
            Some("markdown") => Some(LinkKind::Markdown),
            Some(_) => return Err(ApiError::validation("type must be wiki or markdown")),
        };
        Ok(Request::Links { doc: doc_ref(&id, &p)?, kind })
    })();
    call(&s, r).await
}

pub async fn backlinks(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).map(|doc| Request::Backlinks { doc })).await
}

pub async fn sections(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).map(|doc| Request::Sections { doc })).await
}

/// Documents whose first chunk is nearest to this one's (503 without vectors).
pub async fn similar(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    let req = (|| -> Result<Request, ApiError> {
        let query = SimilarQuery {
            limit: p.int("limit", 5, 1, 20)?,
            threshold: p.float("threshold", 0.5, 0.0, 1.0)?,
            cross_collection: p.bool("crossCollection", false)?,
        };
        Ok(Request::Similar { doc: doc_ref(&id, &p)?, query })
    })();
    call(&s, req).await
}

pub async fn graph(State(s): State<AppState>, p: Params) -> ApiReply {
    let q = (|| -> Result<GraphQuery, ApiError> {
        Ok(GraphQuery {
            collection: p.str_opt("collection").map(|c| c.to_lowercase()),
            limit: p.int("limit", 2000, 1, 5000)?,
            edge_limit: p.int("edgeLimit", 10000, 1, 50000)?,
            include_similar: p.bool("includeSimilar", false)?,
            threshold: p.float("threshold", 0.7, 0.0, 1.0)?,
            linked_only: p.bool("linkedOnly", true)?,
            similar_top_k: p.int("similarTopK", 5, 1, 20)?,
        })
    })();
    call(&s, q.map(Request::Graph)).await
}
