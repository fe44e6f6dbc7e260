//! Indexing: a sync of a whole collection (walk, skip what is unchanged, parse what changed,
//! write the catalog in batches, feed BM25, deactivate what vanished) and the sync of one
//! file after an API write. Every change is journaled in the same transaction and announced
//! on the event bus after it commits.

use crate::config::content_types::ContentTypes;
use crate::config::CollectionConfig;
use crate::events::EventBus;
use crate::index::ingest::{self, ParsedDoc};
use crate::index::pictures;
use crate::index::rules::Rules;
use crate::index::rules::{FileMatcher, PatternError};
use crate::index::walk::{self, FoundFile, WalkItem};
use crate::stores::bm25::{Bm25Doc, Bm25Index};
use crate::stores::catalog::{
    self, Catalog, ChangeKind, ChangeRecord, FileState, NewDoc, Origin, Snapshot, Structure, StructureDelta,
};
use crate::{index::convert, time_fmt, uri};
use protocol::api::CollectionSyncResult;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Files larger than this are skipped (counted in `filesSkipped`).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
const BATCH: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("collection folder {0} is missing or not a folder")]
    RootMissing(String),
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error(transparent)]
    Bm25(#[from] crate::stores::bm25::Bm25Error),
    #[error("stopped: the worker is shutting down")]
    Cancelled,
}

crate::errors::internal_errors!(SyncError);

impl From<rusqlite::Error> for SyncError {
    fn from(e: rusqlite::Error) -> Self {
        SyncError::Catalog(e.into())
    }
}

pub use protocol::source_kind::{is_text_note, source_kind, SourceKind};

/// The converter of a kind converted to text on indexing.
fn converter(kind: SourceKind) -> Option<convert::Format> {
    match kind {
        SourceKind::Pdf => Some(convert::Format::Pdf),
        SourceKind::Docx => Some(convert::Format::Docx),
        SourceKind::Spreadsheet => Some(convert::Format::Spreadsheet),
        SourceKind::Html => Some(convert::Format::Html),
        SourceKind::Slides => Some(convert::Format::Slides),
        SourceKind::Mail => Some(convert::Format::Mail),
        SourceKind::Markdown | SourceKind::PlainText | SourceKind::Org | SourceKind::Code(_) | SourceKind::Image => {
            None
        }
    }
}

pub fn mime_and_ext(rel: &str) -> (String, String) {
    let ext = Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{}", e.to_ascii_lowercase()))
        .unwrap_or_default();
    let mime = match source_kind(rel) {
        Some(SourceKind::Markdown) => "text/markdown".to_string(),
        Some(SourceKind::PlainText) => "text/plain".to_string(),
        Some(SourceKind::Org) => "text/org".to_string(),
        // By the extension where it has a type of its own (`application/json`), else text.
        Some(SourceKind::Code(_)) => match mime_guess::from_path(rel).first() {
            Some(m) if m.type_() == "text" || m.subtype() == "json" || m.subtype() == "javascript" => {
                m.essence_str().to_string()
            }
            _ => "text/plain".to_string(),
        },
        Some(kind @ (SourceKind::Pdf | SourceKind::Docx | SourceKind::Html)) => {
            converter(kind).map(|f| f.mime()).unwrap_or_default().to_string()
        }
        // One kind, several formats: by the extension.
        Some(SourceKind::Spreadsheet | SourceKind::Slides | SourceKind::Mail | SourceKind::Image) => {
            mime_guess::from_path(rel).first_or_octet_stream().essence_str().to_string()
        }
        None => mime_guess::from_path(rel).first_or_octet_stream().essence_str().to_string(),
    };
    (mime, ext)
}

/// A file's text and, for converted documents, the title the converter found; else why
/// there is none.
fn text_of(bytes: Vec<u8>, kind: SourceKind, rel: &str) -> Result<(String, Option<String>), String> {
    let found = match converter(kind) {
        // A picture's text is its OCR reading (`Indexer::read_picture`); here only whether
        // it can be read.
        None if kind == SourceKind::Image => pictures::refusal(&bytes).map_or(Ok((String::new(), None)), Err),
        None => ingest::decode_text(&bytes).map(|t| (t, None)).map_err(|e| e.to_string()),
        Some(format) => convert::convert(format, bytes).map(|c| (c.text, c.title)).map_err(|e| e.to_string()),
    };
    if let Err(e) = &found {
        tracing::warn!("{rel}: {e}");
    }
    found
}

