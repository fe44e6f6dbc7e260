//! The live index: every collection's folder is watched (the `notify` family: inotify,
//! FSEvents, ReadDirectoryChangesW; recursive) from the moment the worker serves, its events
//! debounced into batches, and each batch turned into indexing work on one thread:
//! - the files a batch names are synced together, under the API's write lock, with one
//!   keyword commit (a file whose bytes did not change changes nothing: no journal entry, no
//!   embedding; svc's own writes come back as such events);
//! - a file renamed to a path not indexed yet keeps its document (links and backlinks follow);
//! - a batch the watcher could not follow (an error, an overflow of its queue, a folder that
//!   moved or vanished) reconciles the collection by a scan, as a sync would.
//!
//! At start every watched collection is reconciled by a scan (what changed while svc was
//! stopped), then followed. A folder that cannot be watched, or on a network or FUSE file
//! system whose changes made elsewhere a watch never sees ([`mounts`]), is scanned at an
//! interval instead. Scans run one at a time with the sync jobs' scans
//! ([`crate::index::Indexing::scan_lock`]). Changes found here have the origin `watch`.

use crate::config::CollectionConfig;
use crate::index::convert::{may_split, split_of};
use crate::index::indexer::FileSync;
use crate::index::mounts;
use crate::index::rules::FileMatcher;
use crate::index::rules::{self, Rules};
use crate::index::Indexing;
use crate::stores::catalog::{self, Origin};
use notify_debouncer_full::notify::event::{ModifyKind, RenameMode};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, DebouncedEvent, Debouncer, RecommendedCache};
use protocol::api;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// How old a path's event is before it is handed over (`notify_debouncer_full` keeps each
/// path's events this long, folding repeats of one kind: an editor's truncate-and-write or
/// write-and-rename is one change). Short, so that an edit is searchable (and reaches a
/// team's other members) in about a tenth of a second; a burst of files is not split into
/// more work by it, as the batches that queue up while one is applied are applied together
/// ([`next_work`]).
const DEBOUNCE: Duration = Duration::from_millis(50);
/// How often the debouncer looks for events that are old enough: an event waits between
/// `DEBOUNCE` and `DEBOUNCE + TICK`.
const TICK: Duration = Duration::from_millis(20);
/// A batch naming more files than this is reconciled by one scan instead (a checkout).
const MAX_FILES_PER_BATCH: usize = 512;
/// How often a folder that cannot be watched is scanned (and tried again):
/// `SVC_WATCH_POLL_MS` when set (tests), else this.
const POLL_INTERVAL: Duration = Duration::from_secs(30);

