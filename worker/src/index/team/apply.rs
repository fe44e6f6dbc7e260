//! The replica: this member's durable consumer of the team's stream, each message applied
//! through the same indexing path as a file of a folder. Idempotent by stream sequence: a
//! version this replica holds already (or a newer one) is skipped, so a message delivered
//! again after a crash changes nothing.

use super::carry;
use super::subject::{DocMessage, DocOp};
use super::Team;
use crate::config::{CollectionConfig, DEFAULT_PATTERN};
use crate::index::Indexing;
use crate::paths::{contain, RelPath};
use crate::stores::catalog::{self, Origin, TeamDoc};
use crate::stores::vectors::TableKey;
use async_nats::jetstream::{self, consumer::pull, consumer::AckPolicy, consumer::DeliverPolicy};
use futures::{FutureExt, StreamExt};
use std::collections::btree_map::{BTreeMap, Entry};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Messages applied together at most (one keyword commit per collection, one vector append):
/// a member catching up applies what the client holds, in batches this large.
const BATCH: usize = 1024;
/// Messages and bytes the client asks the server for at a time (it asks again at half; the
/// library's default is 200): a member catching up finds a full batch waiting.
const PULL_MESSAGES: usize = 2 * BATCH;
const PULL_BYTES: usize = 64 << 20;
/// Messages delivered and not yet acknowledged the consumer allows (the server's default is
/// 1,000).
const MAX_ACK_PENDING: i64 = 4 * PULL_MESSAGES as i64;
/// Reads of the stream that fail in a row before the consumer is made again.
const MAX_READ_FAILURES: u32 = 5;
/// Quiet time after which the stream is asked whether it holds more than this replica
/// applied (a consumer a server restart left stranded delivers nothing, and says nothing).
const QUIET: Duration = Duration::from_secs(3);

/// A message of the stream, read.
struct Incoming {
    seq: u64,
    kind: Kind,
}

enum Kind {
    /// A document's version; `true` when its bytes came from the team's object store.
    Doc(DocMessage, bool),
    /// A version whose bytes are in the team's object store, to be read from there.
    Stored(DocMessage),
    Member {
        name: String,
        at: String,
    },
    /// Not one of ours, or damaged: acknowledged and left alone (logged).
    Skip,
}

