//! The BM25 index's bookkeeping in the catalog: which rows it has not absorbed yet (`gen` ahead
//! of `bm25_gen`), and the content-type rules its categories were fed with.

use super::Result;
use crate::stores::DocKey;
use rusqlite::{params, Connection};

/// Rows whose BM25 entry lags behind the catalog: the first `limit` after the row `after`, in
/// row order.
pub fn bm25_pending(conn: &Connection, after: DocKey, limit: usize) -> Result<Vec<DocKey>> {
    let mut stmt =
        conn.prepare_cached("SELECT id FROM documents WHERE id > ?1 AND gen != bm25_gen ORDER BY id LIMIT ?2")?;
    let rows = stmt.query_map(params![after, i64::try_from(limit).unwrap_or(i64::MAX)], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The rows of `ids` whose BM25 entry lags behind the catalog.
pub fn pending_among(conn: &Connection, ids: &[DocKey]) -> Result<Vec<DocKey>> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM documents WHERE id = ?1 AND gen != bm25_gen")?;
    let mut out = Vec::new();
    for id in ids {
        if stmt.exists([id])? {
            out.push(*id);
        }
    }
    Ok(out)
}

/// How many documents the keyword index has not absorbed at their current generation (the
/// status's `keywordBacklog`).
pub fn bm25_pending_count(conn: &Connection) -> Result<u64> {
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM documents WHERE gen != bm25_gen", [], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// A document's row as of one catalog generation: what the keyword index absorbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowVersion {
    /// The row (`documents.id`, the keyword index's key).
    pub id: DocKey,
    /// The catalog generation the row was written in (`documents.gen`).
    pub gen: i64,
}

/// Records that the BM25 index absorbed these rows at their current generation.
pub fn mark_bm25_absorbed(conn: &mut Connection, rows: &[RowVersion]) -> Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare_cached("UPDATE documents SET bm25_gen = ?2 WHERE id = ?1 AND gen = ?2")?;
        for row in rows {
            stmt.execute(params![row.id, row.gen])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Adopts the rules the BM25 index is fed under (`fingerprint`: the content-type rules and the
/// collections' languages): when they differ from those it was fed under, forgets what BM25
/// absorbed, so that the next convergence re-feeds every row under the new rules. True when
/// they differed.
pub fn adopt_keyword_rules(conn: &Connection, fingerprint: &str) -> Result<bool> {
    // The key's name is from before the languages joined the rules; kept, so that an index
    // whose rules did not change is not re-fed.
    const KEY: &str = "content_type_rules";
    let before = super::changes::meta_value(conn, KEY)?;
    if before.as_deref() == Some(fingerprint) {
        return Ok(false);
    }
    reset_bm25(conn)?;
    super::changes::set_meta(conn, KEY, fingerprint)?;
    Ok(before.is_some() || fingerprint != "none")
}

/// Forgets what BM25 absorbed, so that the next convergence rebuilds it from the catalog.
/// Marks every document for a new feed into BM25; returns how many active ones there are.
pub fn reset_bm25(conn: &Connection) -> Result<u64> {
    conn.execute("UPDATE documents SET bm25_gen = 0", [])?;
    let active: i64 = conn.query_row("SELECT COUNT(*) FROM documents WHERE active = 1", [], |r| r.get(0))?;
    Ok(active.max(0) as u64)
}
