//! The sync of a collection (walk, skip what is unchanged, read and parse what changed, write
//! in batches, deactivate what vanished) and of one file (after an API write, a watcher's
//! event, an OCR reading).

use crate::config::CollectionConfig;
use crate::index::rules::FileMatcher;
use crate::index::rules::Rules;
use crate::index::walk::{self, FoundFile, WalkItem};
use crate::stores::catalog::{self, FileState, Origin};
use crate::stores::DocKey;
use crate::{index::convert, time_fmt};
use protocol::api::CollectionSyncResult;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::indexer::{FileSync, Indexer, SyncError};
use super::lanes;
use super::reading::{
    found_file, over_size_limit, parts_by_file, read_and_parse, read_and_parse_parts, unchanged_parts, FileOutcome,
    Parsed, Pictures,
};
use super::writer::{BatchOutcome, ChangedDoc, Touch};
use crate::stores::catalog::Absorbed;
use convert::Split;
use protocol::source_kind::{source_kind, SourceKind};

/// How a file one sync reads is indexed.
enum Shape {
    /// As one document.
    Whole,
    /// A document per record (a mailbox, a file of records).
    Parts(Split),
    /// Its parts leave: the file is gone, or no longer split (a page that was a bookmark
    /// export); what is left of it is read whole.
    PartsLeaving,
}

/// Files parsed and written per catalog transaction.
const BATCH: usize = 256;

