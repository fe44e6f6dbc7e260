//! Bodies of `/api/search`, `/api/vsearch`, `/api/query` and `/api/query/diagnose`.

use super::{collection_opt, float_in, int_in, non_blank, required, tags, StringList};
use crate::dates::{parse_bound, Bound};
use protocol::source_kind::CodeLanguage;
use protocol::{ApiError, DocRef, QueryMode, QueryModeKind, QueryRequest, SearchFilters, SearchRequest};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use utoipa::openapi::schema::{AllOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::ToSchema;

pub const MAX_QUERY_CHARS: usize = 10_000;
pub const MAX_PROJECT_HINTS: usize = 16;
/// At most this many `queryModes` entries.
pub const MAX_QUERY_MODES: usize = 16;

/// The search body (`/api/search`, `/api/vsearch`) and the base of the query bodies.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchBody {
    /// The query text (at most 10,000 characters).
    #[schema(required = true, min_length = 1, max_length = 10000)]
    pub query: Option<String>,
    /// Results to return (default 10 for search/vsearch, 20 for query; above 50 is clamped).
    #[schema(minimum = 1)]
    pub limit: Option<i64>,
    /// Drop results scoring below this (0..1; above 1 is clamped).
    #[schema(minimum = 0.0)]
    pub min_score: Option<f64>,
    /// Only this collection.
    pub collection: Option<String>,
    /// Modified at or after: an ISO 8601 date or time, or today, yesterday, this-week, ...
    pub since: Option<String>,
    /// Modified at or before (same forms as `since`).
    pub until: Option<String>,
    /// Any of these categories.
    pub category: Option<StringList>,
    /// Code files in any of these languages: rust, python, javascript, typescript, tsx, go,
    /// java, c, cpp, shell, sql, json, yaml, toml.
    pub language: Option<StringList>,
    /// Case-insensitive substring of the author.
    pub author: Option<String>,
    /// Documents carrying every one of these tags.
    pub tags_all: Option<StringList>,
    /// Documents carrying at least one of these tags.
    pub tags_any: Option<StringList>,
    /// Steers snippet selection; never searched.
    pub intent: Option<String>,
    /// Results containing any of these terms are dropped.
    pub exclude: Option<StringList>,
    /// Candidates considered before filtering (1..100; above is clamped).
    #[schema(minimum = 1)]
    pub candidate_limit: Option<i64>,
    /// Accepted and ignored (at most 16).
    #[schema(max_items = 16)]
    pub project_hints: Option<Vec<serde_json::Value>>,
}

/// The languages of a `language` filter; an unknown name is a 400 that lists the known ones.
pub fn languages(list: Option<StringList>) -> Result<Vec<CodeLanguage>, ApiError> {
    let mut out = Vec::new();
    for name in list.map(StringList::into_vec).unwrap_or_default() {
        let lang = CodeLanguage::parse(&name).ok_or_else(|| {
            let known: Vec<&str> = CodeLanguage::ALL.iter().map(|l| l.as_str()).collect();
            ApiError::validation(format!("unknown language {name:?}: one of {}", known.join(", ")))
        })?;
        out.push(lang);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn lowered(list: Option<StringList>) -> Vec<String> {
    let mut out: Vec<String> =
        list.map(StringList::into_vec).unwrap_or_default().into_iter().map(|s| s.to_lowercase()).collect();
    out.sort();
    out.dedup();
    out
}

impl SearchBody {
    /// `/api/search` and `/api/vsearch` (and their MCP tools): default and largest `limit`.
    pub const DEFAULT_LIMIT: u32 = 10;
    pub const MAX_LIMIT: u32 = 50;

    /// The worker's request of a plain search (`/api/search`, `/api/vsearch`).
    pub fn into_search(self) -> Result<SearchRequest, ApiError> {
        self.into_request(Self::DEFAULT_LIMIT, Self::MAX_LIMIT)
    }

    fn filters(&mut self) -> Result<SearchFilters, ApiError> {
        let now = time::OffsetDateTime::now_utc();
        Ok(SearchFilters {
            collection: collection_opt(self.collection.take())?,
            since_ms: self.since.take().map(|v| parse_bound(&v, Bound::Since, now)).transpose()?,
            until_ms: self.until.take().map(|v| parse_bound(&v, Bound::Until, now)).transpose()?,
            categories: lowered(self.category.take()),
            author: self.author.take().map(|a| a.trim().to_string()).filter(|a| !a.is_empty()),
            tags_all: tags(self.tags_all.take())?,
            tags_any: tags(self.tags_any.take())?,
            languages: languages(self.language.take())?,
        })
    }

    /// The worker's request, with this route's default and maximum `limit`.
    pub fn into_request(mut self, default_limit: u32, max_limit: u32) -> Result<SearchRequest, ApiError> {
        let query = required("query", self.query.take())?;
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(ApiError::validation(format!("query is longer than {MAX_QUERY_CHARS} characters")));
        }
        if self.project_hints.as_ref().is_some_and(|h| h.len() > MAX_PROJECT_HINTS) {
            return Err(ApiError::validation(format!("projectHints takes at most {MAX_PROJECT_HINTS} entries")));
        }
        let mut exclude: Vec<String> = self
            .exclude
            .take()
            .map(StringList::into_vec)
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.to_lowercase())
            .collect();
        exclude.dedup();
        Ok(SearchRequest {
            query,
            limit: int_in("limit", self.limit, 1, max_limit)?.unwrap_or(default_limit),
            min_score: float_in("minScore", self.min_score, 0.0, 1.0)?,
            filters: self.filters()?,
            intent: non_blank(self.intent.take()),
            exclude,
            candidate_limit: int_in("candidateLimit", self.candidate_limit, 1, 100)?,
        })
    }
}