/// Makes the team's stream (if no member has yet) and this member's consumer, then applies
/// what it delivers, for as long as the worker runs; a lost connection is waited out.
pub(super) async fn consume(ix: Arc<Indexing>, team: Arc<Team>, js: jetstream::Context) {
    loop {
        match consume_once(&ix, &team, &js).await {
            Ok(()) => {}
            Err(e) => {
                team.ready.store(false, std::sync::atomic::Ordering::SeqCst);
                // Not following the stream is not catching up: what waits for the end of a
                // catch-up is not held back while the connection is lost.
                team.set_catching_up(false);
                tracing::warn!("team: {e}; trying again");
                team.set_error(Some(e));
                super::publish_status(&ix).await;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn consume_once(ix: &Arc<Indexing>, team: &Arc<Team>, js: &jetstream::Context) -> Result<(), String> {
    let stream = js
        .get_or_create_stream(super::stream_config(&team.settings))
        .await
        .map_err(|e| format!("the team's stream: {e}"))?;
    let durable = format!("member_{}", team.settings.member);
    // The replica's own record of what it applied is the truth: the consumer is made again
    // from there at every start (what a killed worker had been handed but not applied is
    // delivered at once, not after the stream's acknowledgement wait). A new member starts
    // from each document's latest version.
    let applied = catalog::team_applied_seq(&ix.core.stores.catalog.reader()).map_err(|e| e.to_string())?;
    let ack_floor = match stream.consumer_info(&durable).await {
        Ok(info) => Some(info.ack_floor.stream_sequence),
        Err(e) => {
            tracing::debug!("team: no consumer to replace: {e}");
            None
        }
    };
    let deliver_policy = match start_after(applied, ack_floor) {
        0 => DeliverPolicy::LastPerSubject,
        seq => DeliverPolicy::ByStartSequence { start_sequence: seq + 1 },
    };
    if let Err(e) = stream.delete_consumer(&durable).await {
        tracing::debug!("team: no consumer to replace: {e}");
    }
    let consumer: jetstream::consumer::Consumer<pull::Config> = stream
        .create_consumer(pull::Config {
            durable_name: Some(durable.clone()),
            deliver_policy,
            ack_policy: AckPolicy::Explicit,
            ack_wait: Duration::from_secs(30),
            // Above what the client can hold unacknowledged (a batch applying, the next pulls):
            // a consumer that reaches its limit stops delivering until acknowledgements come,
            // and with the last version of each subject nats-server 2.9 then skipped messages.
            max_ack_pending: MAX_ACK_PENDING,
            filter_subject: team.settings.team.all_subjects(),
            ..Default::default()
        })
        .await
        .map_err(|e| format!("this member's consumer: {e}"))?;
    let mut messages = consumer
        .stream()
        .max_messages_per_batch(PULL_MESSAGES)
        .max_bytes_per_batch(PULL_BYTES)
        .messages()
        .await
        .map_err(|e| format!("reading the stream: {e}"))?;
    team.ready.store(true, std::sync::atomic::Ordering::SeqCst);
    team.set_following();
    super::publish_status(ix).await;
    tracing::info!("team: replica following stream {}", team.settings.team.stream());
    let mut failures = 0;
    // The vector table the team's vectors went into since the last compaction.
    let mut to_compact: Option<TableKey> = None;
    // What the stream held past the applied position when the consumer was last quiet.
    let mut behind: Option<u64> = None;
    // When the stream's own last sequence was last asked for.
    let mut looked = Instant::now();
    loop {
        let next = match tokio::time::timeout(QUIET, messages.next()).await {
            Ok(next) => next,
            Err(_) => {
                let applied = catalog::team_applied_seq(&ix.core.stores.catalog.reader()).map_err(|e| e.to_string())?;
                // Behind twice in a row, past what the stream held the first time: stranded
                // (once may be a message on its way).
                if let Some(held) = behind.filter(|held| applied < *held) {
                    return Err(format!(
                        "the consumer delivered nothing while the stream holds up to {held}, applied {applied}"
                    ));
                }
                looked = Instant::now();
                behind = look(ix, team, &stream, &consumer).await.filter(|last| *last > applied);
                continue;
            }
        };
        let first = match next {
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                // A server restarting is ridden out; a consumer or stream that is gone is
                // made again.
                failures += 1;
                tracing::debug!("team: stream read: {e}");
                if failures > MAX_READ_FAILURES {
                    return Err(format!("reading the stream: {e}"));
                }
                continue;
            }
            None => return Err("the stream's messages ended".to_string()),
        };
        failures = 0;
        behind = None;
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match held(&mut messages).await {
                Some(Ok(m)) => batch.push(m),
                _ => break,
            }
        }
        let mut incoming: Vec<Incoming> = Vec::with_capacity(batch.len());
        for m in &batch {
            let mut one = read(team, m);
            if let Kind::Stored(doc) = one.kind {
                // Unread bytes: the consumer is made again from the applied position.
                one.kind = match team.fetch_bytes(doc).await? {
                    Some(doc) => Kind::Doc(doc, true),
                    None => Kind::Skip,
                };
            }
            incoming.push(one);
        }
        let caught_up = batch.last().and_then(|m| m.info().ok()).is_some_and(|i| i.pending == 0);
        let was_catching_up = team.catching_up();
        team.set_catching_up(!caught_up);
        let (ix2, team2) = (Arc::clone(ix), Arc::clone(team));
        let compact_now = to_compact.take();
        let applied = tokio::task::spawn_blocking(move || -> Result<Option<TableKey>, ApplyError> {
            let carried = apply_batch(&ix2, &team2, incoming)?;
            let pending = carried.or(compact_now);
            match pending {
                Some(key) if caught_up => {
                    if let Err(e) = carry::compact(&ix2, &key) {
                        tracing::warn!("team: compacting the vectors taken: {e}");
                    }
                    Ok(None)
                }
                pending => Ok(pending),
            }
        })
        .await
        .map_err(|e| format!("applying panicked: {e}"))?;
        match applied {
            Ok(pending) => {
                to_compact = pending;
                if was_catching_up && caught_up {
                    // What the embedder left for the end of the catch-up (its ANN index).
                    ix.core.events.changes.fire();
                }
            }
            Err(e) => {
                // Not acknowledged: the stream delivers them again.
                tracing::error!("team: applying failed: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        }
        for m in &batch {
            if let Err(e) = m.ack().await {
                tracing::debug!("team: ack: {e}");
            }
        }
        // While messages flow (the members' heartbeats alone leave no quiet period), the
        // stream is still looked at now and then: an acknowledgement the cluster then lost
        // would otherwise keep a lag in the status until the stream's sequence passed it.
        if looked.elapsed() >= QUIET {
            looked = Instant::now();
            look(ix, team, &stream, &consumer).await;
        }
        super::publish_status(ix).await;
    }
}

/// The next message the client holds already, without waiting for the server. Outside tokio's
/// cooperative budget (a task gets ~128 ready polls before it must yield: batches stopped at
/// 127 messages), and once more after a yield, as the stream may have been sending its next
/// pull request.
async fn held<S: futures::Stream + Unpin>(messages: &mut S) -> Option<S::Item> {
    if let Some(next) = tokio::task::unconstrained(messages.next()).now_or_never() {
        return next;
    }
    tokio::task::yield_now().await;
    tokio::task::unconstrained(messages.next()).now_or_never().flatten()
}

/// A look at the stream, every [`QUIET`] period: its own last sequence replaces what
/// deliveries and acknowledgements suggested (a cluster that lost its last messages to killed
/// nodes ends lower than an acknowledgement said), and what this member published and the
/// stream lost is published again. The stream's last sequence, if it answered.
async fn look(
    ix: &Arc<Indexing>,
    team: &Arc<Team>,
    stream: &jetstream::stream::Stream,
    consumer: &jetstream::consumer::PullConsumer,
) -> Option<u64> {
    republish_lost(ix, team, consumer).await;
    match stream.get_info().await {
        Ok(info) => {
            team.set_stream_seq(info.state.last_sequence);
            Some(info.state.last_sequence)
        }
        Err(e) => {
            tracing::debug!("team: stream info: {e}");
            None
        }
    }
}

/// What this member published and the stream lost, published again
/// ([`super::outbox::republish_lost`]): at or below the consumer's acknowledgement floor,
/// every message the stream holds was delivered, so a version published here and not
/// delivered back is not on the stream.
async fn republish_lost(ix: &Arc<Indexing>, team: &Arc<Team>, consumer: &jetstream::consumer::PullConsumer) {
    let floor = match consumer.get_info().await {
        Ok(info) => info.ack_floor.stream_sequence,
        Err(e) => {
            tracing::debug!("team: consumer info: {e}");
            return;
        }
    };
    let (ix2, team2) = (Arc::clone(ix), Arc::clone(team));
    match tokio::task::spawn_blocking(move || super::outbox::republish_lost(&ix2, &team2, floor)).await {
        Ok(Ok(0)) => {}
        Ok(Ok(n)) => {
            tracing::warn!("team: {n} versions the stream lost published again");
            super::publish_status(ix).await;
        }
        Ok(Err(e)) => tracing::warn!("team: publishing again what the stream lost: {e}"),
        Err(e) => tracing::error!("team: publishing again panicked: {e}"),
    }
}

/// The stream sequence this member's consumer is made again after: the replica's applied
/// position, or the old consumer's acknowledgement floor where that is lower. The applied
/// position is the highest sequence applied, not a floor: a message handed over as a server
/// went down is lost on the way and redelivered only after the acknowledgement wait, while
/// the ones after it are applied; a consumer made again after those would never deliver it.
/// The floor is the stream's own record of what was acknowledged without a gap; what lies
/// between it and the applied position and was applied is skipped as held.
fn start_after(applied: u64, ack_floor: Option<u64>) -> u64 {
    ack_floor.map_or(applied, |floor| floor.min(applied))
}

fn read(team: &Team, m: &jetstream::Message) -> Incoming {
    let (seq, pending, published) = match m.info() {
        Ok(info) => (info.stream_sequence, info.pending, info.published),
        Err(_) => return Incoming { seq: 0, kind: Kind::Skip },
    };
    team.saw_stream_seq(seq + pending);
    if let Some(name) = team.settings.team.member_of(m.subject.as_str()) {
        let at = crate::time_fmt::ms_to_iso((published.unix_timestamp_nanos() / 1_000_000) as i64);
        return Incoming { seq, kind: Kind::Member { name: name.to_string(), at } };
    }
    match DocMessage::decode(m.headers.as_ref(), &m.payload) {
        Ok((doc, false)) => Incoming { seq, kind: Kind::Doc(doc, false) },
        Ok((doc, true)) => Incoming { seq, kind: Kind::Stored(doc) },
        Err(e) => {
            tracing::warn!("team: message {seq} left alone: {e}");
            Incoming { seq, kind: Kind::Skip }
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum ApplyError {
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error(transparent)]
    Sync(#[from] crate::index::indexer::SyncError),
    #[error(transparent)]
    Carry(#[from] carry::CarryError),
    #[error("{0}")]
    Io(String),
}

/// Applies a batch under the write lock: each document's file written (or removed) in its
/// collection's folder, the vectors that came with them stored ([`carry::take`]), the files
/// synced (one batch per collection), then the versions and the applied position recorded.
/// A worker killed before the record applies the batch again at its next start: the files
/// hold those bytes already, the syncs find them unchanged. Returns the vector table the
/// team's vectors went into, if any did.
fn apply_batch(ix: &Arc<Indexing>, team: &Team, batch: Vec<Incoming>) -> Result<Option<TableKey>, ApplyError> {
    let started = Instant::now();
    let messages = batch.len();
    let _write = ix.write_lock();
    let locked = started.elapsed();
    // Each collection's folder, found (or its replica made) once per batch.
    let mut folders: BTreeMap<String, Option<(CollectionConfig, PathBuf)>> = BTreeMap::new();
    let mut to_sync: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut versions: Vec<(String, String, TeamDoc)> = Vec::new();
    let mut offers = Vec::new();
    let mut echoes: Vec<(String, String, u64)> = Vec::new();
    // Collections whose folder a file of the batch was written into.
    let mut unsynced: BTreeSet<String> = BTreeSet::new();
    let mut last = 0;
    for m in batch {
        last = last.max(m.seq);
        let (doc, stored) = match m.kind {
            Kind::Skip | Kind::Stored(_) => continue,
            Kind::Member { name, at } => {
                team.saw_member(&name, at);
                continue;
            }
            Kind::Doc(doc, stored) => (doc, stored),
        };
        if let Some(held) = catalog::team_doc(&ix.core.stores.catalog.reader(), &doc.collection, &doc.rel_path)?
            .filter(|held| held.seq >= m.seq)
        {
            // The version this replica published, delivered back: the stream holds it.
            let delivered = doc.version(m.seq, stored);
            if held.seq == m.seq && held.hash == delivered.hash && held.deleted == delivered.deleted {
                echoes.push((doc.collection, doc.rel_path, m.seq));
            }
            continue;
        }
        let folder = match folders.entry(doc.collection.clone()) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(replica_of(ix, &doc.collection)?),
        };
        let Some((_, root)) = folder else { continue };
        if let Some(Applied { rel, version, wrote }) = apply_doc(root, m.seq, &doc, stored)? {
            if wrote {
                unsynced.insert(doc.collection.clone());
            }
            let rels = to_sync.entry(doc.collection.clone()).or_default();
            if !rels.contains(&rel) {
                rels.push(rel.clone());
            }
            versions.push((doc.collection, rel, version));
            if let DocOp::Put { vectors: Some(v), .. } = doc.op {
                offers.push(v);
            }
        }
    }
    // The batch's files on the disk before anything records them (one syncfs per folder
    // written to, not two fsyncs per file).
    for name in &unsynced {
        if let Some(Some((_, root))) = folders.get(name) {
            sync_written(root)?;
        }
    }
    let written = started.elapsed();
    // Counted before the sync: a status that shows the documents shows where their vectors
    // came from.
    let taken = carry::take(ix, offers)?;
    let stored = started.elapsed();
    if let Some(taken) = &taken {
        team.received_vectors(taken.len() as u64);
    }
    for (name, rels) in to_sync {
        if let Some(Some((coll, root))) = folders.get(&name) {
            ix.indexer().sync_files(coll, root, &rels, Origin::Team)?;
        }
    }
    let synced = started.elapsed();
    if let Some(taken) = &taken {
        team.took_back_vectors(carry::check(ix, taken)?);
    }
    let checked = started.elapsed();
    let mut conn = ix.core.stores.catalog.writer();
    let tx = conn.transaction().map_err(catalog::CatalogError::from)?;
    for (collection, rel, version) in &versions {
        catalog::set_team_doc(&tx, collection, rel, version)?;
    }
    for (collection, rel, seq) in &echoes {
        catalog::set_team_doc_echoed(&tx, collection, rel, *seq)?;
    }
    catalog::set_team_applied_seq(&tx, last)?;
    tx.commit().map_err(catalog::CatalogError::from)?;
    let done = started.elapsed();
    tracing::debug!(
        "team: applied {messages} messages ({} documents, {} contents' vectors) up to {last} in {:?}: \
         lock {locked:?}, files {:?}, vectors {:?}, sync {:?}, check {:?}, record {:?}",
        versions.len(),
        taken.as_ref().map_or(0, |t| t.len()),
        done,
        written - locked,
        stored - written,
        synced - stored,
        checked - synced,
        done - checked,
    );
    Ok(taken.map(|t| t.key().clone()))
}

/// A replica's file written: on Linux without its fsyncs, made durable with the rest of the
/// batch ([`sync_written`]); elsewhere fsynced at once.
fn write_replica_file(abs: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if cfg!(target_os = "linux") {
        protocol::write_file_unsynced(abs, bytes, true)
    } else {
        protocol::write_file(abs, bytes, true)
    }
}

/// Makes what a batch wrote under `root` durable before anything records it: on Linux one
/// syncfs of the file system holding it, not two fsyncs per file (elsewhere each file was
/// fsynced as it was written).
fn sync_written(root: &Path) -> Result<(), ApplyError> {
    #[cfg(target_os = "linux")]
    {
        let folder = std::fs::File::open(root).map_err(|e| ApplyError::Io(format!("{}: {e}", root.display())))?;
        rustix::fs::syncfs(&folder).map_err(|e| ApplyError::Io(format!("{}: syncfs: {e}", root.display())))?;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = root;
    Ok(())
}

/// A document's version in its collection's folder.
struct Applied {
    rel: String,
    /// To record once synced.
    version: TeamDoc,
    /// Whether its bytes were written now (not already there, nor a removal).
    wrote: bool,
}

/// One document's version written into its collection's folder `root` (or removed); `None`
/// for a path that is not one.
fn apply_doc(root: &Path, seq: u64, doc: &DocMessage, stored: bool) -> Result<Option<Applied>, ApplyError> {
    let rel = match RelPath::parse(&doc.rel_path, "relPath") {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("team: message {seq}: {}", e.message);
            return Ok(None);
        }
    };
    let abs = match contain(root, &rel) {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!("team: message {seq}: {}", e.message);
            return Ok(None);
        }
    };
    let io = |e: std::io::Error| ApplyError::Io(format!("{}: {}", rel.as_str(), crate::errors::io_kind(&e)));
    let wrote = match &doc.op {
        DocOp::Put { bytes, hash, .. } => {
            let same = std::fs::read(&abs).ok().is_some_and(|b| crate::digest::sha256_hex(&b) == *hash);
            if !same {
                if let Some(parent) = abs.parent() {
                    std::fs::create_dir_all(parent).map_err(io)?;
                }
                write_replica_file(&abs, bytes).map_err(io)?;
            }
            !same
        }
        DocOp::Delete => match std::fs::remove_file(&abs) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => false,
        },
    };
    Ok(Some(Applied { rel: rel.as_str().to_string(), version: doc.version(seq, stored), wrote }))
}

/// The local collection a shared document belongs in: the shared collection of that name,
/// or a replica made for it under the data dir (`<index>/team/<name>`). A local collection of
/// the same name that is not shared takes nothing from the team.
fn replica_of(ix: &Arc<Indexing>, name: &str) -> Result<Option<(CollectionConfig, PathBuf)>, ApplyError> {
    let existing = ix.core.settings.config().find(name).cloned();
    let coll = match existing {
        Some(c) if c.shared => c,
        Some(_) => {
            tracing::warn!(
                "team: collection {name} here is not shared; the team's documents of that name are left out"
            );
            return Ok(None);
        }
        None => {
            let folder = ix.core.settings.dirs.index_dir().join("team").join(name);
            std::fs::create_dir_all(&folder).map_err(|e| ApplyError::Io(format!("{}: {e}", folder.display())))?;
            let folder = folder.canonicalize().map_err(|e| ApplyError::Io(format!("{}: {e}", folder.display())))?;
            let coll = CollectionConfig {
                name: name.to_string(),
                path: folder.display().to_string(),
                pattern: DEFAULT_PATTERN.to_string(),
                include: String::new(),
                exclude: String::new(),
                git_pull: false,
                watch: false,
                lang: None,
                shared: true,
                replica: true,
            };
            {
                let mut cfg = ix.core.settings.config();
                cfg.collections.push(coll.clone());
                if let Err(e) = cfg.save(&ix.core.settings.dirs.config_file()) {
                    cfg.collections.pop();
                    return Err(ApplyError::Io(e.to_string()));
                }
            }
            catalog::upsert_collection(&ix.core.stores.catalog.writer(), &coll.name, &coll.path)?;
            tracing::info!("team: replica of shared collection {name} at {}", coll.path);
            coll
        }
    };
    let root = PathBuf::from(&coll.path)
        .canonicalize()
        .map_err(|e| ApplyError::Io(format!("the folder of collection {name}: {e}")))?;
    Ok(Some((coll, root)))
}

#[cfg(test)]
mod tests {
    use super::start_after;

    #[test]
    fn a_consumer_is_made_again_from_below_any_gap_it_left() {
        // No consumer on the stream (a new member, or one the cluster lost): the replica's
        // own position.
        assert_eq!(start_after(40, None), 40);
        // 31 never arrived, 32..40 were applied and acknowledged: the floor stays at 30.
        assert_eq!(start_after(40, Some(30)), 30);
        // Applied but killed before the acknowledgement: the same floor, so what the replica
        // had applied comes again and is skipped as held.
        assert_eq!(start_after(40, Some(40)), 40);
        // A floor above the replica's record (a catalog restored from a backup): the record.
        assert_eq!(start_after(12, Some(40)), 12);
        assert_eq!(start_after(0, Some(7)), 0);
    }
}
