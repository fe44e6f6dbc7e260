//! Request parsing: JSON bodies and query strings, with the contract's error rules. Every
//! string that reaches the worker has passed through here (NUL bytes are refused).

use crate::error::ApiReply;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use protocol::{ApiError, ErrorCode};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

fn too_large() -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge, "Request body is larger than 16 MiB")
}

fn clean(key: &str, s: &str) -> Result<String, ApiError> {
    if s.contains('\0') {
        return Err(ApiError::validation(format!("{key} must not contain NUL bytes")));
    }
    Ok(s.to_string())
}

/// A JSON object body deserialized into `T` (one of [`crate::bodies`]). An empty body (no
/// bytes at all) is an empty object; whitespace alone is not JSON; NUL bytes are refused anywhere in it; a field of the wrong type or an
/// unknown enum value is a 400 `VALIDATION` that names the field.
pub struct Body<T>(pub T);

/// A body that was refused: the error, and the top-level field it concerns (`None`: the body
/// as a whole). A route with its own error catalog (the context family) maps the field to
/// its code.
#[derive(Debug)]
pub struct BodyRejection {
    pub field: Option<String>,
    pub error: ApiError,
}

impl BodyRejection {
    fn whole(error: ApiError) -> Self {
        BodyRejection { field: None, error }
    }
}

impl IntoResponse for BodyRejection {
    fn into_response(self) -> Response {
        ApiReply::Error(self.error).into_response()
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = BodyRejection;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let object = read_object(req).await.map_err(BodyRejection::whole)?;
        read_fields(object).map(Body)
    }
}

/// A JSON object (a body, or the arguments of an MCP tool) as `T`, with the body rules: NUL
/// bytes are refused anywhere; a wrong type or an unknown enum value is a 400 naming the field.
pub fn parse_object<T: DeserializeOwned>(object: Value) -> Result<T, ApiError> {
    read_fields(object).map_err(|r| r.error)
}

/// [`parse_object`], saying which top-level field was refused.
pub fn read_fields<T: DeserializeOwned>(object: Value) -> Result<T, BodyRejection> {
    if let Value::Object(map) = &object {
        for (key, value) in map {
            refuse_nul(key, value)
                .and_then(|()| clean("body", key).map(drop))
                .map_err(|error| BodyRejection { field: Some(key.clone()), error })?;
        }
    }
    serde_path_to_error::deserialize(object).map_err(|e| {
        let field = match e.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.clone()),
            _ => None,
        };
        BodyRejection { field, error: ApiError::validation(describe(&e)) }
    })
}

/// `field: what was wrong`, or just what was wrong when it concerns the whole body.
pub fn describe(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let inner = e.inner().to_string();
    if path == "." || path == "?" {
        inner
    } else {
        format!("{path}: {inner}")
    }
}

async fn read_object(req: Request) -> Result<Value, ApiError> {
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES).await.map_err(|_| too_large())?;
    if bytes.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ApiError::validation("Request body must be a JSON object")),
        Err(_) => Err(ApiError::validation("Invalid JSON body")),
    }
}

/// Refuses a NUL byte in any string or key of a JSON value.
fn refuse_nul(at: &str, v: &Value) -> Result<(), ApiError> {
    match v {
        Value::String(s) => clean(at, s).map(drop),
        Value::Array(items) => items.iter().try_for_each(|i| refuse_nul(at, i)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            clean(at, k)?;
            refuse_nul(k, v)
        }),
        _ => Ok(()),
    }
}

/// Query-string parameters.
pub struct Params(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiReply;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let q = parts.uri.query().unwrap_or("");
        let pairs: Vec<(String, String)> = form_urlencoded::parse(q.as_bytes()).into_owned().collect();
        for (k, v) in &pairs {
            clean(k, v).map_err(ApiReply::Error)?;
        }
        Ok(Params(pairs))
    }
}

impl Params {
    /// The last value of `key` as sent, empty or not.
    fn raw(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// A text parameter; an empty value is no value.
    pub fn str_opt(&self, key: &str) -> Option<String> {
        self.raw(key).filter(|v| !v.is_empty()).map(String::from)
    }

    /// A `svc://` URI naming a document (absent: `None`). A value that is not one, an empty
    /// value included, is a 400: `?uri=` must never fall back to another way of naming.
    pub fn svc_uri(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) if v.strip_prefix("svc://").is_some_and(|rest| !rest.is_empty()) => Ok(Some(v.to_string())),
            Some(_) => Err(ApiError::validation(format!("{key} must be a svc:// URI"))),
        }
    }

    /// An integer in `[min, ..]` (default when absent); values above `max` are clamped. An
    /// empty value is not a number: 400.
    pub fn int(&self, key: &str, default: u32, min: u32, max: u32) -> Result<u32, ApiError> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) if n < min as i64 => Err(ApiError::validation(format!("{key} must be at least {min}"))),
                Ok(n) => Ok(n.min(max as i64) as u32),
                Err(_) => Err(ApiError::validation(format!("{key} must be an integer"))),
            },
        }
    }

    pub fn float(&self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, ApiError> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(n) if n.is_finite() && n >= min => Ok(n.min(max)),
                _ => Err(ApiError::validation(format!("{key} must be a number between {min} and {max}"))),
            },
        }
    }

    pub fn bool(&self, key: &str, default: bool) -> Result<bool, ApiError> {
        match self.raw(key) {
            None => Ok(default),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(_) => Err(ApiError::validation(format!("{key} must be true or false"))),
        }
    }

    /// One of `choices` (absent: `None`; anything else, empty included: 400).
    pub fn choice<T: Copy>(&self, key: &str, choices: &[(&str, T)]) -> Result<Option<T>, ApiError> {
        let Some(v) = self.raw(key) else { return Ok(None) };
        choices.iter().find(|(name, _)| *name == v).map(|(_, c)| Some(*c)).ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            ApiError::validation(format!("{key} must be one of {}", names.join(", ")))
        })
    }

    pub fn list(&self, key: &str) -> Vec<String> {
        self.str_opt(key)
            .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default()
    }
}
