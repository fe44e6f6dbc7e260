//! Which contents the vector table of each embedding model has absorbed. Like `bm25_gen`
//! for tantivy: LanceDB is derived, this table says how far it got, and whatever a crash
//! left out is simply still in the backlog. `embed_failures` keeps the contents a model
//! could not embed out of the backlog until they change or the worker restarts.

use super::Result;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// A content waiting to be embedded: its hash and the title it is embedded with.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingContent {
    pub mirror_hash: String,
    pub title: String,
    /// The path of one document with this content (its kind says how to read it).
    pub rel_path: String,
}

/// Active documents whose content waits for model `?1`: neither embedded nor failed on.
const WAITING: &str = "d.active = 1
         AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = d.mirror_hash AND e.model = ?1)
         AND NOT EXISTS (SELECT 1 FROM embed_failures f WHERE f.mirror_hash = d.mirror_hash AND f.model = ?1)";

/// Up to `limit` contents of active documents that `model` has not embedded yet (contents
/// it failed on wait until they change or the worker restarts, see [`mark_embed_failed`]).
pub fn embed_backlog(conn: &Connection, model: &str, limit: usize) -> Result<Vec<PendingContent>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT d.mirror_hash, MIN(d.title), MIN(d.rel_path) FROM documents d WHERE {WAITING}
         GROUP BY d.mirror_hash ORDER BY MIN(d.id) LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![model, limit.min(i64::MAX as usize) as i64], |r| {
        Ok(PendingContent { mirror_hash: r.get(0)?, title: r.get(1)?, rel_path: r.get(2)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every active content, each with one of its documents' title and path (in row order).
pub fn active_contents(conn: &Connection) -> Result<Vec<PendingContent>> {
    let mut stmt = conn.prepare(
        "SELECT d.mirror_hash, MIN(d.title), MIN(d.rel_path) FROM documents d WHERE d.active = 1
         GROUP BY d.mirror_hash ORDER BY MIN(d.id)",
    )?;
    let rows =
        stmt.query_map([], |r| Ok(PendingContent { mirror_hash: r.get(0)?, title: r.get(1)?, rel_path: r.get(2)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// An active document that `model` has not embedded: its collection, its path, and the error
/// the model failed on it with (`None`: it waits for the model).
#[derive(Debug, Clone, PartialEq)]
pub struct Unembedded {
    pub collection: String,
    pub rel_path: String,
    pub failed: Option<String>,
}

/// Every active document whose content `model` has not embedded, by collection and path.
pub fn unembedded_docs(conn: &Connection, model: &str) -> Result<Vec<Unembedded>> {
    let mut stmt = conn.prepare(
        "SELECT d.collection, d.rel_path, f.error FROM documents d
         LEFT JOIN embed_failures f ON f.mirror_hash = d.mirror_hash AND f.model = ?1
         WHERE d.active = 1
           AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = d.mirror_hash AND e.model = ?1)
         ORDER BY d.collection, d.rel_path",
    )?;
    let rows =
        stmt.query_map([model], |r| Ok(Unembedded { collection: r.get(0)?, rel_path: r.get(1)?, failed: r.get(2)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many distinct active contents wait for `model`.
pub fn embed_backlog_count(conn: &Connection, model: &str) -> Result<u64> {
    let n: i64 = conn.query_row(
        &format!("SELECT COUNT(DISTINCT d.mirror_hash) FROM documents d WHERE {WAITING}"),
        [model],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// Active documents whose content `model` has embedded, per collection.
pub fn embedded_counts(conn: &Connection, model: &str) -> Result<HashMap<String, u64>> {
    let mut stmt = conn.prepare(
        "SELECT d.collection, COUNT(*) FROM documents d
         WHERE d.active = 1 AND EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = d.mirror_hash AND e.model = ?1)
         GROUP BY d.collection",
    )?;
    let rows = stmt.query_map([model], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The contents `model`'s table should hold, by the record.
pub fn embedded_contents(conn: &Connection, model: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT mirror_hash FROM embeddings WHERE model = ?1")?;
    let rows = stmt.query_map([model], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many chunk vectors `model`'s table should hold, by the record.
pub fn embedded_chunk_count(conn: &Connection, model: &str) -> Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM chunks c WHERE EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = c.mirror_hash AND e.model = ?1)",
        [model],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// Records that `model`'s table now holds these contents.
pub fn mark_embedded(conn: &mut Connection, model: &str, hashes: &[String], at: &str) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx
            .prepare_cached("INSERT OR REPLACE INTO embeddings(mirror_hash, model, embedded_at) VALUES (?1, ?2, ?3)")?;
        let mut unfail = tx.prepare_cached("DELETE FROM embed_failures WHERE mirror_hash = ?1 AND model = ?2")?;
        for h in hashes {
            stmt.execute(params![h, model, at])?;
            unfail.execute(params![h, model])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Contents `model` embedded that no document refers to any more (their vectors can go).
pub fn orphaned_embeddings(conn: &Connection, model: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT e.mirror_hash FROM embeddings e WHERE e.model = ?1
         AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.mirror_hash = e.mirror_hash)",
    )?;
    let rows = stmt.query_map([model], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Forgets that `model` embedded these contents (their rows in its table may stay behind).
pub fn forget_embeddings(conn: &Connection, model: &str, hashes: &[String]) -> Result<()> {
    let mut stmt = conn.prepare_cached("DELETE FROM embeddings WHERE model = ?1 AND mirror_hash = ?2")?;
    for h in hashes {
        stmt.execute(params![model, h])?;
    }
    Ok(())
}

/// Records that `model` could not embed this content: it leaves the backlog until its
/// content changes (a new hash) or the catalog is opened again (the next worker start,
/// which empties `embed_failures`).
pub fn mark_embed_failed(conn: &Connection, model: &str, mirror_hash: &str, error: &str, at: &str) -> Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO embed_failures(mirror_hash, model, error, failed_at) VALUES (?1, ?2, ?3, ?4)",
        params![mirror_hash, model, error, at],
    )?;
    Ok(())
}

/// Drops `model`'s failure records of contents no document refers to any more.
pub fn drop_orphaned_failures(conn: &Connection, model: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM embed_failures WHERE model = ?1
         AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.mirror_hash = embed_failures.mirror_hash)",
        [model],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::catalog::schema::SCHEMA;
    use crate::stores::catalog::Catalog;

    const MODEL: &str = "chunks_test_4";

    /// Active documents in collection `c`, one per `(mirror_hash, active)`.
    fn add_docs(conn: &Connection, docs: &[(&str, bool)]) {
        for (i, &(hash, active)) in docs.iter().enumerate() {
            conn.execute(
                "INSERT INTO documents(collection, rel_path, docid, source_hash, mirror_hash, source_mime, source_ext,
                   source_size, source_mtime_ns, title, active, gen, indexed_at)
                 VALUES ('c', ?1, ?1, ?2, ?2, 'text/markdown', 'md', 1, 0, ?3, ?4, 1, 'now')",
                params![format!("{i}.md"), hash, format!("Title {i}"), active],
            )
            .unwrap();
        }
    }

    fn catalog_of(docs: &[(&str, bool)]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        add_docs(&conn, docs);
        conn
    }

    fn backlog(conn: &Connection, model: &str) -> Vec<String> {
        embed_backlog(conn, model, usize::MAX).unwrap().into_iter().map(|p| p.mirror_hash).collect()
    }

    fn failures(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM embed_failures", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_failed_content_leaves_the_backlog_of_its_model_only() {
        let conn = catalog_of(&[("a", true), ("b", true), ("z", false)]);
        assert_eq!(backlog(&conn, MODEL), ["a", "b"]);
        mark_embed_failed(&conn, MODEL, "a", "model inference failed: boom", "now").unwrap();
        assert_eq!(backlog(&conn, MODEL), ["b"]);
        assert_eq!(embed_backlog_count(&conn, MODEL).unwrap(), 1);
        assert_eq!(backlog(&conn, "other"), ["a", "b"], "another model still wants it");
        // Failing again is no error (the record is replaced).
        mark_embed_failed(&conn, MODEL, "a", "again", "later").unwrap();
        assert_eq!(failures(&conn), 1);
    }

    #[test]
    fn a_failed_content_comes_back_when_it_changes() {
        let conn = catalog_of(&[("a", true), ("b", true)]);
        mark_embed_failed(&conn, MODEL, "a", "boom", "now").unwrap();
        conn.execute("UPDATE documents SET mirror_hash = 'a2' WHERE mirror_hash = 'a'", []).unwrap();
        assert_eq!(backlog(&conn, MODEL), ["a2", "b"]);
        assert_eq!(embed_backlog_count(&conn, MODEL).unwrap(), 2);
    }

    #[test]
    fn embedding_a_content_clears_its_failure() {
        let mut conn = catalog_of(&[("a", true)]);
        mark_embed_failed(&conn, MODEL, "a", "boom", "now").unwrap();
        mark_embedded(&mut conn, MODEL, &["a".to_string()], "later").unwrap();
        assert_eq!(failures(&conn), 0);
        assert!(backlog(&conn, MODEL).is_empty());
    }

    #[test]
    fn failures_of_contents_no_document_refers_to_are_dropped() {
        let conn = catalog_of(&[("a", true)]);
        mark_embed_failed(&conn, MODEL, "a", "boom", "now").unwrap();
        mark_embed_failed(&conn, MODEL, "gone", "boom", "now").unwrap();
        mark_embed_failed(&conn, "other", "gone", "boom", "now").unwrap();
        drop_orphaned_failures(&conn, MODEL).unwrap();
        let left: Vec<(String, String)> = conn
            .prepare("SELECT mirror_hash, model FROM embed_failures ORDER BY mirror_hash, model")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(left, [("a".to_string(), MODEL.to_string()), ("gone".to_string(), "other".to_string())]);
    }

    #[test]
    fn reopening_the_catalog_retries_failed_contents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.sqlite");
        {
            let catalog = Catalog::open(&path).unwrap();
            let conn = catalog.writer();
            add_docs(&conn, &[("a", true), ("b", true)]);
            mark_embed_failed(&conn, MODEL, "a", "boom", "now").unwrap();
            assert_eq!(backlog(&conn, MODEL), ["b"]);
        }
        let catalog = Catalog::open(&path).unwrap();
        assert_eq!(backlog(&catalog.reader(), MODEL), ["a", "b"], "a worker start retries what failed");
    }
}
