//! Documents, their content, chunks, tags and links.

use super::{CatalogError, Result};
use crate::stores::DocKey;
use protocol::LinkKind;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row, Transaction};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One catalog row of `documents`.
#[derive(Debug, Clone, PartialEq)]
pub struct DocRow {
    pub id: DocKey,
    pub collection: String,
    pub rel_path: String,
    pub docid: String,
    pub source_hash: String,
    pub mirror_hash: String,
    pub source_mime: String,
    pub source_ext: String,
    pub source_size: u64,
    pub source_mtime_ns: i64,
    pub title: String,
    pub author: Option<String>,
    pub categories: Vec<String>,
    pub fm_date: Option<String>,
    pub date_fields: BTreeMap<String, String>,
    pub body_start_line: u32,
    pub active: bool,
    pub gen: i64,
    pub bm25_gen: i64,
    /// Front-matter `type`, lowercased (it names a content type when a rule has that id).
    pub fm_type: Option<String>,
    /// The file this document is a part of (a mailbox's message); `None`: the whole file.
    pub part_of: Option<String>,
}

impl DocRow {
    /// The path of the file on disk that holds this document: its own, or for a part the
    /// file it is a part of.
    pub fn file_rel(&self) -> &str {
        self.part_of.as_deref().unwrap_or(&self.rel_path)
    }
}

pub(crate) const DOC_COLUMNS: &str = "id, collection, rel_path, docid, source_hash, mirror_hash, source_mime, source_ext, \
     source_size, source_mtime_ns, title, author, categories, fm_date, date_fields, body_start_line, active, gen, bm25_gen, fm_type, \
     part_of";

/// A JSON column of a row, parsed; a malformed value is the row's error, never a default.
pub(crate) fn json_column<T: serde::de::DeserializeOwned>(r: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e)))
}

pub(crate) fn doc_from_row(r: &Row<'_>) -> rusqlite::Result<DocRow> {
    Ok(DocRow {
        id: r.get(0)?,
        collection: r.get(1)?,
        rel_path: r.get(2)?,
        docid: r.get(3)?,
        source_hash: r.get(4)?,
        mirror_hash: r.get(5)?,
        source_mime: r.get(6)?,
        source_ext: r.get(7)?,
        source_size: r.get::<_, i64>(8)?.max(0) as u64,
        source_mtime_ns: r.get(9)?,
        title: r.get(10)?,
        author: r.get(11)?,
        categories: json_column(r, 12)?,
        fm_date: r.get(13)?,
        date_fields: json_column(r, 14)?,
        body_start_line: r.get::<_, i64>(15)?.max(1) as u32,
        active: r.get::<_, i64>(16)? != 0,
        gen: r.get(17)?,
        bm25_gen: r.get(18)?,
        fm_type: r.get(19)?,
        part_of: r.get(20)?,
    })
}

/// What a sync needs to know about a file it saw before, to skip it cheaply.
#[derive(Debug, Clone, PartialEq)]
pub struct FileState {
    pub id: DocKey,
    pub size: u64,
    pub mtime_ns: i64,
    pub source_hash: String,
    pub active: bool,
    /// The file this document is a part of; `None`: the whole file.
    pub part_of: Option<String>,
    /// The hash of the document's canonical text (a picture's changes when OCR has read it).
    pub mirror_hash: String,
}

const FILE_STATE_COLUMNS: &str = "id, source_size, source_mtime_ns, source_hash, active, part_of, mirror_hash";

/// A [`FileState`] from [`FILE_STATE_COLUMNS`], starting at column `at` of the row.
fn file_state_at(r: &Row<'_>, at: usize) -> rusqlite::Result<FileState> {
    Ok(FileState {
        id: r.get(at)?,
        size: r.get::<_, i64>(at + 1)?.max(0) as u64,
        mtime_ns: r.get(at + 2)?,
        source_hash: r.get(at + 3)?,
        active: r.get::<_, i64>(at + 4)? != 0,
        part_of: r.get(at + 5)?,
        mirror_hash: r.get(at + 6)?,
    })
}

/// A parsed file ready to be written.
pub struct NewDoc<'a> {
    pub collection: &'a str,
    pub rel_path: &'a str,
    /// The file the document is a part of; `None`: the whole file.
    pub part_of: Option<&'a str>,
    pub source_hash: &'a str,
    pub source_mime: &'a str,
    pub source_ext: &'a str,
    pub size: u64,
    pub mtime_ns: i64,
    pub canonical: &'a str,
    pub mirror_hash: &'a str,
    pub parsed: Parsed<'a>,
    pub indexed_at: &'a str,
}