impl Indexer<'_> {
    /// Syncs one collection (its changes journaled with `origin`: a sync's, or the watcher's).
    /// BM25 changes are committed before returning.
    pub fn sync_collection(&self, coll: &CollectionConfig, origin: Origin) -> Result<CollectionSyncResult, SyncError> {
        let started = Instant::now();
        let mut res = CollectionSyncResult { collection: coll.name.clone(), ..Default::default() };
        let root = Path::new(&coll.path)
            .canonicalize()
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| SyncError::RootMissing(coll.path.clone()))?;
        let matcher = FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude)?;
        let known = catalog::file_states(&self.catalog.reader(), &coll.name)?;
        let parts_of = parts_by_file(&known);
        // Paths still indexed: what the walk found, and each part a file still holds.
        let mut seen: HashSet<String> = HashSet::with_capacity(known.len());
        // A file that stays as it was indexed keeps its parts.
        let keep = |seen: &mut HashSet<String>, file: &str| {
            seen.insert(file.to_string());
            seen.extend(parts_of.get(file).into_iter().flatten().map(|r| r.to_string()));
        };
        // Files indexed by their parts that the walk found: their parts never vanished.
        let mut split_files: HashSet<String> = HashSet::new();
        let mut to_parse: Vec<(FoundFile, SourceKind, Option<Split>)> = Vec::new();

        for item in walk::walk(&Rules::new(&root, matcher)) {
            let file = match item {
                WalkItem::File(f) => f,
                WalkItem::Error { rel, reason } => {
                    tracing::debug!("{}: {rel} {reason}", coll.name);
                    res.files_processed += 1;
                    res.files_errored += 1;
                    res.problem(&rel, reason);
                    continue;
                }
            };
            res.files_processed += 1;
            let split = convert::split_of(&file.rel, &file.abs);
            if split.is_some() {
                split_files.insert(file.rel.clone());
            } else {
                seen.insert(file.rel.clone());
            }
            let Some(kind) = source_kind(&file.rel) else {
                res.files_skipped += 1;
                continue;
            };
            if let Some(over) = over_size_limit(file.size) {
                res.files_skipped += 1;
                res.problem(&file.rel, format!("skipped: {over}"));
                keep(&mut seen, &file.rel);
                continue;
            }
            // Documents, like the rest of the report: a split file counts its active parts.
            let unchanged_docs = if split.is_some() {
                // A document of the whole file (from before it was split, or left by a sync
                // that stopped halfway) is taken out by reading the file again.
                let whole = known.get(&file.rel).is_some_and(|p| p.active && p.part_of.is_none());
                let parts = parts_of.get(file.rel.as_str()).map_or(&[][..], Vec::as_slice);
                if whole {
                    None
                } else {
                    unchanged_parts(&known, parts, file.mtime_ns)
                }
            } else {
                known
                    .get(&file.rel)
                    .is_some_and(|p| p.active && p.size == file.size && p.mtime_ns == file.mtime_ns)
                    .then_some(1)
            };
            if let Some(docs) = unchanged_docs {
                res.files_unchanged += docs;
                keep(&mut seen, &file.rel);
            } else {
                to_parse.push((file, kind, split));
            }
        }

        // Active documents whose file is gone, by content: a new file with the same bytes is
        // the same document under a new path.
        let mut vanished_by_hash: std::collections::HashMap<&str, &FileState> = known
            .iter()
            .filter(|(rel, st)| st.active && !seen.contains(*rel))
            .filter(|(_, st)| !st.part_of.as_ref().is_some_and(|f| split_files.contains(f)))
            .map(|(_, st)| (st.source_hash.as_str(), st))
            .collect();
        let mut renamed: HashSet<DocKey> = HashSet::new();
        let mut absorbed: Vec<Absorbed> = Vec::new();
        let mut changed: Vec<ChangedDoc> = Vec::new();
        let mut pending = to_parse.into_iter().peekable();
        while pending.peek().is_some() {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(SyncError::Cancelled);
            }
            let mut parsed: Vec<Box<Parsed>> = Vec::with_capacity(BATCH);
            let mut touched: Vec<Touch> = Vec::new();
            // The batch's files are read and parsed in two lanes (each alone: its bytes, its
            // text, its parse), then taken in order.
            let batch: Vec<(FoundFile, SourceKind, Option<Split>)> = pending.by_ref().take(BATCH).collect();
            let read = |(file, kind, split): &(FoundFile, SourceKind, Option<Split>)| {
                if let Some(split) = split {
                    let parts = parts_of.get(file.rel.as_str()).map_or(&[][..], Vec::as_slice);
                    read_and_parse_parts(file, *split, &known, parts)
                } else {
                    let prev = known.get(&file.rel);
                    let pictures = Pictures { readings: self.pictures, collection: &coll.name };
                    Ok(vec![(file.rel.clone(), read_and_parse(file.clone(), prev, *kind, pictures))])
                }
            };
            for ((file, _, _), outcomes) in batch.iter().zip(lanes::map(&batch, read)) {
                let outcomes = outcomes.unwrap_or_else(|reason| {
                    keep(&mut seen, &file.rel);
                    vec![(file.rel.clone(), FileOutcome::Failed(reason))]
                });
                for (rel, outcome) in outcomes {
                    // A part that failed keeps its previous version, like a file.
                    seen.insert(rel.clone());
                    match (outcome, known.get(&rel)) {
                        (FileOutcome::Parsed(mut p), _) => {
                            if p.previous.is_none() {
                                if let Some(old) = vanished_by_hash.remove(p.source_hash.as_str()) {
                                    renamed.insert(old.id);
                                    p.renamed_from = Some(old.clone());
                                }
                            }
                            parsed.push(p)
                        }
                        (FileOutcome::SameBytes(file), Some(p)) => {
                            if p.active {
                                res.files_unchanged += 1;
                            } else {
                                res.files_updated += 1;
                            }
                            touched.push(Touch { state: p.clone(), mtime_ns: file.mtime_ns });
                        }
                        (FileOutcome::Failed(reason), _) => {
                            res.files_errored += 1;
                            res.problem(&rel, reason);
                        }
                        (FileOutcome::SameBytes(_), None) => res.files_errored += 1,
                    }
                }
            }
            let out = self.apply_batch(&coll.name, &parsed, &touched, origin)?;
            res.files_added += out.added;
            res.files_updated += out.updated;
            absorbed.extend(out.absorbed);
            changed.extend(out.written);
        }

        // Files that vanished (or stopped matching) leave the index; their rows stay.
        let vanished: Vec<DocKey> = known
            .iter()
            .filter(|(rel, st)| st.active && !seen.contains(*rel) && !renamed.contains(&st.id))
            .map(|(_, st)| st.id)
            .collect();
        if !vanished.is_empty() {
            for gone in self.deactivate(&coll.name, &vanished, origin)? {
                absorbed.push(Absorbed::left(gone.version));
                changed.push(ChangedDoc::left(gone));
            }
            res.files_deactivated = vanished.len() as u64;
        }
        self.finish(&coll.name, &absorbed, &changed, origin)?;
        // Reactivated rows (bytes unchanged) are fed from the catalog.
        self.converge_rows(changed.iter().map(|d| d.id))?;
        catalog::mark_synced(&self.catalog.writer(), &coll.name, &time_fmt::now_iso())?;
        res.duration_ms = started.elapsed().as_millis() as u64;
        Ok(res)
    }

    /// Syncs one file of a collection (after an API write): no walk, no rescan.
    pub fn sync_file(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rel: &str,
        origin: Origin,
    ) -> Result<FileSync, SyncError> {
        let shape = self.shape(coll, root, rel)?;
        self.sync_shaped(coll, root, rel, shape, origin)
    }

    /// Syncs one file as `shape` says.
    fn sync_shaped(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rel: &str,
        shape: Shape,
        origin: Origin,
    ) -> Result<FileSync, SyncError> {
        match shape {
            Shape::Whole => self.sync_whole(coll, root, rel, origin),
            Shape::Parts(split) => self.sync_parts(coll, root, rel, Some(split), origin),
            Shape::PartsLeaving => self.sync_parts(coll, root, rel, None, origin),
        }
    }

    /// How a file is synced now ([`Shape`]).
    fn shape(&self, coll: &CollectionConfig, root: &Path, rel: &str) -> Result<Shape, SyncError> {
        if let Some(split) = convert::split_of(rel, &root.join(rel)) {
            return Ok(Shape::Parts(split));
        }
        if convert::may_split(rel) && !catalog::part_states(&self.catalog.reader(), &coll.name, rel)?.is_empty() {
            return Ok(Shape::PartsLeaving);
        }
        Ok(Shape::Whole)
    }

    /// Syncs one file read as one document.
    fn sync_whole(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rel: &str,
        origin: Origin,
    ) -> Result<FileSync, SyncError> {
        let (prev, outcome) = self.read_file(coll, root, rel)?;
        let Some(outcome) = outcome else {
            if let Some(p) = prev.filter(|p| p.active) {
                self.deactivate_now(&coll.name, &[p.id], origin)?;
            }
            return Ok(FileSync::Removed);
        };
        match outcome {
            FileOutcome::Parsed(p) => {
                let out = self.apply_batch(&coll.name, &[p], &[], origin)?;
                self.finish(&coll.name, &out.absorbed, &out.written, origin)?;
                Ok(FileSync::Indexed)
            }
            FileOutcome::SameBytes(file) => {
                let Some(state) = prev else { return Ok(FileSync::Failed) };
                let reactivate = !state.active;
                let out = self.apply_batch(&coll.name, &[], &[Touch { state, mtime_ns: file.mtime_ns }], origin)?;
                if reactivate {
                    self.converge_rows(out.written.iter().map(|d| d.id))?;
                    for doc in &out.written {
                        self.announce(&coll.name, doc, origin);
                    }
                    return Ok(FileSync::Indexed);
                }
                Ok(FileSync::Unchanged)
            }
            FileOutcome::Failed(reason) => {
                tracing::debug!("{}: {rel} {reason}", coll.name);
                Ok(FileSync::Failed)
            }
        }
    }

    /// Syncs the files a watched batch names, together: each read and parsed as
    /// [`Self::sync_file`] would, written [`BATCH`] at a time, the files gone taken out, and
    /// the keyword index committed once for them all (a burst of new files is not a commit per
    /// file). A file indexed by its parts is synced alone. Whether the index changed.
    pub fn sync_files(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rels: &[String],
        origin: Origin,
    ) -> Result<bool, SyncError> {
        let mut changed_parts = false;
        let mut absorbed: Vec<Absorbed> = Vec::new();
        let mut changed: Vec<ChangedDoc> = Vec::new();
        let mut gone: Vec<DocKey> = Vec::new();
        let mut reactivated = false;
        for chunk in rels.chunks(BATCH) {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(SyncError::Cancelled);
            }
            let (mut parsed, mut touched) = (Vec::new(), Vec::new());
            let mut whole: Vec<&String> = Vec::with_capacity(chunk.len());
            for rel in chunk {
                let shape = self.shape(coll, root, rel)?;
                if !matches!(shape, Shape::Whole) {
                    // A file indexed by its parts is synced alone.
                    let synced = self.sync_shaped(coll, root, rel, shape, origin)?;
                    changed_parts |= matches!(synced, FileSync::Indexed | FileSync::Removed);
                    continue;
                }
                whole.push(rel);
            }
            // Read and parsed in two lanes (each file alone), then taken in order: a team's
            // replica catching up syncs batches of a thousand files this way.
            let reads = lanes::map(&whole, |rel| self.read_file(coll, root, rel));
            for (rel, read) in whole.into_iter().zip(reads) {
                let (prev, outcome) = read?;
                match outcome {
                    None => gone.extend(prev.filter(|p| p.active).map(|p| p.id)),
                    Some(FileOutcome::Parsed(p)) => parsed.push(p),
                    Some(FileOutcome::SameBytes(file)) => {
                        if let Some(state) = prev {
                            touched.push(Touch { state, mtime_ns: file.mtime_ns });
                        }
                    }
                    Some(FileOutcome::Failed(reason)) => tracing::debug!("{}: {rel} {reason}", coll.name),
                }
            }
            if parsed.is_empty() && touched.is_empty() {
                continue;
            }
            reactivated |= touched.iter().any(|t| !t.state.active);
            let out = self.apply_batch(&coll.name, &parsed, &touched, origin)?;
            absorbed.extend(out.absorbed);
            changed.extend(out.written);
        }
        if !gone.is_empty() {
            for left in self.deactivate(&coll.name, &gone, origin)? {
                absorbed.push(Absorbed::left(left.version));
                changed.push(ChangedDoc::left(left));
            }
        }
        self.finish(&coll.name, &absorbed, &changed, origin)?;
        // Reactivated rows (bytes unchanged) are fed from the catalog. Only then: a watched
        // batch of untouched files must not feed what a sync running meanwhile has written
        // and not yet committed (a first index was a third slower, committing every batch).
        if reactivated {
            self.converge_rows(changed.iter().map(|d| d.id))?;
            if absorbed.is_empty() {
                // Only reactivations: `finish` had nothing to commit, and announced nothing.
                for doc in &changed {
                    self.announce(&coll.name, doc, origin);
                }
            }
        }
        Ok(changed_parts || !changed.is_empty())
    }

    /// One file of a collection as it stands: its catalog state, and what reading it gave
    /// (`None`: it is gone, or of no kind svc reads).
    fn read_file(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rel: &str,
    ) -> Result<(Option<FileState>, Option<FileOutcome>), SyncError> {
        let prev = catalog::file_state(&self.catalog.reader(), &coll.name, rel)?;
        let (Some(file), Some(kind)) = (found_file(root, rel), source_kind(rel)) else { return Ok((prev, None)) };
        let pictures = Pictures { readings: self.pictures, collection: &coll.name };
        let outcome = read_and_parse(file, prev.as_ref(), kind, pictures);
        Ok((prev, Some(outcome)))
    }

    /// Syncs one file indexed by its parts (a mailbox, a file of records): each part created,
    /// changed or reactivated, and the parts the file no longer holds (and a document of the
    /// whole file from before it was split) taken out. A file gone takes all its parts out; a
    /// file no longer split (`split` is `None`) too, and is then synced whole.
    fn sync_parts(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rel: &str,
        split: Option<Split>,
        origin: Origin,
    ) -> Result<FileSync, SyncError> {
        let (known, whole) = {
            let conn = self.catalog.reader();
            (catalog::part_states(&conn, &coll.name, rel)?, catalog::file_state(&conn, &coll.name, rel)?)
        };
        let found = found_file(root, rel);
        let whole = whole.filter(|s| s.active && s.part_of.is_none()).map(|s| s.id);
        let Some(file) = found else {
            let ids: Vec<DocKey> = known.values().filter(|s| s.active).map(|s| s.id).chain(whole).collect();
            if !ids.is_empty() {
                self.deactivate_now(&coll.name, &ids, origin)?;
            }
            return Ok(FileSync::Removed);
        };
        let Some(split) = split else {
            let ids: Vec<DocKey> = known.values().filter(|s| s.active).map(|s| s.id).collect();
            if !ids.is_empty() {
                self.deactivate_now(&coll.name, &ids, origin)?;
            }
            return self.sync_whole(coll, root, rel, origin);
        };
        let parts: Vec<&str> = known.keys().map(String::as_str).collect();
        let outcomes = match read_and_parse_parts(&file, split, &known, &parts) {
            Ok(outcomes) => outcomes,
            Err(reason) => {
                tracing::debug!("{}: {rel} {reason}", coll.name);
                return Ok(FileSync::Failed);
            }
        };
        let (mut parsed, mut touched, mut held) = (Vec::new(), Vec::new(), HashSet::new());
        for (part, outcome) in outcomes {
            match (outcome, known.get(&part)) {
                (FileOutcome::Parsed(p), _) => parsed.push(p),
                (FileOutcome::SameBytes(f), Some(state)) => {
                    touched.push(Touch { state: state.clone(), mtime_ns: f.mtime_ns })
                }
                (FileOutcome::SameBytes(_), None) => {}
                (FileOutcome::Failed(reason), _) => tracing::debug!("{}: {part} {reason}", coll.name),
            }
            // A part that failed keeps its previous version, like a file.
            held.insert(part);
        }
        let gone: Vec<DocKey> = known
            .iter()
            .filter(|(part, s)| s.active && !held.contains(*part))
            .map(|(_, s)| s.id)
            .chain(whole)
            .collect();
        let reactivated = touched.iter().any(|t| !t.state.active);
        let out = if parsed.is_empty() && touched.is_empty() {
            BatchOutcome::default()
        } else {
            self.apply_batch(&coll.name, &parsed, &touched, origin)?
        };
        let (mut absorbed, mut changed) = (out.absorbed, out.written);
        if !gone.is_empty() {
            for left in self.deactivate(&coll.name, &gone, origin)? {
                absorbed.push(Absorbed::left(left.version));
                changed.push(ChangedDoc::left(left));
            }
        }
        // Committed and marked, then announced once, reactivated parts included.
        self.finish(&coll.name, &absorbed, &[], origin)?;
        if reactivated {
            self.converge_rows(changed.iter().map(|d| d.id))?;
        }
        for doc in &changed {
            self.announce(&coll.name, doc, origin);
        }
        Ok(if changed.is_empty() { FileSync::Unchanged } else { FileSync::Indexed })
    }
}

