//! What changes in a shared collection here, published: the change journal read from the
//! last change looked at (kept in the catalog, so a worker killed before publishing
//! publishes at its next start). A change the replica took from the team, or a file whose
//! bytes are the version held already, is not published again.

use super::subject::{DocMessage, DocOp};
use super::{carry, PublishFailure, Team};
use crate::config::CollectionConfig;
use crate::index::Indexing;
use crate::stores::catalog::{self, ChangeKind, Origin, TeamDoc};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Journal changes read per round.
const ROUND: u32 = 512;
/// How often the journal is looked at.
const EVERY: Duration = Duration::from_millis(50);

pub(super) async fn run(ix: Arc<Indexing>, team: Arc<Team>) {
    // How many contents the embedder had embedded when vectors were last looked for.
    let mut embedded_seen: Option<u64> = None;
    loop {
        if team.connected() {
            let (ix2, team2) = (Arc::clone(&ix), Arc::clone(&team));
            match tokio::task::spawn_blocking(move || drain(&ix2, &team2)).await {
                Ok(Ok(true)) => continue,
                Ok(Ok(false)) => {}
                Ok(Err(e)) => tracing::warn!("team: publishing: {e}"),
                Err(e) => tracing::error!("team: publishing panicked: {e}"),
            }
            // Idle: the vectors of what was published and has been embedded since.
            let embedded = ix.embedding_pace.embedded_since_start();
            if team.vectors_due.swap(false, Ordering::SeqCst) || embedded_seen != Some(embedded) {
                embedded_seen = Some(embedded);
                let (ix2, team2) = (Arc::clone(&ix), Arc::clone(&team));
                let sent = tokio::task::spawn_blocking(move || carry::send_round(&ix2, &team2)).await;
                match sent {
                    Ok(Ok(false)) => {}
                    Ok(Ok(true)) => {
                        team.vectors_due.store(true, Ordering::SeqCst);
                        continue;
                    }
                    Ok(Err(e)) => {
                        tracing::warn!("team: sending vectors: {e}");
                        team.vectors_due.store(true, Ordering::SeqCst);
                    }
                    Err(e) => tracing::error!("team: sending vectors panicked: {e}"),
                }
            }
        }
        tokio::time::sleep(EVERY).await;
    }
}

/// One round: publishes what the journal's next changes touched in shared collections;
/// whether there may be more.
fn drain(ix: &Indexing, team: &Team) -> Result<bool, String> {
    {
        // Nothing new: the API's writes are not held up by a look at an idle journal.
        let reader = ix.core.stores.catalog.reader();
        let cursor = catalog::team_outbox_cursor(&reader).map_err(|e| e.to_string())?;
        if catalog::changes_after(&reader, cursor, None, 1).map_err(|e| e.to_string())?.is_empty() {
            return Ok(false);
        }
    }
    let _write = ix.write_lock();
    let reader = ix.core.stores.catalog.reader();
    let cursor = catalog::team_outbox_cursor(&reader).map_err(|e| e.to_string())?;
    let entries = catalog::changes_after(&reader, cursor, None, ROUND).map_err(|e| e.to_string())?;
    drop(reader);
    let Some(last) = entries.last().map(|e| e.seq) else { return Ok(false) };
    let shared: BTreeMap<String, CollectionConfig> = ix
        .core
        .settings
        .config()
        .collections
        .iter()
        .filter(|c| c.shared)
        .map(|c| (c.name.clone(), c.clone()))
        .collect();
    let mut touched: BTreeSet<(String, String)> = BTreeSet::new();
    for e in entries.iter().filter(|e| e.origin != Origin::Team && shared.contains_key(&e.collection)) {
        if e.kind == ChangeKind::Rename {
            if let Some(prev) = &e.previous {
                touched.insert((e.collection.clone(), prev.rel_path.clone()));
            }
        }
        if let Some(s) = e.current.as_ref().or(e.previous.as_ref()) {
            touched.insert((e.collection.clone(), s.rel_path.clone()));
        }
    }
    let mut roots: BTreeMap<String, PathBuf> = BTreeMap::new();
    // Versions that fit in one message, published together; larger ones one by one.
    let mut together: Vec<(DocMessage, Option<TeamDoc>)> = Vec::new();
    for (collection, rel) in touched {
        let Some(coll) = shared.get(&collection) else { continue };
        let root = match roots.get(&collection) {
            Some(r) => r.clone(),
            None => match Path::new(&coll.path).canonicalize() {
                Ok(r) => {
                    roots.insert(collection.clone(), r.clone());
                    r
                }
                Err(_) => continue,
            },
        };
        let due = to_publish(ix, team, &collection, &root, &rel, Again::IfChanged).map_err(|e| e.to_string())?;
        let Some((msg, held)) = due else { continue };
        if team.fits(msg.payload_len()) {
            together.push((msg, held));
            continue;
        }
        match publish_one(ix, team, &msg, held.as_ref()) {
            Ok(()) => team.vectors_due.store(true, Ordering::SeqCst),
            Err(PublishFailure::TooLarge(n)) => {
                tracing::warn!(
                    "team: {collection}/{} ({n} bytes) is too large for one message; not shared",
                    msg.rel_path
                )
            }
            // The cursor stays: the next round publishes it.
            Err(e) => return Err(e.to_string()),
        }
    }
    if !together.is_empty() {
        let msgs: Vec<&DocMessage> = together.iter().map(|(m, _)| m).collect();
        let (versions, failure) = team.publish_all(&msgs);
        let mut conn = ix.core.stores.catalog.writer();
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        for ((msg, held), version) in together.iter().zip(&versions) {
            catalog::set_published_team_doc(&tx, &msg.collection, &msg.rel_path, version).map_err(|e| e.to_string())?;
            team.forget_replaced(msg, held.as_ref(), version);
        }
        tx.commit().map_err(|e| e.to_string())?;
        if !versions.is_empty() {
            team.vectors_due.store(true, Ordering::SeqCst);
        }
        // The cursor stays: the next round publishes what the stream did not take (what it
        // took is held, and left alone).
        if let Some(e) = failure {
            return Err(e.to_string());
        }
    }
    catalog::set_team_outbox_cursor(&ix.core.stores.catalog.writer(), last).map_err(|e| e.to_string())?;
    Ok(entries.len() as u32 == ROUND)
}

