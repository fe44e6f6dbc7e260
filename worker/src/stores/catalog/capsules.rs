//! Saved Context Capsules and the state of their re-verification.

use super::Result;
use protocol::api::ContentStatus;
use rusqlite::{params, Connection, OptionalExtension};

/// A saved capsule as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub id: String,
    pub label: Option<String>,
    pub capsule: String,
    pub capsule_id: String,
    /// The `svc://` URIs of its evidence.
    pub uris: Vec<String>,
    pub evidence_count: u64,
    pub created_at: String,
    pub checked_seq: u64,
    pub content_status: Option<ContentStatus>,
    pub verified_at: Option<String>,
}

const COLUMNS: &str =
    "id, label, capsule, capsule_id, uris, evidence_count, created_at, checked_seq, content_status, verified_at";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Registration> {
    Ok(Registration {
        id: r.get(0)?,
        label: r.get(1)?,
        capsule: r.get(2)?,
        capsule_id: r.get(3)?,
        uris: super::docs::json_column(r, 4)?,
        evidence_count: r.get::<_, i64>(5)? as u64,
        created_at: r.get(6)?,
        checked_seq: r.get::<_, i64>(7)? as u64,
        content_status: match r.get::<_, Option<String>>(8)? {
            Some(text) => {
                Some(serde_json::from_value::<ContentStatus>(serde_json::Value::String(text)).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, Box::new(e))
                })?)
            }
            None => None,
        },
        verified_at: r.get(9)?,
    })
}

pub fn insert_registration(conn: &Connection, r: &Registration) -> Result<()> {
    conn.execute(
        &format!("INSERT INTO capsule_registrations({COLUMNS}) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        params![
            r.id,
            r.label,
            r.capsule,
            r.capsule_id,
            serde_json::to_string(&r.uris).unwrap_or_else(|_| "[]".into()),
            r.evidence_count as i64,
            r.created_at,
            r.checked_seq as i64,
            r.content_status.map(|s| s.to_string()),
            r.verified_at,
        ],
    )?;
    Ok(())
}

/// Every saved capsule, oldest first.
pub fn registrations(conn: &Connection) -> Result<Vec<Registration>> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM capsule_registrations ORDER BY created_at, id"))?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn registration(conn: &Connection, id: &str) -> Result<Option<Registration>> {
    let sql = format!("SELECT {COLUMNS} FROM capsule_registrations WHERE id = ?1");
    Ok(conn.query_row(&sql, [id], from_row).optional()?)
}

/// True when a row was removed.
pub fn delete_registration(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn.execute("DELETE FROM capsule_registrations WHERE id = ?1", [id])? > 0)
}

/// The journal position up to which a registration's changes were looked at.
pub fn mark_checked(conn: &Connection, id: &str, seq: u64) -> Result<()> {
    conn.execute(
        "UPDATE capsule_registrations SET checked_seq = MAX(checked_seq, ?2) WHERE id = ?1",
        params![id, seq as i64],
    )?;
    Ok(())
}

/// Stores a re-verification's outcome.
pub fn store_receipt(
    conn: &Connection,
    id: &str,
    content_status: ContentStatus,
    receipt: &str,
    at: &str,
) -> Result<()> {
    conn.execute(
        "UPDATE capsule_registrations SET content_status = ?2, receipt = ?3, verified_at = ?4 WHERE id = ?1",
        params![id, content_status.to_string(), receipt, at],
    )?;
    Ok(())
}

/// The URIs (before and after) of the changes after `after`, in journal order.
pub fn changed_uris_after(conn: &Connection, after: u64) -> Result<Vec<(u64, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, json_extract(previous, '$.uri'), json_extract(current, '$.uri') FROM changes WHERE seq > ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([after as i64], |r| {
        Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Option<String>>(1)?, r.get::<_, Option<String>>(2)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, prev, cur) = row?;
        out.extend(prev.into_iter().chain(cur).map(|u| (seq, u)));
    }
    Ok(out)
}