/// One `queryModes` entry: a variant to search instead of generated expansion.
#[derive(Debug, Deserialize, ToSchema)]
pub struct QueryModeBody {
    pub mode: QueryModeKind,
    /// At most 10,000 characters.
    #[schema(max_length = 10000)]
    pub text: String,
}

/// What `/api/query` adds to the search body.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueryOptions {
    /// The query's language (`auto` or absent: detected).
    pub lang: Option<String>,
    /// Query expansion with the local generator is off by default; `false` asks for it.
    pub no_expand: Option<bool>,
    /// Skip the cross-encoder rerank.
    pub no_rerank: Option<bool>,
    /// At most 16 entries.
    #[schema(max_items = 16)]
    pub query_modes: Option<Vec<QueryModeBody>>,
}

/// Deserializes one part of a body that several types share, keeping the field path in
/// the message (the parts are read from the same JSON object, unknown keys ignored).
pub(super) fn part<'de, T: Deserialize<'de>, E: serde::de::Error>(value: &'de serde_json::Value) -> Result<T, E> {
    serde_path_to_error::deserialize(value).map_err(|e| E::custom(crate::extract::describe(&e)))
}

/// `POST /api/query`: the search body plus [`QueryOptions`].
#[derive(Debug, Default)]
pub struct QueryBody {
    pub search: SearchBody,
    pub options: QueryOptions,
}

impl<'de> Deserialize<'de> for QueryBody {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(QueryBody { search: part(&value)?, options: part(&value)? })
    }
}

impl QueryBody {
    /// `/api/query`: default and largest `limit`.
    pub const DEFAULT_LIMIT: u32 = 20;
    pub const MAX_LIMIT: u32 = 50;

    pub fn into_request(self) -> Result<QueryRequest, ApiError> {
        self.into_request_within(Self::DEFAULT_LIMIT, Self::MAX_LIMIT)
    }

    /// The worker's request with another default and largest `limit` (the CLI lists up to
    /// 1,000 results, for evaluations).
    pub fn into_request_within(self, default_limit: u32, max_limit: u32) -> Result<QueryRequest, ApiError> {
        let o = self.options;
        let modes = o.query_modes.unwrap_or_default();
        if modes.len() > MAX_QUERY_MODES {
            return Err(ApiError::validation(format!("queryModes takes at most {MAX_QUERY_MODES} entries")));
        }
        if modes.iter().any(|m| m.text.chars().count() > MAX_QUERY_CHARS) {
            return Err(ApiError::validation("queryModes text must be at most 10000 characters"));
        }
        Ok(QueryRequest {
            search: self.search.into_request(default_limit, max_limit)?,
            lang: o.lang.map(|l| l.trim().to_lowercase()).filter(|l| !l.is_empty() && l != "auto"),
            expand: o.no_expand == Some(false),
            no_rerank: o.no_rerank.unwrap_or(false),
            query_modes: modes.into_iter().map(|m| QueryMode { kind: m.mode, text: m.text }).collect(),
        })
    }
}

/// `POST /api/query/diagnose`: the query body plus the document to explain.
#[derive(Debug, Default)]
pub struct DiagnoseBody {
    pub query: QueryBody,
    pub target: DiagnoseTarget,
}

/// The document `/api/query/diagnose` explains.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DiagnoseTarget {
    /// A docid (`#abcd1234`) or a `svc://` URI.
    #[schema(required = true)]
    pub target: Option<String>,
}

impl<'de> Deserialize<'de> for DiagnoseBody {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        let query = QueryBody { search: part(&value)?, options: part(&value)? };
        Ok(DiagnoseBody { query, target: part(&value)? })
    }
}

impl DiagnoseBody {
    pub fn into_parts(self) -> Result<(QueryRequest, DocRef), ApiError> {
        let query = self.query.into_request()?;
        let target = self
            .target
            .target
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ApiError::validation("target is required: a docid (#abcd1234) or a svc:// uri"))?;
        let target = DocRef::parse(&target).map_err(|e| ApiError::validation(format!("target: {e}")))?;
        Ok((query, target))
    }
}

pub(super) fn all_of(parts: &[&str]) -> RefOr<Schema> {
    let mut b = AllOfBuilder::new();
    for p in parts {
        b = b.item(Ref::from_schema_name(*p));
    }
    b.into()
}

impl utoipa::PartialSchema for QueryBody {
    fn schema() -> RefOr<Schema> {
        all_of(&["SearchBody", "QueryOptions"])
    }
}

impl ToSchema for QueryBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("QueryBody")
    }
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("SearchBody".into(), <SearchBody as utoipa::PartialSchema>::schema()));
        <SearchBody as ToSchema>::schemas(schemas);
        schemas.push(("QueryOptions".into(), <QueryOptions as utoipa::PartialSchema>::schema()));
        <QueryOptions as ToSchema>::schemas(schemas);
    }
}

impl utoipa::PartialSchema for DiagnoseBody {
    fn schema() -> RefOr<Schema> {
        all_of(&["SearchBody", "QueryOptions", "DiagnoseTarget"])
    }
}

impl ToSchema for DiagnoseBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("DiagnoseBody")
    }
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        <QueryBody as ToSchema>::schemas(schemas);
        schemas.push(("DiagnoseTarget".into(), <DiagnoseTarget as utoipa::PartialSchema>::schema()));
    }
}
