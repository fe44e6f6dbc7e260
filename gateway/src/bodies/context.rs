//! Bodies of `/api/context` and `/api/context/verify`: closed (an unknown field is
//! `invalid_input`), and every error comes from the context family's fixed catalog.

use super::search::{QueryModeBody, MAX_PROJECT_HINTS};
use crate::dates::{parse_bound, Bound};
use crate::extract::BodyRejection;
use protocol::{ApiError, CollectionName, ContextRequest, DepthPolicy, ErrorCode, QueryMode, SearchFilters, Tag};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

const MAX_GOAL_CHARS: usize = 16_384;
const MAX_LIST_ITEMS: usize = 128;
const MAX_ITEM_CHARS: usize = 256;
const MAX_LIMIT: i64 = 100;
const MAX_CANDIDATES: i64 = 200;

fn err(code: ErrorCode) -> ApiError {
    ApiError::context(code)
}

/// How a capsule or a receipt is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CapsuleFormat {
    /// The canonical JSON.
    #[default]
    Json,
    /// A readable form; every untrusted block sits in a fence it cannot close.
    Markdown,
}

fn format_of(f: Option<String>) -> Result<CapsuleFormat, ApiError> {
    match f.as_deref() {
        None | Some("json") => Ok(CapsuleFormat::Json),
        Some("md") => Ok(CapsuleFormat::Markdown),
        Some(_) => Err(err(ErrorCode::InvalidInput)),
    }
}

/// `POST /api/context`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextBody {
    /// What the evidence is for (at most 16,384 characters, no carriage return).
    #[schema(required = true, min_length = 1, max_length = 16384)]
    pub goal: Option<String>,
    /// What is searched; the goal when absent.
    #[schema(max_length = 16384)]
    pub query: Option<String>,
    /// Collections to draw from (all when absent).
    #[schema(max_items = 128)]
    pub collections: Option<Vec<String>>,
    /// Only documents whose `svc://` URI starts with this.
    pub uri_prefix: Option<String>,
    #[schema(max_items = 16)]
    pub query_modes: Option<Vec<QueryModeBody>>,
    #[schema(max_items = 128)]
    pub tags_all: Option<Vec<String>>,
    #[schema(max_items = 128)]
    pub tags_any: Option<Vec<String>>,
    #[schema(max_items = 128)]
    pub categories: Option<Vec<String>>,
    pub author: Option<String>,
    pub lang: Option<String>,
    pub intent: Option<String>,
    #[schema(max_items = 128)]
    pub exclude: Option<Vec<String>>,
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub min_score: Option<f64>,
    /// Modified at or after (ISO 8601 date or time, or a relative token).
    pub since: Option<String>,
    pub until: Option<String>,
    /// Add the retrieved notes' link neighbours (default: with `thorough` only).
    pub graph: Option<bool>,
    pub no_rerank: Option<bool>,
    /// Evidence passages at most (default 20, at most 100).
    #[schema(minimum = 1)]
    pub limit: Option<i64>,
    /// Candidates retrieved (default 40, `thorough` 80; at most 200).
    #[schema(minimum = 1)]
    pub candidate_limit: Option<i64>,
    /// The budget of the whole canonical payload, in tokens (required, a positive integer).
    #[schema(value_type = i64, required = true, minimum = 1)]
    pub budget_tokens: Option<Value>,
    /// The payload's byte budget (default 4 × budgetTokens).
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub budget_bytes: Option<Value>,
    #[schema(value_type = Option<i64>, minimum = 0)]
    pub safety_margin_tokens: Option<Value>,
    #[schema(value_type = Option<i64>, minimum = 0)]
    pub safety_margin_bytes: Option<Value>,
    /// `fast` (BM25, no model setup), `balanced` (default: hybrid when vectors exist) or `thorough`.
    #[schema(pattern = "^(fast|balanced|thorough)$")]
    pub depth_policy: Option<String>,
    /// Accepted and ignored (at most 16).
    #[schema(max_items = 16)]
    pub project_hints: Option<Vec<Value>>,
    /// `json` (default) or `md`.
    #[schema(pattern = "^(json|md)$")]
    pub format: Option<String>,
}

