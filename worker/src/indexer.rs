//! A sync of one collection: walk, skip what is unchanged, parse what changed, write the
//! catalog in batches, feed BM25, deactivate what vanished.

use crate::bm25::{Bm25Doc, Bm25Index};
use crate::catalog::{self, Catalog, FileState, NewDoc};
use crate::config::CollectionConfig;
use crate::ingest::{self, ParsedDoc};
use crate::time_fmt;
use crate::walk::{self, FileMatcher, FoundFile, WalkItem};
use protocol::api::CollectionSyncResult;
use std::collections::HashSet;
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
    Pattern(#[from] walk::PatternError),
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error(transparent)]
    Bm25(#[from] crate::bm25::Bm25Error),
    #[error("stopped: the worker is shutting down")]
    Cancelled,
}

/// The kind of content a file holds, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Markdown,
    PlainText,
}

pub fn source_kind(rel: &str) -> Option<SourceKind> {
    let ext = Path::new(rel).extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "md" | "markdown" | "mdx" => Some(SourceKind::Markdown),
        "txt" | "text" => Some(SourceKind::PlainText),
        _ => None,
    }
}

pub fn mime_and_ext(rel: &str) -> (String, String) {
    let ext = Path::new(rel).extension().and_then(|e| e.to_str()).map(|e| format!(".{}", e.to_ascii_lowercase())).unwrap_or_default();
    let mime = match source_kind(rel) {
        Some(SourceKind::Markdown) => "text/markdown".to_string(),
        Some(SourceKind::PlainText) => "text/plain".to_string(),
        None => mime_guess::from_path(rel).first_or_octet_stream().essence_str().to_string(),
    };
    (mime, ext)
}

/// A file read and parsed, waiting for its batch to be written.
struct Parsed {
    file: FoundFile,
    source_hash: String,
    canonical: String,
    mirror_hash: String,
    doc: ParsedDoc,
    existed: bool,
}

enum FileOutcome {
    Parsed(Box<Parsed>),
    /// The bytes equal what the catalog holds (only the mtime moved).
    SameBytes(FoundFile),
    /// Unreadable or not UTF-8: counted as errored, the previous version stays.
    Failed,
}

/// Reads, hashes and parses a file.
fn read_and_parse(file: FoundFile, prev: Option<&FileState>, kind: SourceKind) -> FileOutcome {
    let Ok(bytes) = std::fs::read(&file.abs) else { return FileOutcome::Failed };
    let source_hash = ingest::sha256_hex(&bytes);
    if prev.is_some_and(|p| p.source_hash == source_hash) {
        return FileOutcome::SameBytes(file);
    }
    let Ok(text) = ingest::decode_utf8(&bytes) else { return FileOutcome::Failed };
    let canonical = ingest::canonicalize(&text);
    let mirror_hash = ingest::sha256_hex(canonical.as_bytes());
    let doc = match kind {
        SourceKind::Markdown => ingest::parse_markdown(&canonical, &file.rel),
        SourceKind::PlainText => ingest::parse_plain_text(&canonical, &file.rel),
    };
    FileOutcome::Parsed(Box::new(Parsed { file, source_hash, canonical, mirror_hash, doc, existed: prev.is_some() }))
}

pub struct Indexer<'a> {
    pub catalog: &'a Catalog,
    pub bm25: &'a Bm25Index,
    pub cancel: &'a AtomicBool,
}