#[cfg(test)]
mod tests {
    use crate::index::keyword_refeed::backlog;
    use crate::stores::catalog::{self, Origin};
    use crate::test_hits as hits;
    use std::path::Path;

    #[test]
    fn a_watched_batch_is_synced_together_and_leaves_other_pending_rows_alone() {
        let dir = tempfile::tempdir().unwrap();
        let w = crate::test_worker_with_notes(dir.path(), &[("a.md", "# A\n\nalpha\n"), ("b.md", "# B\n\nbravo\n")]);
        let notes = dir.path().join("notes");
        let ix = &w.indexing;
        let coll = ix.core.settings.config().find("n").cloned().unwrap();
        let sync = |rels: &[&str]| {
            let rels: Vec<String> = rels.iter().map(|r| r.to_string()).collect();
            ix.indexer().sync_files(&coll, Path::new(&coll.path), &rels, Origin::Watch).unwrap()
        };

        // New files, a changed one and a removed one, in one batch.
        std::fs::write(notes.join("a.md"), "# A\n\nalpha charlie\n").unwrap();
        std::fs::remove_file(notes.join("b.md")).unwrap();
        std::fs::write(notes.join("c.md"), "# C\n\ncharlie\n").unwrap();
        std::fs::write(notes.join("d.md"), "# D\n\ncharlie\n").unwrap();
        assert!(sync(&["a.md", "b.md", "c.md", "d.md"]));
        assert_eq!((hits(&w, "charlie"), hits(&w, "bravo"), backlog(ix)), (3, 0, 0));
        // The removed file back with the same bytes: its document is active and found again.
        std::fs::write(notes.join("b.md"), "# B\n\nbravo\n").unwrap();
        assert!(sync(&["b.md"]));
        assert_eq!((hits(&w, "bravo"), backlog(ix)), (1, 0));
        // Unchanged files change nothing, and do not feed rows a sync running meanwhile has
        // written and not yet committed (here: every row made pending).
        catalog::reset_bm25(&ix.core.stores.catalog.writer()).unwrap();
        assert!(!sync(&["a.md", "c.md"]));
        assert_eq!(backlog(ix), 4);
    }
}
