//! What a sync writes: each batch of parsed files into the catalog (journaled in the same
//! transaction) and into BM25, deactivations and renames, the events announced after each
//! commit, and `converge`, which re-feeds BM25 from the catalog where they differ.

use super::indexer::{Indexer, SyncError};
use super::lanes;
use super::reading::{mime_and_ext, Parsed};
use crate::config::CollectionConfig;
use crate::index::ingest::{self, ParsedDoc};
use crate::stores::bm25::{self, Bm25Doc, Bm25Entry, KeywordLanguage, Stemming};
use crate::stores::catalog::{
    self, ChangeKind, ChangeRecord, FileState, NewDoc, Origin, Snapshot, Structure, StructureDelta,
};
use crate::stores::catalog::{Absorbed, Folder, RowVersion};
use crate::stores::DocKey;
use crate::{time_fmt, uri};
use protocol::source_kind::{source_kind, SourceKind};
use std::path::Path;

/// Rows fed to BM25 per commit when it converges with the catalog.
pub const CONVERGE_BATCH: usize = 2_000;

/// One batch of [`Indexer::converge_batch`]: how many rows it fed, and the last row it looked
/// at (where the next batch starts).
#[derive(Debug, Clone, Copy)]
pub struct ConvergedBatch {
    pub fed: usize,
    pub last: DocKey,
}

/// A file whose bytes did not change but whose mtime did (and that may need reactivating).
pub(super) struct Touch {
    pub(super) state: FileState,
    pub(super) mtime_ns: i64,
}

/// A document a sync created, changed, reactivated or took out of the index: what its
/// `document-changed` event says.
#[derive(Debug, Clone)]
pub(super) struct ChangedDoc {
    pub(super) id: DocKey,
    pub(super) rel: String,
    /// The version now indexed; `None`: the document left the index.
    pub(super) source_hash: Option<String>,
}

impl ChangedDoc {
    /// A document that left the index.
    pub(super) fn left(d: Deactivated) -> Self {
        ChangedDoc { id: d.version.id, rel: d.rel_path, source_hash: None }
    }
}

/// A document a deactivation took out of the index.
pub(super) struct Deactivated {
    pub(super) version: RowVersion,
    pub(super) rel_path: String,
}

/// What one batch wrote.
#[derive(Default)]
pub(super) struct BatchOutcome {
    pub(super) added: u64,
    pub(super) updated: u64,
    /// Every document the batch created, changed or reactivated.
    pub(super) written: Vec<ChangedDoc>,
    pub(super) absorbed: Vec<Absorbed>,
}

pub(super) fn structure_of(doc: &ParsedDoc) -> Structure {
    Structure {
        headings: doc.sections.iter().map(|s| s.title.clone()).collect(),
        links: doc.links.iter().map(|l| format!("{}:{}", l.link_type.as_str(), l.target_ref_norm)).collect(),
        dates: doc.date_fields.clone(),
    }
}

pub(super) fn snapshot(collection: &str, row: &catalog::DocRow) -> Snapshot {
    Snapshot {
        rel_path: row.rel_path.clone(),
        docid: row.docid.clone(),
        uri: uri::doc_uri(collection, &row.rel_path),
        source_hash: row.source_hash.clone(),
        mirror_hash: row.mirror_hash.clone(),
        active: row.active,
    }
}

