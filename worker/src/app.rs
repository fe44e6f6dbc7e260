//! The composition root: opens the stores, builds each layer's state and wires the layers'
//! hooks. Only this, `dispatch`, `status` and `server` see the whole worker.

use crate::config::{self, IndexConfig, Settings};
use crate::events::{ActiveJob, EventBus, Hooks};
use crate::index::keyword_refeed::{self, Refeed};
use crate::index::{self, collections, embedding, indexer, Indexing};
use crate::shared::Shared;
use crate::stores::bm25::{self, Bm25Index};
use crate::stores::catalog;
use crate::stores::recovery::{self, Repairs};
use crate::stores::{vectors, Stores};
use crate::{evidence, models, status, time_fmt};
use protocol::api::RepairedStore;
use protocol::Dirs;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

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

crate::errors::internal_errors!(WorkerError);

/// The worker's exit status when a check beside serving found the catalog damaged (the
/// supervisor restarts it, and the next open repairs the catalog).
pub const EXIT_CATALOG_DAMAGED: i32 = 75;

/// The worker, wired: what the layers share, and the index layer's state over it.
pub struct Worker {
    pub(crate) shared: Arc<Shared>,
    pub(crate) indexing: Arc<Indexing>,
    /// When the catalog's pages are checked: a large catalog's, beside serving
    /// ([`Worker::start_catalog_check`]).
    catalog_check: recovery::CatalogCheck,
}

impl Worker {
    /// Opens (or creates) the stores of the index and converges the derived ones with
    /// the catalog: whatever a crash left half-done is re-fed, nothing is rebuilt whole.
    pub fn open(dirs: Dirs) -> Result<Arc<Self>, WorkerError> {
        Worker::open_with(dirs, Refeed::Blocking)
    }

    /// [`Worker::open`], the keyword index caught up with the catalog as `refeed` says (the
    /// server: a large re-feed after it listens, [`Worker::start_keyword_refeed`]).
    pub fn open_with(dirs: Dirs, refeed: Refeed) -> Result<Arc<Self>, WorkerError> {
        std::fs::create_dir_all(dirs.index_dir())?;
        let repairs = Repairs::default();
        // The CLI has no thread to check a catalog beside its work: it checks before opening.
        let catalog_check = match refeed {
            Refeed::Blocking => recovery::CatalogCheck::BeforeOpen,
            Refeed::Background => recovery::CatalogCheck::for_catalog(&dirs.catalog_file()),
        };
        let (catalog, catalog_rebuilt) = recovery::open_catalog(&dirs.catalog_file(), &repairs, catalog_check)?;
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
        let relinked = index::relink::bring_up_to_date(&catalog)?;
        if relinked > 0 {
            tracing::info!("links of {relinked} documents parsed again (they came from an older parser)");
        }
        let config = IndexConfig::load(&dirs.config_file())?;
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
        let settings = Settings::new(dirs, config);
        // What the keyword index is fed under: the content-type rules and the collections'
        // languages; a change re-feeds it from the catalog.
        let fingerprint = format!(
            "{}{}{}",
            settings.content_types.fingerprint(),
            index::indexer::CollectionLanguages::of(&settings.config().collections).fingerprint(),
            index::indexer::KEYWORD_FEED_VERSION
        );
        if catalog::adopt_keyword_rules(&catalog.writer(), &fingerprint)? {
            tracing::info!("content-type rules or collection languages changed ({fingerprint}): re-feeding BM25");
        }
        let shared = Arc::new(Shared {
            stores: Stores::new(catalog, bm25, vectors, repairs),
            settings,
            models,
            events: EventBus::default(),
            hooks: Hooks::default(),
            generation_caches: Default::default(),
        });
        let indexing = Arc::new(Indexing::new(Arc::clone(&shared), pictures));
        let worker = Arc::new(Worker { shared, indexing, catalog_check });
        worker.install_hooks();
        collections::reconcile(&worker.indexing)?;
        worker.indexing.after_job();
        // The CLI feeds whatever is pending; only the server asks how much first (and with
        // nothing pending, does not walk the catalog for it: a second at 200,000 notes).
        let pending = match refeed {
            Refeed::Blocking => None,
            Refeed::Background => Some(keyword_refeed::backlog(&worker.indexing)),
        };
        match pending {
            Some(0) => {}
            Some(n) if n > keyword_refeed::BLOCKING_MAX => {
                tracing::info!("bm25: {n} documents to re-feed from the catalog, in the background");
            }
            _ => {
                let fed = worker.indexing.indexer().converge()?;
                if fed > 0 {
                    tracing::info!("bm25 converged: {fed} documents re-fed from the catalog");
                }
            }
        }
        if catalog_rebuilt {
            // Every collection, watched or not, is read again from disk.
            if let Err(e) = collections::sync(&worker.indexing, None, Some(false)) {
                tracing::error!("could not start filling the new catalog: {}", e.message);
            }
        }
        // A large catalog's rows are counted by the server's pacing thread once it listens
        // (`start_status_pacing`): 8 s at a million notes. Till then its status carries the
        // counts the last run published.
        if catalog_check == recovery::CatalogCheck::BeforeOpen {
            worker.indexing.publish_status();
        } else {
            status::publish_carried(&worker.indexing);
        }
        Ok(worker)
    }

