//! A team's shared documents as this replica knows them (`team_docs`), and the two positions
//! the team client keeps: the last stream sequence applied, and the last journal change
//! looked at for publishing.

use super::changes::{meta_value, set_meta};
use super::Result;
use rusqlite::{params, Connection, OptionalExtension};

/// The version of a shared document this replica holds: the stream sequence of the message
/// that carried it (or of its own publish), its content hash, a tombstone or not, the vector
/// table whose vectors travelled with it, and whether its bytes are in the object store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamDoc {
    pub seq: u64,
    pub hash: String,
    pub deleted: bool,
    pub vectors: Option<String>,
    pub stored: bool,
}

impl TeamDoc {
    /// A version of these bytes, without vectors.
    pub fn put(seq: u64, hash: String) -> Self {
        TeamDoc { seq, hash, deleted: false, vectors: None, stored: false }
    }

    pub fn tombstone(seq: u64) -> Self {
        TeamDoc { seq, hash: String::new(), deleted: true, vectors: None, stored: false }
    }
}

/// A shared document whose published version has not carried its vectors, though this
/// member has embedded its content into the table asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorsToSend {
    pub collection: String,
    pub rel_path: String,
    /// The version published (the vectors go with the same bytes, expecting it still last).
    pub seq: u64,
    pub hash: String,
    pub mirror_hash: String,
    pub chunks: u64,
}

const APPLIED_SEQ: &str = "team_applied_seq";
const OUTBOX_CURSOR: &str = "team_outbox_change_seq";

pub fn team_doc(conn: &Connection, collection: &str, rel_path: &str) -> Result<Option<TeamDoc>> {
    Ok(conn
        .query_row(
            "SELECT seq, hash, deleted, NULLIF(carried, ''), stored FROM team_docs WHERE collection = ?1 AND rel_path = ?2",
            params![collection, rel_path],
            |r| {
                Ok(TeamDoc {
                    seq: r.get::<_, i64>(0)?.max(0) as u64,
                    hash: r.get(1)?,
                    deleted: r.get(2)?,
                    vectors: r.get(3)?,
                    stored: r.get(4)?,
                })
            },
        )
        .optional()?)
}