/// How a file of `size` bytes is over [`MAX_FILE_BYTES`], if it is: what a sync reports for
/// it and `explain` names as its rule.
pub fn over_size_limit(size: u64) -> Option<String> {
    (size > MAX_FILE_BYTES).then(|| format!("{} MB, over the {} MB limit", size >> 20, MAX_FILE_BYTES >> 20))
}

/// Why the file at `abs` cannot be read or converted, when it cannot (a sync counts it as
/// errored).
pub fn unreadable(abs: &Path, kind: SourceKind, rel: &str) -> Option<String> {
    match std::fs::read(abs) {
        Err(e) => Some(format!("cannot be read: {e}")),
        Ok(bytes) => text_of(bytes, kind, rel).err(),
    }
}

/// A file (or a part of one) read and parsed, waiting for its batch to be written.
struct Parsed {
    /// The document's own path, size and mtime (a part's path is `<file>/<part key>`).
    file: FoundFile,
    /// The file this document is a part of; `None`: the whole file.
    part_of: Option<String>,
    source_hash: String,
    canonical: String,
    mirror_hash: String,
    doc: ParsedDoc,
    previous: Option<FileState>,
    /// A vanished document with the same bytes: this file is that one, renamed or moved.
    renamed_from: Option<FileState>,
}

enum FileOutcome {
    Parsed(Box<Parsed>),
    /// The bytes equal what the catalog holds (only the mtime moved).
    SameBytes(FoundFile),
    /// Unreadable, binary, or a conversion failed (why): counted as errored, the previous
    /// version stays.
    Failed(String),
}

/// Reads, hashes, converts (PDF, DOCX…) and parses a file. A picture, and a PDF that is a
/// scan (no text, pages that are pictures), take their text from OCR ([`read_picture`]).
fn read_and_parse(file: FoundFile, prev: Option<&FileState>, kind: SourceKind, pictures: Pictures) -> FileOutcome {
    let bytes = match std::fs::read(&file.abs) {
        Ok(bytes) => bytes,
        Err(e) => return FileOutcome::Failed(format!("cannot be read: {e}")),
    };
    let source_hash = crate::digest::sha256_hex(&bytes);
    if kind == SourceKind::Image {
        let reading = pictures.readings.get(&source_hash);
        return read_picture(file, prev, source_hash, None, reading, || pictures::refusal(&bytes), pictures);
    }
    // A PDF is a scan when it has no text; once OCR has read it, its reading is its text.
    let reading = if kind == SourceKind::Pdf { pictures.readings.get(&source_hash) } else { None };
    let read_since = |p: &FileState| reading.as_ref().is_some_and(|r| ingest::mirror_of(&r.text) != p.mirror_hash);
    if prev.is_some_and(|p| p.source_hash == source_hash && !read_since(p)) {
        return FileOutcome::SameBytes(file);
    }
    match text_of(bytes, kind, &file.rel) {
        Ok((text, title)) if kind == SourceKind::Pdf && convert::is_scan(&text) => {
            read_picture(file, prev, source_hash, title, reading, || None, pictures)
        }
        Ok((text, title)) => FileOutcome::Parsed(parse_text(file, None, source_hash, &text, title, kind, prev)),
        Err(reason) => FileOutcome::Failed(reason),
    }
}

/// Where a sync finds pictures' readings and asks for new ones: the readings and the
/// collection synced.
#[derive(Clone, Copy)]
struct Pictures<'a> {
    readings: &'a pictures::Readings,
    collection: &'a str,
}

/// A picture's (or a scan's) document: its text is its OCR `reading` once there is one; until
/// then it is indexed by its name, and a reading is asked for (unless `refusal` says why the
/// file cannot be read: then it is that file's error). Unchanged only when both its bytes and
/// its text are (the reading arriving changes the text).
fn read_picture(
    file: FoundFile,
    prev: Option<&FileState>,
    source_hash: String,
    title: Option<String>,
    reading: Option<pictures::Reading>,
    refusal: impl FnOnce() -> Option<String>,
    pictures: Pictures,
) -> FileOutcome {
    let text = match reading {
        Some(reading) => reading.text,
        None => {
            if let Some(why) = refusal() {
                tracing::warn!("{}: {why}", file.rel);
                return FileOutcome::Failed(why);
            }
            pictures.readings.request(pictures.collection, &file.rel, &source_hash);
            String::new()
        }
    };
    if prev.is_some_and(|p| p.source_hash == source_hash && p.mirror_hash == ingest::mirror_of(&text)) {
        return FileOutcome::SameBytes(file);
    }
    let kind = source_kind(&file.rel).unwrap_or(SourceKind::Image);
    FileOutcome::Parsed(parse_text(file, None, source_hash, &text, title, kind, prev))
}