impl Indexer<'_> {
    /// Writes parsed files and touched rows in one transaction, journals each change, then
    /// feeds BM25 (not yet committed).
    pub(super) fn apply_batch(
        &self,
        coll: &str,
        parsed: &[Box<Parsed>],
        touched: &[Touch],
        origin: Origin,
    ) -> Result<BatchOutcome, SyncError> {
        // The keyword entries are built (languages told, words stemmed) beside the catalog's
        // transaction, in two lanes.
        let (written, entries) = lanes::map_beside(
            parsed,
            |p| self.keyword_entry_of(coll, p),
            || self.write_batch(coll, parsed, touched, origin),
        );
        let (mut out, ids, gen) = written?;
        for ((p, id), entry) in parsed.iter().zip(ids).zip(entries) {
            self.folder_languages.fed(self, &Folder::of(coll, &p.file.rel), entry.language());
            let keyword_lang = Some(entry.language().stored());
            self.bm25.put(id, entry)?;
            out.absorbed.push(Absorbed { version: RowVersion { id, gen }, keyword_lang });
            out.written.push(ChangedDoc { id, rel: p.file.rel.clone(), source_hash: Some(p.source_hash.clone()) });
        }
        Ok(out)
    }

    /// The keyword entry of a file a batch parsed.
    fn keyword_entry_of(&self, coll: &str, p: &Parsed) -> Bm25Entry {
        self.keyword_entry(
            &Stored {
                collection: coll,
                rel_path: &p.file.rel,
                title: &p.doc.title,
                canonical: &p.canonical,
                body_start_line: p.doc.body_start_line,
                categories: &p.doc.categories,
                doc_type: p.doc.doc_type.as_deref(),
                tags: &p.doc.tags,
                mtime_ns: p.file.mtime_ns,
            },
            Some(&p.doc.sections),
        )
    }

    /// A batch's catalog writes, in one transaction: each parsed file's row and journal entry,
    /// each touched file's mtime (and reactivation). The outcome so far, the parsed files'
    /// row ids in order, and the generation written.
    fn write_batch(
        &self,
        coll: &str,
        parsed: &[Box<Parsed>],
        touched: &[Touch],
        origin: Origin,
    ) -> Result<(BatchOutcome, Vec<DocKey>, i64), SyncError> {
        let now = time_fmt::now_iso();
        let mut out = BatchOutcome::default();
        let mut ids = Vec::with_capacity(parsed.len());
        let gen;
        {
            let mut conn = self.catalog.writer();
            let tx = conn.transaction()?;
            gen = catalog::next_generation(&tx)?;
            for p in parsed {
                // Read before a rename below moves it: the journal's previous path is the old one.
                let before = match p.previous.as_ref().or(p.renamed_from.as_ref()) {
                    Some(prev) => catalog::docs_by_ids(&tx, &[prev.id])?.into_iter().next(),
                    None => None,
                };
                if let Some(old) = &p.renamed_from {
                    // Keep the row (and its history): it moves to the new path.
                    catalog::move_doc(&tx, old.id, &p.file.rel, None)?;
                }
                let old_structure = match &before {
                    Some(row) => {
                        let text = catalog::content_text(&tx, &row.mirror_hash)?.unwrap_or_default();
                        source_kind(&row.rel_path)
                            .map(|k| structure_of(&ingest::parse(&text, &row.rel_path, k)))
                            .unwrap_or_default()
                    }
                    None => Structure::default(),
                };
                let (mime, ext) = mime_and_ext(&p.file.rel);
                let id = catalog::upsert_doc(
                    &tx,
                    gen,
                    &NewDoc {
                        collection: coll,
                        rel_path: &p.file.rel,
                        part_of: p.part_of.as_deref(),
                        source_hash: &p.source_hash,
                        source_mime: &mime,
                        source_ext: &ext,
                        size: p.file.size,
                        mtime_ns: p.file.mtime_ns,
                        canonical: &p.canonical,
                        mirror_hash: &p.mirror_hash,
                        parsed: p.doc.stored(),
                        indexed_at: &now,
                    },
                )?;
                let current = Snapshot {
                    rel_path: p.file.rel.clone(),
                    docid: catalog::docid_of(&p.source_hash),
                    uri: uri::doc_uri(coll, &p.file.rel),
                    source_hash: p.source_hash.clone(),
                    mirror_hash: p.mirror_hash.clone(),
                    active: true,
                };
                let previous = before.as_ref().map(|r| snapshot(coll, r));
                let kind = match &before {
                    _ if p.renamed_from.is_some() => ChangeKind::Rename,
                    None => ChangeKind::Create,
                    Some(r) if !r.active => ChangeKind::Reactivate,
                    Some(_) => ChangeKind::Update,
                };
                let delta = StructureDelta::between(&old_structure, &structure_of(&p.doc));
                catalog::record_change(
                    &tx,
                    &ChangeRecord {
                        kind,
                        origin,
                        collection: coll,
                        doc_id: id,
                        observed_at: &now,
                        previous: previous.as_ref(),
                        current: Some(&current),
                        delta: &delta,
                    },
                )?;
                if before.is_some() && p.renamed_from.is_none() {
                    out.updated += 1;
                } else {
                    out.added += 1;
                }
                ids.push(id);
            }
            for t in touched {
                let reactivate = !t.state.active;
                catalog::touch_doc(&tx, t.state.id, t.mtime_ns, reactivate.then_some(gen))?;
                if reactivate {
                    if let Some(row) = catalog::docs_by_ids(&tx, &[t.state.id])?.into_iter().next() {
                        let snap = snapshot(coll, &row);
                        catalog::record_change(
                            &tx,
                            &ChangeRecord {
                                kind: ChangeKind::Reactivate,
                                origin,
                                collection: coll,
                                doc_id: row.id,
                                observed_at: &now,
                                previous: None,
                                current: Some(&snap),
                                delta: &StructureDelta::default(),
                            },
                        )?;
                        out.written.push(ChangedDoc {
                            id: row.id,
                            rel: row.rel_path,
                            source_hash: Some(row.source_hash),
                        });
                    }
                }
            }
            tx.commit()?;
        }
        Ok((out, ids, gen))
    }

    /// Deactivates rows (files that vanished or were deactivated through the API), with a
    /// journal entry each. BM25 deletes are pending until the next commit.
    pub(super) fn deactivate(&self, coll: &str, ids: &[DocKey], origin: Origin) -> Result<Vec<Deactivated>, SyncError> {
        let now = time_fmt::now_iso();
        let mut done = Vec::with_capacity(ids.len());
        {
            let mut conn = self.catalog.writer();
            let tx = conn.transaction()?;
            let gen = catalog::next_generation(&tx)?;
            for row in catalog::docs_by_ids(&tx, ids)?.into_iter().filter(|r| r.active) {
                catalog::deactivate(&tx, gen, &[row.id])?;
                let previous = snapshot(coll, &row);
                let current = Snapshot { active: false, ..previous.clone() };
                catalog::record_change(
                    &tx,
                    &ChangeRecord {
                        kind: ChangeKind::Inactivate,
                        origin,
                        collection: coll,
                        doc_id: row.id,
                        observed_at: &now,
                        previous: Some(&previous),
                        current: Some(&current),
                        delta: &StructureDelta::default(),
                    },
                )?;
                done.push(Deactivated { version: RowVersion { id: row.id, gen }, rel_path: row.rel_path });
            }
            tx.commit()?;
        }
        for d in &done {
            self.bm25.delete(d.version.id);
        }
        Ok(done)
    }

    /// Records that a document's file moved to `new_rel` (a refactor): the row keeps its
    /// identity and history; any stale inactive row at the new path is dropped.
    pub fn rename_doc(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        id: DocKey,
        new_rel: &str,
        origin: Origin,
    ) -> Result<(), SyncError> {
        let now = time_fmt::now_iso();
        {
            let mut conn = self.catalog.writer();
            let tx = conn.transaction()?;
            let gen = catalog::next_generation(&tx)?;
            let Some(before) = catalog::docs_by_ids(&tx, &[id])?.into_iter().next() else { return Ok(()) };
            catalog::drop_stale_row(&tx, &coll.name, new_rel, id)?;
            catalog::move_doc(&tx, id, new_rel, Some(gen))?;
            let previous = snapshot(&coll.name, &before);
            let current =
                Snapshot { rel_path: new_rel.to_string(), uri: uri::doc_uri(&coll.name, new_rel), ..previous.clone() };
            catalog::record_change(
                &tx,
                &ChangeRecord {
                    kind: ChangeKind::Rename,
                    origin,
                    collection: &coll.name,
                    doc_id: id,
                    observed_at: &now,
                    previous: Some(&previous),
                    current: Some(&current),
                    delta: &StructureDelta::default(),
                },
            )?;
            tx.commit()?;
        }
        self.sync_file(coll, root, new_rel, origin)?;
        self.converge_rows([id])?;
        // The version at the new path, as the sync just above left it.
        let state = catalog::file_state(&self.catalog.reader(), &coll.name, new_rel).ok().flatten();
        let source_hash = state.filter(|s| s.active).map(|s| s.source_hash);
        self.announce(&coll.name, &ChangedDoc { id, rel: new_rel.to_string(), source_hash }, origin);
        Ok(())
    }

    /// Deactivates documents now (API): journal, BM25 commit, event.
    pub fn deactivate_now(&self, coll: &str, ids: &[DocKey], origin: Origin) -> Result<(), SyncError> {
        let done = self.deactivate(coll, ids, origin)?;
        let absorbed: Vec<Absorbed> = done.iter().map(|d| Absorbed::left(d.version)).collect();
        let changed: Vec<ChangedDoc> = done.into_iter().map(ChangedDoc::left).collect();
        self.finish(coll, &absorbed, &changed, origin)
    }

    /// Announces a changed document with the version now indexed.
    pub(super) fn announce(&self, coll: &str, doc: &ChangedDoc, origin: Origin) {
        // Its newest journal position: a subscriber that reconnects from it misses nothing of
        // this document (a change after it is replayed, or announced with a later id).
        let change = catalog::latest_change_of(&self.catalog.reader(), doc.id).ok().flatten();
        let uri = uri::doc_uri(coll, &doc.rel);
        self.events.document_changed(&uri, coll, &doc.rel, origin, doc.source_hash.clone(), change);
    }

    /// Commits BM25, records what it absorbed, and announces the changed documents.
    pub(super) fn finish(
        &self,
        coll: &str,
        absorbed: &[Absorbed],
        changed: &[ChangedDoc],
        origin: Origin,
    ) -> Result<(), SyncError> {
        if absorbed.is_empty() {
            return Ok(());
        }
        self.bm25.commit()?;
        self.record_absorbed(absorbed)?;
        for doc in changed {
            self.announce(coll, doc, origin);
        }
        Ok(())
    }

    /// Records what BM25 absorbed (and committed), then re-feeds the short notes of each
    /// folder whose notes' told languages changed and that were indexed under another
    /// language of the folder than it has now: a short note's stems do not depend on the
    /// order its folder was indexed in.
    fn record_absorbed(&self, absorbed: &[Absorbed]) -> Result<(), SyncError> {
        let told = |v: Option<&str>| v.and_then(KeywordLanguage::from_stored).and_then(KeywordLanguage::told);
        let folders = catalog::mark_bm25_absorbed(&mut self.catalog.writer(), absorbed, |a, b| told(a) != told(b))?;
        // The catalog holds what the feed told now: the folders' languages are read from it
        // again, once each, here and by the feed below.
        self.folder_languages.clear();
        let mut stale = Vec::new();
        for folder in &folders {
            let now = KeywordLanguage::Short { folder: self.folder_languages.of(self, folder) }.stored();
            let shorts =
                catalog::folder_rows_with_language(&self.catalog.reader(), folder, KeywordLanguage::SHORT_PREFIX)?;
            stale.extend(shorts.into_iter().filter(|(_, was)| *was != now).map(|(id, _)| id));
        }
        if !stale.is_empty() {
            // Short notes only: their language told no folder's, so this feed re-feeds none.
            self.feed_rows(&stale)?;
        }
        Ok(())
    }

    /// Feeds BM25 every row whose generation it has not absorbed (crash recovery, a new
    /// analyzer, rows changed without a re-parse), batch by batch. Cheap when nothing is
    /// pending.
    pub fn converge(&self) -> Result<usize, SyncError> {
        let mut fed = 0;
        let mut after = DocKey(0);
        while let Some(batch) = self.converge_batch(after, CONVERGE_BATCH)? {
            fed += batch.fed;
            after = batch.last;
        }
        Ok(fed)
    }

    /// Feeds BM25 the first `limit` rows after `after` it has not absorbed, commits, and
    /// records them absorbed: what a kill interrupts later is not fed again. `None` when
    /// no row after `after` is pending.
    pub fn converge_batch(&self, after: DocKey, limit: usize) -> Result<Option<ConvergedBatch>, SyncError> {
        let ids = catalog::bm25_pending(&self.catalog.reader(), after, limit)?;
        let Some(&last) = ids.last() else { return Ok(None) };
        Ok(Some(ConvergedBatch { fed: self.feed_rows(&ids)?, last }))
    }

    /// Feeds BM25 the rows of `ids` it has not absorbed: after a sync that reactivated rows
    /// without re-parsing them. While the whole index is re-fed in the background (an
    /// analyzer change), a sync feeds only its own rows and leaves the rest to that thread;
    /// else it feeds every pending row, as a catch-all.
    pub fn converge_rows(&self, ids: impl IntoIterator<Item = DocKey>) -> Result<usize, SyncError> {
        if !self.refeeding.load(std::sync::atomic::Ordering::SeqCst) {
            return self.converge();
        }
        let ids: Vec<DocKey> = ids.into_iter().collect();
        let pending = catalog::pending_among(&self.catalog.reader(), &ids)?;
        if pending.is_empty() {
            return Ok(0);
        }
        self.feed_rows(&pending)
    }

    /// Feeds BM25 the rows `ids` as the catalog holds them, commits, and records them
    /// absorbed at the generation read.
    fn feed_rows(&self, ids: &[DocKey]) -> Result<usize, SyncError> {
        let conn = self.catalog.reader();
        let rows = catalog::docs_by_ids(&conn, ids)?;
        let tags = catalog::tags_of(&conn, ids)?;
        let mut absorbed = Vec::with_capacity(rows.len());
        let no_tags = Vec::new();
        // A chunk's texts are read in order on this connection, then their entries built in
        // two lanes; a chunk bounds the texts held at once.
        for chunk in rows.chunks(REFEED_CHUNK) {
            let mut items: Vec<(&catalog::DocRow, Option<String>)> = Vec::with_capacity(chunk.len());
            for row in chunk {
                let text = match row.active {
                    true => Some(catalog::content_text(&conn, &row.mirror_hash)?.unwrap_or_default()),
                    false => None,
                };
                items.push((row, text));
            }
            let entry = |(row, text): &(&catalog::DocRow, Option<String>)| {
                let text = text.as_deref()?;
                Some(self.keyword_entry(
                    &Stored {
                        collection: &row.collection,
                        rel_path: &row.rel_path,
                        title: &row.title,
                        canonical: text,
                        body_start_line: row.body_start_line,
                        categories: &row.categories,
                        doc_type: row.fm_type.as_deref(),
                        tags: tags.get(&row.id).unwrap_or(&no_tags),
                        mtime_ns: row.source_mtime_ns,
                    },
                    None,
                ))
            };
            for ((row, _), entry) in items.iter().zip(lanes::map(&items, entry)) {
                let version = RowVersion { id: row.id, gen: row.gen };
                match entry {
                    Some(entry) => {
                        self.folder_languages.fed(self, &Folder::of(&row.collection, &row.rel_path), entry.language());
                        absorbed.push(Absorbed { version, keyword_lang: Some(entry.language().stored()) });
                        self.bm25.put(row.id, entry)?
                    }
                    None => {
                        absorbed.push(Absorbed::left(version));
                        self.bm25.delete(row.id)
                    }
                }
            }
        }
        drop(conn);
        self.bm25.commit()?;
        self.record_absorbed(&absorbed)?;
        Ok(absorbed.len())
    }
}