/// What a parse of a file gives the catalog.
pub struct Parsed<'a> {
    pub title: &'a str,
    pub author: Option<&'a str>,
    pub categories: &'a [String],
    pub date: Option<&'a str>,
    pub date_fields: &'a BTreeMap<String, String>,
    pub body_start_line: u32,
    pub doc_type: Option<&'a str>,
    pub tags: &'a [String],
    pub links: &'a [Link],
    pub chunks: &'a [Chunk],
}

/// A link as the parser found it in the canonical text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub link_type: LinkKind,
    pub target_ref: String,
    pub target_ref_norm: String,
    pub target_anchor: Option<String>,
    pub target_collection: Option<String>,
    pub link_text: Option<String>,
    /// 1-based line in the canonical text (front matter lines count).
    pub start_line: u32,
    /// 1-based column, counted in chars.
    pub start_col: u32,
    pub end_line: u32,
    /// 1-based column of the last char of the link (inclusive).
    pub end_col: u32,
    /// An embed (`![[Note]]`, `![alt](pic.png)`): the target is shown in place.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub embed: bool,
}

/// A piece of a document's text, as embedded and as a search result shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chunk {
    pub seq: u32,
    pub text: String,
    /// 1-based lines in the canonical text.
    pub start_line: u32,
    pub end_line: u32,
    /// Code: the symbol the chunk belongs to (NULL for a chunk indexed before the column
    /// existed, until its file changes).
    pub symbol: Option<String>,
}

/// A stored link: the link and the document it is in. It reads as its [`Link`].
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRow {
    pub doc_id: DocKey,
    pub link: Link,
}

impl std::ops::Deref for LinkRow {
    type Target = Link;
    fn deref(&self) -> &Link {
        &self.link
    }
}

/// `#` + the first 8 hex digits of the source hash.
pub fn docid_of(source_hash: &str) -> String {
    format!("#{}", &source_hash[..source_hash.len().min(8)])
}

