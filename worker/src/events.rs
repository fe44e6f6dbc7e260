//! The event bus behind `/api/events`: the worker publishes, every subscribed gateway
//! connection forwards. Events carry identities and paths only, never content or tokens.

use crate::time_fmt;
use protocol::{Event, JsonBody};
use serde_json::json;
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;

const CAPACITY: usize = 1024;

/// Wakes an in-process listener (the embedding thread) when documents change.
#[derive(Default)]
pub struct ChangeSignal {
    pending: Mutex<bool>,
    cv: Condvar,
}

impl ChangeSignal {
    pub fn fire(&self) {
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Waits for a change (or the timeout); true when one came since the last wait.
    pub fn wait(&self, timeout: Duration) -> bool {
        let guard = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let (mut guard, _) = self.cv.wait_timeout_while(guard, timeout, |p| !*p).unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *guard)
    }
}

pub struct EventBus {
    tx: broadcast::Sender<Event>,
    /// Fired with every `document-changed`.
    pub changes: ChangeSignal,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus { tx: broadcast::channel(CAPACITY).0, changes: ChangeSignal::default() }
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
        self.changes.fire();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_wakes_the_listener_once() {
        let bus = EventBus::default();
        assert!(!bus.changes.wait(Duration::from_millis(5)));
        bus.document_changed("svc://n/a.md", "n", "a.md", "save");
        assert!(bus.changes.wait(Duration::from_millis(5)));
        assert!(!bus.changes.wait(Duration::from_millis(5)));
    }
}
