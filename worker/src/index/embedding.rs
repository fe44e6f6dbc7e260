//! The embedding pipeline: a background thread that embeds the catalog's backlog into the
//! vector table of the active embedder, in batches, debounced after each change the event bus announces (sync or write).
//!
//! It holds no job slot: syncs and writes keep landing while it runs. Its progress is the
//! catalog's `embeddings` table, so after a crash or a restart it resumes where it was. A
//! content the model cannot embed is recorded in `embed_failures` and skipped until it changes
//! or the worker restarts, so it never stalls the rest of the backlog.

use crate::index::Indexing;
use crate::models::embedder::Embedder;
use crate::models::ModelError;
use crate::stores::catalog::{self, PendingContent};
use crate::stores::vectors::{ChunkVector, TableKey, VectorStore, ANN_MIN_ROWS};
use crate::time_fmt;
use protocol::api::RepairedStore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// How soon a model server that did not answer is asked again.
const SERVER_RETRY: Duration = Duration::from_secs(30);
/// Contents taken from the backlog per round.
const CONTENTS_PER_ROUND: usize = 128;
/// Quiet time after the last trigger before a run starts.
const DEBOUNCE: Duration = Duration::from_millis(300);

/// How fast the run under way works off the backlog, for `/api/status` (`embeddingRate`) and
/// the progress a user sees: contents embedded since the run began, over the time it took.
#[derive(Debug, Default)]
pub struct Pace {
    run: Mutex<Option<(Instant, usize)>>,
    /// Contents embedded since the worker started, every run together.
    total: AtomicU64,
}

impl Pace {
    /// A run shorter than this has no pace yet (its first round includes loading work).
    const SETTLED: Duration = Duration::from_secs(1);

    /// Starts a run; it ends when the returned guard is dropped, however the run ends.
    fn begin(&self) -> PaceRun<'_> {
        *self.lock() = Some((Instant::now(), 0));
        PaceRun(self)
    }

    fn add(&self, contents: usize) {
        self.total.fetch_add(contents as u64, Ordering::SeqCst);
        if let Some((_, done)) = self.lock().as_mut() {
            *done += contents;
        }
    }

    fn end(&self) {
        *self.lock() = None;
    }

    /// Contents per second in the run under way; none between runs or before it has settled.
    pub fn per_second(&self) -> Option<f64> {
        let (started, done) = (*self.lock())?;
        let secs = started.elapsed();
        (secs >= Self::SETTLED && done > 0).then(|| done as f64 / secs.as_secs_f64())
    }

    /// Contents embedded since the worker started (it moves after each round).
    pub fn embedded_since_start(&self) -> u64 {
        self.total.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Instant, usize)>> {
        self.run.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A run of the pace under way: dropping it ends the run.
struct PaceRun<'a>(&'a Pace);

impl Drop for PaceRun<'_> {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// The text a chunk is embedded as: its document's title, then the chunk.
pub fn embedding_text(title: &str, chunk: &str) -> String {
    if title.is_empty() || chunk.trim_start().trim_start_matches('#').trim_start().starts_with(title) {
        chunk.to_string()
    } else {
        format!("{title}\n{chunk}")
    }
}