/// Reads a file indexed by its parts (a mailbox) and parses each part whose bytes changed:
/// each part's outcome, by the part's path (`<file>/<part key>`). `parts`: the paths of the
/// parts indexed so far, their states in `known`. `Err`: the file as a whole cannot be read
/// or split (why).
fn read_and_parse_parts(
    file: &FoundFile,
    known: &HashMap<String, FileState>,
    parts: &[&str],
) -> Result<Vec<(String, FileOutcome)>, String> {
    let bytes = std::fs::read(&file.abs).map_err(|e| format!("cannot be read: {e}"))?;
    let prefix = format!("{}/", file.rel);
    // What each part key holds now, so unchanged messages are not converted again.
    let indexed = parts
        .iter()
        .filter_map(|rel| Some((rel.strip_prefix(&prefix)?.to_string(), known.get(*rel)?.source_hash.clone())))
        .collect();
    let parts = convert::mailbox_parts(bytes, indexed).map_err(|e| {
        tracing::warn!("{}: {e}", file.rel);
        e.to_string()
    })?;
    let outcomes = parts.into_iter().map(|part| {
        let rel = format!("{prefix}{}", part.key);
        let found = FoundFile { rel: rel.clone(), abs: file.abs.clone(), size: part.size, mtime_ns: file.mtime_ns };
        let prev = known.get(&rel);
        let outcome = match part.converted {
            None => FileOutcome::SameBytes(found),
            Some(Ok(c)) => {
                let part_of = Some(file.rel.clone());
                FileOutcome::Parsed(parse_text(
                    found,
                    part_of,
                    part.source_hash,
                    &c.text,
                    c.title,
                    SourceKind::Mail,
                    prev,
                ))
            }
            Some(Err(reason)) => FileOutcome::Failed(reason),
        };
        (rel, outcome)
    });
    Ok(outcomes.collect())
}

/// Canonicalizes and parses a document's text (a file's, or a part's).
fn parse_text(
    file: FoundFile,
    part_of: Option<String>,
    source_hash: String,
    text: &str,
    title: Option<String>,
    kind: SourceKind,
    prev: Option<&FileState>,
) -> Box<Parsed> {
    let canonical = ingest::canonicalize(text);
    let mirror_hash = crate::digest::sha256_hex(canonical.as_bytes());
    let mut doc = ingest::parse(&canonical, &file.rel, kind);
    if let Some(title) = title {
        doc.title = title;
    }
    Box::new(Parsed {
        file,
        part_of,
        source_hash,
        canonical,
        mirror_hash,
        doc,
        previous: prev.cloned(),
        renamed_from: None,
    })
}

/// The file at `rel`, if there is a regular file there.
fn found_file(root: &Path, rel: &str) -> Option<FoundFile> {
    let abs = root.join(rel);
    let md = std::fs::metadata(&abs).ok().filter(|m| m.is_file())?;
    Some(FoundFile { rel: rel.to_string(), size: md.len(), mtime_ns: walk::mtime_ns(&md), abs })
}

/// The paths of the documents that are parts of each file, by the file's path.
fn parts_by_file(known: &HashMap<String, FileState>) -> HashMap<&str, Vec<&str>> {
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    for (rel, state) in known {
        if let Some(file) = &state.part_of {
            out.entry(file.as_str()).or_default().push(rel.as_str());
        }
    }
    out
}

/// How many active parts a file indexed by its parts has, when it is unchanged since they
/// were indexed: it has active parts and each holds the file's mtime (every sync that reads
/// the file stamps it on them). `None`: read the file again.
fn unchanged_parts(known: &HashMap<String, FileState>, parts: &[&str], mtime_ns: i64) -> Option<u64> {
    let mut count = 0;
    for state in parts.iter().filter_map(|r| known.get(*r)).filter(|s| s.active) {
        if state.mtime_ns != mtime_ns {
            return None;
        }
        count += 1;
    }
    (count > 0).then_some(count)
}

/// A file whose bytes did not change but whose mtime did (and that may need reactivating).
struct Touch {
    state: FileState,
    mtime_ns: i64,
}