/// A whole number ≥ `min` (JSON integer), else `code`.
fn whole(v: Option<Value>, min: u64, code: ErrorCode) -> Result<Option<u64>, ApiError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(x) if x >= min && x <= (1u64 << 53) => Ok(Some(x)),
            _ => Err(err(code)),
        },
        Some(_) => Err(err(code)),
    }
}

/// A list of at most 128 items of at most 256 characters each.
fn list(v: Option<Vec<String>>, code: ErrorCode) -> Result<Vec<String>, ApiError> {
    let v = v.unwrap_or_default();
    if v.len() > MAX_LIST_ITEMS || v.iter().any(|s| s.chars().count() > MAX_ITEM_CHARS) {
        return Err(err(code));
    }
    Ok(v.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
}

/// A capsule's tag filter: a [`list`], each tag normalized as indexed tags are.
fn tag_list(v: Option<Vec<String>>) -> Result<Vec<Tag>, ApiError> {
    Tag::parse_all(&list(v, ErrorCode::InvalidFilter)?).map_err(|_| err(ErrorCode::InvalidFilter))
}

fn text(v: Option<String>, code: ErrorCode) -> Result<Option<String>, ApiError> {
    match v {
        Some(s) if s.chars().count() > MAX_GOAL_CHARS || s.contains('\r') => Err(err(code)),
        Some(s) if s.trim().is_empty() => Ok(None),
        other => Ok(other),
    }
}

impl ContextBody {
    pub fn into_request(self) -> Result<(ContextRequest, CapsuleFormat), ApiError> {
        let format = format_of(self.format)?;
        let goal = text(self.goal, ErrorCode::InvalidGoal)?.ok_or_else(|| err(ErrorCode::InvalidGoal))?;
        let query = text(self.query, ErrorCode::InvalidGoal)?.unwrap_or_else(|| goal.clone());
        let budget_tokens =
            whole(self.budget_tokens, 1, ErrorCode::InvalidBudget)?.ok_or_else(|| err(ErrorCode::InvalidBudget))?;
        let budget_bytes =
            whole(self.budget_bytes, 1, ErrorCode::InvalidBudget)?.unwrap_or(budget_tokens.saturating_mul(4));
        let safety_margin_tokens = whole(self.safety_margin_tokens, 0, ErrorCode::InvalidBudget)?.unwrap_or(0);
        let safety_margin_bytes = whole(self.safety_margin_bytes, 0, ErrorCode::InvalidBudget)?.unwrap_or(0);
        if safety_margin_tokens >= budget_tokens || safety_margin_bytes >= budget_bytes {
            return Err(err(ErrorCode::InvalidBudget));
        }
        let depth = match self.depth_policy.as_deref() {
            None => DepthPolicy::Balanced,
            Some(d) => DepthPolicy::parse(d).ok_or_else(|| err(ErrorCode::InvalidInput))?,
        };
        if self.project_hints.as_ref().is_some_and(|h| h.len() > MAX_PROJECT_HINTS) {
            return Err(err(ErrorCode::InvalidInput));
        }
        let positive = |v: Option<i64>, max: i64| match v {
            None => Ok(None),
            Some(n) if n >= 1 => Ok(Some(n.min(max) as u32)),
            Some(_) => Err(err(ErrorCode::InvalidInput)),
        };
        let limit = positive(self.limit, MAX_LIMIT)?.unwrap_or(20);
        let candidate_limit = positive(self.candidate_limit, MAX_CANDIDATES)?;
        let mut collections = Vec::new();
        for c in list(self.collections, ErrorCode::InvalidFilter)? {
            let name = CollectionName::parse(&c).map_err(|_| err(ErrorCode::InvalidFilter))?;
            if !collections.contains(&name) {
                collections.push(name);
            }
        }
        collections.sort();
        let uri_prefix = match self.uri_prefix {
            Some(p) if !p.starts_with("svc://") || p.chars().count() > MAX_GOAL_CHARS => {
                return Err(err(ErrorCode::InvalidUri))
            }
            other => other,
        };
        let now = time::OffsetDateTime::now_utc();
        let bound = |v: &Option<String>, b: Bound| {
            v.as_deref().map(|s| parse_bound(s, b, now).map_err(|_| err(ErrorCode::InvalidFilter))).transpose()
        };
        let (since_ms, until_ms) = (bound(&self.since, Bound::Since)?, bound(&self.until, Bound::Until)?);
        if since_ms.zip(until_ms).is_some_and(|(s, u)| s > u) {
            return Err(err(ErrorCode::InvalidFilter));
        }
        let min_score = match self.min_score {
            Some(m) if !(0.0..=1.0).contains(&m) => return Err(err(ErrorCode::InvalidFilter)),
            other => other,
        };
        let modes = self.query_modes.unwrap_or_default();
        if modes.len() > 16 || modes.iter().any(|m| m.text.chars().count() > MAX_GOAL_CHARS) {
            return Err(err(ErrorCode::InvalidInput));
        }
        let mut categories: Vec<String> =
            list(self.categories, ErrorCode::InvalidFilter)?.into_iter().map(|c| c.to_lowercase()).collect();
        categories.sort();
        categories.dedup();
        let mut exclude: Vec<String> =
            list(self.exclude, ErrorCode::InvalidFilter)?.into_iter().map(|c| c.to_lowercase()).collect();
        exclude.dedup();
        let short = |v: Option<String>| match v {
            Some(s) if s.chars().count() > MAX_ITEM_CHARS => Err(err(ErrorCode::InvalidFilter)),
            other => Ok(other.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())),
        };
        let req = ContextRequest {
            goal,
            query,
            collections,
            uri_prefix,
            query_modes: modes.into_iter().map(|m| QueryMode { kind: m.mode, text: m.text }).collect(),
            filters: SearchFilters {
                collection: None,
                since_ms,
                until_ms,
                categories,
                author: short(self.author)?,
                tags_all: tag_list(self.tags_all)?,
                tags_any: tag_list(self.tags_any)?,
                languages: Vec::new(),
            },
            intent: short(self.intent)?,
            exclude,
            min_score,
            lang: short(self.lang)?.map(|l| l.to_lowercase()).filter(|l| l != "auto"),
            graph: self.graph,
            no_rerank: self.no_rerank.unwrap_or(false),
            limit,
            candidate_limit,
            budget_tokens,
            budget_bytes,
            safety_margin_tokens,
            safety_margin_bytes,
            depth,
        };
        Ok((req, format))
    }
}

