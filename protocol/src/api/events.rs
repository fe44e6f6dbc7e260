//! The payloads of `GET /api/events` (server-sent events).

use super::{JobKind, JobStatus};
use serde::{Deserialize, Serialize};

/// The `event:` name of a server-sent event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    DocumentChanged,
    JobFinished,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::DocumentChanged => "document-changed",
            EventKind::JobFinished => "job-finished",
        }
    }
}

/// What wrote a changed document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeOrigin {
    /// A sync found the file changed.
    Sync,
    /// An API write or refactor of an existing note.
    Save,
    /// An API write of a new note.
    Create,
}

/// `GET /api/events`, `event: document-changed`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentChangedEvent {
    /// Always `document-changed`.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// `svc://` URI of the document.
    pub uri: String,
    pub collection: String,
    pub rel_path: String,
    pub origin: ChangeOrigin,
    pub changed_at: String,
}

/// `GET /api/events`, `event: job-finished`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct JobFinishedEvent {
    pub id: String,
    /// The job's type.
    #[serde(rename = "type")]
    pub kind: JobKind,
    pub status: JobStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_match_their_serde_names() {
        for k in [EventKind::DocumentChanged, EventKind::JobFinished] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}
