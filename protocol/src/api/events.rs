//! The payloads of `GET /api/events` (server-sent events).

use super::{JobKind, JobStatus};
use serde::{Deserialize, Serialize};

/// The `event:` name of a server-sent event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    DocumentChanged,
    JobFinished,
    CapsuleReverified,
    /// Events were dropped for this subscriber (it read too slowly): what it shows may be
    /// stale, and it should fetch it again.
    EventsDropped,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::DocumentChanged => "document-changed",
            EventKind::JobFinished => "job-finished",
            EventKind::CapsuleReverified => "capsule-reverified",
            EventKind::EventsDropped => "events-dropped",
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
    /// The folder watcher saw the file change (another program wrote it). `watcher` on the
    /// wire, as the reference names it.
    #[serde(rename = "watcher")]
    Watch,
    /// Another member of the team changed a shared note (it came from the team's stream).
    Team,
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
    /// The SHA-256 of the file svc now indexes for this URI; absent when the document left
    /// the index (deleted, excluded). A page that saved a note knows its own version by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_hash: Option<String>,
    /// The change journal's cursor at this document's newest change (also the SSE `id:`):
    /// `GET /api/changes?since=` and `/api/diff` take it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
}

/// The reply to a replay of events (`Last-Event-ID`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayedEvents {
    /// Oldest first.
    pub events: Vec<DocumentChangedEvent>,
    /// False when the changes after the cursor were not all replayed (more than a page of
    /// them, or the journal was cut past the cursor): the subscriber should fetch again.
    pub complete: bool,
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

/// `GET /api/events`, `event: capsule-reverified`: a saved capsule was verified again after
/// a change touched its evidence. Never a path, URI, hash, text or receipt.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleReverifiedEvent {
    /// Always `capsule-reverified`.
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub registration_id: String,
    pub capsule_id: String,
    pub operation_status: ReverifyOutcome,
    pub affected_question_state: QuestionState,
    pub changed_at: String,
}

/// `operationStatus` of a `capsule-reverified` event.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReverifyOutcome {
    Completed,
    /// The verification could not run.
    Failed,
}

/// `affectedQuestionState` of a `capsule-reverified` event.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuestionState {
    /// Every evidence is unchanged.
    Unaffected,
    /// Some evidence is stale or missing.
    Affected,
    /// The verification could not run.
    Unknown,
}

/// `GET /api/events`, `event: events-dropped`: the stream skipped events this subscriber
/// could not take in time. Every state it shows from events (counts, a note's text, search
/// results) should be fetched again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsDroppedEvent {
    /// Always `events-dropped`.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// How many events were skipped (at least; between the worker and the gateway and
    /// between the gateway and this subscriber).
    pub dropped: u64,
}

impl EventsDroppedEvent {
    pub fn new(dropped: u64) -> Self {
        EventsDroppedEvent { kind: EventKind::EventsDropped, dropped }
    }
}

/// A saved capsule (`svc context add`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleRegistration {
    pub registration_id: String,
    pub capsule_id: String,
    pub label: Option<String>,
    pub created_at: String,
    pub evidence_count: u64,
    /// The last re-verification's content status (`null` until one ran).
    pub content_status: Option<crate::api::ContentStatus>,
    pub last_verified_at: Option<String>,
}

/// `svc context list`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CapsuleRegistrations {
    pub registrations: Vec<CapsuleRegistration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_match_their_serde_names() {
        for k in
            [EventKind::DocumentChanged, EventKind::JobFinished, EventKind::CapsuleReverified, EventKind::EventsDropped]
        {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}
