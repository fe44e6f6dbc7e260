//! Every JSON reply a black-box test receives through `Server::request` is read back as the
//! `protocol::api` type of its route, and that type must write it again unchanged: the
//! contract's shapes are the types, for every reply the suite sees.

use protocol::api::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Reads `body` as `T` and writes it again: the bytes must be the same (key order, absent
/// keys and `null`s, and the digits of every number included).
fn round_trip<T: DeserializeOwned + Serialize>(what: &str, body: &[u8]) {
    let text = String::from_utf8_lossy(body);
    let typed: T = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("{what}: the reply is not a {} ({e}): {text}", std::any::type_name::<T>()));
    let again = serde_json::to_string(&typed).expect("a typed reply serializes");
    assert_eq!(again, text, "{what}: {} does not carry the reply unchanged", std::any::type_name::<T>());
}

/// Checks `body` against the type of `method path` (query string ignored). Routes that do
/// not answer JSON (assets, events, pdf.js) are not checked; a JSON reply of an `/api/` route
/// missing from the table fails the test, so a new route cannot go unchecked.
pub fn check(method: &str, path: &str, status: u16, body: &[u8]) {
    let path = path.split('?').next().unwrap_or(path);
    if serde_json::from_slice::<Value>(body).is_err() {
        return;
    }
    let json = body;
    let what = format!("{method} {path} ({status})");
    if status >= 400 {
        if path.starts_with("/api/") {
            round_trip::<ErrorEnvelope>(&what, json);
        }
        return;
    }
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (method, segs.as_slice()) {
        ("GET", ["api", "health"]) => round_trip::<Health>(&what, json),
        ("GET", ["api", "status"]) => round_trip::<StatusSnapshot>(&what, json),
        ("GET", ["api", "capabilities"]) => round_trip::<Capabilities>(&what, json),
        ("GET", ["api", "collections"]) => round_trip::<Vec<CollectionInfo>>(&what, json),
        ("POST", ["api", "collections"]) => round_trip::<CollectionAdded>(&what, json),
        ("DELETE", ["api", "collections", _]) => round_trip::<CollectionRemoved>(&what, json),
        ("POST", ["api", "sync"]) => round_trip::<SyncStarted>(&what, json),
        ("GET", ["api", "jobs", "active"]) => round_trip::<ActiveJobResponse>(&what, json),
        ("GET", ["api", "jobs", _]) => round_trip::<Job>(&what, json),
        ("GET", ["api", "explain"]) => round_trip::<ExplainResponse>(&what, json),
        ("GET", ["api", "audit"]) => round_trip::<AuditResponse>(&what, json),
        ("POST", ["api", "search" | "vsearch" | "query"]) => round_trip::<SearchResponse>(&what, json),
        ("POST", ["api", "query", "diagnose"]) => round_trip::<DiagnoseResponse>(&what, json),
        ("POST", ["api", "ask"]) => round_trip::<AskReply>(&what, json),
        ("GET", ["api", "presets"]) => round_trip::<PresetsResponse>(&what, json),
        ("POST", ["api", "presets"]) => round_trip::<PresetChanged>(&what, json),
        ("POST", ["api", "models", "pull"]) => round_trip::<PullStarted>(&what, json),
        ("GET", ["api", "models", "status"]) => round_trip::<PullStatus>(&what, json),
        ("GET", ["api", "tags"]) => round_trip::<TagsResponse>(&what, json),
        ("GET", ["api", "docs"]) => round_trip::<DocsResponse>(&what, json),
        ("GET", ["api", "docs", "autocomplete"]) => round_trip::<AutocompleteResponse>(&what, json),
        ("POST", ["api", "docs"]) => round_trip::<CreatedDoc>(&what, json),
        ("PUT", ["api", "docs", _]) => round_trip::<UpdatedDoc>(&what, json),
        ("POST", ["api", "docs", _, "deactivate"]) => round_trip::<DeactivatedDoc>(&what, json),
        ("POST", ["api", "docs", _, "refactor-plan"]) => round_trip::<RefactorPlan>(&what, json),
        ("POST", ["api", "docs", _, "rename" | "move" | "duplicate"]) => round_trip::<RefactorApplied>(&what, json),
        ("POST", ["api", "folders"]) => round_trip::<CreatedFolder>(&what, json),
        ("GET", ["api", "note-presets"]) => round_trip::<NotePresetsResponse>(&what, json),
        ("POST", ["api", "capture"]) => round_trip::<CaptureResponse>(&what, json),
        ("GET", ["api", "doc"]) => round_trip::<DocResponse>(&what, json),
        ("GET", ["api", "doc", _, "links"]) => round_trip::<LinksResponse>(&what, json),
        ("GET", ["api", "doc", _, "backlinks"]) => round_trip::<BacklinksResponse>(&what, json),
        ("GET", ["api", "doc", _, "sections"]) => round_trip::<SectionsResponse>(&what, json),
        ("GET", ["api", "doc", _, "similar"]) => round_trip::<SimilarResponse>(&what, json),
        ("GET", ["api", "graph"]) => round_trip::<GraphResponse>(&what, json),
        ("GET", ["api", "changes"]) => round_trip::<ChangesResponse>(&what, json),
        ("GET", ["api", "diff"]) => round_trip::<DiffResponse>(&what, json),
        ("GET", ["api", "impact"]) => round_trip::<ImpactResponse>(&what, json),
        ("POST", ["api", "context"]) => round_trip::<Capsule>(&what, json),
        ("POST", ["api", "context", "verify"]) => round_trip::<CapsuleReceipt>(&what, json),
        ("GET", ["api", "connectors"]) => round_trip::<ConnectorsResponse>(&what, json),
        ("POST", ["api", "connectors", "verify"]) => round_trip::<ConnectorVerifyResponse>(&what, json),
        // Not replies of svc's own types: the OpenAPI document, and a note's file as it is.
        ("GET", ["api", "openapi.json"]) | ("GET" | "HEAD", ["api", "doc-asset"]) => {}
        _ if path.starts_with("/api/") => {
            panic!("{what}: a JSON reply of a route this table does not know: {}", { String::from_utf8_lossy(json) })
        }
        _ => {}
    }
}
