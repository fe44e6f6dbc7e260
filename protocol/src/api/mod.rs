//! JSON response bodies of the HTTP contract, written by the worker (and, for health and
//! status, by the gateway). One module per resource; everything is re-exported here.
//!
//! Field order is the key order on the wire. Conventions:
//! - `Option<T>` without `skip_serializing_if` is a key that is always present (`null` when
//!   there is nothing to say);
//! - `Option<T>` with `skip_serializing_if = "Option::is_none"` is a key that is absent then.
//! - Numbers that came from an `f32` are carried as the `f64` the old JSON literals printed
//!   (`f64::from(x)`), so the digits on the wire do not change.

mod ask;
mod audit;
mod capsule_codes;
mod changes;
mod collections;
mod connectors;
mod context;
mod context_md;
mod diagnose;
mod docs;
mod events;
mod explain;
mod links;
mod models;
mod refactor;
mod search;
mod status;
mod string_map;
mod writes;

pub use ask::*;
pub use audit::*;
pub use capsule_codes::*;
pub use changes::*;
pub use collections::*;
pub use connectors::*;
pub use context::*;
pub use context_md::{capsule_markdown, fence_for, receipt_markdown};
pub use diagnose::*;
pub use docs::*;
pub use events::*;
pub use explain::*;
pub use links::*;
pub use models::*;
pub use refactor::*;
pub use search::*;
pub use status::*;
pub use string_map::StringMap;
pub use writes::*;

pub use crate::error::{ErrorBody, ErrorEnvelope};

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::schema::ComponentsBuilder;

    /// Every reply body has an OpenAPI schema (the derives hold together).
    #[test]
    fn reply_bodies_have_schemas() {
        let components = ComponentsBuilder::new()
            .schema_from::<Health>()
            .schema_from::<StatusSnapshot>()
            .schema_from::<CollectionInfo>()
            .schema_from::<CollectionAdded>()
            .schema_from::<CollectionRemoved>()
            .schema_from::<SyncStarted>()
            .schema_from::<Job>()
            .schema_from::<SearchResponse>()
            .schema_from::<SimilarResponse>()
            .schema_from::<TagsResponse>()
            .schema_from::<DocsResponse>()
            .schema_from::<DocResponse>()
            .schema_from::<SectionsResponse>()
            .schema_from::<LinksResponse>()
            .schema_from::<BacklinksResponse>()
            .schema_from::<GraphResponse>()
            .schema_from::<CreatedDoc>()
            .schema_from::<UpdatedDoc>()
            .schema_from::<DeactivatedDoc>()
            .schema_from::<CreatedFolder>()
            .schema_from::<CaptureResponse>()
            .schema_from::<NotePresetsResponse>()
            .schema_from::<RefactorPlan>()
            .schema_from::<RefactorApplied>()
            .schema_from::<PresetsResponse>()
            .schema_from::<PresetChanged>()
            .schema_from::<PullStarted>()
            .schema_from::<PullStatus>()
            .schema_from::<DiagnoseResponse>()
            .schema_from::<DocumentChangedEvent>()
            .schema_from::<JobFinishedEvent>()
            .schema_from::<ChangesResponse>()
            .schema_from::<DiffResponse>()
            .schema_from::<ImpactResponse>()
            .schema_from::<Capsule>()
            .schema_from::<CapsuleReceipt>()
            .schema_from::<AskReply>()
            .schema_from::<AnswerToken>()
            .schema_from::<ErrorEnvelope>()
            .build();
        let json = serde_json::to_value(&components).unwrap();
        assert_eq!(json["schemas"].as_object().map(|m| m.len()), Some(39));
        let job = &json["schemas"]["Job"]["properties"];
        assert!(job["type"].is_object() && job["createdAt"].is_object(), "{job}");
    }
}