/// Whether a file is published when the replica holds its bytes already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Again {
    /// Only a change: what the replica holds is on the stream.
    IfChanged,
    /// Published again: the stream lost the version the replica holds.
    EvenIfHeld,
}

/// Versions published again per round.
const LOST_ROUND: usize = 256;

/// Publishes again, as its file is now, each document whose version published from here
/// this member's consumer has not delivered back though it acknowledged the stream past it
/// (`floor`: nothing at or below it waits for delivery). The stream lost that version (nodes
/// killed before writing it to disk) or gave its sequence to another message after losing
/// it; no other member will get it unless it is published again. How many were.
pub(super) fn republish_lost(ix: &Indexing, team: &Team, floor: u64) -> Result<usize, String> {
    let lost = catalog::team_docs_not_echoed(&ix.core.stores.catalog.reader(), floor, LOST_ROUND)
        .map_err(|e| e.to_string())?;
    if lost.is_empty() {
        return Ok(0);
    }
    let _write = ix.write_lock();
    let mut published = 0;
    for (collection, rel, seq) in lost {
        let coll = ix.core.settings.config().find(&collection).filter(|c| c.shared).cloned();
        let root = coll.and_then(|c| Path::new(&c.path).canonicalize().ok());
        let again = match &root {
            Some(root) => {
                tracing::warn!("team: the stream lost {collection}/{rel} as published from here; publishing it again");
                to_publish(ix, team, &collection, root, &rel, Again::EvenIfHeld).and_then(|due| match due {
                    Some((msg, held)) => publish_one(ix, team, &msg, held.as_ref()).map(|()| true),
                    None => Ok(false),
                })
            }
            None => Ok(false),
        };
        match again {
            Ok(true) => published += 1,
            // Not published again (no longer shared, its folder gone, too large now): not
            // looked for again either.
            Ok(false) | Err(PublishFailure::TooLarge(_)) => {
                catalog::set_team_doc_echoed(&ix.core.stores.catalog.writer(), &collection, &rel, seq)
                    .map_err(|e| e.to_string())?
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    if published > 0 {
        team.vectors_due.store(true, Ordering::SeqCst);
    }
    Ok(published)
}

/// The file a journal path is kept in: the path itself, or for a part of a file (a
/// mailbox's message, `box.mbox/3.eml`) that file.
fn file_of(root: &Path, rel: &str) -> String {
    let mut candidate = rel;
    loop {
        if root.join(candidate).is_file() {
            return candidate.to_string();
        }
        match candidate.rsplit_once('/') {
            Some((parent, _)) => candidate = parent,
            None => return rel.to_string(),
        }
    }
}

/// A file's modification time in milliseconds, as a version's message carries it (0 when it
/// cannot be read).
pub(super) fn mtime_ms(abs: &Path) -> i64 {
    std::fs::metadata(abs).map(|m| crate::index::walk::mtime_ns(&m) / 1_000_000).unwrap_or(0)
}

/// The version of a shared file to publish, as it is on disk now: its bytes, or a tombstone
/// when it is gone, with the version the replica holds; `None` when the replica holds that
/// version already (unless `again` says to publish it anyway).
fn to_publish(
    ix: &Indexing,
    team: &Team,
    collection: &str,
    root: &Path,
    rel: &str,
    again: Again,
) -> Result<Option<(DocMessage, Option<TeamDoc>)>, PublishFailure> {
    let rel = file_of(root, rel);
    let held = catalog::team_doc(&ix.core.stores.catalog.reader(), collection, &rel)
        .map_err(|e| PublishFailure::Unavailable(e.to_string()))?;
    let abs = root.join(&rel);
    let republish = again == Again::EvenIfHeld;
    let op = match std::fs::read(&abs) {
        Ok(bytes) => {
            let hash = crate::digest::sha256_hex(&bytes);
            if !republish && held.as_ref().is_some_and(|h| !h.deleted && h.hash == hash) {
                return Ok(None);
            }
            DocOp::Put { bytes, hash, mtime_ms: mtime_ms(&abs), vectors: None }
        }
        Err(_) => {
            if held.as_ref().is_none() || (!republish && held.as_ref().is_some_and(|h| h.deleted)) {
                return Ok(None);
            }
            DocOp::Delete
        }
    };
    let msg =
        DocMessage { collection: collection.to_string(), rel_path: rel, member: team.settings.member.clone(), op };
    Ok(Some((msg, held)))
}

/// Publishes one version and records it as the replica's. A change made on this disk is the
/// owner's: published whatever the stream holds.
fn publish_one(ix: &Indexing, team: &Team, msg: &DocMessage, held: Option<&TeamDoc>) -> Result<(), PublishFailure> {
    let version = team.publish(msg, None, held)?;
    catalog::set_published_team_doc(&ix.core.stores.catalog.writer(), &msg.collection, &msg.rel_path, &version)
        .map_err(|e| PublishFailure::Unavailable(e.to_string()))
}
