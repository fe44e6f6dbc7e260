//! The collections' rows and counts: what the catalog knows of each configured folder.

use super::Result;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;

/// `(documents, chunks)` per collection, over active documents.
pub fn collection_counts(conn: &Connection) -> Result<HashMap<String, (u64, u64)>> {
    let mut stmt = conn.prepare(
        "SELECT d.collection, COUNT(*), COALESCE(SUM((SELECT COUNT(*) FROM chunks c WHERE c.mirror_hash = d.mirror_hash)), 0)
         FROM documents d WHERE d.active = 1 GROUP BY d.collection",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?;
    let mut out = HashMap::new();
    for r in rows {
        let (c, d, ch) = r?;
        out.insert(c, (d.max(0) as u64, ch.max(0) as u64));
    }
    Ok(out)
}

/// Tag counts over active documents.
pub fn tag_counts(conn: &Connection, collection: Option<&str>) -> Result<Vec<(String, u64)>> {
    let mut stmt = conn.prepare(
        "SELECT t.tag, COUNT(*) FROM doc_tags t JOIN documents d ON d.id = t.doc_id
         WHERE d.active = 1 AND (?1 IS NULL OR d.collection = ?1) GROUP BY t.tag ORDER BY COUNT(*) DESC, t.tag",
    )?;
    let rows = stmt.query_map([collection], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Drops content rows no document refers to any more.
pub fn collect_garbage(conn: &Connection) -> Result<()> {
    conn.execute("DELETE FROM chunks WHERE mirror_hash NOT IN (SELECT mirror_hash FROM documents)", [])?;
    conn.execute("DELETE FROM content WHERE mirror_hash NOT IN (SELECT mirror_hash FROM documents)", [])?;
    Ok(())
}

pub fn upsert_collection(conn: &Connection, name: &str, path: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO collections(name, path) VALUES(?1, ?2) ON CONFLICT(name) DO UPDATE SET path = excluded.path",
        params![name, path],
    )?;
    Ok(())
}

pub fn catalog_collections(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM collections ORDER BY name")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn delete_collection_row(conn: &Connection, name: &str) -> Result<()> {
    conn.execute("DELETE FROM collections WHERE name = ?1", [name])?;
    Ok(())
}

pub fn mark_synced(conn: &Connection, name: &str, at: &str) -> Result<()> {
    conn.execute("UPDATE collections SET synced_at = ?2 WHERE name = ?1", params![name, at])?;
    Ok(())
}

pub fn last_synced(conn: &Connection) -> Result<Option<String>> {
    Ok(conn.query_row("SELECT MAX(synced_at) FROM collections", [], |r| r.get(0)).optional()?.flatten())
}
