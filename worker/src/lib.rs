//! The worker: owns the catalog, the BM25 index and the jobs, and answers the gateway's
//! requests over the local socket. Nothing else opens the stores.

// The layers, each a folder: where data lives, how it gets in, how it is searched, read and
// written. `dispatch` maps each request to its handler.
mod answer;
mod config;
mod digest;
mod dispatch;
mod events;
mod evidence;
pub mod index;
mod jobs;
#[cfg(test)]
mod journal_tests;
pub mod models;
mod paths;
mod reads;
#[cfg(test)]
mod reply_tests;
mod retrieval;
mod server;
mod stores;
mod time_fmt;
mod uri;
mod write;

use config::IndexConfig;
use index::{collections, embedding, indexer};
use jobs::JobRunner;
use protocol::api::RepairedStore;
use protocol::{ApiError, Dirs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use stores::bm25::Bm25Index;
use stores::catalog::{self, Catalog};
use stores::recovery::{self, Repairs};
use stores::{bm25, vectors};

pub use models::generator::Flow;
pub use server::serve;

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error(transparent)]
    Bm25(#[from] bm25::Bm25Error),
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error(transparent)]
    Sync(#[from] indexer::SyncError),
    #[error("worker i/o failed: {0}")]
    Io(#[from] std::io::Error),
}

pub struct Worker {
    dirs: Dirs,
    catalog: Catalog,
    bm25: Bm25Index,
    config: Mutex<IndexConfig>,
    jobs: JobRunner,
    /// Set at shutdown: a running job stops at its next batch boundary.
    cancel: AtomicBool,
    events: events::EventBus,
    /// API writes run one at a time (each is a few milliseconds), so an optimistic
    /// concurrency check and its write cannot interleave with another write.
    writes: Mutex<()>,
    /// One scan of a collection folder at a time: a sync job's and the watcher's.
    scans: Mutex<()>,
    /// The watched collection folders (server mode).
    watchers: index::watch::Watchers,
    models: models::Models,
    pulls: models::pull::PullManager,
    /// LanceDB; `None` when it could not be opened (vector features are then off).
    vectors: Option<vectors::VectorStore>,
    /// The vector table of the loaded embedder (known once it loaded).
    embed_table: Mutex<Option<vectors::TableKey>>,
    /// The content-type rules of index.yml, as the worker started with them.
    content_types: config::content_types::ContentTypes,
    /// What was found broken and rebuilt since the worker started (`/api/status`).
    repairs: Repairs,
    /// Held by the embedding thread while it embeds; shutdown waits for it.
    embedding_round: Mutex<()>,
    /// Pictures' OCR readings and the pictures waiting for one.
    pictures: index::pictures::Readings,
}

impl Worker {
    /// Opens (or creates) the stores of the index and converges the derived ones with
    /// the catalog: whatever a crash left half-done is re-fed, nothing is rebuilt whole.
    pub fn open(dirs: Dirs) -> Result<Arc<Self>, WorkerError> {
        std::fs::create_dir_all(dirs.index_dir())?;
        let repairs = Repairs::default();
        let (catalog, catalog_rebuilt) = recovery::open_catalog(&dirs.catalog_file(), &repairs)?;
        if catalog_rebuilt {
            // Its keys were the old catalog's documents.
            match std::fs::remove_dir_all(dirs.bm25_dir()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
        let (bm25, rebuilt) = Bm25Index::open(&dirs.bm25_dir())?;
        if rebuilt {
            let fed = catalog::reset_bm25(&catalog.writer())?;
            if fed > 0 {
                repairs.record(
                    RepairedStore::Bm25,
                    format!("the keyword index was missing or unreadable: rebuilt from the catalog ({fed} documents)"),
                );
            }
        }
        catalog::settle_jobs(&catalog.writer(), time_fmt::now_ms())?;
        let config = IndexConfig::load(&dirs.config_file())?;
        let content_types = config::content_types::ContentTypes::from_config(&config.content_types);
        if catalog::adopt_content_type_rules(&catalog.writer(), content_types.fingerprint())? {
            tracing::info!("content-type rules changed ({}): re-feeding BM25", content_types.fingerprint());
        }
        let models = models::Models::new(
            &dirs.cache_dir,
            config.preset.as_deref(),
            models::presets::from_config(&config.presets),
            config.egress_policy.unwrap_or_default(),
        );
        let vectors = match vectors::VectorStore::open(&dirs.vectors_dir()) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::error!("vector store unavailable: {e}");
                None
            }
        };
        let pictures = index::pictures::Readings::open(dirs.index_dir().join("ocr"));
        let worker = Arc::new(Worker {
            dirs,
            catalog,
            bm25,
            config: Mutex::new(config),
            jobs: JobRunner::default(),
            cancel: AtomicBool::new(false),
            events: events::EventBus::default(),
            writes: Mutex::new(()),
            scans: Mutex::new(()),
            watchers: Default::default(),
            models,
            pulls: Default::default(),
            vectors,
            embed_table: Mutex::new(None),
            content_types,
            repairs,
            embedding_round: Mutex::new(()),
            pictures,
        });
        worker.reconcile_collections()?;
        worker.after_job();
        let fed = worker.indexer().converge()?;
        if fed > 0 {
            tracing::info!("bm25 converged: {fed} documents re-fed from the catalog");
        }
        if catalog_rebuilt {
            // Every collection, watched or not, is read again from disk.
            if let Err(e) = collections::sync(&worker, None, Some(false)) {
                tracing::error!("could not start filling the new catalog: {}", e.message);
            }
        }
        worker.publish_status();
        Ok(worker)
    }

    fn config(&self) -> MutexGuard<'_, IndexConfig> {
        self.config.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn indexer(&self) -> indexer::Indexer<'_> {
        indexer::Indexer {
            catalog: &self.catalog,
            bm25: &self.bm25,
            content_types: &self.content_types,
            cancel: &self.cancel,
            events: &self.events,
            pictures: &self.pictures,
        }
    }

    fn set_embed_table(&self, key: Option<vectors::TableKey>) {
        *self.embed_table.lock().unwrap_or_else(|p| p.into_inner()) = key;
    }

    fn embed_table(&self) -> Option<vectors::TableKey> {
        self.embed_table.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn scan_lock(&self) -> MutexGuard<'_, ()> {
        self.scans.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Watches the configured collections' folders that are not watched yet (a collection
    /// just added is synced by its own job), stops watching removed ones. Nothing before
    /// [`Self::start_watching`].
    fn refresh_watches(&self) {
        let collections = self.config().collections.clone();
        self.watchers.refresh(&collections, false);
    }

    /// Starts following the collections' folders (server mode): reconciled by a scan first
    /// (what changed while svc was stopped), then watched.
    pub fn start_watching(self: &Arc<Self>) {
        index::watch::start(self);
    }

    /// Events for `/api/events`.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<protocol::Event> {
        self.events.subscribe()
    }

    /// The config file is the user's: collections it no longer lists leave the index,
    /// and new ones get a catalog row.
    fn reconcile_collections(&self) -> Result<(), WorkerError> {
        let configured: Vec<(String, String)> =
            self.config().collections.iter().map(|c| (c.name.clone(), c.path.clone())).collect();
        let known = catalog::catalog_collections(&self.catalog.reader())?;
        for name in known {
            if !configured.iter().any(|(n, _)| *n == name) {
                collections::drop_from_index(self, &name)?;
            }
        }
        let conn = self.catalog.writer();
        for (name, path) in configured {
            catalog::upsert_collection(&conn, &name, &path)?;
        }
        Ok(())
    }

    /// Starts the background embedding of new and changed documents (server mode).
    pub fn start_background_embedding(self: &Arc<Self>) {
        embedding::spawn(self);
        index::pictures::spawn(self);
    }

    /// Embeds the whole backlog now, in this thread (the CLI's in-process mode).
    pub fn embed_now(&self) -> Result<usize, String> {
        let n = embedding::run(self, true).map_err(|e| e.to_string())?;
        self.publish_status();
        Ok(n)
    }

    /// Stops a running job at its next batch boundary and waits for it.
    pub fn shutdown(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.jobs.wait_idle();
        // The embedding thread stops at its next batch; the model is never torn down under it.
        drop(self.embedding_round.lock().unwrap_or_else(|p| p.into_inner()));
        // The write-ahead log folded into the catalog: the next start reads one file.
        if let Err(e) = self.catalog.checkpoint() {
            tracing::warn!("catalog checkpoint at shutdown failed: {e}");
        }
    }

    /// Blocks until no job runs (the CLI's in-process mode waits for its job).
    pub fn wait_idle(&self) {
        self.jobs.wait_idle();
    }
}

