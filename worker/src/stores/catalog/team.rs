//! A team's shared documents as this replica knows them (`team_docs`), and the two positions
//! the team client keeps: the last stream sequence applied, and the last journal change
//! looked at for publishing.

use super::changes::{meta_value, set_meta};
use super::Result;
use rusqlite::{params, Connection, OptionalExtension};

/// The version of a shared document this replica holds: the stream sequence of the message
/// that carried it (or of its own publish), its content hash, a tombstone or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamDoc {
    pub seq: u64,
    pub hash: String,
    pub deleted: bool,
}

const APPLIED_SEQ: &str = "team_applied_seq";
const OUTBOX_CURSOR: &str = "team_outbox_change_seq";

pub fn team_doc(conn: &Connection, collection: &str, rel_path: &str) -> Result<Option<TeamDoc>> {
    Ok(conn
        .query_row(
            "SELECT seq, hash, deleted FROM team_docs WHERE collection = ?1 AND rel_path = ?2",
            params![collection, rel_path],
            |r| Ok(TeamDoc { seq: r.get::<_, i64>(0)?.max(0) as u64, hash: r.get(1)?, deleted: r.get(2)? }),
        )
        .optional()?)
}

/// Records the version a shared document now has here (a newer sequence replaces an older
/// one; an older one never replaces a newer).
pub fn set_team_doc(conn: &Connection, collection: &str, rel_path: &str, doc: &TeamDoc) -> Result<()> {
    conn.execute(
        "INSERT INTO team_docs(collection, rel_path, seq, hash, deleted) VALUES(?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(collection, rel_path) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
           deleted = excluded.deleted WHERE excluded.seq >= team_docs.seq",
        params![collection, rel_path, doc.seq as i64, doc.hash, doc.deleted],
    )?;
    Ok(())
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
        let v = |seq, hash: &str| TeamDoc { seq, hash: hash.into(), deleted: false };
        set_team_doc(&conn, "c", "a.md", &v(5, "h5")).unwrap();
        set_team_doc(&conn, "c", "a.md", &v(3, "h3")).unwrap();
        assert_eq!(team_doc(&conn, "c", "a.md").unwrap(), Some(v(5, "h5")));
        set_team_doc(&conn, "c", "a.md", &TeamDoc { seq: 7, hash: String::new(), deleted: true }).unwrap();
        assert!(team_doc(&conn, "c", "a.md").unwrap().unwrap().deleted);
        set_team_applied_seq(&conn, 9).unwrap();
        set_team_applied_seq(&conn, 4).unwrap();
        assert_eq!(team_applied_seq(&conn).unwrap(), 9);
    }
}