impl Indexer<'_> {
    /// Syncs one collection. BM25 changes are committed before returning.
    pub fn sync_collection(&self, coll: &CollectionConfig) -> Result<CollectionSyncResult, SyncError> {
        let started = Instant::now();
        let mut res = CollectionSyncResult { collection: coll.name.clone(), ..Default::default() };
        let root = Path::new(&coll.path)
            .canonicalize()
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| SyncError::RootMissing(coll.path.clone()))?;
        let matcher = FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude)?;
        let known = catalog::file_states(&self.catalog.reader(), &coll.name)?;
        let mut seen: HashSet<String> = HashSet::with_capacity(known.len());
        let mut to_parse: Vec<(FoundFile, SourceKind)> = Vec::new();
        let mut touched: Vec<(i64, i64, bool)> = Vec::new(); // (id, mtime, reactivate)

        for item in walk::walk(&root, &matcher) {
            let file = match item {
                WalkItem::File(f) => f,
                WalkItem::Error(rel) => {
                    tracing::debug!("{}: cannot read {rel}", coll.name);
                    res.files_processed += 1;
                    res.files_errored += 1;
                    continue;
                }
            };
            res.files_processed += 1;
            seen.insert(file.rel.clone());
            let Some(kind) = source_kind(&file.rel) else {
                res.files_skipped += 1;
                continue;
            };
            if file.size > MAX_FILE_BYTES {
                res.files_skipped += 1;
                continue;
            }
            match known.get(&file.rel) {
                Some(p) if p.active && p.size == file.size && p.mtime_ns == file.mtime_ns => res.files_unchanged += 1,
                _ => to_parse.push((file, kind)),
            }
        }

        let mut absorbed: Vec<(i64, i64)> = Vec::new();
        let mut pending = to_parse.into_iter().peekable();
        while pending.peek().is_some() {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(SyncError::Cancelled);
            }
            let mut parsed: Vec<Box<Parsed>> = Vec::with_capacity(BATCH);
            for (file, kind) in pending.by_ref().take(BATCH) {
                let prev = known.get(&file.rel);
                match (read_and_parse(file, prev, kind), prev) {
                    (FileOutcome::Parsed(p), _) => parsed.push(p),
                    // Bytes unchanged: remember the new mtime; reactivate if it was off
                    // (`converge` then feeds it to BM25 from the catalog).
                    (FileOutcome::SameBytes(file), Some(p)) => {
                        touched.push((p.id, file.mtime_ns, !p.active));
                        if p.active {
                            res.files_unchanged += 1;
                        } else {
                            res.files_updated += 1;
                        }
                    }
                    _ => res.files_errored += 1,
                }
            }
            let now = time_fmt::now_iso();
            let gen;
            let mut written: Vec<(i64, usize)> = Vec::with_capacity(parsed.len());
            {
                let mut conn = self.catalog.writer();
                let tx = conn.transaction().map_err(catalog::CatalogError::from)?;
                gen = catalog::next_generation(&tx)?;
                for (i, p) in parsed.iter().enumerate() {
                    let (mime, ext) = mime_and_ext(&p.file.rel);
                    let id = catalog::upsert_doc(
                        &tx,
                        gen,
                        &NewDoc {
                            collection: &coll.name,
                            rel_path: &p.file.rel,
                            source_hash: &p.source_hash,
                            source_mime: &mime,
                            source_ext: &ext,
                            size: p.file.size,
                            mtime_ns: p.file.mtime_ns,
                            canonical: &p.canonical,
                            mirror_hash: &p.mirror_hash,
                            parsed: &p.doc,
                            indexed_at: &now,
                        },
                    )?;
                    written.push((id, i));
                }
                for (id, mtime, reactivate) in touched.drain(..) {
                    catalog::touch_doc(&tx, id, mtime, reactivate.then_some(gen))?;
                }
                tx.commit().map_err(catalog::CatalogError::from)?;
            }
            for (id, i) in written {
                let p = &parsed[i];
                if p.existed {
                    res.files_updated += 1;
                } else {
                    res.files_added += 1;
                }
                self.bm25.upsert(&Bm25Doc {
                    key: id,
                    collection: &coll.name,
                    title: &p.doc.title,
                    body: &p.doc.body,
                    rel_path: &p.file.rel,
                    tags: &p.doc.tags,
                    categories: &p.doc.categories,
                    modified_ms: p.file.mtime_ns / 1_000_000,
                })?;
                absorbed.push((id, gen));
            }
        }

        // Files that vanished (or stopped matching) leave the index; their rows stay.
        let vanished: Vec<i64> =
            known.iter().filter(|(rel, st)| st.active && !seen.contains(*rel)).map(|(_, st)| st.id).collect();
        if !vanished.is_empty() {
            let mut conn = self.catalog.writer();
            let tx = conn.transaction().map_err(catalog::CatalogError::from)?;
            let gen = catalog::next_generation(&tx)?;
            catalog::deactivate(&tx, gen, &vanished)?;
            tx.commit().map_err(catalog::CatalogError::from)?;
            for id in &vanished {
                self.bm25.delete(*id);
                absorbed.push((*id, gen));
            }
            res.files_deactivated = vanished.len() as u64;
        }
        if !absorbed.is_empty() {
            self.bm25.commit()?;
            catalog::mark_bm25_absorbed(&mut self.catalog.writer(), &absorbed)?;
        }
        // Reactivated rows (bytes unchanged) are fed from the catalog after the commit above.
        self.converge()?;
        catalog::mark_synced(&self.catalog.writer(), &coll.name, &time_fmt::now_iso())?;
        res.duration_ms = started.elapsed().as_millis() as u64;
        Ok(res)
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
                    let body = body_of(&text, row.body_start_line);
                    let no_tags = Vec::new();
                    self.bm25.upsert(&Bm25Doc {
                        key: row.id,
                        collection: &row.collection,
                        title: &row.title,
                        body,
                        rel_path: &row.rel_path,
                        tags: tags.get(&row.id).unwrap_or(&no_tags),
                        categories: &row.categories,
                        modified_ms: row.source_mtime_ns / 1_000_000,
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

/// The canonical text without its front matter: from 1-based line `start` on.
pub fn body_of(canonical: &str, start: u32) -> &str {
    if start <= 1 {
        return canonical;
    }
    let mut line = 1;
    for (i, b) in canonical.bytes().enumerate() {
        if b == b'\n' {
            line += 1;
            if line == start {
                return &canonical[i + 1..];
            }
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_skips_front_matter_lines() {
        let t = "---\ntitle: x\n---\n# Head\nbody\n";
        assert_eq!(body_of(t, 4), "# Head\nbody\n");
        assert_eq!(body_of(t, 1), t);
        assert_eq!(body_of(t, 99), "");
    }

    #[test]
    fn kinds_by_extension() {
        assert_eq!(source_kind("a/b.MD"), Some(SourceKind::Markdown));
        assert_eq!(source_kind("a.txt"), Some(SourceKind::PlainText));
        assert_eq!(source_kind("a.pdf"), None);
        assert_eq!(mime_and_ext("x.md"), ("text/markdown".into(), ".md".into()));
    }
}
