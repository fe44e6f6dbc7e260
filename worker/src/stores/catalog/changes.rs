//! The change journal: one row per document lifecycle event, written in the same
//! transaction as the change itself. Identity, hashes and structure only, never bodies.

use super::Result;
use rusqlite::{params, Transaction};
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Update,
    Rename,
    Inactivate,
    Reactivate,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Create => "create",
            ChangeKind::Update => "update",
            ChangeKind::Rename => "rename",
            ChangeKind::Inactivate => "inactivate",
            ChangeKind::Reactivate => "reactivate",
        }
    }
}

/// Who caused a change: a sync, or a write through the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Sync,
    Save,
    Create,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Sync => "sync",
            Origin::Save => "save",
            Origin::Create => "create",
        }
    }
}

/// A document's identity at one point in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub rel_path: String,
    pub docid: String,
    pub uri: String,
    pub source_hash: String,
    pub mirror_hash: String,
    pub active: bool,
}

/// The structure of a document that the journal compares: headings and link targets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Structure {
    pub headings: BTreeSet<String>,
    pub links: BTreeSet<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SetDelta {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StructureDelta {
    pub headings: SetDelta,
    pub links: SetDelta,
}

fn set_delta(old: &BTreeSet<String>, new: &BTreeSet<String>) -> SetDelta {
    SetDelta { added: new.difference(old).cloned().collect(), removed: old.difference(new).cloned().collect() }
}

impl StructureDelta {
    pub fn between(old: &Structure, new: &Structure) -> Self {
        StructureDelta { headings: set_delta(&old.headings, &new.headings), links: set_delta(&old.links, &new.links) }
    }
}

pub struct ChangeRecord<'a> {
    pub kind: ChangeKind,
    pub origin: Origin,
    pub collection: &'a str,
    pub doc_id: i64,
    pub observed_at: &'a str,
    pub previous: Option<&'a Snapshot>,
    pub current: Option<&'a Snapshot>,
    pub delta: &'a StructureDelta,
}

pub fn record_change(tx: &Transaction<'_>, c: &ChangeRecord<'_>) -> Result<()> {
    let json = |v: Option<&Snapshot>| v.and_then(|s| serde_json::to_string(s).ok());
    let rel = c.current.or(c.previous).map(|s| s.rel_path.as_str()).unwrap_or("");
    tx.prepare_cached(
        "INSERT INTO changes(kind, collection, rel_path, doc_id, origin, observed_at, previous, current, delta) \
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        c.kind.as_str(),
        c.collection,
        rel,
        c.doc_id,
        c.origin.as_str(),
        c.observed_at,
        json(c.previous),
        json(c.current),
        serde_json::to_string(c.delta).unwrap_or_else(|_| "{}".into()),
    ])?;
    Ok(())
}

/// One journal row as stored: `(kind, origin, previous, current, delta)`.
#[cfg(test)]
pub type JournalRow = (String, String, Option<String>, Option<String>, String);

#[cfg(test)]
/// Journal rows of one document, oldest first.
pub fn changes_of(conn: &rusqlite::Connection, doc_id: i64) -> Result<Vec<JournalRow>> {
    let mut stmt =
        conn.prepare("SELECT kind, origin, previous, current, delta FROM changes WHERE doc_id = ?1 ORDER BY seq")?;
    let rows = stmt.query_map([doc_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