/// Up to `limit` shared documents of `collection` of which this member holds the published
/// version, has embedded the content into `table`, and has not sent the vectors of
/// ([`VectorsToSend`]). Documents that are a part of a file (a mailbox's message) are left out.
pub fn team_vectors_to_send(
    conn: &Connection,
    collection: &str,
    table: &str,
    limit: usize,
) -> Result<Vec<VectorsToSend>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.collection, t.rel_path, t.seq, t.hash, d.mirror_hash,
                (SELECT COUNT(*) FROM chunks c WHERE c.mirror_hash = d.mirror_hash)
         FROM team_docs t JOIN documents d ON d.collection = t.collection AND d.rel_path = t.rel_path
         WHERE t.collection = ?3 AND t.carried IS NULL AND t.deleted = 0 AND d.active = 1 AND d.part_of IS NULL
           AND d.source_hash = t.hash
           AND EXISTS (SELECT 1 FROM embeddings e WHERE e.mirror_hash = d.mirror_hash AND e.model = ?1)
         ORDER BY t.seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![table, limit.min(i64::MAX as usize) as i64, collection], |r| {
        Ok(VectorsToSend {
            collection: r.get(0)?,
            rel_path: r.get(1)?,
            seq: r.get::<_, i64>(2)?.max(0) as u64,
            hash: r.get(3)?,
            mirror_hash: r.get(4)?,
            chunks: r.get::<_, i64>(5)?.max(0) as u64,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Records that the vectors of version `seq` of a shared document will not travel (the
/// message would be too large, or a newer version came first).
pub fn team_vectors_stay(conn: &Connection, collection: &str, rel_path: &str, seq: u64) -> Result<()> {
    conn.execute(
        "UPDATE team_docs SET carried = '' WHERE collection = ?1 AND rel_path = ?2 AND seq = ?3",
        params![collection, rel_path, seq as i64],
    )?;
    Ok(())
}

/// Whether this catalog knows content `mirror_hash` already: an active document holds it, or
/// `table` has its vectors. Vectors from the team are stored only for a content it does not
/// know (one it knows is embedded here, or waits in the backlog for the embedder).
pub fn content_known(conn: &Connection, mirror_hash: &str, table: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM documents WHERE mirror_hash = ?1 AND active = 1)
             OR EXISTS (SELECT 1 FROM embeddings WHERE mirror_hash = ?1 AND model = ?2)",
        params![mirror_hash, table],
        |r| r.get(0),
    )?)
}

/// How many chunks content `mirror_hash` has here.
pub fn chunk_count(conn: &Connection, mirror_hash: &str) -> Result<u64> {
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM chunks WHERE mirror_hash = ?1", [mirror_hash], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// Records the version a shared document now has here, as the stream delivered it (a newer
/// sequence replaces an older one; an older one never replaces a newer).
pub fn set_team_doc(conn: &Connection, collection: &str, rel_path: &str, doc: &TeamDoc) -> Result<()> {
    record_team_doc(conn, collection, rel_path, doc, true)
}

/// Records a version published from here: held, and awaited on this member's own consumer
/// ([`team_docs_not_echoed`]).
pub fn set_published_team_doc(conn: &Connection, collection: &str, rel_path: &str, doc: &TeamDoc) -> Result<()> {
    record_team_doc(conn, collection, rel_path, doc, false)
}

fn record_team_doc(conn: &Connection, collection: &str, rel_path: &str, doc: &TeamDoc, echoed: bool) -> Result<()> {
    conn.execute(
        "INSERT INTO team_docs(collection, rel_path, seq, hash, deleted, carried, stored, echoed)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(collection, rel_path) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
           deleted = excluded.deleted, carried = excluded.carried, stored = excluded.stored,
           echoed = excluded.echoed
         WHERE excluded.seq >= team_docs.seq",
        params![collection, rel_path, doc.seq as i64, doc.hash, doc.deleted, doc.vectors, doc.stored, echoed],
    )?;
    Ok(())
}

/// The stream delivered version `seq` of a document back to the member that published it.
pub fn set_team_doc_echoed(conn: &Connection, collection: &str, rel_path: &str, seq: u64) -> Result<()> {
    conn.execute(
        "UPDATE team_docs SET echoed = 1 WHERE collection = ?1 AND rel_path = ?2 AND seq = ?3",
        params![collection, rel_path, seq as i64],
    )?;
    Ok(())
}

/// Up to `limit` documents (collection, path, sequence) whose version published from here,
/// at a sequence up to `through`, this member's consumer has not delivered back.
pub fn team_docs_not_echoed(conn: &Connection, through: u64, limit: usize) -> Result<Vec<(String, String, u64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT collection, rel_path, seq FROM team_docs WHERE echoed = 0 AND seq <= ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![through.min(i64::MAX as u64) as i64, limit.min(i64::MAX as usize) as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u64))
        })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn position(conn: &Connection, key: &str) -> Result<u64> {
    Ok(meta_value(conn, key)?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// The last stream sequence this replica applied (0: none).
pub fn team_applied_seq(conn: &Connection) -> Result<u64> {
    position(conn, APPLIED_SEQ)
}

/// Moves the applied position forward (never back).
pub fn set_team_applied_seq(conn: &Connection, seq: u64) -> Result<()> {
    if seq > team_applied_seq(conn)? {
        set_meta(conn, APPLIED_SEQ, &seq.to_string())?;
    }
    Ok(())
}

/// The last journal change the publisher looked at.
pub fn team_outbox_cursor(conn: &Connection) -> Result<u64> {
    position(conn, OUTBOX_CURSOR)
}

pub fn set_team_outbox_cursor(conn: &Connection, seq: u64) -> Result<()> {
    set_meta(conn, OUTBOX_CURSOR, &seq.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn an_older_version_never_replaces_a_newer_one() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(super::super::schema::SCHEMA).unwrap();
        let v = |seq, hash: &str| TeamDoc::put(seq, hash.into());
        set_team_doc(&conn, "c", "a.md", &v(5, "h5")).unwrap();
        set_team_doc(&conn, "c", "a.md", &v(3, "h3")).unwrap();
        assert_eq!(team_doc(&conn, "c", "a.md").unwrap(), Some(v(5, "h5")));
        team_vectors_stay(&conn, "c", "a.md", 4).unwrap();
        assert_eq!(team_doc(&conn, "c", "a.md").unwrap(), Some(v(5, "h5")), "only the version named stays");
        set_team_doc(&conn, "c", "a.md", &TeamDoc::tombstone(7)).unwrap();
        assert!(team_doc(&conn, "c", "a.md").unwrap().unwrap().deleted);
        // A version published here is awaited until the stream delivers it back.
        set_published_team_doc(&conn, "c", "b.md", &v(8, "h8")).unwrap();
        set_published_team_doc(&conn, "c", "d.md", &v(12, "h12")).unwrap();
        assert_eq!(team_docs_not_echoed(&conn, 10, 10).unwrap(), [("c".to_string(), "b.md".to_string(), 8)]);
        set_team_doc_echoed(&conn, "c", "b.md", 7).unwrap();
        assert_eq!(team_docs_not_echoed(&conn, 10, 10).unwrap().len(), 1, "another version's echo");
        set_team_doc_echoed(&conn, "c", "b.md", 8).unwrap();
        assert!(team_docs_not_echoed(&conn, 10, 10).unwrap().is_empty());
        assert_eq!(team_docs_not_echoed(&conn, 12, 10).unwrap().len(), 1);
        set_team_doc(&conn, "c", "d.md", &v(13, "h13")).unwrap();
        assert!(team_docs_not_echoed(&conn, 20, 10).unwrap().is_empty(), "a newer version from the stream");
        set_team_applied_seq(&conn, 9).unwrap();
        set_team_applied_seq(&conn, 4).unwrap();
        assert_eq!(team_applied_seq(&conn).unwrap(), 9);
    }
}
