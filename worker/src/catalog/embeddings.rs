//! Which contents the vector table of each embedding model has absorbed. Like `bm25_gen`
//! for tantivy: LanceDB is derived, this table says how far it got, and whatever a crash
//! left out is simply still in the backlog.

use super::Result;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// A content waiting to be embedded: its hash and the title it is embedded with.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingContent {
    pub mirror_hash: String,
    pub title: String,
}

/// Up to `limit` contents of active documents that `model` has not embedded yet.
pub fn embed_backlog(conn: &Connection, model: &str, limit: usize) -> Result<Vec<PendingContent>> {
    let mut stmt = conn.prepare_cached(
        "SELECT d.mirror_hash, MIN(d.title) FROM documents d
         WHERE d.active = 1 AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = d.mirror_hash AND e.model = ?1)
         GROUP BY d.mirror_hash ORDER BY MIN(d.id) LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![model, limit.min(i64::MAX as usize) as i64], |r| Ok(PendingContent { mirror_hash: r.get(0)?, title: r.get(1)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many distinct active contents wait for `model`.
pub fn embed_backlog_count(conn: &Connection, model: &str) -> Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(DISTINCT d.mirror_hash) FROM documents d
         WHERE d.active = 1 AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = d.mirror_hash AND e.model = ?1)",
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

/// Records that `model`'s table now holds these contents.
pub fn mark_embedded(conn: &mut Connection, model: &str, hashes: &[String], at: &str) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare_cached("INSERT OR REPLACE INTO embeddings(mirror_hash, model, embedded_at) VALUES (?1, ?2, ?3)")?;
        for h in hashes {
            stmt.execute(params![h, model, at])?;
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

pub fn forget_embeddings(conn: &Connection, model: &str, hashes: &[String]) -> Result<()> {
    let mut stmt = conn.prepare_cached("DELETE FROM embeddings WHERE model = ?1 AND mirror_hash = ?2")?;
    for h in hashes {
        stmt.execute(params![model, h])?;
    }
    Ok(())
}
