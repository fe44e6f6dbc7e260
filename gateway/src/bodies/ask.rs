//! The body of `POST /api/ask`: the query body plus the answer's options. The body is closed:
//! an unknown field is a 400 naming it (a misspelt `verify` must not silently give an
//! unverified answer).

use super::int_in;
use super::search::{part, QueryBody, QueryOptions, SearchBody};
use protocol::{ApiError, AskRequest, VerifiedAsk};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Sources listed in `results` by default, and at most (above is clamped).
const DEFAULT_LIMIT: u32 = 5;
const MAX_LIMIT: u32 = 20;
const DEFAULT_ANSWER_TOKENS: u32 = 512;
const MAX_ANSWER_TOKENS: u32 = 2048;
/// The capsule budget of verified mode by default, and at least / at most.
const DEFAULT_CAPSULE_TOKENS: u32 = 12_000;
const MIN_CAPSULE_TOKENS: u32 = 1_000;
const MAX_CAPSULE_TOKENS: u32 = 200_000;

/// What `/api/ask` adds to the query body.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskOptions {
    /// Tokens the answer may have (default 512; above 2,048 is clamped).
    #[schema(minimum = 1)]
    pub max_answer_tokens: Option<i64>,
    /// Verified mode: the draft comes from one closed Context Capsule and is returned only when
    /// every claim is supported by it.
    pub verify: Option<bool>,
    /// Verified mode: the capsule's token budget (default 12,000; 1,000..200,000, above is clamped).
    #[schema(minimum = 1000)]
    pub context_budget_tokens: Option<i64>,
}

/// `POST /api/ask`: the query body (its `limit`: results listed, default 5, at most 20) plus
/// [`AskOptions`].
#[derive(Debug, Default)]
pub struct AskBody {
    pub query: QueryBody,
    pub options: AskOptions,
}

/// The fields of the three parts, as the OpenAPI document lists them.
fn parts() -> [RefOr<Schema>; 3] {
    [SearchBody::schema(), QueryOptions::schema(), AskOptions::schema()]
}

fn known_fields() -> Vec<String> {
    parts()
        .into_iter()
        .filter_map(|s| match s {
            RefOr::T(Schema::Object(o)) => Some(o.properties.into_keys().collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect()
}

impl<'de> Deserialize<'de> for AskBody {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        if let Some(map) = value.as_object() {
            let known = known_fields();
            if let Some(unknown) = map.keys().find(|k| !known.contains(k)) {
                return Err(serde::de::Error::custom(format!("unknown field `{unknown}`")));
            }
        }
        let query = QueryBody { search: part(&value)?, options: part(&value)? };
        Ok(AskBody { query, options: part(&value)? })
    }
}

impl AskBody {
    /// The worker's request; `stream` when the client asked for `text/event-stream` (a
    /// verified answer is never streamed: its draft is shown only once verified).
    pub fn into_request(self, stream: bool) -> Result<AskRequest, ApiError> {
        let o = self.options;
        let max_answer_tokens =
            int_in("maxAnswerTokens", o.max_answer_tokens, 1, MAX_ANSWER_TOKENS)?.unwrap_or(DEFAULT_ANSWER_TOKENS);
        let budget = int_in("contextBudgetTokens", o.context_budget_tokens, MIN_CAPSULE_TOKENS, MAX_CAPSULE_TOKENS)?
            .unwrap_or(DEFAULT_CAPSULE_TOKENS);
        let verified = (o.verify == Some(true)).then_some(VerifiedAsk { budget_tokens: u64::from(budget) });
        let mut query = self.query;
        if query.search.limit.is_none() {
            query.search.limit = Some(i64::from(DEFAULT_LIMIT));
        }
        let mut request = query.into_request()?;
        request.search.limit = request.search.limit.min(MAX_LIMIT);
        Ok(AskRequest { query: request, max_answer_tokens, stream: stream && verified.is_none(), verified })
    }
}

/// One closed object with the fields of the three parts (so that the document says what the
/// parser refuses).
impl PartialSchema for AskBody {
    fn schema() -> RefOr<Schema> {
        let mut b = ObjectBuilder::new();
        for part in parts() {
            if let RefOr::T(Schema::Object(o)) = part {
                for (name, schema) in o.properties {
                    b = b.property(name, schema);
                }
                for name in o.required {
                    b = b.required(name);
                }
            }
        }
        b.additional_properties(Some(AdditionalProperties::FreeForm(false))).into()
    }
}

impl ToSchema for AskBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("AskBody")
    }
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        <SearchBody as ToSchema>::schemas(schemas);
        <QueryOptions as ToSchema>::schemas(schemas);
        <AskOptions as ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_closed_and_knows_every_part() {
        let known = known_fields();
        for f in
            ["query", "limit", "tagsAny", "noExpand", "queryModes", "maxAnswerTokens", "verify", "contextBudgetTokens"]
        {
            assert!(known.iter().any(|k| k == f), "{f} missing from {known:?}");
        }
        let err = serde_json::from_str::<AskBody>(r#"{"query":"x","verfy":true}"#).unwrap_err();
        assert!(err.to_string().contains("verfy"), "{err}");
        assert!(serde_json::from_str::<AskBody>(r#"{"query":"x","verify":true,"noExpand":true}"#).is_ok());
    }
}
