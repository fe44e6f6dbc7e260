//! Chunk vectors that travel with a document, so that a member with the same embedder stores
//! them instead of embedding the document again (a new member's replica needs no embedding
//! run).
//!
//! A document is published as soon as it changes, before it is embedded; once the member that
//! owns its folder has embedded it, that member publishes the same bytes again with their
//! vectors, expecting its own version still to be the last (a newer one from anywhere wins,
//! and its vectors then travel in their turn). The stream keeps each document's latest
//! version, so a member that joins later reads the bytes and the vectors in one message.
//!
//! A member stores the vectors offered only for a content it does not know yet (none of its
//! active documents holds it, its table does not have it): one it knows is embedded already
//! or waits in the embedder's backlog, and two writers of one content's vectors would race.
//! They are stored and recorded as embedded before the documents are synced, so the content
//! never enters the backlog; after the sync, a content whose chunks here disagree with the
//! vectors (another version of svc cut it otherwise) is forgotten and embedded here.

use super::subject::{Carried, DocMessage, DocOp};
use super::{PublishFailure, Team};
use crate::index::Indexing;
use crate::stores::catalog;
use crate::stores::vectors::{ChunkVector, TableKey};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

/// Documents whose vectors are sent per round.
const ROUND: usize = 64;

#[derive(Debug, thiserror::Error)]
pub(super) enum CarryError {
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error(transparent)]
    Vectors(#[from] crate::stores::vectors::VectorError),
    #[error(transparent)]
    Publish(#[from] PublishFailure),
}

/// Sends the vectors of up to [`ROUND`] documents of the collections this member owns (shared
/// from a folder of its own) that it has embedded since they were published; whether there
/// may be more.
pub(super) fn send_round(ix: &Indexing, team: &Team) -> Result<bool, CarryError> {
    let (Some(vectors), Some(key)) = (ix.core.stores.vectors.as_ref(), ix.core.stores.embed_table()) else {
        return Ok(false);
    };
    let owned: BTreeMap<String, PathBuf> = ix
        .core
        .settings
        .config()
        .collections
        .iter()
        .filter(|c| c.shared && !c.replica)
        .filter_map(|c| Some((c.name.clone(), PathBuf::from(&c.path).canonicalize().ok()?)))
        .collect();
    let mut more = false;
    for (collection, root) in &owned {
        let due = catalog::team_vectors_to_send(&ix.core.stores.catalog.reader(), collection, &key.name, ROUND)?;
        tracing::debug!("team: {collection}: {} documents' vectors to send", due.len());
        more |= due.len() == ROUND;
        if due.is_empty() {
            continue;
        }
        let contents: Vec<String> = due.iter().map(|d| d.mirror_hash.clone()).collect();
        let expected = due.iter().map(|d| d.chunks as usize).sum();
        let found = vectors.chunk_vectors(&key, &contents, expected)?;
        let mut sent = 0;
        for d in due {
            // In chunk order; two documents of one content both take its vectors.
            let chunks: Vec<(u32, Vec<f32>)> = (0..d.chunks as u32)
                .filter_map(|seq| Some((seq, found.get(&(d.mirror_hash.clone(), seq))?.clone())))
                .collect();
            let _write = ix.write_lock();
            // The version may have moved on while the lock was waited for; the file on disk too
            // (the outbox publishes its new bytes).
            if catalog::team_doc(&ix.core.stores.catalog.reader(), collection, &d.rel_path)?
                .is_none_or(|held| held.seq != d.seq)
            {
                continue;
            }
            let abs = root.join(&d.rel_path);
            let Ok(bytes) = std::fs::read(&abs) else { continue };
            if crate::digest::sha256_hex(&bytes) != d.hash {
                continue;
            }
            let stays = |why: &str| {
                tracing::debug!("team: {collection}/{}: its vectors stay here ({why})", d.rel_path);
                catalog::team_vectors_stay(&ix.core.stores.catalog.writer(), collection, &d.rel_path, d.seq)
            };
            if chunks.len() as u64 != d.chunks {
                stays("the table lacks some of its chunks")?;
                continue;
            }
            let carried = Carried { table: key.name.clone(), dim: key.dim, mirror_hash: d.mirror_hash.clone(), chunks };
            let msg = DocMessage {
                collection: collection.clone(),
                rel_path: d.rel_path.clone(),
                member: team.settings.member.clone(),
                op: DocOp::Put {
                    bytes,
                    hash: d.hash.clone(),
                    mtime_ms: super::outbox::mtime_ms(&abs),
                    vectors: Some(carried),
                },
            };
            if !team.fits(msg.payload_len()) {
                stays("too large for one message")?;
                continue;
            }
            match team.publish(&msg, Some(d.seq), None) {
                Ok(version) => {
                    catalog::set_published_team_doc(
                        &ix.core.stores.catalog.writer(),
                        collection,
                        &d.rel_path,
                        &version,
                    )?;
                    sent += 1;
                }
                Err(PublishFailure::Conflict) => stays("a newer version came first")?,
                Err(e) => {
                    team.sent_vectors(sent);
                    return Err(e.into());
                }
            }
        }
        team.sent_vectors(sent);
    }
    Ok(more)
}

/// The vectors a batch stored from the team, to be checked once its documents are synced.
pub(super) struct Taken {
    key: TableKey,
    /// Each content and how many chunks its vectors were.
    contents: Vec<(String, u64)>,
}

/// Stores the vectors offered with a batch's documents that this member can use (same
/// embedder and dimension, a content it does not know) and records them as embedded. Called
/// under the write lock, before the batch's documents are synced.
pub(super) fn take(ix: &Indexing, offers: Vec<Carried>) -> Result<Option<Taken>, CarryError> {
    let model_ref = ix.core.models.embed_model_ref();
    let Some(vectors) = ix.core.stores.vectors.as_ref() else { return Ok(None) };
    if offers.is_empty() || model_ref.is_empty() {
        return Ok(None);
    }
    let mut key: Option<TableKey> = None;
    let (mut rows, mut contents, mut seen) = (Vec::new(), Vec::new(), HashSet::new());
    {
        let conn = ix.core.stores.catalog.reader();
        for offer in offers {
            let mine = TableKey::new(model_ref, offer.dim);
            // One table per batch: the first usable offer's (offers of another dimension
            // under this model's name cannot all be this embedder's).
            let usable = mine.name == offer.table
                && offer.chunks.iter().all(|(_, v)| v.len() == offer.dim)
                && key.as_ref().is_none_or(|k| *k == mine);
            if !usable || !seen.insert(offer.mirror_hash.clone()) {
                continue;
            }
            if catalog::content_known(&conn, &offer.mirror_hash, &mine.name)? {
                continue;
            }
            contents.push((offer.mirror_hash.clone(), offer.chunks.len() as u64));
            rows.extend(offer.chunks.into_iter().map(|(seq, vector)| ChunkVector {
                mirror_hash: offer.mirror_hash.clone(),
                seq,
                vector,
            }));
            key = Some(mine);
        }
    }
    let Some(key) = key else { return Ok(None) };
    // The rows first, then the record: a crash between them leaves rows the embedder's next
    // run drops as strays.
    vectors.add(&key, &rows)?;
    let hashes: Vec<String> = contents.iter().map(|(h, _)| h.clone()).collect();
    catalog::mark_embedded(&mut ix.core.stores.catalog.writer(), &key.name, &hashes, &crate::time_fmt::now_iso())?;
    Ok(Some(Taken { key, contents }))
}

/// After the sync: a content whose chunks here are not the ones its vectors were made of
/// (or that no document here holds) is forgotten, so that it is embedded here. Returns how
/// many contents were.
pub(super) fn check(ix: &Indexing, taken: &Taken) -> Result<u64, CarryError> {
    let mut wrong = Vec::new();
    {
        let conn = ix.core.stores.catalog.reader();
        for (hash, chunks) in &taken.contents {
            if catalog::chunk_count(&conn, hash)? != *chunks {
                wrong.push(hash.clone());
            }
        }
    }
    if !wrong.is_empty() {
        tracing::debug!("team: {} contents' vectors did not match their chunks here: embedded here", wrong.len());
        catalog::forget_embeddings(&ix.core.stores.catalog.writer(), &taken.key.name, &wrong)?;
        if let Some(vectors) = ix.core.stores.vectors.as_ref() {
            vectors.remove(&taken.key, &wrong)?;
        }
    }
    Ok(wrong.len() as u64)
}

impl Taken {
    pub(super) fn key(&self) -> &TableKey {
        &self.key
    }

    /// How many contents' vectors were stored.
    pub(super) fn len(&self) -> usize {
        self.contents.len()
    }
}

/// Merges the small files the batches' adds left in the vector table `key` (once the replica
/// has caught up with the stream).
pub(super) fn compact(ix: &Indexing, key: &TableKey) -> Result<(), CarryError> {
    if let Some(vectors) = ix.core.stores.vectors.as_ref() {
        vectors.compact(key)?;
    }
    Ok(())
}