/// A document a sync created, changed, reactivated or took out of the index: what its
/// `document-changed` event says.
#[derive(Debug, Clone)]
struct ChangedDoc {
    id: i64,
    rel: String,
    /// The version now indexed; `None`: the document left the index.
    source_hash: Option<String>,
}

/// What one batch wrote.
#[derive(Default)]
struct BatchOutcome {
    added: u64,
    updated: u64,
    /// Every document the batch created, changed or reactivated.
    written: Vec<ChangedDoc>,
    absorbed: Vec<(i64, i64)>,
}

fn structure_of(doc: &ParsedDoc) -> Structure {
    Structure {
        headings: doc.sections.iter().map(|s| s.title.clone()).collect(),
        links: doc.links.iter().map(|l| format!("{}:{}", l.link_type.as_str(), l.target_ref_norm)).collect(),
        dates: doc.date_fields.clone(),
    }
}

fn snapshot(collection: &str, row: &catalog::DocRow) -> Snapshot {
    Snapshot {
        rel_path: row.rel_path.clone(),
        docid: row.docid.clone(),
        uri: uri::doc_uri(collection, &row.rel_path),
        source_hash: row.source_hash.clone(),
        mirror_hash: row.mirror_hash.clone(),
        active: row.active,
    }
}

pub struct Indexer<'a> {
    pub catalog: &'a Catalog,
    pub bm25: &'a Bm25Index,
    /// Each document's content type joins its categories in the BM25 index (the filter field).
    pub content_types: &'a ContentTypes,
    pub cancel: &'a AtomicBool,
    pub events: &'a EventBus,
    /// Pictures' OCR readings, and the queue a sync adds pictures without one to.
    pub pictures: &'a pictures::Readings,
}

/// What the single-file sync did.
#[derive(Debug, Clone, PartialEq)]
pub enum FileSync {
    /// Indexed (created, changed or reactivated): the row id.
    Indexed(i64),
    /// The bytes equal the indexed version.
    Unchanged(i64),
    /// The file is gone (or no longer a supported note): deactivated if it was indexed.
    Removed,
    /// Unreadable, not UTF-8 or not convertible; the previous version stays.
    Failed,
}

