//! The one way an internal failure reaches a client: the cause goes to the log under a fresh
//! id, the client gets the fixed message and the id ([`ApiError::internal`]).

use protocol::ApiError;

/// Maps an internal failure to a RUNTIME error, redacted ([`ApiError::internal`]).
pub(crate) fn internal<E: std::fmt::Display>(e: E) -> ApiError {
    let id = error_id();
    tracing::error!(error_id = %id, "{e}");
    ApiError::internal(&id)
}

/// What a client is told of a file system failure: its kind ("storage full", "permission
/// denied"), a fixed vocabulary, never the OS's text or a path.
pub(crate) fn io_kind(e: &std::io::Error) -> String {
    e.kind().to_string()
}

/// A short random id that ties a client's error to its line in the log.
pub(crate) fn error_id() -> String {
    let mut id = uuid::Uuid::new_v4().simple().to_string();
    id.truncate(12);
    id
}

/// The worker's own failures are internal errors for a client ([`internal`]): with these, `?`
/// maps them where a handler returns an [`ApiError`]. Invoked beside each error type.
macro_rules! internal_errors {
    ($($t:ty),*) => {
        $(impl From<$t> for protocol::ApiError {
            fn from(e: $t) -> Self {
                $crate::errors::internal(e)
            }
        })*
    };
}
pub(crate) use internal_errors;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_failure_reaches_the_client_as_a_fixed_message_and_an_id() {
        let e = internal("no such table: documents_v2 at /home/me/.local/share/svc/catalog.db");
        assert_eq!(e.code, protocol::ErrorCode::Runtime);
        assert!(!e.message.contains("documents_v2") && !e.message.contains("/home/me"), "{}", e.message);
        let details: protocol::InternalErrorDetails =
            serde_json::from_str(e.details.as_deref().unwrap_or("{}")).unwrap();
        assert_eq!(details.error_id.len(), 12);
        assert!(e.message.contains(&details.error_id), "{}", e.message);
        assert_ne!(internal("x").details, internal("x").details, "a fresh id each time");
    }
}
