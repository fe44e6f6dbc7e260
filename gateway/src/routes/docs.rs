//! Documents, tags, links and the graph.

use super::call;
use crate::bodies::collection;
use crate::error::ApiReply;
use crate::extract::Params;
use crate::AppState;
use axum::extract::{Path, State};
use protocol::api::{
    BacklinksResponse, DocResponse, DocsResponse, GraphResponse, LinksResponse, SectionsResponse, SimilarResponse,
    TagsResponse,
};
use protocol::{
    ApiError, DocRef, DocsQuery, ErrorEnvelope, GraphQuery, LinkKind, SimilarQuery, SortField, SortOrder, Tag,
};

/// `:id` plus an optional `?uri=` that wins when both are given. The id must be a docid
/// either way (`%23<hex>`, decoded to `#<hex>` by the router; a stale one is fine: the URI
/// picks the live document).
pub(crate) fn doc_ref(id: &str, p: &Params) -> Result<DocRef, ApiError> {
    let docid = DocRef::docid(id).map_err(|e| ApiError::validation(e.to_string()))?;
    Ok(docid.or_uri(p.svc_uri("uri")?))
}

/// Tags with their document counts.
#[utoipa::path(get, path = "/api/tags", tag = "documents",
    params(("collection" = Option<String>, Query), ("prefix" = Option<String>, Query, description = "Tags under this prefix")),
    responses((status = 200, description = "Tags", body = TagsResponse),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope)))]
pub async fn tags(State(s): State<AppState>, p: Params) -> ApiReply {
    let prefix = p
        .str_opt("prefix")
        .map(|x| x.trim().trim_start_matches('#').trim_end_matches('/').to_lowercase())
        .filter(|x| !x.is_empty());
    let req = p
        .str_opt("collection")
        .map(|c| collection(&c))
        .transpose()
        .map(|collection| protocol::ListTags { collection, prefix });
    call(&s, req).await
}

/// Documents, newest first by default.
#[utoipa::path(get, path = "/api/docs", tag = "documents", operation_id = "list_docs",
    params(("collection" = Option<String>, Query),
           ("limit" = Option<i64>, Query, minimum = 1, description = "Default 20; above 100 is clamped"),
           ("offset" = Option<i64>, Query, minimum = 0),
           ("tagsAll" = Option<String>, Query, description = "Comma-separated"),
           ("tagsAny" = Option<String>, Query, description = "Comma-separated"),
           ("sortField" = Option<String>, Query, pattern = "^[a-z0-9_]*$", description = "`modified` or a front-matter date key"),
           ("sortOrder" = Option<SortOrder>, Query)),
    responses((status = 200, description = "A page of documents", body = DocsResponse),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope)))]
pub async fn list(State(s): State<AppState>, p: Params) -> ApiReply {
    let q = (|| -> Result<DocsQuery, ApiError> {
        let sort_field = match p.str_opt("sortField") {
            Some(raw) => SortField::parse(&raw).map_err(ApiError::validation)?,
            None => SortField::Modified,
        };
        let sort_order =
            p.choice("sortOrder", &[("asc", SortOrder::Asc), ("desc", SortOrder::Desc)])?.unwrap_or(SortOrder::Desc);
        Ok(DocsQuery {
            collection: p.str_opt("collection").map(|c| collection(&c)).transpose()?,
            limit: p.int("limit", 20, 1, 100)?,
            offset: p.int("offset", 0, 0, u32::MAX)?,
            tags_all: Tag::parse_all(&p.list("tagsAll"))?,
            tags_any: Tag::parse_all(&p.list("tagsAny"))?,
            sort_field,
            sort_order,
        })
    })();
    call(&s, q).await
}

/// One document: metadata and canonical text.
#[utoipa::path(get, path = "/api/doc", tag = "documents",
    params(("uri" = String, Query, pattern = "^svc://.+", description = "A svc:// URI")),
    responses((status = 200, description = "The document", body = DocResponse),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn doc(State(s): State<AppState>, p: Params) -> ApiReply {
    match p.svc_uri("uri") {
        Ok(Some(uri)) => call(&s, Ok(protocol::GetDoc { doc: DocRef::Uri(uri) })).await,
        Ok(None) => ApiError::validation("uri is required").into(),
        Err(e) => e.into(),
    }
}

/// A document's outgoing links, resolved or broken.
#[utoipa::path(get, path = "/api/doc/{id}/links", tag = "links",
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id"),
           ("type" = Option<LinkKind>, Query)),
    responses((status = 200, description = "Links", body = LinksResponse),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn links(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).and_then(|doc| links_request(doc, &p))).await
}

/// `Links` of `doc` with the `type` filter of `p` (also the `svc_links` MCP tool).
pub(crate) fn links_request(doc: DocRef, p: &Params) -> Result<protocol::Links, ApiError> {
    let kind = p.choice("type", &[("wiki", LinkKind::Wiki), ("markdown", LinkKind::Markdown)])?;
    Ok(protocol::Links { doc, kind })
}