/// Rows from which an ANN index is built: `SVC_ANN_MIN_ROWS`, else [`ANN_MIN_ROWS`].
fn ann_min_rows() -> usize {
    std::env::var("SVC_ANN_MIN_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(ANN_MIN_ROWS)
}

/// Starts the thread; it ends when the worker is dropped or shuts down.
pub fn spawn(worker: &Arc<Indexing>) {
    let weak: Weak<Indexing> = Arc::downgrade(worker);
    let started = std::thread::Builder::new().name("embedder".into()).spawn(move || {
        let mut first = true;
        let mut check_lost = true;
        // A model server that did not answer is asked again after a while, change or not.
        let mut retry_at: Option<Instant> = None;
        loop {
            let Some(w) = weak.upgrade() else { return };
            if w.cancel.load(Ordering::SeqCst) {
                return;
            }
            let due = retry_at.is_some_and(|at| Instant::now() >= at);
            let fired = first || due || w.core.events.changes.wait(Duration::from_secs(1));
            first = false;
            if !fired {
                continue;
            }
            // Debounce: let a burst of writes settle.
            while w.core.events.changes.wait(DEBOUNCE) {}
            retry_at = None;
            // Once per start: contents recorded as embedded whose vectors are gone go back
            // to the backlog.
            let round = w.embedding_round.lock().unwrap_or_else(|p| p.into_inner());
            let first_round = std::mem::take(&mut check_lost);
            let model_was_ready = w.core.models.loaded().embed;
            let result = run(&w, first_round);
            drop(round);
            match result {
                // Nothing embedded (no backlog, or no model) and no model loaded in this
                // round: the status is as the change's own writer published it. Counting it
                // again here cost a fifth of a second of CPU per change at 50,000 notes,
                // beside the sync of the next one. A model this round loaded changes what the
                // capabilities say, embedded or not.
                Ok(0) if !first_round && w.core.models.loaded().embed == model_was_ready => continue,
                Ok(_) => {}
                Err(EmbedError::Cancelled) => return,
                Err(EmbedError::Model(e @ ModelError::Server(_))) => {
                    tracing::warn!("embedding paused: {e}; trying again in {SERVER_RETRY:?}");
                    retry_at = Some(Instant::now() + SERVER_RETRY);
                }
                Err(e) => tracing::warn!("embedding stopped: {e}"),
            }
            w.core.hooks.publish_status_soon();
        }
    });
    if let Err(e) = started {
        tracing::error!("could not start the embedding thread: {e}");
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Vectors(#[from] crate::stores::vectors::VectorError),
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    /// The worker is shutting down: the round stops between batches, nothing of it recorded.
    #[error("embedding stopped: the worker is shutting down")]
    Cancelled,
}

/// Embeds the whole backlog, after checking the table against the record when
/// `check_lost` ([`forget_lost`]); returns how many contents were embedded.
pub fn run(w: &Indexing, check_lost: bool) -> Result<usize, EmbedError> {
    let Some(vectors) = w.core.stores.vectors.as_ref() else { return Ok(0) };
    let embedder = match w.core.models.embedder() {
        Ok(e) => e,
        Err(ModelError::Missing(_)) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let key = TableKey::new(w.core.models.embed_model_ref(), embedder.dim());
    w.core.stores.set_embed_table(Some(key.clone()));
    if check_lost {
        forget_lost(w, vectors, &key)?;
    }
    drop_leftovers(w, vectors, &key)?;
    let done = work_off_backlog(w, vectors, &key, &embedder)?;
    sweep_orphans(w, vectors, &key)?;
    if done > 0 {
        tracing::info!("embedded {done} contents into {}", key.name);
        vectors.compact(&key)?;
    }
    // Not while a team's replica catches up: it is built once the replica has (the last batch
    // wakes this thread).
    let catching_up = w.team.get().is_some_and(|t| t.catching_up());
    if catching_up {
        tracing::debug!("the ANN index waits for the team's replica to catch up");
    } else if let Err(e) = vectors.maybe_index(&key, ann_min_rows()) {
        tracing::warn!("ANN index not built: {e}");
    }
    Ok(done)
}

/// Contents the record says the table holds, but of which it has no rows (its files were
/// deleted or lost): forgotten, so that they are embedded again. The counts are compared
/// first; the table's contents are read only when it holds fewer rows than recorded.
/// Returns how many contents were forgotten.
fn forget_lost(w: &Indexing, vectors: &VectorStore, key: &TableKey) -> Result<usize, EmbedError> {
    let recorded = catalog::embedded_chunk_count(&w.core.stores.catalog.reader(), &key.name)?;
    if vectors.count(key)? as u64 >= recorded {
        return Ok(0);
    }
    let present = vectors.contents(key)?;
    let lost: Vec<String> = catalog::embedded_contents(&w.core.stores.catalog.reader(), &key.name)?
        .into_iter()
        .filter(|h| !present.contains(h))
        .collect();
    if !lost.is_empty() {
        w.core.stores.repairs.record(
            RepairedStore::Vectors,
            format!(
                "the vector table {} lacked {} contents the catalog records as embedded: they are embedded again",
                key.name,
                lost.len()
            ),
        );
        catalog::forget_embeddings(&w.core.stores.catalog.writer(), &key.name, &lost)?;
    }
    Ok(lost.len())
}

/// Rows of backlog contents can only be leftovers: of a round a crash cut short before its
/// record, or of an orphan sweep cut short after forgetting a content that has come back
/// since. Dropped once, so that the rounds only add.
fn drop_leftovers(w: &Indexing, vectors: &VectorStore, key: &TableKey) -> Result<(), EmbedError> {
    let leftovers: Vec<String> = catalog::embed_backlog(&w.core.stores.catalog.reader(), &key.name, usize::MAX)?
        .into_iter()
        .map(|p| p.mirror_hash)
        .collect();
    vectors.remove(key, &leftovers)?;
    Ok(())
}

/// Rounds until the backlog is empty or the worker shuts down; returns the contents embedded.
fn work_off_backlog(
    w: &Indexing,
    vectors: &VectorStore,
    key: &TableKey,
    embedder: &Embedder,
) -> Result<usize, EmbedError> {
    let mut done = 0usize;
    let _run = w.embedding_pace.begin();
    while !w.cancel.load(Ordering::SeqCst) {
        let pending = catalog::embed_backlog(&w.core.stores.catalog.reader(), &key.name, CONTENTS_PER_ROUND)?;
        if pending.is_empty() {
            break;
        }
        let round = embed_round(w, vectors, key, embedder, &pending)?;
        w.embedding_pace.add(round);
        done += round;
        // A few counts and a small file, next to a round of model calls: /api/status's
        // embeddingBacklog moves with every round.
        w.core.hooks.publish_status_soon();
    }
    Ok(done)
}

/// Embeds one round and stores it; returns how many contents got in. When the model fails
/// on a batch, the round is retried content by content, so that one content it cannot
/// embed does not hold up the others. A vector-store or catalog error stops the run.
fn embed_round(
    w: &Indexing,
    vectors: &VectorStore,
    key: &TableKey,
    embedder: &Embedder,
    pending: &[PendingContent],
) -> Result<usize, EmbedError> {
    let (rows, embedded): (Vec<ChunkVector>, Vec<String>) = match embed_contents(w, embedder, pending) {
        Ok(rows) => (rows, pending.iter().map(|p| p.mirror_hash.clone()).collect()),
        Err(EmbedError::Model(e)) if is_content_error(&e) => {
            tracing::warn!("an embedding batch failed ({e}); retrying its {} contents one by one", pending.len());
            embed_one_by_one(w, &key.name, embedder, pending)?
        }
        Err(e) => return Err(e),
    };
    vectors.add(key, &rows)?;
    catalog::mark_embedded(&mut w.core.stores.catalog.writer(), &key.name, &embedded, &time_fmt::now_iso())?;
    Ok(embedded.len())
}

/// Each content on its own: the vectors of those the model embeds and their hashes; those
/// it still fails on are recorded as failed. Stops early when the worker shuts down (what
/// was not tried stays in the backlog).
fn embed_one_by_one(
    w: &Indexing,
    model: &str,
    embedder: &Embedder,
    pending: &[PendingContent],
) -> Result<(Vec<ChunkVector>, Vec<String>), EmbedError> {
    let mut rows = Vec::new();
    let mut embedded = Vec::new();
    for p in pending {
        if w.cancel.load(Ordering::SeqCst) {
            break;
        }
        match embed_contents(w, embedder, std::slice::from_ref(p)) {
            Ok(mut r) => {
                rows.append(&mut r);
                embedded.push(p.mirror_hash.clone());
            }
            Err(EmbedError::Model(e)) if is_content_error(&e) => record_failure(w, model, &p.mirror_hash, &e)?,
            Err(e) => return Err(e),
        }
    }
    Ok((rows, embedded))
}

/// Takes a content the model cannot embed out of the backlog (until it changes or the
/// worker restarts), with a warning naming it.
fn record_failure(w: &Indexing, model: &str, mirror_hash: &str, e: &ModelError) -> Result<(), EmbedError> {
    tracing::warn!("content {mirror_hash} could not be embedded, skipped until it changes or the worker restarts: {e}");
    catalog::mark_embed_failed(
        &w.core.stores.catalog.writer(),
        model,
        mirror_hash,
        &e.to_string(),
        &time_fmt::now_iso(),
    )?;
    Ok(())
}

/// Whether a model error can come from the texts of a batch, and so is worth retrying content
/// by content. The others fail every batch alike and stop the run: a missing runtime or model
/// file, and a timeout (texts are truncated to a bounded length, so a batch that runs out of
/// time says the machine is too busy, not that a content is bad; retrying a round content by
/// content would then wait out the limit once per content).
fn is_content_error(e: &ModelError) -> bool {
    matches!(e, ModelError::Inference(_) | ModelError::Tokenizer(_) | ModelError::Shape(_))
}

/// Forgets, then drops, the vectors of contents no document refers to any more. The record
/// goes first: the other order could leave a content that comes back marked embedded, with no
/// vectors. A crash in between leaves stray rows (harmless: hits only count through active
/// documents); [`drop_strays`] removes them at the end of a later run.
///
/// Under the write lock: a team's replica stores the vectors that came with a batch and records
/// them before it syncs the batch's documents ([`super::team`]), all under that lock; read in
/// between, those contents would look orphaned (recorded, no document yet) and their rows
/// stray (in the table, not yet recorded), and be dropped.
fn sweep_orphans(w: &Indexing, vectors: &VectorStore, key: &TableKey) -> Result<(), EmbedError> {
    let _write = w.write_lock();
    let orphans = catalog::orphaned_embeddings(&w.core.stores.catalog.reader(), &key.name)?;
    if !orphans.is_empty() {
        catalog::forget_embeddings(&w.core.stores.catalog.writer(), &key.name, &orphans)?;
        vectors.remove(key, &orphans)?;
    }
    drop_strays(w, vectors, key)?;
    catalog::drop_orphaned_failures(&w.core.stores.catalog.writer(), &key.name)?;
    Ok(())
}

/// Rows of contents the record does not hold, at the end of a run (when every content this
/// run embedded is recorded): what a sweep cut short between its two steps left. The counts
/// are compared first; the table's contents are read only when it holds more rows than
/// recorded.
fn drop_strays(w: &Indexing, vectors: &VectorStore, key: &TableKey) -> Result<(), EmbedError> {
    let recorded = catalog::embedded_chunk_count(&w.core.stores.catalog.reader(), &key.name)?;
    if vectors.count(key)? as u64 <= recorded {
        return Ok(());
    }
    let kept: std::collections::HashSet<String> =
        catalog::embedded_contents(&w.core.stores.catalog.reader(), &key.name)?.into_iter().collect();
    let strays: Vec<String> = vectors.contents(key)?.into_iter().filter(|h| !kept.contains(h)).collect();
    if !strays.is_empty() {
        w.core.stores.repairs.record(
            RepairedStore::Vectors,
            format!("the vector table {} held rows of {} contents no longer recorded: dropped", key.name, strays.len()),
        );
        vectors.remove(key, &strays)?;
    }
    Ok(())
}

/// What the embedder reads for each chunk of `contents`: (content, chunk, text).
fn chunk_texts(
    conn: &rusqlite::Connection,
    contents: &[PendingContent],
) -> Result<Vec<(String, u32, String)>, catalog::CatalogError> {
    let mut items = Vec::new();
    for p in contents {
        for c in catalog::chunks_of(conn, &p.mirror_hash)? {
            // A code chunk is embedded under its symbol's path too (`Kettle::descale`).
            let title = match &c.symbol {
                Some(s) => std::borrow::Cow::Owned(format!("{}\n{s}", p.title)),
                None => std::borrow::Cow::Borrowed(p.title.as_str()),
            };
            items.push((p.mirror_hash.clone(), c.seq, embedding_text(&title, &c.text)));
        }
    }
    Ok(items)
}

/// The text the embedder reads for every chunk of the active documents, in row order: what
/// `svc embed --texts` prints, so a benchmark feeds plain ONNX Runtime what svc embeds.
pub fn texts(w: &Indexing) -> Result<Vec<String>, catalog::CatalogError> {
    let conn = w.core.stores.catalog.reader();
    let contents = catalog::active_contents(&conn)?;
    Ok(chunk_texts(&conn, &contents)?.into_iter().map(|(_, _, text)| text).collect())
}

/// Every chunk of the given contents as a vector; shortest texts batched together.
fn embed_contents(
    w: &Indexing,
    embedder: &Embedder,
    pending: &[PendingContent],
) -> Result<Vec<ChunkVector>, EmbedError> {
    let mut items = chunk_texts(&w.core.stores.catalog.reader(), pending)?;
    items.sort_by_key(|(_, _, t)| t.len());
    let mut rows = Vec::with_capacity(items.len());
    for batch in items.chunks(embedder.batch_size()) {
        if w.cancel.load(Ordering::SeqCst) {
            return Err(EmbedError::Cancelled);
        }
        let texts: Vec<&str> = batch.iter().map(|(_, _, t)| t.as_str()).collect();
        let vecs = embedder.embed(&texts)?;
        for ((h, seq, _), vector) in batch.iter().zip(vecs) {
            rows.push(ChunkVector { mirror_hash: h.clone(), seq: *seq, vector });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_is_the_runs_contents_over_its_time() {
        let pace = Pace::default();
        assert_eq!(pace.per_second(), None, "no run");
        {
            let _run = pace.begin();
            pace.add(50);
            assert_eq!(pace.per_second(), None, "not settled yet");
            *pace.lock() = Some((Instant::now() - Duration::from_secs(2), 50));
            let rate = pace.per_second().expect("a pace");
            assert!((20.0..=25.0).contains(&rate), "{rate}");
        }
        assert_eq!(pace.per_second(), None, "the run ended");
    }

    #[test]
    fn title_is_prepended_unless_the_chunk_starts_with_it() {
        assert_eq!(embedding_text("Sockets", "# Sockets\n\nbody"), "# Sockets\n\nbody");
        assert_eq!(embedding_text("Sockets", "body text"), "Sockets\nbody text");
        assert_eq!(embedding_text("", "body"), "body");
    }

    #[test]
    fn only_errors_a_text_can_cause_are_retried_content_by_content() {
        assert!(is_content_error(&ModelError::Inference("bad input".into())));
        assert!(is_content_error(&ModelError::Tokenizer("bad text".into())));
        assert!(is_content_error(&ModelError::Shape("odd".into())));
        assert!(!is_content_error(&ModelError::Missing("model.onnx".into())));
        assert!(!is_content_error(&ModelError::Runtime("no library".into())));
        assert!(!is_content_error(&ModelError::Load { path: "m".into(), reason: "corrupt".into() }));
        assert!(!is_content_error(&ModelError::Timeout));
    }
}