/// A worker on fresh stores under `dir`, for the crate's tests.
#[cfg(test)]
pub(crate) fn test_worker(dir: &std::path::Path) -> Arc<Worker> {
    #[allow(clippy::unwrap_used)]
    Worker::open(Dirs {
        config_dir: dir.join("c"),
        data_dir: dir.join("d"),
        cache_dir: dir.join("k"),
        index_name: "default".into(),
    })
    .unwrap()
}

/// Maps an internal failure to a RUNTIME error: the cause goes to the log under a fresh id,
/// the client gets the fixed message and the id ([`ApiError::internal`]).
pub(crate) fn runtime<E: std::fmt::Display>(e: E) -> ApiError {
    let id = error_id();
    tracing::error!(error_id = %id, "{e}");
    ApiError::internal(&id)
}

/// The worker's own failures are internal errors for a client ([`runtime`]): with these, `?`
/// maps them where a handler returns an [`ApiError`].
macro_rules! internal_errors {
    ($($t:ty),*) => {
        $(impl From<$t> for ApiError {
            fn from(e: $t) -> Self {
                runtime(e)
            }
        })*
    };
}

internal_errors!(
    stores::catalog::CatalogError,
    stores::vectors::VectorError,
    stores::bm25::Bm25Error,
    config::ConfigError,
    index::indexer::SyncError,
    WorkerError
);

/// A short random id that ties a client's error to its line in the log.
pub(crate) fn error_id() -> String {
    let mut id = uuid::Uuid::new_v4().simple().to_string();
    id.truncate(12);
    id
}

#[cfg(test)]
mod internal_error_tests {
    use super::*;

    #[test]
    fn an_internal_failure_reaches_the_client_as_a_fixed_message_and_an_id() {
        let e = runtime("no such table: documents_v2 at /home/me/.local/share/svc/catalog.db");
        assert_eq!(e.code, protocol::ErrorCode::Runtime);
        assert!(!e.message.contains("documents_v2") && !e.message.contains("/home/me"), "{}", e.message);
        let details: protocol::InternalErrorDetails =
            serde_json::from_str(e.details.as_deref().unwrap_or("{}")).unwrap();
        assert_eq!(details.error_id.len(), 12);
        assert!(e.message.contains(&details.error_id), "{}", e.message);
        assert_ne!(runtime("x").details, runtime("x").details, "a fresh id each time");
    }
}