/// The languages of the folders of one sync's (or feed's) short notes: each folder's sample
/// read from the catalog once, and the languages told of the notes this sync fed so far added
/// to it (the catalog learns them when the sync ends: [`Indexer::record_absorbed`], which
/// clears this), so that a short note fed after its neighbours takes their language at once
/// instead of being fed again when the sync ends.
#[derive(Default)]
pub(crate) struct FolderLanguages(std::sync::Mutex<std::collections::HashMap<Folder, FolderTally>>);

/// What a folder's notes were told: the catalog's sample, then this sync's; and the language
/// that makes, once asked.
struct FolderTally {
    stored: Vec<String>,
    language: Option<Option<Stemming>>,
}

impl FolderLanguages {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<Folder, FolderTally>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads `folder`'s tally from the catalog when this sync has none (an empty one when the
    /// catalog cannot say).
    fn load(&self, ix: &Indexer<'_>, folder: &Folder) {
        if self.lock().contains_key(folder) {
            return;
        }
        let stored = catalog::folder_languages(&ix.catalog.reader(), folder).unwrap_or_else(|e| {
            tracing::warn!("languages of the folder {:?} of {}: {e}", folder.path, folder.collection);
            Vec::new()
        });
        self.lock().entry(folder.clone()).or_insert(FolderTally { stored, language: None });
    }

