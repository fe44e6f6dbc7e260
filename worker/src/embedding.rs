//! The embedding pipeline: a background thread that embeds the catalog's backlog into the
//! vector table of the active embedder, in batches, debounced after each change the event bus announces (sync or write).
//!
//! It holds no job slot: syncs and writes keep landing while it runs. Its progress is the
//! catalog's `embeddings` table, so after a crash or a restart it resumes where it was.

use crate::catalog::{self, PendingContent};
use crate::models::ModelError;
use crate::vectors::{ChunkVector, TableKey, ANN_MIN_ROWS};
use crate::{time_fmt, Worker};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Contents taken from the backlog per round.
const CONTENTS_PER_ROUND: usize = 128;
/// Texts per model call.
const TEXTS_PER_BATCH: usize = 32;
/// Quiet time after the last trigger before a run starts.
const DEBOUNCE: Duration = Duration::from_millis(300);

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
pub fn spawn(worker: &Arc<Worker>) {
    let weak: Weak<Worker> = Arc::downgrade(worker);
    let started = std::thread::Builder::new().name("embedder".into()).spawn(move || {
        let mut first = true;
        loop {
            let Some(w) = weak.upgrade() else { return };
            if w.cancel.load(Ordering::SeqCst) {
                return;
            }
            let fired = first || w.events.changes.wait(Duration::from_secs(1));
            first = false;
            if !fired {
                continue;
            }
            // Debounce: let a burst of writes settle.
            while w.events.changes.wait(DEBOUNCE) {}
            if let Err(e) = run(&w) {
                tracing::warn!("embedding stopped: {e}");
            }
            w.publish_status();
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
    Vectors(#[from] crate::vectors::VectorError),
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
}

/// Embeds the whole backlog; returns how many contents were embedded.
pub fn run(w: &Worker) -> Result<usize, EmbedError> {
    let Some(vectors) = w.vectors.as_ref() else { return Ok(0) };
    let embedder = match w.models.embedder() {
        Ok(e) => e,
        Err(ModelError::Missing(_)) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let key = TableKey::new(w.models.embed_model_ref(), embedder.dim());
    w.set_embed_table(Some(key.clone()));
    // Rows of backlog contents can only be leftovers of a run a crash cut short: drop them
    // once, so that the rounds below only add.
    let leftovers: Vec<String> =
        catalog::embed_backlog(&w.catalog.reader(), &key.name, usize::MAX)?.into_iter().map(|p| p.mirror_hash).collect();
    vectors.remove(&key, &leftovers)?;
    let mut done = 0usize;
    let mut rounds = 0usize;
    loop {
        if w.cancel.load(Ordering::SeqCst) {
            break;
        }
        let pending = catalog::embed_backlog(&w.catalog.reader(), &key.name, CONTENTS_PER_ROUND)?;
        if pending.is_empty() {
            break;
        }
        let rows = embed_contents(w, &embedder, &pending)?;
        let hashes: Vec<String> = pending.iter().map(|p| p.mirror_hash.clone()).collect();
        vectors.add(&key, &rows)?;
        catalog::mark_embedded(&mut w.catalog.writer(), &key.name, &hashes, &time_fmt::now_iso())?;
        done += hashes.len();
        rounds += 1;
        if rounds % 2 == 0 {
            w.publish_status();
        }
    }
    let orphans = catalog::orphaned_embeddings(&w.catalog.reader(), &key.name)?;
    if !orphans.is_empty() {
        vectors.remove(&key, &orphans)?;
        catalog::forget_embeddings(&w.catalog.writer(), &key.name, &orphans)?;
    }
    if done > 0 {
        tracing::info!("embedded {done} contents into {}", key.name);
        vectors.compact(&key)?;
    }
    if let Err(e) = vectors.maybe_index(&key, ann_min_rows()) {
        tracing::warn!("ANN index not built: {e}");
    }
    Ok(done)
}

/// Every chunk of the given contents as a vector; shortest texts batched together.
fn embed_contents(w: &Worker, embedder: &crate::models::encoder::Embedder, pending: &[PendingContent]) -> Result<Vec<ChunkVector>, EmbedError> {
    let mut items: Vec<(String, u32, String)> = Vec::new();
    {
        let conn = w.catalog.reader();
        for p in pending {
            for c in catalog::chunks_of(&conn, &p.mirror_hash)? {
                items.push((p.mirror_hash.clone(), c.seq, embedding_text(&p.title, &c.text)));
            }
        }
    }
    items.sort_by_key(|(_, _, t)| t.len());
    let mut rows = Vec::with_capacity(items.len());
    for batch in items.chunks(TEXTS_PER_BATCH) {
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
    fn title_is_prepended_unless_the_chunk_starts_with_it() {
        assert_eq!(embedding_text("Sockets", "# Sockets\n\nbody"), "# Sockets\n\nbody");
        assert_eq!(embedding_text("Sockets", "body text"), "Sockets\nbody text");
        assert_eq!(embedding_text("", "body"), "body");
    }
}
