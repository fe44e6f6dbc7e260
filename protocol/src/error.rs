//! The error every worker operation can answer with. The gateway maps [`ErrorCode`] to an
//! HTTP status in exactly one place.

use serde::{Deserialize, Serialize};

/// Which catalog a code belongs to: the API's (SCREAMING codes, messages written where they
/// arise) or the Context Capsule family's (lower-snake codes, fixed messages:
/// [`ErrorCode::catalog_message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorFamily {
    Api,
    Context,
}

/// The one table of error codes: each variant with its wire string, its HTTP status and its
/// family. [`ErrorCode::ALL`], [`ErrorCode::as_str`], [`ErrorCode::status`],
/// [`ErrorCode::family`] and serde's names all come from it.
macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal, $status:literal, $family:ident; )*) => {
        /// The `error.code` of the contract's error envelope. Serializes as [`ErrorCode::as_str`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum ErrorCode {
            $( $(#[$doc])* #[serde(rename = $wire)] $variant, )*
        }

        impl ErrorCode {
            /// Every code, for tables and tests that must cover them all.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The code string of the contract's error envelope.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $wire,)* }
            }

            /// The HTTP status a client gets for this code.
            pub fn status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status,)* }
            }

            pub fn family(self) -> ErrorFamily {
                match self { $(ErrorCode::$variant => ErrorFamily::$family,)* }
            }
        }
    };
}

error_codes! {
    Validation = "VALIDATION", 400, Api;
    PathNotFound = "PATH_NOT_FOUND", 400, Api;
    HasReferences = "HAS_REFERENCES", 400, Api;
    CsrfViolation = "CSRF_VIOLATION", 403, Api;
    NotFound = "NOT_FOUND", 404, Api;
    FileNotFound = "FILE_NOT_FOUND", 404, Api;
    Duplicate = "DUPLICATE", 409, Api;
    Conflict = "CONFLICT", 409, Api;
    Unavailable = "UNAVAILABLE", 503, Api;
    Runtime = "RUNTIME", 500, Api;
    PayloadTooLarge = "PAYLOAD_TOO_LARGE", 413, Api;
    MethodNotAllowed = "METHOD_NOT_ALLOWED", 405, Api;
    /// A refactor plan no longer matches the files.
    StalePlan = "STALE_PLAN", 409, Api;
    /// An operation this note or plan cannot take.
    Unsupported = "UNSUPPORTED", 409, Api;
    /// `POST /api/connectors/verify` could not run its probe at all.
    ConnectorVerificationFailed = "CONNECTOR_VERIFICATION_FAILED", 500, Api;
    // The Context Capsule family (`/api/context`, `/api/context/verify`).
    InvalidInput = "invalid_input", 400, Context;
    InvalidGoal = "invalid_goal", 400, Context;
    InvalidBudget = "invalid_budget", 400, Context;
    InvalidFilter = "invalid_filter", 400, Context;
    InvalidUri = "invalid_uri", 400, Context;
    IdentityMismatch = "identity_mismatch", 400, Context;
    NoEvidence = "no_evidence", 404, Context;
    IndexChangedDuringCompile = "index_changed_during_compile", 409, Context;
    IndexSnapshotMismatch = "index_snapshot_mismatch", 409, Context;
    TokenizerUnavailable = "tokenizer_unavailable", 503, Context;
    RetrievalFailed = "retrieval_failed", 500, Context;
    ContentLoadFailed = "content_load_failed", 500, Context;
    RuntimeError = "runtime_error", 500, Context;
}

/// The schema is written from the table (utoipa's derive does not see the serde names a
/// macro writes): a string, one of the wire codes.
impl utoipa::PartialSchema for ErrorCode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(ErrorCode::ALL.iter().map(|c| c.as_str())))
            .into()
    }
}

impl utoipa::ToSchema for ErrorCode {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ErrorCode")
    }
}

impl ErrorCode {
    /// The fixed public message of a Context Capsule code (`None` for the other codes, whose
    /// messages are written where they arise). These messages never carry a path or a cause.
    pub fn catalog_message(self) -> Option<&'static str> {
        Some(match self {
            ErrorCode::InvalidInput => "The Context Capsule request is invalid.",
            ErrorCode::InvalidGoal => {
                "The goal must be non-empty text of at most 16384 characters without carriage returns."
            }
            ErrorCode::InvalidBudget => "The budget must be a positive whole number, larger than its safety margin.",
            ErrorCode::InvalidFilter => "A filter of the Context Capsule request is invalid.",
            ErrorCode::InvalidUri => "The URI prefix must be a svc:// URI.",
            ErrorCode::IdentityMismatch => "The Context Capsule does not match its identity.",
            ErrorCode::NoEvidence => "No indexed evidence matches the goal within the requested scope.",
            ErrorCode::IndexChangedDuringCompile => {
                "The index changed while the Context Capsule was compiled; compile it again."
            }
            ErrorCode::IndexSnapshotMismatch => "The Context Capsule was compiled from another index.",
            ErrorCode::TokenizerUnavailable => "The tokenizer needed to count the budget is unavailable.",
            ErrorCode::RetrievalFailed => "Retrieval failed while the Context Capsule was processed.",
            ErrorCode::ContentLoadFailed => "Indexed content could not be loaded.",
            ErrorCode::RuntimeError => "The Context Capsule could not be processed.",
            _ => return None,
        })
    }
}

/// `error.details` of an internal failure ([`ApiError::internal`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InternalErrorDetails {
    /// The id the server log records the cause under.
    pub error_id: String,
}

/// An error with a public message. `details` is a JSON object rendered into `error.details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{}: {message}", code.as_str())]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Option<String>,
}

/// A tag a client sent that no tag can be: a 400 with the rule.
impl From<crate::InvalidTag> for ApiError {
    fn from(e: crate::InvalidTag) -> Self {
        ApiError::validation(e.to_string())
    }
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
    /// A Context Capsule error: its code with the catalog's fixed message.
    pub fn context(code: ErrorCode) -> Self {
        Self::new(code, code.catalog_message().unwrap_or("The Context Capsule could not be processed."))
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
    /// An internal failure as a client sees it: 500 `RUNTIME` with a fixed message and the id
    /// under which the server's log records the cause (SQL, paths and the like stay there).
    pub fn internal(error_id: &str) -> Self {
        Self::runtime(format!("Internal error {error_id}: the server log records its cause."))
            .with_details(InternalErrorDetails { error_id: error_id.to_string() })
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
        for &c in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
            assert_eq!(serde_json::from_value::<ErrorCode>(c.as_str().into()).unwrap(), c);
            // The context family is the one with a fixed catalog of messages.
            assert_eq!(c.family() == ErrorFamily::Context, c.catalog_message().is_some(), "{c:?}");
        }
        // The OpenAPI schema lists exactly the wire strings.
        let schema = serde_json::to_value(<ErrorCode as utoipa::PartialSchema>::schema()).unwrap();
        let listed: Vec<&str> = schema["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(listed, ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>());
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
