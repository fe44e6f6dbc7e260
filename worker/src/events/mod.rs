//! The event bus behind `/api/events`: the worker publishes, every subscribed gateway
//! connection forwards. Events carry identities and paths only, never content or tokens.

use crate::stores::catalog::{self, Origin};
use crate::time_fmt;
use protocol::api::{
    CapsuleReverifiedEvent, ChangeOrigin, DocumentChangedEvent, EventKind, JobFinishedEvent, JobKind, JobStatus,
    ReplayedEvents,
};
use protocol::{ChangeCursor, Event, JsonBody};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

mod status_pace;
pub use status_pace::StatusOrder;
use status_pace::StatusPacer;

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

/// Which job a published status names as running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveJob {
    /// The job runner's, as it stands.
    Current,
    /// None: the job is finishing (its runner's lock is held while the status is written).
    Finishing,
}

type StatusHook = Box<dyn Fn(ActiveJob) + Send + Sync>;
type AfterJobHook = Box<dyn Fn() + Send + Sync>;

/// What the lower layers announce and the composition root answers: a status to publish
/// (the root alone sees every part of it), and what follows every job (saved capsules
/// verified again, above the index layer). Installed once, before the worker serves.
#[derive(Default)]
pub struct Hooks {
    status: std::sync::OnceLock<StatusHook>,
    after_job: std::sync::OnceLock<AfterJobHook>,
    /// The order the status hook writes in.
    pub status_order: StatusOrder,
    pacer: StatusPacer,
}

impl Hooks {
    pub fn install(&self, status: StatusHook, after_job: AfterJobHook) {
        if self.status.set(status).is_err() || self.after_job.set(after_job).is_err() {
            tracing::error!("the worker's hooks were installed twice: the first ones stay");
        }
    }

    /// The status changed: the root writes it to `status.json`.
    pub fn publish_status(&self) {
        self.publish_status_as(ActiveJob::Current);
    }

    pub fn publish_status_as(&self, job: ActiveJob) {
        if let Some(publish) = self.status.get() {
            publish(job);
        }
    }

    /// The status changed by background work (a watcher's change, a replica's batch, an
    /// embedding round): published by the pacing thread when one runs, coalesced with
    /// other asks and at most a fifth of a core's worth of counting; else now.
    pub fn publish_status_soon(&self) {
        if !self.pacer.ask() {
            self.publish_status();
        }
    }

    /// The pacing thread starts: [`Hooks::publish_status_soon`] leaves the status to it.
    pub fn start_pacing_status(&self) {
        self.pacer.start();
    }

    /// One turn of the pacing thread: waits up to `timeout` for an ask and publishes;
    /// returns how long to rest before the next turn.
    pub fn pace_status(&self, timeout: Duration) -> Duration {
        if !self.pacer.take(timeout) {
            return Duration::ZERO;
        }
        let started = Instant::now();
        // A panic in one snapshot is that status lost, not the pacer: later asks still come.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.publish_status())).is_err() {
            tracing::error!("publishing the status panicked");
        }
        StatusPacer::rest_after(started.elapsed())
    }

    /// The pacing ends (the worker stops): a status still asked for is published now.
    pub fn stop_pacing_status(&self) {
        if self.pacer.stop() {
            self.publish_status();
        }
    }

    /// A job's work is done (see [`crate::index::Indexing::after_job`]).
    pub fn after_job(&self) {
        if let Some(run) = self.after_job.get() {
            run();
        }
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

    fn publish(&self, kind: EventKind, id: Option<String>, data: &impl serde::Serialize) {
        if let Ok(body) = JsonBody::of(data) {
            // No subscriber is not an error.
            let _ = self.tx.send(Event { kind, id, data: body });
        }
    }

    /// Announces a changed document; `source_hash` is the version now indexed (`None`: it
    /// left the index), `change` the journal's sequence at its newest change.
    pub fn document_changed(
        &self,
        uri: &str,
        collection: &str,
        rel_path: &str,
        origin: Origin,
        source_hash: Option<String>,
        change: Option<u64>,
    ) {
        self.changes.fire();
        let event = DocumentChangedEvent {
            kind: EventKind::DocumentChanged,
            uri: uri.to_string(),
            collection: collection.to_string(),
            rel_path: rel_path.to_string(),
            origin: change_origin(origin),
            changed_at: time_fmt::now_iso(),
            source_hash,
            change_id: change.map(|c| ChangeCursor(c).encode()),
        };
        self.publish(EventKind::DocumentChanged, event.change_id.clone(), &event);
    }

    pub fn capsule_reverified(&self, event: &CapsuleReverifiedEvent) {
        self.publish(EventKind::CapsuleReverified, None, event);
    }

    pub fn job_finished(&self, id: &str, kind: JobKind, status: JobStatus) {
        self.publish(EventKind::JobFinished, None, &JobFinishedEvent { id: id.to_string(), kind, status });
    }
}