    /// The lower layers announce, the root answers: the status is written from every layer's
    /// state, and saved capsules are verified again after every job. The hooks hold the
    /// layers weakly (a layer holds the hooks).
    fn install_hooks(&self) {
        let shared = Arc::downgrade(&self.shared);
        let indexing = Arc::downgrade(&self.indexing);
        self.shared.hooks.install(
            Box::new(move |job: ActiveJob| {
                if let Some(ix) = indexing.upgrade() {
                    status::publish(&ix, job);
                }
            }),
            Box::new(move || {
                if let Some(core) = shared.upgrade() {
                    evidence::saved::reverify_touched(&core);
                }
            }),
        );
    }

    /// Starts following the collections' folders (server mode): reconciled by a scan first
    /// (what changed while svc was stopped), then watched.
    pub fn start_watching(&self) {
        index::watch::start(&self.indexing);
    }

    /// Joins the team index.yml or `svc serve --cluster` names, if any (server mode; from
    /// within the worker's runtime).
    pub fn start_team(&self) {
        index::team::start(&self.indexing);
    }

    /// Events for `/api/events`.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<protocol::Event> {
        self.shared.events.subscribe()
    }

    /// Starts the thread that publishes the statuses background work asks for (server
    /// mode; without it each is published by its asker at once). It ends with the worker.
    pub fn start_status_pacing(&self) {
        let shared = Arc::downgrade(&self.shared);
        self.shared.hooks.start_pacing_status();
        // A status the open carried from the last run is counted on the thread.
        if self.catalog_check == recovery::CatalogCheck::Deferred {
            self.shared.hooks.publish_status_soon();
        }
        let started = std::thread::Builder::new().name("status".into()).spawn(move || loop {
            let rest = {
                let Some(core) = shared.upgrade() else { return };
                core.hooks.pace_status(Duration::from_secs(1))
            };
            std::thread::sleep(rest);
        });
        if let Err(e) = started {
            self.shared.hooks.stop_pacing_status();
            tracing::error!("could not start the status thread: {e}");
        }
    }

    /// Checks a catalog the open did not check ([`recovery::CatalogCheck::Deferred`]) on a
    /// thread of its own at the background priority (server mode). A damaged one is marked
    /// and the worker exits: the supervisor starts it again, and that open sets the catalog
    /// aside and fills a new one from the notes, as a damaged catalog found at the open is.
    pub fn start_catalog_check(&self) {
        if self.catalog_check != recovery::CatalogCheck::Deferred {
            return;
        }
        let path = self.shared.settings.dirs.catalog_file();
        let started = std::thread::Builder::new().name("catalog-check".into()).spawn(move || {
            crate::background::yield_to_readers();
            match recovery::deferred_check(&path) {
                Ok(None) => tracing::debug!("catalog checked: sound"),
                Ok(Some(damage)) => {
                    tracing::error!("the catalog is damaged ({damage}); restarting the worker to repair it");
                    std::process::exit(EXIT_CATALOG_DAMAGED);
                }
                Err(e) => tracing::warn!("could not check the catalog: {e}"),
            }
        });
        if let Err(e) = started {
            tracing::error!("could not start the catalog check: {e}");
        }
    }

    /// Starts the background embedding and reading of pictures (server mode).
    pub fn start_background_embedding(&self) {
        embedding::spawn(&self.indexing);
        index::pictures::spawn(&self.indexing);
    }

    /// Re-feeds the keyword index from the catalog on a thread of its own when
    /// [`Refeed::Background`] left rows to it (server mode).
    pub fn start_keyword_refeed(&self) {
        if keyword_refeed::backlog(&self.indexing) > 0 {
            keyword_refeed::start(&self.indexing);
        }
    }

    /// Embeds the whole backlog now, in this thread (the CLI's in-process mode).
    pub fn embed_now(&self) -> Result<usize, String> {
        let n = embedding::run(&self.indexing, true).map_err(|e| e.to_string())?;
        self.indexing.publish_status();
        Ok(n)
    }

    /// Reads the pictures that wait for their text, in this thread (the CLI's in-process
    /// mode); how many.
    pub fn read_pictures_now(&self) -> usize {
        let n = index::pictures::read_now(&self.indexing);
        if n > 0 {
            self.indexing.publish_status();
        }
        n
    }

    /// The text the embedder reads for each chunk of the active documents (`svc embed --texts`).
    pub fn embedding_texts(&self) -> Result<Vec<String>, String> {
        embedding::texts(&self.indexing).map_err(|e| e.to_string())
    }

    /// Stops a running job at its next batch boundary and waits for it.
    pub fn shutdown(&self) {
        self.indexing.cancel.store(true, Ordering::SeqCst);
        self.indexing.jobs.wait_idle();
        // The embedding thread stops at its next batch; the model is never torn down under it.
        drop(self.indexing.embedding_round.lock().unwrap_or_else(|p| p.into_inner()));
        // A status background work asked for and the pacer did not publish yet.
        self.shared.hooks.stop_pacing_status();
        // The write-ahead log folded into the catalog: the next start reads one file.
        if let Err(e) = self.shared.stores.catalog.checkpoint() {
            tracing::warn!("catalog checkpoint at shutdown failed: {e}");
        }
    }

    /// Blocks until no job runs (the CLI's in-process mode waits for its job).
    pub fn wait_idle(&self) {
        self.indexing.jobs.wait_idle();
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

/// A worker for the crate's tests with a collection `n` of `notes` (path, text) under `dir`,
/// indexed.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn test_worker_with_notes(dir: &std::path::Path, notes: &[(&str, &str)]) -> Arc<Worker> {
    let folder = dir.join("notes");
    std::fs::create_dir_all(&folder).unwrap();
    for (rel, text) in notes {
        std::fs::write(folder.join(rel), text).unwrap();
    }
    let w = test_worker(&dir.join("svc"));
    let add =
        protocol::AddCollection { path: folder.display().to_string(), name: Some("n".into()), ..Default::default() };
    w.handle(add.into()).unwrap();
    w.wait_idle();
    w
}

/// How many results a keyword search for `query` finds, for the crate's tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn test_hits(w: &Arc<Worker>, query: &str) -> usize {
    let req = protocol::SearchRequest { query: query.into(), limit: 50, ..Default::default() };
    let r: protocol::api::SearchResponse = w.handle(req.into()).unwrap().decode().unwrap();
    r.results.len()
}