impl Indexer<'_> {
    /// Writes parsed files and touched rows in one transaction, journals each change, then
    /// feeds BM25 (not yet committed).
    fn apply_batch(
        &self,
        coll: &str,
        parsed: &[Box<Parsed>],
        touched: &[Touch],
        origin: Origin,
    ) -> Result<BatchOutcome, SyncError> {
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
                    tx.execute(
                        "UPDATE documents SET rel_path = ?2 WHERE id = ?1",
                        rusqlite::params![old.id, p.file.rel],
                    )?;
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
        for (p, id) in parsed.iter().zip(ids) {
            let categories =
                self.content_types.categories_with_type(&p.doc.categories, p.doc.doc_type.as_deref(), &p.file.rel);
            let title = keyword_title(&p.doc.title, &p.file.rel, &p.doc.sections);
            // The parsed body is the Markdown body the stored text gives (ingest::keyword_body).
            let body = ingest::keyword_text(&p.doc.body, source_kind(&p.file.rel));
            self.bm25.upsert(&Bm25Doc {
                key: id,
                collection: coll,
                title: &title,
                body: &body,
                rel_path: &p.file.rel,
                tags: &p.doc.tags,
                categories: &categories,
                modified_ms: p.file.mtime_ns / 1_000_000,
                declared_language: p.doc.language.as_deref(),
            })?;
            out.absorbed.push((id, gen));
            out.written.push(ChangedDoc { id, rel: p.file.rel.clone(), source_hash: Some(p.source_hash.clone()) });
        }
        Ok(out)
    }

    /// Deactivates rows (files that vanished or were deactivated through the API), with a
    /// journal entry each. BM25 deletes are pending until the next commit.
    pub fn deactivate(&self, coll: &str, ids: &[i64], origin: Origin) -> Result<Vec<(i64, i64, String)>, SyncError> {
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
                done.push((row.id, gen, row.rel_path));
            }
            tx.commit()?;
        }
        for (id, _, _) in &done {
            self.bm25.delete(*id);
        }
        Ok(done)
    }

    /// Records that a document's file moved to `new_rel` (a refactor): the row keeps its
    /// identity and history; any stale inactive row at the new path is dropped.
    pub fn rename_doc(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        id: i64,
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
            tx.execute(
                "UPDATE documents SET rel_path = ?2, gen = ?3 WHERE id = ?1",
                rusqlite::params![id, new_rel, gen],
            )?;
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
        self.converge()?;
        // The version at the new path, as the sync just above left it.
        let state = catalog::file_state(&self.catalog.reader(), &coll.name, new_rel).ok().flatten();
        let source_hash = state.filter(|s| s.active).map(|s| s.source_hash);
        self.announce(&coll.name, &ChangedDoc { id, rel: new_rel.to_string(), source_hash }, origin);
        Ok(())
    }

    /// Deactivates documents now (API): journal, BM25 commit, event.
    pub fn deactivate_now(&self, coll: &str, ids: &[i64], origin: Origin) -> Result<(), SyncError> {
        let done = self.deactivate(coll, ids, origin)?;
        let absorbed: Vec<(i64, i64)> = done.iter().map(|(id, g, _)| (*id, *g)).collect();
        let changed: Vec<ChangedDoc> =
            done.into_iter().map(|(id, _, rel)| ChangedDoc { id, rel, source_hash: None }).collect();
        self.finish(coll, &absorbed, &changed, origin)
    }

    /// Announces a changed document with the version now indexed.
    fn announce(&self, coll: &str, doc: &ChangedDoc, origin: Origin) {
        // Its newest journal position: a subscriber that reconnects from it misses nothing of
        // this document (a change after it is replayed, or announced with a later id).
        let change = catalog::latest_change_of(&self.catalog.reader(), doc.id).ok().flatten();
        let uri = uri::doc_uri(coll, &doc.rel);
        self.events.document_changed(&uri, coll, &doc.rel, origin, doc.source_hash.clone(), change);
    }

    /// Commits BM25, records what it absorbed, and announces the changed documents.
    fn finish(
        &self,
        coll: &str,
        absorbed: &[(i64, i64)],
        changed: &[ChangedDoc],
        origin: Origin,
    ) -> Result<(), SyncError> {
        if absorbed.is_empty() {
            return Ok(());
        }
        self.bm25.commit()?;
        catalog::mark_bm25_absorbed(&mut self.catalog.writer(), absorbed)?;
        for doc in changed {
            self.announce(coll, doc, origin);
        }
        Ok(())
    }

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
        let mut to_parse: Vec<(FoundFile, SourceKind)> = Vec::new();

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
            let split = convert::splits_into_parts(&file.rel);
            if split {
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
            let unchanged_docs = if split {
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
                to_parse.push((file, kind));
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
        let mut renamed: HashSet<i64> = HashSet::new();
        let mut absorbed: Vec<(i64, i64)> = Vec::new();
        let mut changed: Vec<ChangedDoc> = Vec::new();
        let mut pending = to_parse.into_iter().peekable();
        while pending.peek().is_some() {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(SyncError::Cancelled);
            }
            let mut parsed: Vec<Box<Parsed>> = Vec::with_capacity(BATCH);
            let mut touched: Vec<Touch> = Vec::new();
            for (file, kind) in pending.by_ref().take(BATCH) {
                let outcomes = if convert::splits_into_parts(&file.rel) {
                    let parts = parts_of.get(file.rel.as_str()).map_or(&[][..], Vec::as_slice);
                    read_and_parse_parts(&file, &known, parts).unwrap_or_else(|reason| {
                        keep(&mut seen, &file.rel);
                        vec![(file.rel.clone(), FileOutcome::Failed(reason))]
                    })
                } else {
                    let prev = known.get(&file.rel);
                    let pictures = Pictures { readings: self.pictures, collection: &coll.name };
                    vec![(file.rel.clone(), read_and_parse(file, prev, kind, pictures))]
                };
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
        let vanished: Vec<i64> = known
            .iter()
            .filter(|(rel, st)| st.active && !seen.contains(*rel) && !renamed.contains(&st.id))
            .map(|(_, st)| st.id)
            .collect();
        if !vanished.is_empty() {
            for (id, gen, rel) in self.deactivate(&coll.name, &vanished, origin)? {
                absorbed.push((id, gen));
                changed.push(ChangedDoc { id, rel, source_hash: None });
            }
            res.files_deactivated = vanished.len() as u64;
        }
        self.finish(&coll.name, &absorbed, &changed, origin)?;
        // Reactivated rows (bytes unchanged) are fed from the catalog.
        self.converge()?;
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
        if convert::splits_into_parts(rel) {
            return self.sync_parts(coll, root, rel, origin);
        }
        let prev = catalog::file_state(&self.catalog.reader(), &coll.name, rel)?;
        let found = found_file(root, rel);
        let kind = source_kind(rel);
        let (Some(file), Some(kind)) = (found, kind) else {
            if let Some(p) = prev.filter(|p| p.active) {
                self.deactivate_now(&coll.name, &[p.id], origin)?;
            }
            return Ok(FileSync::Removed);
        };
        let pictures = Pictures { readings: self.pictures, collection: &coll.name };
        match read_and_parse(file, prev.as_ref(), kind, pictures) {
            FileOutcome::Parsed(p) => {
                let out = self.apply_batch(&coll.name, &[p], &[], origin)?;
                let id = out.written.first().map_or(0, |doc| doc.id);
                self.finish(&coll.name, &out.absorbed, &out.written, origin)?;
                Ok(FileSync::Indexed(id))
            }
            FileOutcome::SameBytes(file) => {
                let Some(state) = prev else { return Ok(FileSync::Failed) };
                let id = state.id;
                let reactivate = !state.active;
                let out = self.apply_batch(&coll.name, &[], &[Touch { state, mtime_ns: file.mtime_ns }], origin)?;
                if reactivate {
                    self.converge()?;
                    for doc in &out.written {
                        self.announce(&coll.name, doc, origin);
                    }
                    return Ok(FileSync::Indexed(id));
                }
                Ok(FileSync::Unchanged(id))
            }
            FileOutcome::Failed(reason) => {
                tracing::debug!("{}: {rel} {reason}", coll.name);
                Ok(FileSync::Failed)
            }
        }
    }

    /// Syncs one file indexed by its parts (a mailbox): each part created, changed or
    /// reactivated, and the parts the file no longer holds (and a document of the whole file
    /// from before it was split) taken out. A file gone takes all its parts out.
    fn sync_parts(
        &self,
        coll: &CollectionConfig,
        root: &Path,
        rel: &str,
        origin: Origin,
    ) -> Result<FileSync, SyncError> {
        let (known, whole) = {
            let conn = self.catalog.reader();
            (catalog::part_states(&conn, &coll.name, rel)?, catalog::file_state(&conn, &coll.name, rel)?)
        };
        let found = found_file(root, rel);
        let whole = whole.filter(|s| s.active && s.part_of.is_none()).map(|s| s.id);
        let Some(file) = found else {
            let ids: Vec<i64> = known.values().filter(|s| s.active).map(|s| s.id).chain(whole).collect();
            if !ids.is_empty() {
                self.deactivate_now(&coll.name, &ids, origin)?;
            }
            return Ok(FileSync::Removed);
        };
        let parts: Vec<&str> = known.keys().map(String::as_str).collect();
        let outcomes = match read_and_parse_parts(&file, &known, &parts) {
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
        let gone: Vec<i64> = known
            .iter()
            .filter(|(part, s)| s.active && !held.contains(*part))
            .map(|(_, s)| s.id)
            .chain(whole)
            .collect();
        let reactivated = touched.iter().any(|t| !t.state.active);
        let first = touched.first().map(|t| t.state.id);
        let out = if parsed.is_empty() && touched.is_empty() {
            BatchOutcome::default()
        } else {
            self.apply_batch(&coll.name, &parsed, &touched, origin)?
        };
        let (mut absorbed, mut changed) = (out.absorbed, out.written);
        let id = changed.first().map(|d| d.id).or(first).unwrap_or_default();
        if !gone.is_empty() {
            for (id, gen, rel) in self.deactivate(&coll.name, &gone, origin)? {
                absorbed.push((id, gen));
                changed.push(ChangedDoc { id, rel, source_hash: None });
            }
        }
        // Committed and marked, then announced once, reactivated parts included.
        self.finish(&coll.name, &absorbed, &[], origin)?;
        if reactivated {
            self.converge()?;
        }
        for doc in &changed {
            self.announce(&coll.name, doc, origin);
        }
        Ok(if changed.is_empty() { FileSync::Unchanged(id) } else { FileSync::Indexed(id) })
    }

    /// Feeds BM25 every row whose generation it has not absorbed (crash recovery, and
    /// rows changed without a re-parse). Cheap when nothing is pending.
    pub fn converge(&self) -> Result<usize, SyncError> {
        let pending = catalog::bm25_pending(&self.catalog.reader())?;
        if pending.is_empty() {
            return Ok(0);
        }
        let mut absorbed = Vec::with_capacity(pending.len());
        for ids in pending.chunks(500) {
            let conn = self.catalog.reader();
            let rows = catalog::docs_by_ids(&conn, ids)?;
            let tags = catalog::tags_of(&conn, ids)?;
            for row in rows {
                if row.active {
                    let text = catalog::content_text(&conn, &row.mirror_hash)?.unwrap_or_default();
                    let no_tags = Vec::new();
                    let categories =
                        self.content_types.categories_with_type(&row.categories, row.fm_type.as_deref(), &row.rel_path);
                    // A code file's symbols are keywords of its title: parsed again here.
                    let symbols = ingest::code_symbols(ingest::body_of(&text, row.body_start_line), &row.rel_path);
                    let title = keyword_title(&row.title, &row.rel_path, &symbols);
                    // The same keyword text as a sync's (ingest::keyword_body).
                    let kind = source_kind(&row.rel_path);
                    let body = ingest::keyword_body(&text, row.body_start_line, kind);
                    // Only a Markdown note has front matter (as a sync's parse reads it).
                    let declared =
                        (kind == Some(SourceKind::Markdown)).then(|| ingest::declared_language(&text)).flatten();
                    self.bm25.upsert(&Bm25Doc {
                        key: row.id,
                        collection: &row.collection,
                        title: &title,
                        body: &body,
                        rel_path: &row.rel_path,
                        tags: tags.get(&row.id).unwrap_or(&no_tags),
                        categories: &categories,
                        modified_ms: row.source_mtime_ns / 1_000_000,
                        declared_language: declared.as_deref(),
                    })?;
                } else {
                    self.bm25.delete(row.id);
                }
                absorbed.push((row.id, row.gen));
            }
        }
        self.bm25.commit()?;
        catalog::mark_bm25_absorbed(&mut self.catalog.writer(), &absorbed)?;
        Ok(absorbed.len())
    }
}

/// The title BM25 indexes: a code file's title followed by its symbols' paths (so
/// `Parser::parse` finds the file that defines it), any other document's title as it is.
fn keyword_title<'a>(title: &'a str, rel: &str, sections: &[ingest::Section]) -> std::borrow::Cow<'a, str> {
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
    use super::*;

    #[test]
    fn a_split_file_is_unchanged_when_its_active_parts_hold_its_mtime() {
        let state = |id, mtime_ns, active| FileState {
            id,
            size: 10,
            mtime_ns,
            source_hash: format!("h{id}"),
            active,
            part_of: Some("box.mbox".into()),
            mirror_hash: String::new(),
        };
        let known: HashMap<String, FileState> = HashMap::from([
            ("box.mbox/00001.eml".to_string(), state(1, 7, true)),
            ("box.mbox/00002.eml".to_string(), state(2, 7, true)),
            // A message gone from the mailbox: its row stays, inactive, with an older mtime.
            ("box.mbox/00003.eml".to_string(), state(3, 5, false)),
        ]);
        let by_file = parts_by_file(&known);
        let mut parts = by_file.get("box.mbox").cloned().unwrap_or_default();
        parts.sort();
        assert_eq!(parts, ["box.mbox/00001.eml", "box.mbox/00002.eml", "box.mbox/00003.eml"]);
        assert_eq!(unchanged_parts(&known, &parts, 7), Some(2), "its two active parts");
        assert_eq!(unchanged_parts(&known, &parts, 8), None, "the file was written since");
        assert_eq!(unchanged_parts(&known, &[], 7), None, "never split: read it");
        let inactive: HashMap<String, FileState> =
            HashMap::from([("box.mbox/00001.eml".to_string(), state(1, 7, false))]);
        assert_eq!(unchanged_parts(&inactive, &["box.mbox/00001.eml"], 7), None, "no active part: read it");
    }

    #[test]
    fn mime_types_by_kind() {
        assert_eq!(mime_and_ext("x.md"), ("text/markdown".into(), ".md".into()));
        assert_eq!(mime_and_ext("x.Pdf"), ("application/pdf".into(), ".pdf".into()));
        assert_eq!(
            mime_and_ext("d/x.docx"),
            ("application/vnd.openxmlformats-officedocument.wordprocessingml.document".into(), ".docx".into())
        );
    }
}