pub fn file_states(conn: &Connection, collection: &str) -> Result<HashMap<String, FileState>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT rel_path, {FILE_STATE_COLUMNS} FROM documents WHERE collection = ?1"))?;
    let rows = stmt.query_map([collection], |r| Ok((r.get::<_, String>(0)?, file_state_at(r, 1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The documents that are parts of the file `file` (active or not), by path: a range of the
/// `(collection, rel_path)` index, as parts sit at `<file>/<part key>`.
pub fn part_states(conn: &Connection, collection: &str, file: &str) -> Result<HashMap<String, FileState>> {
    let (from, to) = (format!("{file}/"), format!("{file}0"));
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rel_path, {FILE_STATE_COLUMNS} FROM documents \
         WHERE collection = ?1 AND rel_path >= ?2 AND rel_path < ?3 AND part_of = ?4"
    ))?;
    let rows =
        stmt.query_map(params![collection, from, to, file], |r| Ok((r.get::<_, String>(0)?, file_state_at(r, 1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The paths under the folder `folder` (relative, without a trailing slash), as a range of the
/// `(collection, rel_path)` index: `folder/` up to, not including, `folder0` (`'0'` follows
/// `'/'`).
pub(super) fn paths_under(folder: &str) -> (String, String) {
    (format!("{folder}/"), format!("{folder}0"))
}

/// Whether `collection` has an active document under the folder `folder` (relative, without
/// a trailing slash): a range of the `(collection, rel_path)` index ([`paths_under`]).
pub fn has_active_under(conn: &Connection, collection: &str, folder: &str) -> Result<bool> {
    let (from, to) = paths_under(folder);
    Ok(conn
        .query_row(
            "SELECT 1 FROM documents WHERE collection = ?1 AND rel_path >= ?2 AND rel_path < ?3 AND active = 1 LIMIT 1",
            params![collection, from, to],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

pub fn file_state(conn: &Connection, collection: &str, rel_path: &str) -> Result<Option<FileState>> {
    Ok(conn
        .query_row(
            &format!("SELECT {FILE_STATE_COLUMNS} FROM documents WHERE collection = ?1 AND rel_path = ?2"),
            params![collection, rel_path],
            |r| file_state_at(r, 0),
        )
        .optional()?)
}

/// The catalog generation: bumped by every change to a document.
pub fn current_generation(conn: &Connection) -> Result<i64> {
    let stored =
        conn.query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| r.get::<_, String>(0)).optional()?;
    match stored {
        None => Ok(0),
        Some(v) => v.parse().map_err(|_| CatalogError::Malformed(format!("the catalog generation {v:?}"))),
    }
}

/// When the index recorded each document's current version (ISO 8601), by row id.
pub fn indexed_at(conn: &Connection, ids: &[DocKey]) -> Result<HashMap<DocKey, String>> {
    let mut out = HashMap::new();
    let mut stmt = conn.prepare_cached("SELECT indexed_at FROM documents WHERE id = ?1")?;
    for id in ids {
        if let Some(at) = stmt.query_row([id], |r| r.get::<_, String>(0)).optional()? {
            out.insert(*id, at);
        }
    }
    Ok(out)
}

/// Allocates the next catalog generation inside `tx`.
pub fn next_generation(tx: &Transaction<'_>) -> Result<i64> {
    let next = current_generation(tx)? + 1;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES('generation', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [next.to_string()],
    )?;
    Ok(next)
}

/// Inserts or replaces a document with its content, chunks, tags and links. Returns its row id.
pub fn upsert_doc(tx: &Transaction<'_>, gen: i64, d: &NewDoc<'_>) -> Result<DocKey> {
    let p = &d.parsed;
    let categories = serde_json::to_string(&p.categories).map_err(|e| CatalogError::Malformed(e.to_string()))?;
    let date_fields = serde_json::to_string(&p.date_fields).map_err(|e| CatalogError::Malformed(e.to_string()))?;
    let id: DocKey = tx.query_row(
        "INSERT INTO documents(collection, rel_path, docid, source_hash, mirror_hash, source_mime, source_ext, source_size, \
           source_mtime_ns, title, author, categories, fm_date, date_fields, body_start_line, active, gen, bm25_gen, indexed_at,
           fm_type, part_of)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 1, ?16, 0, ?17, ?18, ?19)
         ON CONFLICT(collection, rel_path) DO UPDATE SET docid = excluded.docid, source_hash = excluded.source_hash,
           mirror_hash = excluded.mirror_hash, source_mime = excluded.source_mime, source_ext = excluded.source_ext,
           source_size = excluded.source_size, source_mtime_ns = excluded.source_mtime_ns, title = excluded.title,
           author = excluded.author, categories = excluded.categories, fm_date = excluded.fm_date,
           date_fields = excluded.date_fields, body_start_line = excluded.body_start_line, active = 1,
           gen = excluded.gen, indexed_at = excluded.indexed_at, fm_type = excluded.fm_type,
           part_of = excluded.part_of
         RETURNING id",
        params![
            d.collection,
            d.rel_path,
            docid_of(d.source_hash),
            d.source_hash,
            d.mirror_hash,
            d.source_mime,
            d.source_ext,
            d.size as i64,
            d.mtime_ns,
            p.title,
            p.author,
            categories,
            p.date,
            date_fields,
            p.body_start_line as i64,
            gen,
            d.indexed_at,
            p.doc_type,
            d.part_of,
        ],
        |r| r.get(0),
    )?;
    tx.prepare_cached("DELETE FROM doc_date_keys WHERE doc_id = ?1")?.execute([id])?;
    if !p.date_fields.is_empty() {
        let mut stmt = tx.prepare_cached("INSERT OR IGNORE INTO doc_date_keys(key, doc_id) VALUES(?1, ?2)")?;
        for key in p.date_fields.keys() {
            stmt.execute(params![key, id])?;
        }
    }
    let inserted = tx.execute(
        "INSERT OR IGNORE INTO content(mirror_hash, text) VALUES(?1, ?2)",
        params![d.mirror_hash, d.canonical],
    )?;
    if inserted > 0 {
        tx.execute("DELETE FROM chunks WHERE mirror_hash = ?1", [d.mirror_hash])?;
        let mut stmt = tx.prepare_cached(
            "INSERT INTO chunks(mirror_hash, seq, text, start_line, end_line, symbol) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for c in p.chunks {
            stmt.execute(params![
                d.mirror_hash,
                c.seq as i64,
                c.text,
                c.start_line as i64,
                c.end_line as i64,
                c.symbol
            ])?;
        }
    }
    tx.execute("DELETE FROM doc_tags WHERE doc_id = ?1", [id])?;
    {
        let mut stmt = tx.prepare_cached("INSERT OR IGNORE INTO doc_tags(doc_id, tag) VALUES(?1, ?2)")?;
        for t in p.tags {
            stmt.execute(params![id, t])?;
        }
    }
    super::links::replace_links(tx, id, p.links)?;
    Ok(id)
}

/// Moves the document `id` to `rel_path` (its row, and so its history, stays), in generation
/// `gen` when given (a rename on its own), else in the one the write around it set.
pub fn move_doc(tx: &Transaction<'_>, id: DocKey, rel_path: &str, gen: Option<i64>) -> Result<()> {
    match gen {
        Some(gen) => {
            tx.execute("UPDATE documents SET rel_path = ?2, gen = ?3 WHERE id = ?1", params![id, rel_path, gen])?
        }
        None => tx.execute("UPDATE documents SET rel_path = ?2 WHERE id = ?1", params![id, rel_path])?,
    };
    Ok(())
}

/// Deletes an inactive row that still holds `rel_path` (so another row can take the path).
pub fn drop_stale_row(tx: &Transaction<'_>, collection: &str, rel_path: &str, keep: DocKey) -> Result<()> {
    let stale: Option<i64> = tx
        .query_row(
            "SELECT id FROM documents WHERE collection = ?1 AND rel_path = ?2 AND id != ?3",
            params![collection, rel_path, keep],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = stale {
        tx.execute("DELETE FROM doc_tags WHERE doc_id = ?1", [id])?;
        tx.execute("DELETE FROM doc_links WHERE doc_id = ?1", [id])?;
        tx.execute("DELETE FROM doc_date_keys WHERE doc_id = ?1", [id])?;
        tx.execute("DELETE FROM documents WHERE id = ?1", [id])?;
    }
    Ok(())
}

/// Records a new mtime for a file whose bytes did not change; reactivates it when asked.
pub fn touch_doc(tx: &Transaction<'_>, id: DocKey, mtime_ns: i64, reactivate_gen: Option<i64>) -> Result<()> {
    match reactivate_gen {
        Some(gen) => tx.execute(
            "UPDATE documents SET source_mtime_ns = ?2, active = 1, gen = ?3 WHERE id = ?1",
            params![id, mtime_ns, gen],
        )?,
        None => tx.execute("UPDATE documents SET source_mtime_ns = ?2 WHERE id = ?1", params![id, mtime_ns])?,
    };
    Ok(())
}

/// Marks documents inactive (they stay in the catalog; searches no longer see them).
pub fn deactivate(tx: &Transaction<'_>, gen: i64, ids: &[DocKey]) -> Result<()> {
    let mut stmt = tx.prepare_cached("UPDATE documents SET active = 0, gen = ?2 WHERE id = ?1 AND active = 1")?;
    for id in ids {
        stmt.execute(params![id, gen])?;
    }
    Ok(())
}

/// Deactivates every document of a collection; returns their ids.
pub fn deactivate_collection(tx: &Transaction<'_>, gen: i64, collection: &str) -> Result<Vec<DocKey>> {
    let ids: Vec<DocKey> = {
        let mut stmt = tx.prepare("SELECT id FROM documents WHERE collection = ?1 AND active = 1")?;
        let rows = stmt.query_map([collection], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    deactivate(tx, gen, &ids)?;
    Ok(ids)
}

pub fn docs_by_ids(conn: &Connection, ids: &[DocKey]) -> Result<Vec<DocRow>> {
    docs_in(conn, "id IN", "", ids)
}

/// Rows where `{column_in} (values)` holds, queried in slices of 500 values (SQLite's
/// parameter limit), each slice ordered by `order`.
fn docs_in<T: rusqlite::ToSql>(conn: &Connection, column_in: &str, order: &str, values: &[T]) -> Result<Vec<DocRow>> {
    let mut out = Vec::with_capacity(values.len());
    for chunk in values.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(",");
        let sql = format!("SELECT {DOC_COLUMNS} FROM documents WHERE {column_in} ({marks}) {order}");
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params_from_iter(chunk.iter()), doc_from_row)?;
        for r in rows {
            out.push(r?);
        }
    }
    Ok(out)
}

/// The active document with this docid (lowest row id when identical files share it).
pub fn doc_by_docid(conn: &Connection, docid: &str) -> Result<Option<DocRow>> {
    let sql = format!("SELECT {DOC_COLUMNS} FROM documents WHERE docid = ?1 AND active = 1 ORDER BY id LIMIT 1");
    Ok(conn.query_row(&sql, [docid], doc_from_row).optional()?)
}

pub fn doc_by_path(conn: &Connection, collection: &str, rel_path: &str) -> Result<Option<DocRow>> {
    let sql = format!("SELECT {DOC_COLUMNS} FROM documents WHERE collection = ?1 AND rel_path = ?2 AND active = 1");
    Ok(conn.query_row(&sql, params![collection, rel_path], doc_from_row).optional()?)
}

/// The document with this docid, active or not: the active one when there is one, else the
/// most recently indexed inactive one (for diagnostics that must tell "inactive" apart).
pub fn any_doc_by_docid(conn: &Connection, docid: &str) -> Result<Option<DocRow>> {
    let sql = format!("SELECT {DOC_COLUMNS} FROM documents WHERE docid = ?1 ORDER BY active DESC, id DESC LIMIT 1");
    Ok(conn.query_row(&sql, [docid], doc_from_row).optional()?)
}

/// The document at this path, active or not (see [`any_doc_by_docid`]).
pub fn any_doc_by_path(conn: &Connection, collection: &str, rel_path: &str) -> Result<Option<DocRow>> {
    let sql = format!(
        "SELECT {DOC_COLUMNS} FROM documents WHERE collection = ?1 AND rel_path = ?2 ORDER BY active DESC, id DESC LIMIT 1"
    );
    Ok(conn.query_row(&sql, params![collection, rel_path], doc_from_row).optional()?)
}

/// All active documents, optionally of one collection, in row order.
pub fn active_docs(conn: &Connection, collection: Option<&str>) -> Result<Vec<DocRow>> {
    let sql =
        format!("SELECT {DOC_COLUMNS} FROM documents WHERE active = 1 AND (?1 IS NULL OR collection = ?1) ORDER BY id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([collection], doc_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Active documents holding any of these contents (a content may back several documents).
pub fn active_docs_by_mirror(conn: &Connection, hashes: &[String]) -> Result<Vec<DocRow>> {
    docs_in(conn, "active = 1 AND mirror_hash IN", "ORDER BY id", hashes)
}

pub fn tags_of(conn: &Connection, ids: &[DocKey]) -> Result<HashMap<DocKey, Vec<String>>> {
    let mut out: HashMap<DocKey, Vec<String>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(",");
        let sql = format!("SELECT doc_id, tag FROM doc_tags WHERE doc_id IN ({marks}) ORDER BY tag");
        let mut stmt = conn.prepare(&sql)?;
        let rows =
            stmt.query_map(params_from_iter(chunk.iter()), |r| Ok((r.get::<_, DocKey>(0)?, r.get::<_, String>(1)?)))?;
        for r in rows {
            let (id, tag) = r?;
            out.entry(id).or_default().push(tag);
        }
    }
    Ok(out)
}

pub fn content_text(conn: &Connection, mirror_hash: &str) -> Result<Option<String>> {
    Ok(conn.query_row("SELECT text FROM content WHERE mirror_hash = ?1", [mirror_hash], |r| r.get(0)).optional()?)
}

pub fn chunks_of(conn: &Connection, mirror_hash: &str) -> Result<Vec<Chunk>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, text, start_line, end_line, symbol FROM chunks WHERE mirror_hash = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([mirror_hash], |r| {
        Ok(Chunk {
            seq: r.get::<_, i64>(0)? as u32,
            text: r.get(1)?,
            start_line: r.get::<_, i64>(2)? as u32,
            end_line: r.get::<_, i64>(3)? as u32,
            symbol: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::catalog::schema::SCHEMA;

    #[test]
    fn a_folder_has_active_documents_under_it_by_prefix_not_by_name() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        for (rel, active) in
            [("a/x.md", true), ("a-b/y.md", true), ("ab.md", true), ("c/z.md", false), ("a/b/w.md", true)]
        {
            crate::stores::catalog::test_rows::insert(&conn, rel, active);
        }
        let under = |folder: &str| has_active_under(&conn, "c", folder).unwrap();
        assert!(under("a"));
        assert!(under("a/b"));
        assert!(under("a-b"));
        assert!(!under("ab"), "a file is not a folder");
        assert!(!under("c"), "only inactive documents");
        assert!(!under("d"));
        assert!(!has_active_under(&conn, "other", "a").unwrap());
    }

    #[test]
    fn malformed_stored_data_is_an_error_not_a_default() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute(
            "INSERT INTO documents(collection, rel_path, docid, source_hash, mirror_hash, source_mime, source_ext,
               source_size, source_mtime_ns, title, categories, active, gen, indexed_at)
             VALUES ('c', 'a.md', 'd', 'h', 'h', 'text/markdown', 'md', 1, 0, 't', 'not json', 1, 1, 'now')",
            [],
        )
        .unwrap();
        let row = conn.query_row(&format!("SELECT {DOC_COLUMNS} FROM documents"), [], doc_from_row);
        assert!(row.is_err(), "categories that are not JSON");
        conn.execute("INSERT INTO meta(key, value) VALUES('generation', 'seven')", []).unwrap();
        assert!(matches!(current_generation(&conn), Err(CatalogError::Malformed(_))));
    }
}
