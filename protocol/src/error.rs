//! The error every worker operation can answer with. The gateway maps [`ErrorCode`] to an
//! HTTP status in exactly one place.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details.to_string());
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
    pub fn to_envelope(&self) -> serde_json::Value {
        let mut err = serde_json::json!({ "code": self.code.as_str(), "message": self.message });
        if let Some(d) = self.details.as_deref().and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok()) {
            err["details"] = d;
        }
        serde_json::json!({ "error": err })
    }
}
