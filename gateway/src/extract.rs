//! Request parsing: JSON bodies and query strings, with the contract's error rules. Every
//! string that reaches the worker has passed through here (NUL bytes are refused).

use crate::error::ApiReply;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use protocol::{ApiError, ErrorCode};
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

/// A JSON object body. An empty body is an empty object.
pub struct Payload(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Payload {
    type Rejection = ApiReply;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        Self::read(req).await.map_err(ApiReply::Error)
    }
}

impl Payload {
    async fn read(req: Request) -> Result<Self, ApiError> {
        let declared = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
            return Err(too_large());
        }
        let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES).await.map_err(|_| too_large())?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Payload(Map::new()));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(Payload(map)),
            Ok(_) => Err(ApiError::validation("Request body must be a JSON object")),
            Err(_) => Err(ApiError::validation("Invalid JSON body")),
        }
    }
}

impl Payload {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    pub fn str_opt(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => clean(key, s).map(Some),
            Some(_) => Err(ApiError::validation(format!("{key} must be a string"))),
        }
    }

    pub fn str_req(&self, key: &str) -> Result<String, ApiError> {
        match self.str_opt(key)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(ApiError::validation(format!("{key} is required"))),
        }
    }

    pub fn bool_opt(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(ApiError::validation(format!("{key} must be a boolean"))),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_f64()
                .filter(|f| f.is_finite())
                .map(Some)
                .ok_or_else(|| ApiError::validation(format!("{key} must be a number"))),
            Some(_) => Err(ApiError::validation(format!("{key} must be a number"))),
        }
    }

    /// An integer in `[min, ..]`; values above `max` are clamped to it.
    pub fn int_opt(&self, key: &str, min: u32, max: u32) -> Result<Option<u32>, ApiError> {
        match self.number(key)? {
            None => Ok(None),
            Some(f) if f.fract() != 0.0 => Err(ApiError::validation(format!("{key} must be an integer"))),
            Some(f) if f < min as f64 => Err(ApiError::validation(format!("{key} must be at least {min}"))),
            Some(f) => Ok(Some(f.min(max as f64) as u32)),
        }
    }

    /// A number in `[min, ..]`; values above `max` are clamped to it.
    pub fn float_opt(&self, key: &str, min: f64, max: f64) -> Result<Option<f64>, ApiError> {
        match self.number(key)? {
            None => Ok(None),
            Some(f) if f < min => Err(ApiError::validation(format!("{key} must be between {min} and {max}"))),
            Some(f) => Ok(Some(f.min(max))),
        }
    }

    /// A comma-separated string or an array of strings; trimmed, empty items dropped.
    pub fn list_opt(&self, key: &str) -> Result<Vec<String>, ApiError> {
        let items: Vec<String> = match self.get(key) {
            None => Vec::new(),
            Some(Value::String(s)) => clean(key, s)?.split(',').map(|x| x.trim().to_string()).collect(),
            Some(Value::Array(a)) => {
                let mut out = Vec::with_capacity(a.len());
                for v in a {
                    match v {
                        Value::String(s) => out.push(clean(key, s)?.trim().to_string()),
                        _ => {
                            return Err(ApiError::validation(format!("{key} must be a string or an array of strings")))
                        }
                    }
                }
                out
            }
            Some(_) => return Err(ApiError::validation(format!("{key} must be a string or an array of strings"))),
        };
        Ok(items.into_iter().filter(|s| !s.is_empty()).collect())
    }

    pub fn array_len(&self, key: &str) -> Result<usize, ApiError> {
        match self.get(key) {
            None => Ok(0),
            Some(Value::Array(a)) => Ok(a.len()),
            Some(_) => Err(ApiError::validation(format!("{key} must be an array"))),
        }
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
    pub fn str_opt(&self, key: &str) -> Option<String> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()).filter(|v| !v.is_empty())
    }

    /// An integer in `[min, ..]` (default when absent); values above `max` are clamped.
    pub fn int(&self, key: &str, default: u32, min: u32, max: u32) -> Result<u32, ApiError> {
        match self.str_opt(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) if n < min as i64 => Err(ApiError::validation(format!("{key} must be at least {min}"))),
                Ok(n) => Ok(n.min(max as i64) as u32),
                Err(_) => Err(ApiError::validation(format!("{key} must be an integer"))),
            },
        }
    }

    pub fn float(&self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, ApiError> {
        match self.str_opt(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(n) if n.is_finite() && n >= min => Ok(n.min(max)),
                _ => Err(ApiError::validation(format!("{key} must be a number between {min} and {max}"))),
            },
        }
    }

    pub fn bool(&self, key: &str, default: bool) -> Result<bool, ApiError> {
        match self.str_opt(key).as_deref() {
            None => Ok(default),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(_) => Err(ApiError::validation(format!("{key} must be true or false"))),
        }
    }

    pub fn list(&self, key: &str) -> Vec<String> {
        self.str_opt(key)
            .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default()
    }
}
