//! The event bus behind `/api/events`: the worker publishes, every subscribed gateway
//! connection forwards. Events carry identities and paths only, never content or tokens.

use crate::time_fmt;
use protocol::{Event, JsonBody};
use serde_json::json;
use tokio::sync::broadcast;

const CAPACITY: usize = 1024;

pub struct EventBus {
    tx: broadcast::Sender<Event>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus { tx: broadcast::channel(CAPACITY).0 }
    }
}

impl EventBus {
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }

    fn publish(&self, kind: &str, data: serde_json::Value) {
        if let Ok(body) = JsonBody::of(&data) {
            // No subscriber is not an error.
            let _ = self.tx.send(Event { kind: kind.to_string(), data: body });
        }
    }

    pub fn document_changed(&self, uri: &str, collection: &str, rel_path: &str, origin: &str) {
        self.publish(
            "document-changed",
            json!({ "type": "document-changed", "uri": uri, "collection": collection, "relPath": rel_path,
                    "origin": origin, "changedAt": time_fmt::now_iso() }),
        );
    }

    pub fn job_finished(&self, id: &str, kind: &str, status: &str) {
        self.publish("job-finished", json!({ "id": id, "type": kind, "status": status }));
    }
}