/// The documents linking to this one.
#[utoipa::path(get, path = "/api/doc/{id}/backlinks", tag = "links",
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Backlinks", body = BacklinksResponse),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn backlinks(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).map(|doc| protocol::Backlinks { doc })).await
}

/// A document's headings as sections with line spans.
#[utoipa::path(get, path = "/api/doc/{id}/sections", tag = "documents",
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id")),
    responses((status = 200, description = "Sections", body = SectionsResponse),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn sections(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).map(|doc| protocol::Sections { doc })).await
}

/// Documents whose first chunk is nearest to this one's (503 without vectors).
#[utoipa::path(get, path = "/api/doc/{id}/similar", tag = "links",
    params(("id" = String, Path, pattern = "^#?[0-9a-fA-F]{6,64}$", description = "The docid: `#` (sent as `%23`) and 6 to 64 hex digits"),
           ("uri" = Option<String>, Query, pattern = "^svc://.+", description = "Names the document instead of the id"),
           ("limit" = Option<i64>, Query, minimum = 1, description = "Default 5; above 20 is clamped"),
           ("threshold" = Option<f64>, Query, minimum = 0.0, description = "Default 0.5; above 1 is clamped"),
           ("crossCollection" = Option<bool>, Query)),
    responses((status = 200, description = "Similar documents", body = SimilarResponse),
              (status = 404, description = "Unknown document", body = ErrorEnvelope)))]
pub async fn similar(State(s): State<AppState>, Path(id): Path<String>, p: Params) -> ApiReply {
    call(&s, doc_ref(&id, &p).and_then(|doc| similar_request(doc, &p))).await
}

/// `Similar` for `doc` with the bounds of `p` (also the `svc_similar` MCP tool).
pub(crate) fn similar_request(doc: DocRef, p: &Params) -> Result<protocol::Similar, ApiError> {
    let query = SimilarQuery {
        limit: p.int("limit", 5, 1, 20)?,
        threshold: p.float("threshold", 0.5, 0.0, 1.0)?,
        cross_collection: p.bool("crossCollection", false)?,
    };
    Ok(protocol::Similar { doc, query })
}

/// The link graph (and similar edges when asked and available).
#[utoipa::path(get, path = "/api/graph", tag = "links",
    params(("collection" = Option<String>, Query),
           ("limit" = Option<i64>, Query, minimum = 1, description = "Nodes; default 2000, above 5000 is clamped"),
           ("edgeLimit" = Option<i64>, Query, minimum = 1, description = "Default 10000, above 50000 is clamped"),
           ("includeSimilar" = Option<bool>, Query),
           ("threshold" = Option<f64>, Query, minimum = 0.0, description = "Similar edges; default 0.7"),
           ("linkedOnly" = Option<bool>, Query, description = "Default true"),
           ("similarTopK" = Option<i64>, Query, minimum = 1, description = "Default 5; above 20 is clamped")),
    responses((status = 200, description = "Nodes and edges", body = GraphResponse),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope)))]
pub async fn graph(State(s): State<AppState>, p: Params) -> ApiReply {
    let q = (|| -> Result<GraphQuery, ApiError> {
        Ok(GraphQuery {
            collection: p.str_opt("collection").map(|c| collection(&c)).transpose()?,
            limit: p.int("limit", 2000, 1, 5000)?,
            edge_limit: p.int("edgeLimit", 10000, 1, 50000)?,
            include_similar: p.bool("includeSimilar", false)?,
            threshold: p.float("threshold", 0.7, 0.0, 1.0)?,
            linked_only: p.bool("linkedOnly", true)?,
            similar_top_k: p.int("similarTopK", 5, 1, 20)?,
        })
    })();
    call(&s, q).await
}

/// Titles for a quick switcher: titles that start with the query, then titles with a word
/// that starts with it.
#[utoipa::path(get, path = "/api/docs/autocomplete", tag = "documents",
    params(("query" = String, Query, min_length = 1, description = "The start of a title or of a word in it"),
           ("collection" = Option<String>, Query),
           ("limit" = Option<i64>, Query, minimum = 1, description = "Default 8; above 20 is clamped")),
    responses((status = 200, description = "Matching documents", body = protocol::api::AutocompleteResponse),
              (status = 404, description = "Unknown collection", body = ErrorEnvelope)))]
pub async fn autocomplete(State(s): State<AppState>, p: Params) -> ApiReply {
    let req = (|| -> Result<protocol::Autocomplete, ApiError> {
        let query = p.str_opt("query").map(|q| q.trim().to_lowercase()).filter(|q| !q.is_empty());
        let query = query.ok_or_else(|| ApiError::validation("query is required"))?;
        if query.chars().count() > 256 {
            return Err(ApiError::validation("query must be at most 256 characters"));
        }
        Ok(protocol::Autocomplete {
            query,
            collection: p.str_opt("collection").map(|c| collection(&c)).transpose()?,
            limit: p.int("limit", 8, 1, 20)?,
        })
    })();
    call(&s, req).await
}
