//! Re-feeding the keyword index from the catalog while the worker answers: after an analyzer
//! change or a lost index, a large catalog is fed on a thread of its own, batch by batch,
//! instead of before the worker listens (where a vault of a few hundred thousand notes would
//! outlast the supervisor's start grace, and be killed and begin again, round and round).
//! Searches meanwhile find what is fed so far; the status's `keywordBacklog` says how many
//! documents are left.

use super::writer::CONVERGE_BATCH;
use super::Indexing;
use crate::stores::catalog;
use crate::stores::DocKey;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Pending rows fed before the worker listens; more are fed in the background. A batch of
/// 2,000 notes is fed in about a second.
pub const BLOCKING_MAX: u64 = 2_000;

/// How the keyword index catches up with the catalog when the worker opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refeed {
    /// Before the worker is open, whatever it takes (the CLI: a command's answer needs the
    /// whole index).
    Blocking,
    /// Up to [`BLOCKING_MAX`] rows before; past that, all of them after, on a thread of
    /// their own ([`start`]) while the worker answers (the server).
    Background,
}

/// Feeds the pending rows on a thread of its own, one batch at a time; each batch holds the
/// scan and write locks, so that no sync or write feeds a row between the batch reading it
/// and recording it absorbed. Stops at shutdown; what is left is fed at the next start.
pub fn start(ix: &Arc<Indexing>) {
    // Until the thread ends, a sync feeds only its own rows (`Indexer::converge_rows`).
    ix.refeeding.store(true, Ordering::SeqCst);
    let thread_ix = Arc::clone(ix);
    let spawned = std::thread::Builder::new().name("keyword-refeed".into()).spawn(move || {
        let ix = thread_ix;
        refeed(&ix);
        ix.refeeding.store(false, Ordering::SeqCst);
        ix.core.hooks.publish_status_soon();
    });
    if let Err(e) = spawned {
        ix.refeeding.store(false, Ordering::SeqCst);
        tracing::error!("could not start re-feeding the keyword index: {e}");
    }
}

/// The re-feed itself, until no row is pending, shutdown, or an error.
fn refeed(ix: &Indexing) {
    let started = Instant::now();
    let mut fed = 0usize;
    let mut after = DocKey(0);
    while !ix.cancel.load(Ordering::SeqCst) {
        let batch = {
            let _scan = ix.scan_lock();
            let _write = ix.write_lock();
            ix.indexer().converge_batch(after, CONVERGE_BATCH)
        };
        match batch {
            Ok(Some(batch)) => {
                fed += batch.fed;
                after = batch.last;
                ix.core.hooks.publish_status_soon();
            }
            Ok(None) => {
                tracing::info!("keyword index re-fed: {fed} documents in {:.1?}", started.elapsed());
                return;
            }
            Err(e) => {
                tracing::error!("keyword index re-feed stopped after {fed} documents: {e}");
                return;
            }
        }
    }
}

/// Rows the keyword index has not absorbed (0 when the catalog cannot say).
pub fn backlog(ix: &Indexing) -> u64 {
    catalog::bm25_pending_count(&ix.core.stores.catalog.reader()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_hits as hits;

    #[test]
    fn a_background_refeed_feeds_every_row_in_batches_and_the_backlog_counts_down() {
        let dir = tempfile::tempdir().unwrap();
        let texts: Vec<(String, String)> =
            (0..7).map(|i| (format!("n{i}.md"), format!("# Note {i}\n\nquincunx number {i}\n"))).collect();
        let notes: Vec<(&str, &str)> = texts.iter().map(|(r, t)| (r.as_str(), t.as_str())).collect();
        let w = crate::test_worker_with_notes(dir.path(), &notes);
        let ix = &w.indexing;
        assert_eq!((backlog(ix), hits(&w, "quincunx")), (0, 7));

        // A new analyzer: every row is pending again.
        catalog::reset_bm25(&ix.core.stores.catalog.writer()).unwrap();
        assert_eq!(backlog(ix), 7);
        // One batch: committed and recorded, so a kill after it does not feed those again.
        let batch = ix.indexer().converge_batch(DocKey(0), 3).unwrap().unwrap();
        assert_eq!(batch.fed, 3);
        assert_eq!(backlog(ix), 4);
        // While a re-feed runs, a sync's catch-all feeds only its own rows.
        ix.refeeding.store(true, Ordering::SeqCst);
        let rest = catalog::bm25_pending(&ix.core.stores.catalog.reader(), DocKey(0), 10).unwrap();
        assert_eq!(ix.indexer().converge_rows(rest[..1].iter().copied()).unwrap(), 1);
        assert_eq!(backlog(ix), 3);
        ix.refeeding.store(false, Ordering::SeqCst);

        start(ix);
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        while (backlog(ix) > 0 || ix.refeeding.load(Ordering::SeqCst)) && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(backlog(ix), 0);
        assert!(!ix.refeeding.load(Ordering::SeqCst));
        assert_eq!(hits(&w, "quincunx"), 7, "every note is found again");
        assert_eq!(ix.indexer().converge().unwrap(), 0, "nothing left");
    }
}