fn poll_interval() -> Duration {
    std::env::var("SVC_WATCH_POLL_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(POLL_INTERVAL, |ms| Duration::from_millis(ms.max(100)))
}

/// What the watching thread does next.
enum Work {
    /// Events of every watched folder, from the one watcher: routed to their collections.
    Batch { result: DebounceEventResult },
    /// Events of one collection's folder.
    Events { collection: String, result: DebounceEventResult },
    /// Reconcile a collection with its folder by a scan.
    Scan { collection: String },
}

type FolderWatch = Debouncer<RecommendedWatcher, RecommendedCache>;

/// How one collection's folder is followed.
enum Follow {
    /// Its root (canonical) is one of the shared watcher's roots.
    Watched { root: PathBuf },
    /// Scanned at each `due`, and watched again when it can be.
    Polled { reason: String, due: Instant },
}

/// The folders followed now, by collection name; the one watcher of them all (one inotify
/// instance and one debounce thread, however many collections: the system's limit on
/// instances is per user and small); and the way to the watching thread. None of it until
/// [`start`]: the CLI's in-process worker does not watch.
#[derive(Default)]
pub struct Watchers {
    folders: Mutex<HashMap<String, Follow>>,
    watcher: Mutex<Option<FolderWatch>>,
    work: Mutex<Option<Sender<Work>>>,
    /// Collections whose indexing failed for a cause outside their files (a full disk, a
    /// catalog error), with when to scan them again.
    retries: Mutex<HashMap<String, Instant>>,
}

/// How long after a failed indexing its collection is scanned again.
const RETRY_AFTER: Duration = Duration::from_secs(5);

impl Watchers {
    /// Asks for a scan of `collection` in [`RETRY_AFTER`] (and again after each scan that
    /// fails): what could not be indexed comes in once the cause is gone, without a restart.
    pub fn retry_later(&self, collection: &str) {
        let mut retries = self.retries.lock().unwrap_or_else(|p| p.into_inner());
        retries.entry(collection.to_string()).or_insert_with(|| Instant::now() + RETRY_AFTER);
    }

    /// Collections whose retry is due, taken off the list.
    fn due_retries(&self) -> Vec<String> {
        let now = Instant::now();
        let mut retries = self.retries.lock().unwrap_or_else(|p| p.into_inner());
        let due: Vec<String> = retries.iter().filter(|(_, at)| **at <= now).map(|(c, _)| c.clone()).collect();
        for c in &due {
            retries.remove(c);
        }
        due
    }

    fn sender(&self) -> Option<Sender<Work>> {
        self.work.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn folders(&self) -> MutexGuard<'_, HashMap<String, Follow>> {
        self.folders.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn watcher(&self) -> MutexGuard<'_, Option<FolderWatch>> {
        self.watcher.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How `collection`'s folder is followed now (`off` when it is not).
    pub fn state(&self, collection: &str) -> api::FolderWatch {
        match self.folders().get(collection) {
            Some(Follow::Watched { .. }) => api::FolderWatch::Watching,
            Some(Follow::Polled { reason, .. }) => {
                api::FolderWatch::Polling { interval_ms: poll_interval().as_millis() as u64, reason: reason.clone() }
            }
            None => api::FolderWatch::Off,
        }
    }

    /// The watched collections and their roots.
    fn roots(&self) -> Vec<(String, PathBuf)> {
        watched(&self.folders()).map(|(name, root)| (name.clone(), root.clone())).collect()
    }

    /// Watches the collections of the config that are not followed yet and stops following
    /// those it no longer lists (or that opted out). With `scan_new`, a collection that starts
    /// being followed is reconciled by a scan (at start; a collection just added is synced by
    /// its own job, whose result must count its files).
    pub fn refresh(&self, collections: &[CollectionConfig], scan_new: bool) {
        let Some(tx) = self.sender() else { return };
        let mut folders = self.folders();
        let gone: Vec<String> =
            folders.keys().filter(|name| !collections.iter().any(|c| c.name == **name && c.watch)).cloned().collect();
        for name in gone {
            if let Some(Follow::Watched { root }) = folders.remove(&name) {
                self.release(&root, &folders);
            }
        }
        for coll in collections.iter().filter(|c| c.watch) {
            if folders.contains_key(&coll.name) {
                continue;
            }
            // Watched first, scanned after: a change while the watch is set up is not lost.
            folders.insert(coll.name.clone(), self.follow(coll));
            if scan_new {
                let _ = tx.send(Work::Scan { collection: coll.name.clone() });
            }
        }
    }

    /// Collections whose poll is due: each is tried again (watched when it can be, else its
    /// next poll is set) and returned, to be scanned.
    fn due(&self, collections: &[CollectionConfig]) -> Vec<CollectionConfig> {
        let now = Instant::now();
        let mut folders = self.folders();
        let mut out = Vec::new();
        for coll in collections {
            if matches!(folders.get(&coll.name), Some(Follow::Polled { due, .. }) if *due <= now) {
                folders.insert(coll.name.clone(), self.follow(coll));
                out.push(coll.clone());
            }
        }
        out
    }

    /// The watched folder of `coll` is gone: it is polled from now on.
    fn lost(&self, coll: &CollectionConfig, reason: String) {
        tracing::warn!("{}: {reason}; scanned every {:?} until it can be watched again", coll.name, poll_interval());
        let mut folders = self.folders();
        let polled = Follow::Polled { reason, due: Instant::now() + poll_interval() };
        if let Some(Follow::Watched { root }) = folders.insert(coll.name.clone(), polled) {
            self.release(&root, &folders);
        }
    }

    /// Watches `coll`'s folder, or polls it with the reason it cannot be watched.
    fn follow(&self, coll: &CollectionConfig) -> Follow {
        match self.watch_root(coll) {
            Ok(root) => Follow::Watched { root },
            Err(reason) => {
                tracing::warn!(
                    "{}: the folder cannot be watched ({reason}); scanned every {:?}",
                    coll.name,
                    poll_interval()
                );
                Follow::Polled { reason, due: Instant::now() + poll_interval() }
            }
        }
    }

    fn watch_root(&self, coll: &CollectionConfig) -> Result<PathBuf, String> {
        let root = Path::new(&coll.path).canonicalize().map_err(|e| e.to_string())?;
        if let Some(kind) = mounts::remote_kind(&root) {
            return Err(format!("on a {kind} file system, which does not report changes made elsewhere"));
        }
        let mut watcher = self.watcher();
        let watcher = watcher.as_mut().ok_or_else(|| "the watcher is not running".to_string())?;
        watcher.watch(&root, RecursiveMode::Recursive).map_err(|e| e.to_string())?;
        Ok(root)
    }

    /// Stops watching `root` unless another collection (of `folders`, which no longer holds
    /// the one let go) watches it too; a collection whose root holds `root` is watched again,
    /// since the watches under `root` were its watches as well.
    fn release(&self, root: &Path, folders: &HashMap<String, Follow>) {
        let still: Vec<&PathBuf> = watched(folders).map(|(_, root)| root).collect();
        if still.iter().any(|r| r.as_path() == root) {
            return;
        }
        let mut watcher = self.watcher();
        let Some(watcher) = watcher.as_mut() else { return };
        // A root that vanished has lost its watches already.
        let _ = watcher.unwatch(root);
        for outer in still.iter().filter(|r| root.starts_with(r)) {
            if let Err(e) = watcher.watch(outer, RecursiveMode::Recursive) {
                tracing::warn!("{}: watched again with an error: {e}", outer.display());
            }
        }
    }
}

/// The collections of `folders` that are watched, with their roots.
fn watched(folders: &HashMap<String, Follow>) -> impl Iterator<Item = (&String, &PathBuf)> {
    folders.iter().filter_map(|(name, f)| match f {
        Follow::Watched { root } => Some((name, root)),
        Follow::Polled { .. } => None,
    })
}

/// Splits a batch of the one watcher into the events of each watched collection: an event
/// belongs to every collection whose root holds one of its paths; an overflow (no path) and a
/// watcher error that names no path belong to all of them.
fn route(batch: DebounceEventResult, roots: &[(String, PathBuf)]) -> Vec<Work> {
    let under = |paths: &[PathBuf], root: &Path| paths.is_empty() || paths.iter().any(|p| p.starts_with(root));
    let mut out = Vec::new();
    for (collection, root) in roots {
        let result = match &batch {
            Ok(events) => {
                let mine: Vec<DebouncedEvent> = events.iter().filter(|e| under(&e.paths, root)).cloned().collect();
                if mine.is_empty() {
                    continue;
                }
                Ok(mine)
            }
            Err(errors) => {
                if !errors.iter().any(|e| under(&e.paths, root)) {
                    continue;
                }
                // The errors are not Clone: each collection gets their text.
                Err(errors
                    .iter()
                    .filter(|e| under(&e.paths, root))
                    .map(|e| notify_debouncer_full::notify::Error::generic(&e.to_string()).set_paths(e.paths.clone()))
                    .collect())
            }
        };
        out.push(Work::Events { collection: collection.clone(), result });
    }
    out
}

/// Starts the watching thread and the one watcher, and watches every collection; they end
/// when the worker is dropped or shuts down.
pub fn start(worker: &Arc<Indexing>) {
    let (tx, rx) = channel();
    let batches = tx.clone();
    let watcher = new_debouncer(DEBOUNCE, Some(TICK), move |result: DebounceEventResult| {
        let _ = batches.send(Work::Batch { result });
    });
    match watcher {
        Ok(w) => *worker.watchers.watcher() = Some(w),
        // Every folder is then polled, with this reason.
        Err(e) => tracing::error!("could not start the folder watcher: {e}"),
    }
    *worker.watchers.work.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    let weak = Arc::downgrade(worker);
    // The folders are followed from the thread: a recursive watch visits every entry of the
    // tree (6 s at a million notes), which the worker's start need not wait for.
    let started = std::thread::Builder::new().name("watcher".into()).spawn(move || {
        if let Some(w) = weak.upgrade() {
            let collections = w.core.settings.config().collections.clone();
            w.watchers.refresh(&collections, true);
        }
        run(&weak, &rx)
    });
    if let Err(e) = started {
        tracing::error!("could not start the watching thread: {e}");
    }
}

fn run(weak: &Weak<Indexing>, rx: &Receiver<Work>) {
    // Work received while batches were being folded together, done next.
    let mut held: Option<Work> = None;
    loop {
        let received = match held.take() {
            Some(work) => Ok(work),
            None => rx.recv_timeout(Duration::from_secs(1)),
        };
        let work = match received {
            Ok(work) => {
                let (work, next) = next_work(work, rx);
                held = next;
                work
            }
            Err(RecvTimeoutError::Timeout) => {
                let Some(w) = weak.upgrade().filter(|w| !w.cancel.load(Ordering::SeqCst)) else { return };
                let collections = w.core.settings.config().collections.clone();
                let due = w.watchers.due(&collections);
                for coll in &due {
                    scan(&w, coll);
                }
                for name in w.watchers.due_retries() {
                    if let Some(coll) = collections.iter().find(|c| c.name == name) {
                        tracing::info!("{name}: scanning again after a failed indexing");
                        scan(&w, coll);
                    }
                }
                if !due.is_empty() {
                    // Watched again, or still polled: /api/status says which.
                    w.core.hooks.publish_status_soon();
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let Some(w) = weak.upgrade() else { return };
        if w.cancel.load(Ordering::SeqCst) {
            return;
        }
        handle(&w, work);
    }
}

/// `first` with every batch of events queued behind it folded in, in order, up to the first
/// work that is not such a batch (returned second, to be done next). While a batch is applied
/// the debouncer goes on handing over a batch per tick; applied together, they are synced with
/// one keyword commit instead of one each.
fn next_work(first: Work, rx: &Receiver<Work>) -> (Work, Option<Work>) {
    let Work::Batch { result: Ok(mut events) } = first else { return (first, None) };
    loop {
        match rx.try_recv() {
            Ok(Work::Batch { result: Ok(more) }) => events.extend(more),
            Ok(other) => return (Work::Batch { result: Ok(events) }, Some(other)),
            Err(_) => return (Work::Batch { result: Ok(events) }, None),
        }
    }
}

/// Does one piece of work of the watching thread.
fn handle(w: &Indexing, work: Work) {
    // `None`: a scan was asked for.
    let (collection, events) = match work {
        Work::Batch { result } => {
            for work in route(result, &w.watchers.roots()) {
                handle(w, work);
            }
            return;
        }
        Work::Events { collection, result } => (collection, Some(result)),
        Work::Scan { collection } => (collection, None),
    };
    // A collection removed since: nothing to do.
    let Some(coll) = w.core.settings.config().find(&collection).cloned() else { return };
    match events {
        None => scan(w, &coll),
        Some(Err(errors)) => {
            let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
            tracing::warn!("{}: the watcher reported {}; reconciling by a scan", coll.name, reasons.join("; "));
            scan(w, &coll);
        }
        Some(Ok(events)) => apply(w, &coll, &events),
    }
}

/// Reconciles `coll` with its folder, as a sync does (one scan at a time).
fn scan(w: &Indexing, coll: &CollectionConfig) {
    let _scan = w.scan_lock();
    match w.indexer().sync_collection(coll, Origin::Watch) {
        Ok(r) if r.files_added + r.files_updated + r.files_deactivated > 0 => {
            tracing::info!(
                "{}: scan found {} added, {} updated, {} removed",
                coll.name,
                r.files_added,
                r.files_updated,
                r.files_deactivated
            );
            w.core.hooks.publish_status_soon();
        }
        Ok(_) => {}
        Err(e) => {
            tracing::warn!("{}: the scan failed: {e}; trying again in {RETRY_AFTER:?}", coll.name);
            w.watchers.retry_later(&coll.name);
        }
    }
}

/// What one batch of events asks for.
#[derive(Debug, Default, PartialEq)]
struct Plan {
    /// Files to sync, relative to the root.
    files: BTreeSet<String>,
    /// Renames of one file to another path (relative), in order.
    renames: Vec<(String, String)>,
    /// Paths gone that name no file of the collection: folders, perhaps, whose files went
    /// with them.
    gone: BTreeSet<String>,
    /// The batch cannot be followed path by path: reconcile by a scan.
    scan: bool,
}

/// Turns a batch into a [`Plan`]: paths the collection's rules leave out ([`rules`]: its
/// globs, ignore files, hidden and never-notes names, cache folders, editors' litter) are
/// dropped before any work. A change to an ignore file or a cache tag changes which files of
/// the folders under it belong: a scan re-evaluates them (newly ignored files leave the index,
/// newly allowed ones come in).
fn plan(rules: &Rules, events: &[DebouncedEvent]) -> Plan {
    let root = rules.root();
    let mut plan = Plan::default();
    let rel = |p: &Path| -> Option<String> {
        let rel = p.strip_prefix(root).ok()?.to_str()?.to_string();
        (!rel.is_empty()).then_some(rel)
    };
    let wanted = |rel: &str| rules.belongs(rel);
    for e in events {
        if e.need_rescan() || e.paths.iter().filter_map(|p| rel(p)).any(|r| rules::is_rule_file(&r)) {
            plan.scan = true;
            continue;
        }
        match e.kind {
            EventKind::Access(_) => {}
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if e.paths.len() == 2 => {
                let (from, to) = (&e.paths[0], &e.paths[1]);
                if to.is_dir() {
                    plan.scan = true;
                    continue;
                }
                match (rel(from), rel(to)) {
                    // A file indexed by its parts: a scan moves them by their contents.
                    (Some(f), Some(t))
                        if wanted(&f) && wanted(&t) && (may_split(&f) || split_of(&t, &root.join(&t)).is_some()) =>
                    {
                        plan.scan = true
                    }
                    (Some(f), Some(t)) if wanted(&f) && wanted(&t) => plan.renames.push((f, t)),
                    (f, t) => {
                        plan.files.extend(f.into_iter().chain(t).filter(|r| wanted(r)));
                    }
                }
            }
            _ => {
                for p in &e.paths {
                    if p.is_dir() || p == root {
                        // A folder created, moved in or changed as a whole: its files are
                        // found by a scan.
                        if matches!(e.kind, EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_))) {
                            plan.scan = true;
                        }
                        continue;
                    }
                    match rel(p) {
                        Some(r) if wanted(&r) => {
                            plan.files.insert(r);
                        }
                        Some(r) if !p.exists() && !rules::is_litter(&r) => {
                            plan.gone.insert(r);
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    if plan.files.len() + plan.renames.len() > MAX_FILES_PER_BATCH {
        plan.scan = true;
    }
    plan
}

fn apply(w: &Indexing, coll: &CollectionConfig, events: &[DebouncedEvent]) {
    let Ok(root) = Path::new(&coll.path).canonicalize() else {
        // The root vanished: polled until it is back (its documents stay until then: a
        // folder unmounted for a while is not a folder whose notes were deleted).
        w.watchers.lost(coll, format!("the folder {} is gone", coll.path));
        w.core.hooks.publish_status_soon();
        return;
    };
    let Ok(matcher) = FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude) else { return };
    let plan = plan(&Rules::new(&root, matcher), events);
    if plan.scan || needs_scan(w, coll, &plan) {
        scan(w, coll);
        return;
    }
    let write = w.write_lock();
    let ix = w.indexer();
    let mut changed = false;
    for (from, to) in &plan.renames {
        let known =
            catalog::file_state(&w.core.stores.catalog.reader(), &coll.name, from).ok().flatten().filter(|s| s.active);
        let taken = catalog::file_state(&w.core.stores.catalog.reader(), &coll.name, to)
            .ok()
            .flatten()
            .is_some_and(|s| s.active);
        let renamed = match known {
            Some(state) if !taken => ix.rename_doc(coll, &root, state.id, to, Origin::Watch).map(|()| true),
            _ => Ok(false),
        };
        match renamed {
            Ok(true) => changed = true,
            Ok(false) => {
                for rel in [from, to] {
                    changed |= sync(w, coll, &root, rel);
                }
            }
            Err(e) => tracing::warn!("{}: {from} → {to}: {e}", coll.name),
        }
    }
    let files: Vec<String> = plan.files.into_iter().collect();
    match ix.sync_files(coll, &root, &files, Origin::Watch) {
        Ok(synced) => changed |= synced,
        Err(e) => {
            tracing::warn!("{}: {e}; the collection is scanned again in {RETRY_AFTER:?}", coll.name);
            w.watchers.retry_later(&coll.name);
        }
    }
    // The status is counted after the lock is let go: at 50,000 notes its counts take a
    // fifth of a second, which a team's outbox (waiting for the lock to publish this very
    // change) and the API's writes would otherwise wait out.
    drop(write);
    if changed {
        w.core.hooks.publish_status_soon();
    }
}

/// Whether a path of the plan that is gone named a folder with indexed files under it.
fn needs_scan(w: &Indexing, coll: &CollectionConfig, plan: &Plan) -> bool {
    let root = Path::new(&coll.path);
    let conn = w.core.stores.catalog.reader();
    plan.gone
        .iter()
        .chain(plan.files.iter().filter(|r| !root.join(r).exists()))
        .any(|g| catalog::has_active_under(&conn, &coll.name, g).unwrap_or(true))
}

/// Syncs one file; whether the index changed.
fn sync(w: &Indexing, coll: &CollectionConfig, root: &Path, rel: &str) -> bool {
    match w.indexer().sync_file(coll, root, rel, Origin::Watch) {
        Ok(FileSync::Indexed) | Ok(FileSync::Removed) => true,
        Ok(FileSync::Unchanged) => false,
        Ok(FileSync::Failed) => {
            tracing::debug!("{}: {rel} could not be read", coll.name);
            false
        }
        Err(e) => {
            tracing::warn!("{}: {rel}: {e}; the collection is scanned again in {RETRY_AFTER:?}", coll.name);
            w.watchers.retry_later(&coll.name);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Paths of a collection's folder.
    fn paths(root: &Path, rels: &[&str]) -> Vec<PathBuf> {
        rels.iter().map(|r| root.join(r)).collect()
    }
    use notify_debouncer_full::notify::event::{CreateKind, DataChange, Flag, RemoveKind};
    use notify_debouncer_full::notify::Event;
    use std::time::Instant;

    fn event(kind: EventKind, paths: Vec<PathBuf>) -> DebouncedEvent {
        DebouncedEvent::new(Event { kind, paths, attrs: Default::default() }, Instant::now())
    }

    #[test]
    fn batches_queued_behind_one_are_folded_into_it_until_other_work() {
        let root = Path::new("/notes");
        let modify = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let batch = |rels: &[&str]| Work::Batch { result: Ok(vec![event(modify, paths(root, rels))]) };
        let files = |work: &Work| -> Vec<PathBuf> {
            match work {
                Work::Batch { result: Ok(events) } => events.iter().flat_map(|e| e.paths.clone()).collect(),
                _ => panic!("not a batch of events"),
            }
        };
        let (tx, rx) = channel();
        for work in
            [batch(&["b.md"]), batch(&["c.md", "d.md"]), Work::Scan { collection: "notes".into() }, batch(&["e.md"])]
        {
            tx.send(work).unwrap();
        }
        let (work, held) = next_work(batch(&["a.md"]), &rx);
        assert_eq!(files(&work), paths(root, &["a.md", "b.md", "c.md", "d.md"]), "in the order they came");
        assert!(matches!(held, Some(Work::Scan { ref collection }) if collection == "notes"), "the scan is done next");
        let (work, held) = next_work(rx.recv().unwrap(), &rx);
        assert_eq!(files(&work), paths(root, &["e.md"]));
        assert!(held.is_none());
        // A scan is never folded with what follows it, nor a batch of errors.
        tx.send(batch(&["f.md"])).unwrap();
        let (work, held) = next_work(Work::Scan { collection: "notes".into() }, &rx);
        assert!(matches!(work, Work::Scan { .. }) && held.is_none());
        let (work, held) = next_work(Work::Batch { result: Err(vec![]) }, &rx);
        assert!(matches!(work, Work::Batch { result: Err(_) }) && held.is_none());
        assert_eq!(files(&rx.recv().unwrap()), paths(root, &["f.md"]));
    }

    #[test]
    fn a_batch_becomes_files_renames_or_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        let r = Rules::new(root, FileMatcher::new("**/*.md", "**/*.md", "drafts/**").unwrap());
        let modify = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let events = vec![
            event(modify, paths(root, &["a.md"])),
            event(modify, paths(root, &["a.md"])),
            event(EventKind::Create(CreateKind::File), paths(root, &["b.md", "x.txt", ".#a.md", "drafts/c.md"])),
            event(EventKind::Modify(ModifyKind::Name(RenameMode::Both)), paths(root, &["old.md", "new.md"])),
            event(EventKind::Access(notify_debouncer_full::notify::event::AccessKind::Any), paths(root, &["z.md"])),
        ];
        let p = plan(&r, &events);
        assert_eq!(p.files.iter().map(String::as_str).collect::<Vec<_>>(), vec!["a.md", "b.md"]);
        assert_eq!(p.renames, vec![("old.md".to_string(), "new.md".to_string())]);
        assert!(!p.scan);
        // A folder moved in, an overflow: a scan.
        assert!(plan(&r, &[event(EventKind::Create(CreateKind::Folder), paths(root, &["sub"]))]).scan);
        let overflow = event(EventKind::Other, vec![]);
        let mut overflow = overflow;
        overflow.event.attrs.set_flag(Flag::Rescan);
        assert!(plan(&r, &[overflow]).scan);
        // An ignore file or a cache tag edited: which files belong may have changed.
        for rule_file in ["sub/.gitignore", ".svcignore", "sub/CACHEDIR.TAG"] {
            assert!(plan(&r, &[event(modify, paths(root, &[rule_file]))]).scan, "{rule_file}");
        }
        // Something removed that matches no pattern: perhaps a folder, checked against the index.
        let p = plan(&r, &[event(EventKind::Remove(RemoveKind::Any), paths(root, &["gone"]))]);
        assert!(p.files.is_empty());
        assert_eq!(p.gone.iter().map(String::as_str).collect::<Vec<_>>(), vec!["gone"]);
    }

    #[test]
    fn the_one_watchers_batch_goes_to_each_collection_whose_root_holds_a_path() {
        let roots = vec![
            ("notes".to_string(), PathBuf::from("/n")),
            ("inner".to_string(), PathBuf::from("/n/sub")),
            ("other".to_string(), PathBuf::from("/o")),
        ];
        let modify = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let batch = vec![
            event(modify, vec![PathBuf::from("/n/a.md")]),
            event(modify, vec![PathBuf::from("/n/sub/b.md")]),
            event(modify, vec![PathBuf::from("/nx/c.md")]),
        ];
        let got: Vec<(String, usize)> = route(Ok(batch), &roots)
            .into_iter()
            .map(|w| match w {
                Work::Events { collection, result: Ok(events) } => (collection, events.len()),
                _ => panic!("not a batch of events"),
            })
            .collect();
        let mut got = got;
        got.sort();
        assert_eq!(got, vec![("inner".to_string(), 1), ("notes".to_string(), 2)], "/nx is not under /n");
        // An overflow names no path: every collection reconciles.
        let mut overflow = event(EventKind::Other, vec![]);
        overflow.event.attrs.set_flag(Flag::Rescan);
        assert_eq!(route(Ok(vec![overflow]), &roots).len(), 3);
        let error = notify_debouncer_full::notify::Error::generic("boom").add_path(PathBuf::from("/o/x.md"));
        let routed = route(Err(vec![error]), &roots);
        assert!(matches!(&routed[..], [Work::Events { collection, result: Err(_) }] if collection == "other"));
    }

    /// A worker with one collection over a fresh folder holding `a.md`, synced.
    fn worker_with_folder(dir: &Path) -> (Arc<Indexing>, CollectionConfig) {
        let notes = dir.join("notes");
        std::fs::create_dir(&notes).unwrap();
        std::fs::write(notes.join("a.md"), "# A\n\nfirst\n").unwrap();
        let w = Arc::clone(&crate::test_worker(&dir.join("svc")).indexing);
        let coll = CollectionConfig {
            name: "notes".into(),
            path: notes.canonicalize().unwrap().display().to_string(),
            pattern: "**/*.md".into(),
            include: String::new(),
            exclude: String::new(),
            git_pull: false,
            watch: true,
            lang: None,
            shared: false,
            replica: false,
        };
        w.core.settings.config().collections.push(coll.clone());
        catalog::upsert_collection(&w.core.stores.catalog.writer(), &coll.name, &coll.path).unwrap();
        handle(&w, Work::Scan { collection: coll.name.clone() });
        (w, coll)
    }

    fn indexed(w: &Indexing) -> Vec<String> {
        let mut rels: Vec<String> = catalog::file_states(&w.core.stores.catalog.reader(), "notes")
            .unwrap()
            .into_iter()
            .filter(|(_, s)| s.active)
            .map(|(r, _)| r)
            .collect();
        rels.sort();
        rels
    }

    #[test]
    fn an_overflow_or_a_watcher_error_reconciles_the_collection_by_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let (w, coll) = worker_with_folder(dir.path());
        assert_eq!(indexed(&w), ["a.md"]);
        let root = Path::new(&coll.path);
        // Changes the watcher lost: no event names them.
        std::fs::write(root.join("b.md"), "# B\n").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/c.md"), "# C\n").unwrap();
        let mut overflow = event(EventKind::Other, vec![]);
        overflow.event.attrs.set_flag(Flag::Rescan);
        handle(&w, Work::Events { collection: "notes".into(), result: Ok(vec![overflow]) });
        assert_eq!(indexed(&w), ["a.md", "b.md", "sub/c.md"]);

        std::fs::remove_file(root.join("a.md")).unwrap();
        let error = notify_debouncer_full::notify::Error::generic("inotify queue overflow");
        handle(&w, Work::Events { collection: "notes".into(), result: Err(vec![error]) });
        assert_eq!(indexed(&w), ["b.md", "sub/c.md"]);
    }

    #[test]
    fn a_removed_folder_with_indexed_files_is_reconciled_by_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let (w, coll) = worker_with_folder(dir.path());
        let root = Path::new(&coll.path);
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/c.md"), "# C\n").unwrap();
        handle(&w, Work::Scan { collection: "notes".into() });
        assert_eq!(indexed(&w), ["a.md", "sub/c.md"]);
        std::fs::remove_dir_all(root.join("sub")).unwrap();
        // inotify names the folder only.
        let gone = event(EventKind::Remove(RemoveKind::Folder), paths(root, &["sub"]));
        handle(&w, Work::Events { collection: "notes".into(), result: Ok(vec![gone]) });
        assert_eq!(indexed(&w), ["a.md"]);
    }
}
