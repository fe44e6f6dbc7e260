//! The error every worker operation can answer with. The gateway maps [`ErrorCode`] to an
//! HTTP status in exactly one place.

use serde::{Deserialize, Serialize};

/// The `error.code` of the contract's error envelope. Serializes as [`ErrorCode::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    Validation,
    PathNotFound,
    HasReferences,
    CsrfViolation,
    NotFound,
    FileNotFound,
    Duplicate,
    Conflict,
    Unavailable,
    Runtime,
    PayloadTooLarge,
    MethodNotAllowed,
    /// A refactor plan no longer matches the files (409).
    StalePlan,
    /// An operation this note or plan cannot take (409).
    Unsupported,
}

impl ErrorCode {
    /// Every code, for tables and tests that must cover them all.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::Validation,
        ErrorCode::PathNotFound,
        ErrorCode::HasReferences,
        ErrorCode::CsrfViolation,
        ErrorCode::NotFound,
        ErrorCode::FileNotFound,
        ErrorCode::Duplicate,
        ErrorCode::Conflict,
        ErrorCode::Unavailable,
        ErrorCode::Runtime,
        ErrorCode::PayloadTooLarge,
        ErrorCode::MethodNotAllowed,
        ErrorCode::StalePlan,
        ErrorCode::Unsupported,
    ];

    /// The code string of the contract's error envelope.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Validation => "VALIDATION",
            ErrorCode::PathNotFound => "PATH_NOT_FOUND",
            ErrorCode::HasReferences => "HAS_REFERENCES",
            ErrorCode::CsrfViolation => "CSRF_VIOLATION",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::Duplicate => "DUPLICATE",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::Runtime => "RUNTIME",
            ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorCode::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ErrorCode::StalePlan => "STALE_PLAN",
            ErrorCode::Unsupported => "UNSUPPORTED",
        }
    }
}

/// An error with a public message. `details` is a JSON object rendered into `error.details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{}: {message}", code.as_str())]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Option<String>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into(), details: None }
    }
    /// Sets `error.details` (a JSON object; one of the `*Details` types of [`crate::api`]).
    pub fn with_details(mut self, details: impl Serialize) -> Self {
        self.details = serde_json::to_string(&details).ok();
        self
    }
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Validation, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Runtime, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unavailable, message)
    }

    /// The contract's envelope: `{"error":{"code","message","details"?}}`.
    pub fn to_envelope(&self) -> ErrorEnvelope {
        let details = self.details.as_deref().and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok());
        ErrorEnvelope { error: ErrorBody { code: self.code, message: self.message.clone(), details } }
    }
}

/// The body of every error response (any route, any 4xx/5xx status).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

/// `error` of the error envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    /// A JSON object whose shape depends on the error (absent when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub details: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_as_their_contract_strings() {
        for c in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
    }

    #[test]
    fn the_envelope_has_details_only_when_set() {
        let plain = ApiError::not_found("gone").to_envelope();
        assert_eq!(serde_json::to_string(&plain).unwrap(), r#"{"error":{"code":"NOT_FOUND","message":"gone"}}"#);
        let with = ApiError::conflict("busy").with_details(serde_json::json!({ "activeJobId": "j" })).to_envelope();
        assert_eq!(
            serde_json::to_string(&with).unwrap(),
            r#"{"error":{"code":"CONFLICT","message":"busy","details":{"activeJobId":"j"}}}"#
        );
    }
}