/// `POST /api/context/verify`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyBody {
    /// The complete capsule as `/api/context` returned it.
    #[schema(value_type = Object, required = true)]
    pub capsule: Option<Value>,
    /// `json` (default) or `md`.
    #[schema(pattern = "^(json|md)$")]
    pub format: Option<String>,
}

impl VerifyBody {
    pub fn into_parts(self) -> Result<(String, CapsuleFormat), ApiError> {
        let format = format_of(self.format)?;
        match self.capsule {
            Some(c @ Value::Object(_)) => Ok((c.to_string(), format)),
            _ => Err(err(ErrorCode::InvalidInput)),
        }
    }
}

/// Any error of reading a context body, in the context family's catalog: a field that
/// failed to parse keeps its own code (`goal`: `invalid_goal`, budgets: `invalid_budget`,
/// filters: `invalid_filter`, `uriPrefix`: `invalid_uri`); the rest is `invalid_input`. An
/// oversized body stays a 413.
pub fn context_error(r: BodyRejection) -> ApiError {
    if r.error.code == ErrorCode::PayloadTooLarge || r.error.code.catalog_message().is_some() {
        return r.error;
    }
    let code = match r.field.as_deref().unwrap_or("") {
        "goal" | "query" => ErrorCode::InvalidGoal,
        "budgetTokens" | "budgetBytes" | "safetyMarginTokens" | "safetyMarginBytes" => ErrorCode::InvalidBudget,
        "collections" | "tagsAll" | "tagsAny" | "categories" | "author" | "since" | "until" | "minScore"
        | "exclude" => ErrorCode::InvalidFilter,
        "uriPrefix" => ErrorCode::InvalidUri,
        _ => ErrorCode::InvalidInput,
    };
    err(code)
}