fn change_origin(origin: Origin) -> ChangeOrigin {
    match origin {
        Origin::Sync => ChangeOrigin::Sync,
        Origin::Save => ChangeOrigin::Save,
        Origin::Create => ChangeOrigin::Create,
        Origin::Watch => ChangeOrigin::Watch,
        Origin::Team => ChangeOrigin::Team,
    }
}

/// Changes replayed per reconnect at most; past it, the subscriber is told to fetch again.
const REPLAY_MAX: u32 = 1000;

/// The `document-changed` events of the journal's changes after `after` (a reconnecting
/// subscriber's `Last-Event-ID`), oldest first; not `complete` when there were more than
/// [`REPLAY_MAX`] or the journal was cut past the cursor.
pub fn replay(conn: &rusqlite::Connection, after: ChangeCursor) -> Result<ReplayedEvents, catalog::CatalogError> {
    let cut_past_cursor = catalog::journal_span(conn)?.is_some_and(|(oldest, _)| oldest > after.0 + 1);
    let mut entries = catalog::changes_after(conn, after.0, None, REPLAY_MAX + 1)?;
    let more = entries.len() > REPLAY_MAX as usize;
    entries.truncate(REPLAY_MAX as usize);
    let events = entries
        .into_iter()
        .filter_map(|e| {
            let snap = e.current.as_ref().or(e.previous.as_ref())?;
            Some(DocumentChangedEvent {
                kind: EventKind::DocumentChanged,
                uri: snap.uri.clone(),
                collection: e.collection.clone(),
                rel_path: snap.rel_path.clone(),
                origin: change_origin(e.origin),
                changed_at: e.observed_at.clone(),
                source_hash: e.current.as_ref().filter(|c| c.active).map(|c| c.source_hash.clone()),
                change_id: Some(ChangeCursor(e.seq).encode()),
            })
        })
        .collect();
    Ok(ReplayedEvents { events, complete: !more && !cut_past_cursor })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_wakes_the_listener_once() {
        let bus = EventBus::default();
        assert!(!bus.changes.wait(Duration::from_millis(5)));
        bus.document_changed("svc://n/a.md", "n", "a.md", Origin::Save, None, None);
        assert!(bus.changes.wait(Duration::from_millis(5)));
        assert!(!bus.changes.wait(Duration::from_millis(5)));
    }

    #[test]
    fn payloads_keep_their_wire_keys() {
        let bus = EventBus::default();
        let mut rx = bus.subscribe();
        bus.document_changed("svc://n/a.md", "n", "a.md", Origin::Create, None, None);
        bus.job_finished("j1", JobKind::Sync, JobStatus::Completed);
        let changed = rx.try_recv().unwrap();
        assert_eq!(changed.kind, EventKind::DocumentChanged);
        let v: serde_json::Value = serde_json::from_slice(&changed.data.bytes).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 6);
        for k in ["type", "uri", "collection", "relPath", "origin", "changedAt"] {
            assert!(keys.contains(&k), "{k} in {v}");
        }
        assert_eq!(v["type"], "document-changed");
        assert_eq!(v["origin"], "create");
        let finished = rx.try_recv().unwrap();
        assert_eq!(finished.kind, EventKind::JobFinished);
        assert_eq!(
            std::str::from_utf8(&finished.data.bytes).unwrap(),
            r#"{"id":"j1","type":"sync","status":"completed"}"#
        );
    }
}