    /// The language of `folder` ([`bm25::folder_language`]).
    fn of(&self, ix: &Indexer<'_>, folder: &Folder) -> Option<Stemming> {
        self.load(ix, folder);
        let mut tallies = self.lock();
        let tally = tallies.get_mut(folder)?;
        *tally.language.get_or_insert_with(|| bm25::folder_language(tally.stored.iter().map(String::as_str)))
    }

    /// A note of `folder` this sync fed: a language told joins the folder's tally. (A note
    /// edited counts with its language before too, until the sync ends; the check then
    /// corrects any short note that told wrong.)
    fn fed(&self, ix: &Indexer<'_>, folder: &Folder, language: KeywordLanguage) {
        if language.told().is_none() {
            return;
        }
        self.load(ix, folder);
        if let Some(tally) = self.lock().get_mut(folder) {
            tally.stored.push(language.stored());
            tally.language = None;
        }
    }

    fn clear(&self) {
        self.lock().clear();
    }
}

/// Rows whose texts a re-feed reads at once before building their entries.
const REFEED_CHUNK: usize = 64;

/// What the catalog keeps of a document, as the keyword index's entry is built from it.
pub(super) struct Stored<'a> {
    pub(super) collection: &'a str,
    pub(super) rel_path: &'a str,
    pub(super) title: &'a str,
    /// The canonical text (`content.text`).
    pub(super) canonical: &'a str,
    pub(super) body_start_line: u32,
    pub(super) categories: &'a [String],
    pub(super) doc_type: Option<&'a str>,
    pub(super) tags: &'a [String],
    pub(super) mtime_ns: i64,
}

