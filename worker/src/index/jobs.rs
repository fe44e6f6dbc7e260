//! One indexing job at a time. A job is reserved first (so a request can validate and
//! change config while holding the slot) and then runs on its own thread.

use crate::config::CollectionConfig;
use crate::index::Indexing;
use crate::stores::catalog;
use crate::stores::catalog::Origin;
use crate::time_fmt::now_ms;
use protocol::api::{Job, JobConflictDetails, JobKind, JobStatus, SyncResult};
use protocol::ApiError;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
pub struct JobRunner {
    active: Mutex<Option<String>>,
    idle: Condvar,
}

/// A reserved job slot. Dropping it without [`JobSlot::spawn`] frees the slot.
pub struct JobSlot<'a> {
    runner: &'a JobRunner,
    id: String,
    launched: bool,
}

impl JobRunner {
    pub fn active(&self) -> Option<String> {
        self.active.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reserves the slot, or answers 409 with the running job's id.
    pub fn reserve(&self) -> Result<JobSlot<'_>, ApiError> {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = active.as_ref() {
            return Err(ApiError::conflict(format!("Job {id} already running"))
                .with_details(JobConflictDetails { active_job_id: id.clone() }));
        }
        let id = uuid::Uuid::new_v4().to_string();
        *active = Some(id.clone());
        Ok(JobSlot { runner: self, id, launched: false })
    }

    fn release(&self) {
        self.finish(|| {});
    }

    /// Runs `record` (which stores the job's outcome) and frees the slot under one lock,
    /// so a client that sees the job finished can start the next one at once.
    fn finish(&self, record: impl FnOnce()) {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        record();
        *active = None;
        self.idle.notify_all();
    }

    /// Blocks until no job runs.
    pub fn wait_idle(&self) {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        while active.is_some() {
            active = self.idle.wait(active).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl JobSlot<'_> {
    /// Records the job as running and runs `work` on a new thread.
    pub fn spawn<F>(mut self, worker: &Arc<Indexing>, kind: JobKind, work: F) -> Result<String, ApiError>
    where
        F: FnOnce(&Indexing) -> Result<SyncResult, String> + Send + 'static,
    {
        let job = running(&self.id, kind, now_ms());
        catalog::insert_job(&worker.core.stores.catalog.writer(), &job)?;
        self.launched = true;
        let id = self.id.clone();
        let w = Arc::clone(worker);
        std::thread::Builder::new()
            .name(format!("job-{}", kind.as_str()))
            .spawn(move || {
                // A job is background work: reads and searches beside it come first.
                crate::background::yield_to_readers();
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&w)))
                    .unwrap_or_else(|_| Err("internal error: the job panicked".to_string()));
                let Ending { status, result, error } = Ending::of(outcome.as_ref().map_err(String::as_str));
                w.after_job();
                // Status first, then the job's outcome: a client that sees the job
                // finished also sees the status it produced.
                w.jobs.finish(|| {
                    w.publish_status_finishing();
                    if let Err(e) =
                        catalog::finish_job(&w.core.stores.catalog.writer(), &job.id, status, now_ms(), result, error)
                    {
                        tracing::error!("could not record the end of job {}: {e}", job.id);
                    }
                });
                w.core.events.job_finished(&job.id, job.kind, status);
            })
            .map_err(|e| crate::errors::internal(format!("could not start the job: {e}")))?;
        Ok(id)
    }
}

/// A job as recorded when it starts.
fn running(id: &str, kind: JobKind, created_at: i64) -> Job {
    Job {
        id: id.to_string(),
        kind,
        status: JobStatus::Running,
        created_at,
        finished_at: None,
        result: None,
        error: None,
    }
}

/// How a job's outcome is recorded: completed with its result, or failed with its error.
/// The one mapping every kind of job goes through.
struct Ending<'a> {
    status: JobStatus,
    result: Option<&'a SyncResult>,
    error: Option<&'a str>,
}

impl<'a> Ending<'a> {
    fn of(outcome: Result<&'a SyncResult, &'a str>) -> Self {
        match outcome {
            Ok(r) => Ending { status: JobStatus::Completed, result: Some(r), error: None },
            Err(e) => Ending { status: JobStatus::Failed, result: None, error: Some(e) },
        }
    }
}

impl Drop for JobSlot<'_> {
    fn drop(&mut self) {
        if !self.launched {
            self.runner.release();
        }
    }
}

impl Indexing {
    /// Indexes one file on a background thread as a `sync` job; returns the job id at once.
    /// (Not an indexing job in the one-at-a-time sense: it touches one file.)
    pub(crate) fn spawn_file_sync(
        self: &Arc<Self>,
        coll: CollectionConfig,
        root: PathBuf,
        rel: String,
        origin: Origin,
    ) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        let job = running(&id, JobKind::Sync, now_ms());
        if let Err(e) = catalog::insert_job(&self.core.stores.catalog.writer(), &job) {
            tracing::error!("could not record job {id}: {e}");
        }
        let w = Arc::clone(self);
        let job_id = id.clone();
        let spawned = std::thread::Builder::new().name("file-sync".into()).spawn(move || {
            let (result, outcome) = crate::index::collections::sync_one(&w, &coll, &root, &rel, origin);
            w.after_job();
            let Ending { status, result, error } =
                Ending::of(outcome.as_ref().map(|_| &result).map_err(String::as_str));
            if let Err(e) =
                catalog::finish_job(&w.core.stores.catalog.writer(), &job_id, status, now_ms(), result, error)
            {
                tracing::error!("could not record the end of job {job_id}: {e}");
            }
            w.core.events.job_finished(&job_id, JobKind::Sync, status);
        });
        if let Err(e) = spawned {
            let _ = catalog::finish_job(
                &self.core.stores.catalog.writer(),
                &id,
                JobStatus::Failed,
                now_ms(),
                None,
                Some(&format!("could not start: {e}")),
            );
        }
        id
    }

    /// Records a job that already ran (the single-file sync after an API write), so that
    /// its id can be polled like any other; announces it.
    pub(crate) fn record_finished_job(&self, kind: JobKind, outcome: Result<&SyncResult, &str>) -> String {
        self.after_job();
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let job = running(&id, kind, now);
        let Ending { status, result, error } = Ending::of(outcome);
        let conn = self.core.stores.catalog.writer();
        let recorded =
            catalog::insert_job(&conn, &job).and_then(|_| catalog::finish_job(&conn, &id, status, now, result, error));
        drop(conn);
        if let Err(e) = recorded {
            tracing::error!("could not record job {id}: {e}");
        }
        self.core.events.job_finished(&id, kind, status);
        id
    }
}
