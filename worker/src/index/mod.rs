//! Building the index from the user's folders: walking a collection, converting files
//! (PDF, DOCX) to text, ingesting (canonical text, front matter, chunks, links, tags),
//! the sync pipeline that feeds the stores, background embedding, and the collection
//! requests that start it all.

pub mod collections;
pub mod convert;
pub mod drift;
pub mod embedding;
pub mod explain;
pub mod git;
pub mod indexer;
pub mod ingest;
pub mod jobs;
pub mod keyword_refeed;
pub mod lanes;
pub mod mounts;
pub mod pictures;
pub mod reading;
pub mod relink;
pub mod rules;
mod sync;
pub mod team;
pub mod walk;
pub mod watch;
mod writer;

use crate::events::ActiveJob;
use crate::shared::Shared;
use crate::stores::catalog;
use jobs::JobRunner;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

/// The index layer's state: the jobs, the watchers, the embedding and OCR threads' turns,
/// over what the layers share. The writes of the API go through it too (they sync the
/// file they wrote).
pub struct Indexing {
    pub core: Arc<Shared>,
    pub jobs: JobRunner,
    /// Set at shutdown: a running job stops at its next batch boundary.
    pub cancel: AtomicBool,
    /// Set while the keyword index is re-fed in the background ([`keyword_refeed`]).
    pub refeeding: AtomicBool,
    /// API writes run one at a time (each is a few milliseconds), so an optimistic
    /// concurrency check and its write cannot interleave with another write.
    writes: Mutex<()>,
    /// One scan of a collection folder at a time: a sync job's and the watcher's.
    scans: Mutex<()>,
    /// The watched collection folders (server mode).
    pub watchers: watch::Watchers,
    /// Held by the embedding thread while it embeds; shutdown waits for it.
    pub embedding_round: Mutex<()>,
    /// How fast the embedding run under way goes.
    pub embedding_pace: embedding::Pace,
    /// Pictures' OCR readings and the pictures waiting for one.
    pub pictures: pictures::Readings,
    /// The team this server joined (server mode, when index.yml or `--cluster` names one).
    pub team: std::sync::OnceLock<Arc<team::Team>>,
}

impl Indexing {
    pub fn new(core: Arc<Shared>, pictures: pictures::Readings) -> Self {
        Indexing {
            core,
            jobs: JobRunner::default(),
            cancel: AtomicBool::new(false),
            refeeding: AtomicBool::new(false),
            writes: Mutex::new(()),
            scans: Mutex::new(()),
            watchers: Default::default(),
            embedding_round: Mutex::new(()),
            embedding_pace: embedding::Pace::default(),
            pictures,
            team: std::sync::OnceLock::new(),
        }
    }

    pub fn indexer(&self) -> indexer::Indexer<'_> {
        indexer::Indexer {
            catalog: &self.core.stores.catalog,
            bm25: &self.core.stores.bm25,
            content_types: &self.core.settings.content_types,
            cancel: &self.cancel,
            refeeding: &self.refeeding,
            events: &self.core.events,
            pictures: &self.pictures,
            languages: indexer::CollectionLanguages::of(&self.core.settings.config().collections),
            folder_languages: Default::default(),
        }
    }

    pub fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn scan_lock(&self) -> MutexGuard<'_, ()> {
        self.scans.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Watches the configured collections' folders that are not watched yet (a collection
    /// just added is synced by its own job), stops watching removed ones.
    pub fn refresh_watches(&self) {
        let collections = self.core.settings.config().collections.clone();
        self.watchers.refresh(&collections, false);
    }

    /// The status changed.
    pub fn publish_status(&self) {
        self.core.hooks.publish_status();
    }

    /// Publishes the status while the job runner's lock is held by the job finishing.
    fn publish_status_finishing(&self) {
        self.core.hooks.publish_status_as(ActiveJob::Finishing);
    }

    /// What follows every job's work, before the job is recorded as finished (so a client
    /// that sees the job end sees its effects): the root's hook (saved capsules whose
    /// evidence changed are verified again), then the journal is cut back to its retention
    /// bound.
    pub fn after_job(&self) {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.core.hooks.after_job();
            self.prune_journal();
        }));
        if run.is_err() {
            tracing::error!("after a job: re-verifying saved capsules or cutting the journal panicked");
        }
    }

    /// Drops the journal's changes outside the retention bound of `index.yml`.
    pub fn prune_journal(&self) {
        let bound = self.core.settings.config().journal.retention();
        match catalog::prune_journal(
            &self.core.stores.catalog.writer(),
            bound,
            crate::time_fmt::now_ms(),
            crate::time_fmt::iso_to_ms,
        ) {
            Ok(0) => {}
            Ok(n) => tracing::info!("change journal: {n} changes past the retention bound dropped"),
            Err(e) => tracing::error!("change journal: retention failed: {e}"),
        }
    }
}