impl Indexer<'_> {
    /// One document's keyword entry, to be put under its row's key (and committed with the
    /// next commit). The one builder of the keyword index's entries: a sync's batch and
    /// convergence (after a rebuild, a rename, a content-type change, a reactivation) both call
    /// it with what the catalog stores, so what is indexed never depends on the path that
    /// wrote it. (A short note's folder language is read from the catalog as it is; when its
    /// folder's changes, [`Self::record_absorbed`] feeds it again.) `symbols`: a code file's
    /// symbol sections when the caller parsed it already; else they are parsed here.
    pub(super) fn keyword_entry(&self, doc: &Stored<'_>, symbols: Option<&[ingest::Section]>) -> Bm25Entry {
        let kind = source_kind(doc.rel_path);
        let categories = self.content_types.categories_with_type(doc.categories, doc.doc_type, doc.rel_path);
        let parsed_symbols;
        let symbols = match symbols {
            Some(s) => s,
            None => {
                parsed_symbols =
                    ingest::code_symbols(ingest::body_of(doc.canonical, doc.body_start_line), doc.rel_path);
                &parsed_symbols
            }
        };
        let title = keyword_title(doc.title, doc.rel_path, symbols);
        let body = ingest::keyword_body(doc.canonical, doc.body_start_line, kind);
        // Only a Markdown note has front matter (as the parse reads it).
        // A note's own declaration wins over its collection's.
        let declared = (kind == Some(SourceKind::Markdown))
            .then(|| ingest::declared_language(doc.canonical))
            .flatten()
            .or_else(|| self.languages.get(doc.collection).map(str::to_string));
        self.bm25.entry(&Bm25Doc {
            collection: doc.collection,
            title: &title,
            body: &body,
            rel_path: doc.rel_path,
            tags: doc.tags,
            categories: &categories,
            modified_ms: doc.mtime_ns / 1_000_000,
            declared_language: declared.as_deref(),
            folder_language: &|| self.folder_languages.of(self, &Folder::of(doc.collection, doc.rel_path)),
        })
    }
}

