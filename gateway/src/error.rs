//! The one place where errors become HTTP responses.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use protocol::{ApiError, ErrorCode, JsonBody};

/// The HTTP status of a code, from the one table in `protocol` ([`ErrorCode::status`]).
pub fn status_of(code: ErrorCode) -> StatusCode {
    StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

pub fn error_response(err: &ApiError) -> Response {
    (status_of(err.code), axum::Json(err.to_envelope())).into_response()
}

/// A route's answer: a JSON body from the worker (or the gateway) with a status, or an error.
pub enum ApiReply {
    Json(StatusCode, JsonBody),
    /// A readable form (Markdown), with its content type.
    Text(&'static str, String),
    Error(ApiError),
}

impl ApiReply {
    pub fn ok(result: Result<impl Into<JsonBody>, ApiError>) -> Self {
        Self::with_status(StatusCode::OK, result)
    }
    pub fn accepted(result: Result<impl Into<JsonBody>, ApiError>) -> Self {
        Self::with_status(StatusCode::ACCEPTED, result)
    }
    pub fn with_status(status: StatusCode, result: Result<impl Into<JsonBody>, ApiError>) -> Self {
        match result {
            Ok(body) => ApiReply::Json(status, body.into()),
            Err(e) => ApiReply::Error(e),
        }
    }
}

impl From<ApiError> for ApiReply {
    fn from(e: ApiError) -> Self {
        ApiReply::Error(e)
    }
}

impl IntoResponse for ApiReply {
    fn into_response(self) -> Response {
        match self {
            ApiReply::Json(status, body) => {
                let mut r = (status, body.bytes).into_response();
                r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                r
            }
            ApiReply::Text(content_type, text) => {
                let mut r = (StatusCode::OK, text).into_response();
                r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
                r
            }
            ApiReply::Error(e) => error_response(&e),
        }
    }
}