/// The title BM25 indexes: a code file's title followed by its symbols' paths (so
/// `Parser::parse` finds the file that defines it), any other document's title as it is.
pub(super) fn keyword_title<'a>(title: &'a str, rel: &str, sections: &[ingest::Section]) -> std::borrow::Cow<'a, str> {
    if !matches!(source_kind(rel), Some(SourceKind::Code(_))) || sections.is_empty() {
        return std::borrow::Cow::Borrowed(title);
    }
    let mut out = title.to_string();
    for s in sections {
        out.push('\n');
        out.push_str(&s.title);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use crate::stores::catalog;
    use protocol::api::SearchResponse;
    use protocol::{AddCollection, SearchRequest};

    /// One file of every format a sync reads as text, and of the converted ones, each with a
    /// word of its own (`fmt…`); the org note also has a comment line and the Markdown note a
    /// link target, neither of which is text.
    fn every_format(dir: &std::path::Path) {
        let put = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
        put(
            "note.md",
            b"---\ntags: [fruit]\nlang: en\ntype: spec\n---\n# Quince\n\nfmtmarkdown jelly [a](fmtlinktarget.md)\n",
        );
        put("log.org", b"#+TITLE: Orchard\n# fmtorgcomment is a comment line\n* Pruning\nfmtorg cut back\n");
        put("plain.txt", b"fmtplain words on a line\n");
        put("page.html", b"<html><head><title>Page</title></head><body><main><p>fmthtml text</p></main></body></html>");
        put("kettle.rs", b"/// fmtcode doc\npub struct Kettle;\nimpl Kettle {\n    pub fn descale(&self) {}\n}\n");
        put("msg.eml", b"From: a@example.com\nSubject: Fmt mail\n\nfmtmail body\n");
        put("deck.pdf", &testkit::pdf(Some("Deck"), &["fmtpdf line"]));
        put("letter.docx", &testkit::docx(Some("Letter"), &[(None, "fmtdocx paragraph")]));
        put("sheet.xlsx", &testkit::xlsx(&[("Plants", &[&["Name"], &["fmtsheet"]])]));
    }

    /// What a keyword search for each probe finds: uri and score, in order.
    fn found(w: &std::sync::Arc<crate::Worker>, probes: &[&str]) -> Vec<Vec<(String, String)>> {
        probes
            .iter()
            .map(|q| {
                let req = SearchRequest { query: (*q).into(), limit: 10, ..Default::default() };
                let body = w.handle(req.into()).unwrap();
                let r: SearchResponse = body.decode().unwrap();
                r.results.into_iter().map(|h| (h.uri, format!("{:.6}", h.score))).collect()
            })
            .collect()
    }

    #[test]
    fn a_sync_and_a_convergence_index_the_same_keywords_for_every_format() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes");
        std::fs::create_dir_all(&notes).unwrap();
        every_format(&notes);
        let w = crate::test_worker(&dir.path().join("svc"));
        let add = AddCollection {
            path: notes.display().to_string(),
            name: Some("n".into()),
            include: Some("**/*".into()),
            ..Default::default()
        };
        w.handle(add.into()).unwrap();
        w.wait_idle();
        let probes = [
            "fmtmarkdown",
            "fmtorg",
            "fmtorgcomment",
            "fmtplain",
            "fmthtml",
            "fmtcode",
            "descale",
            "Kettle",
            "fmtmail",
            "fmtpdf",
            "fmtdocx",
            "fmtsheet",
            "quince",
            "fmtlinktarget",
        ];
        let synced = found(&w, &probes);
        for (probe, hits) in probes.iter().zip(&synced) {
            match *probe {
                "fmtorgcomment" | "fmtlinktarget" => assert!(hits.is_empty(), "{probe}: {hits:?}"),
                _ => assert!(!hits.is_empty(), "{probe} is found after a sync"),
            }
        }
        let fed = catalog::reset_bm25(&w.shared.stores.catalog.writer()).unwrap();
        assert_eq!(fed, 9, "every document is fed again");
        assert_eq!(w.indexing.indexer().converge().unwrap(), 9);
        assert_eq!(found(&w, &probes), synced, "convergence indexes what the sync indexed");
    }
}
