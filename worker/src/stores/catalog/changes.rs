//! The change journal: one row per document lifecycle event, written in the same
//! transaction as the change itself. Identity, hashes and structure only, never bodies.

use super::Result;
use crate::stores::DocKey;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

pub use protocol::api::ChangeKind;

/// Who caused a change: a sync, or a write through the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Sync,
    Save,
    Create,
    /// The folder watcher saw the file change.
    Watch,
    /// A shared document came from the team's stream.
    Team,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Sync => "sync",
            Origin::Save => "save",
            Origin::Create => "create",
            Origin::Watch => "watch",
            Origin::Team => "team",
        }
    }

    pub fn parse(s: &str) -> Option<Origin> {
        [Origin::Sync, Origin::Save, Origin::Create, Origin::Watch, Origin::Team].into_iter().find(|o| o.as_str() == s)
    }
}

/// A document's identity at one point in time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub rel_path: String,
    pub docid: String,
    pub uri: String,
    pub source_hash: String,
    pub mirror_hash: String,
    pub active: bool,
}

/// The structure of a document that the journal compares: headings, link targets and
/// front-matter dates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Structure {
    pub headings: BTreeSet<String>,
    pub links: BTreeSet<String>,
    pub dates: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetDelta {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Date keys that appeared, disappeared or took another value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DateDelta {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

/// As stored in `changes.delta` (rows written before dates were journaled have none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StructureDelta {
    pub headings: SetDelta,
    pub links: SetDelta,
    pub dates: DateDelta,
}

fn set_delta(old: &BTreeSet<String>, new: &BTreeSet<String>) -> SetDelta {
    SetDelta { added: new.difference(old).cloned().collect(), removed: old.difference(new).cloned().collect() }
}

impl StructureDelta {
    pub fn between(old: &Structure, new: &Structure) -> Self {
        let dates = DateDelta {
            added: new.dates.keys().filter(|k| !old.dates.contains_key(*k)).cloned().collect(),
            removed: old.dates.keys().filter(|k| !new.dates.contains_key(*k)).cloned().collect(),
            changed: new
                .dates
                .iter()
                .filter(|(k, v)| old.dates.get(*k).is_some_and(|o| o != *v))
                .map(|(k, _)| k.clone())
                .collect(),
        };
        StructureDelta {
            headings: set_delta(&old.headings, &new.headings),
            links: set_delta(&old.links, &new.links),
            dates,
        }
    }
}

pub struct ChangeRecord<'a> {
    pub kind: ChangeKind,
    pub origin: Origin,
    pub collection: &'a str,
    pub doc_id: DocKey,
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
pub fn changes_of(conn: &rusqlite::Connection, doc_id: DocKey) -> Result<Vec<JournalRow>> {
    let mut stmt =
        conn.prepare("SELECT kind, origin, previous, current, delta FROM changes WHERE doc_id = ?1 ORDER BY seq")?;
    let rows = stmt.query_map([doc_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One journal row, as the change reads see it.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEntry {
    pub seq: u64,
    pub kind: ChangeKind,
    pub origin: Origin,
    pub collection: String,
    pub doc_id: DocKey,
    pub observed_at: String,
    pub previous: Option<Snapshot>,
    pub current: Option<Snapshot>,
    pub delta: StructureDelta,
}

const ENTRY_COLUMNS: &str = "seq, kind, collection, doc_id, observed_at, previous, current, delta, origin";

/// A journal row's columns, before its JSON is read.
struct RawEntry {
    seq: i64,
    kind: String,
    collection: String,
    doc_id: DocKey,
    observed_at: String,
    previous: Option<String>,
    current: Option<String>,
    delta: String,
    origin: String,
}

fn entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawEntry> {
    Ok(RawEntry {
        seq: r.get(0)?,
        kind: r.get(1)?,
        collection: r.get(2)?,
        doc_id: r.get(3)?,
        observed_at: r.get(4)?,
        previous: r.get(5)?,
        current: r.get(6)?,
        delta: r.get(7)?,
        origin: r.get(8)?,
    })
}

fn to_entry(raw: RawEntry) -> Result<JournalEntry> {
    let RawEntry { seq, kind, collection, doc_id, observed_at, previous, current, delta, origin } = raw;
    let malformed = |what: &str| super::CatalogError::Malformed(format!("journal row {seq}: {what}"));
    let snapshot = |s: Option<String>| -> Result<Option<Snapshot>> {
        s.map(|j| serde_json::from_str(&j).map_err(|_| malformed("snapshot"))).transpose()
    };
    Ok(JournalEntry {
        seq: seq as u64,
        kind: ChangeKind::parse(&kind).ok_or_else(|| malformed("kind"))?,
        origin: Origin::parse(&origin).ok_or_else(|| malformed("origin"))?,
        collection,
        doc_id,
        observed_at,
        previous: snapshot(previous)?,
        current: snapshot(current)?,
        delta: serde_json::from_str(&delta).map_err(|_| malformed("delta"))?,
    })
}

fn entries(conn: &Connection, sql: &str, args: &[&dyn rusqlite::ToSql]) -> Result<Vec<JournalEntry>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(args, entry)?.collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter().map(to_entry).collect()
}

/// Up to `limit` changes after `after` (a sequence), oldest first, of one collection or all.
pub fn changes_after(conn: &Connection, after: u64, collection: Option<&str>, limit: u32) -> Result<Vec<JournalEntry>> {
    match collection {
        None => {
            let sql = format!("SELECT {ENTRY_COLUMNS} FROM changes WHERE seq > ?1 ORDER BY seq LIMIT ?2");
            entries(conn, &sql, &[&(after as i64), &limit])
        }
        Some(c) => {
            let sql =
                format!("SELECT {ENTRY_COLUMNS} FROM changes WHERE collection = ?2 AND seq > ?1 ORDER BY seq LIMIT ?3");
            entries(conn, &sql, &[&(after as i64), &c, &limit])
        }
    }
}

/// The newest change of one document (its sequence), if the journal holds one.
pub fn latest_change_of(conn: &Connection, doc_id: DocKey) -> Result<Option<u64>> {
    let seq: Option<i64> = conn.query_row("SELECT MAX(seq) FROM changes WHERE doc_id = ?1", [doc_id], |r| r.get(0))?;
    Ok(seq.map(|s| s.max(0) as u64))
}

/// The changes of one document, oldest first.
pub fn changes_of_doc(conn: &Connection, doc_id: DocKey) -> Result<Vec<JournalEntry>> {
    let sql = format!("SELECT {ENTRY_COLUMNS} FROM changes WHERE doc_id = ?1 ORDER BY seq");
    entries(conn, &sql, &[&doc_id])
}

/// The first and last retained sequence (`None` when the journal is empty).
pub fn journal_span(conn: &Connection) -> Result<Option<(u64, u64)>> {
    // Each aggregate alone, so that SQLite reads it from the end of the key (both in one
    // SELECT scan the whole journal: a write's pruning read 100,000 rows for it).
    let span: (Option<i64>, Option<i64>) =
        conn.query_row("SELECT (SELECT MIN(seq) FROM changes), (SELECT MAX(seq) FROM changes)", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    Ok(match span {
        (Some(a), Some(b)) => Some((a as u64, b as u64)),
        _ => None,
    })
}

/// The newest journal position: the last retained change, or the cut when none is retained.
pub fn journal_newest(conn: &Connection, cut: u64) -> Result<u64> {
    Ok(journal_span(conn)?.map_or(cut, |(_, last)| last.max(cut)))
}

/// What retention has dropped so far: every change up to `seq` (0: nothing), the newest of
/// them observed at `observed_at`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalCut {
    pub seq: u64,
    pub observed_at: Option<String>,
}

pub(super) fn meta_value(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
}

pub(super) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

pub fn journal_cut(conn: &Connection) -> Result<JournalCut> {
    Ok(JournalCut {
        seq: meta_value(conn, "journal_pruned_seq")?.and_then(|v| v.parse().ok()).unwrap_or(0),
        observed_at: meta_value(conn, "journal_pruned_at")?,
    })
}

/// The sequence just before the first change observed at or after `ms` (epoch
/// milliseconds): changes are journaled in time order, so a binary search over the
/// retained span finds it. `parse_ms` reads a stored `observed_at`.
pub fn sequence_before_time(conn: &Connection, ms: i64, parse_ms: impl Fn(&str) -> Option<i64>) -> Result<u64> {
    let Some((first, last)) = journal_span(conn)? else { return Ok(journal_cut(conn)?.seq) };
    let mut stmt = conn.prepare_cached("SELECT seq, observed_at FROM changes WHERE seq >= ?1 ORDER BY seq LIMIT 1")?;
    // Whether the first retained row at or after `seq` was observed at or after `ms` (true
    // when there is none): false for low sequences, true from the answer on.
    let mut reached = |seq: u64| -> Result<(bool, u64)> {
        let row: Option<(i64, String)> = stmt.query_row([seq as i64], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
        Ok(match row {
            Some((s, at)) => (parse_ms(&at).is_none_or(|t| t >= ms), s as u64),
            None => (true, seq),
        })
    };
    let (mut lo, mut hi) = (first, last + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match reached(mid)? {
            (true, _) => hi = mid,
            (false, found) => lo = found + 1,
        }
    }
    Ok(lo.saturating_sub(1))
}

/// The journal's retention bound: the newest `max_rows` changes, none older than
/// `max_age_ms`. A change inside both bounds is never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub max_rows: u64,
    pub max_age_ms: i64,
}

/// How far past its row bound the journal may grow before it is cut back to it: a part of the
/// bound (1/64: ~1,560 rows of the default 100,000), so that the row walk the cut needs runs
/// once per that many writes, not at each. A bound under 64 rows is kept exactly.
const ROW_SLACK: u64 = 64;

/// Drops what falls outside `bound` and records how far the journal was cut. Returns the
/// number of changes dropped.
pub fn prune_journal(
    conn: &Connection,
    bound: Retention,
    now_ms: i64,
    parse_ms: impl Fn(&str) -> Option<i64>,
) -> Result<u64> {
    let Some((first, last)) = journal_span(conn)? else { return Ok(0) };
    // Rows at or below `by_rows` fall outside the row bound. Finding that row walks
    // `max_rows` rows, so it is looked for only once the journal may hold a slack's more
    // (`ROW_SLACK`): a journal whose sequences span no more holds no more rows.
    let slack = bound.max_rows / ROW_SLACK;
    let by_rows: Option<i64> = if last - first < bound.max_rows.saturating_add(slack) {
        None
    } else {
        conn.query_row(
            "SELECT seq FROM changes ORDER BY seq DESC LIMIT 1 OFFSET ?1",
            [i64::try_from(bound.max_rows.max(1)).unwrap_or(i64::MAX)],
            |r| r.get(0),
        )
        .optional()?
    };
    let by_age = sequence_before_time(conn, now_ms.saturating_sub(bound.max_age_ms), &parse_ms)?;
    let cut = (by_rows.unwrap_or(0).max(0) as u64).max(by_age).min(last);
    if cut <= journal_cut(conn)?.seq {
        return Ok(0);
    }
    let newest_dropped: Option<String> = conn
        .query_row("SELECT observed_at FROM changes WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1", [cut as i64], |r| {
            r.get(0)
        })
        .optional()?;
    // One transaction: a reader sees the rows and the recorded cut change together.
    let tx = conn.unchecked_transaction()?;
    let dropped = tx.execute("DELETE FROM changes WHERE seq <= ?1", [cut as i64])? as u64;
    set_meta(&tx, "journal_pruned_seq", &cut.to_string())?;
    if let Some(at) = newest_dropped {
        set_meta(&tx, "journal_pruned_at", &at)?;
    }
    tx.commit()?;
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::stores::catalog::schema::SCHEMA;

    /// A journal of rows observed at these epoch seconds (as `t<secs>` strings), with the
    /// sequences in `gaps` left out (as rolled-back inserts leave them).
    fn journal(times: &[i64], gaps: &[i64]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        for (i, t) in times.iter().enumerate() {
            let seq = i as i64 + 1;
            conn.execute(
                "INSERT INTO changes(seq, kind, collection, rel_path, doc_id, origin, observed_at, delta) \
                 VALUES(?1, 'update', 'n', 'a.md', 1, 'sync', ?2, '{}')",
                params![seq, format!("t{t}")],
            )
            .unwrap();
        }
        for g in gaps {
            conn.execute("DELETE FROM changes WHERE seq = ?1", [g]).unwrap();
        }
        conn
    }

    fn secs(s: &str) -> Option<i64> {
        s.strip_prefix('t')?.parse::<i64>().ok().map(|t| t * 1000)
    }

    #[test]
    fn time_search_finds_the_first_change_at_or_after_the_instant() {
        let conn = journal(&[10, 20, 20, 30, 40, 50, 60], &[3, 5]);
        // Retained: 1@10 2@20 4@30 6@50 7@60.
        for (at, before) in
            [(0, 0), (10, 0), (11, 1), (20, 1), (21, 2), (30, 2), (31, 4), (45, 4), (50, 5), (60, 6), (61, 7)]
        {
            let got = sequence_before_time(&conn, at * 1000, secs).unwrap();
            let after: Vec<u64> = changes_after(&conn, got, None, 100).unwrap().iter().map(|e| e.seq).collect();
            let expected: Vec<u64> = [(1, 10), (2, 20), (4, 30), (6, 50), (7, 60)]
                .into_iter()
                .filter(|(_, t)| *t >= at)
                .map(|(s, _)| s)
                .collect();
            assert_eq!(after, expected, "since {at}s (got position {got}, expected near {before})");
        }
    }

    #[test]
    fn pruning_keeps_every_change_inside_both_bounds() {
        let now = 1_000_000;
        let conn = journal(&[100, 200, 300, 900, 950, 990, 999], &[]);
        // Row bound 5, age bound 200 s: rows observed at or after 800 s, and the newest 5.
        let bound = Retention { max_rows: 5, max_age_ms: 200_000 };
        assert_eq!(prune_journal(&conn, bound, now, secs).unwrap(), 3);
        let kept: Vec<u64> = changes_after(&conn, 0, None, 100).unwrap().iter().map(|e| e.seq).collect();
        assert_eq!(kept, vec![4, 5, 6, 7]);
        let cut = journal_cut(&conn).unwrap();
        assert_eq!(cut, JournalCut { seq: 3, observed_at: Some("t300".into()) });
        // Nothing more to drop: the cut stays where it is.
        assert_eq!(prune_journal(&conn, bound, now, secs).unwrap(), 0);
        // A tighter row bound drops the oldest only.
        let tight = Retention { max_rows: 2, max_age_ms: 200_000 };
        assert_eq!(prune_journal(&conn, tight, now, secs).unwrap(), 2);
        let kept: Vec<u64> = changes_after(&conn, 0, None, 100).unwrap().iter().map(|e| e.seq).collect();
        assert_eq!(kept, vec![6, 7]);
        assert_eq!(journal_cut(&conn).unwrap().seq, 5);
    }

    #[test]
    fn a_large_row_bound_is_cut_back_to_once_its_slack_is_passed() {
        let now = 1_000_000;
        // 128 rows: a slack of two.
        let bound = Retention { max_rows: 128, max_age_ms: i64::MAX / 2 };
        let kept = |conn: &Connection| changes_after(conn, 0, None, 1000).unwrap().len();
        let conn = journal(&[900; 130], &[]);
        assert_eq!(prune_journal(&conn, bound, now, secs).unwrap(), 0);
        assert_eq!(kept(&conn), 130);
        let conn = journal(&[900; 131], &[]);
        assert_eq!(prune_journal(&conn, bound, now, secs).unwrap(), 3);
        assert_eq!(kept(&conn), 128);
        assert_eq!(journal_cut(&conn).unwrap().seq, 3);
        // Gaps: 131 sequences, 129 rows; cut to the newest 128 rows, whatever their sequences.
        let conn = journal(&[900; 131], &[130, 131]);
        assert_eq!(prune_journal(&conn, bound, now, secs).unwrap(), 0);
        let conn = journal(&[900; 133], &[100, 101]);
        assert_eq!(prune_journal(&conn, bound, now, secs).unwrap(), 3);
        assert_eq!(kept(&conn), 128);
        assert_eq!(journal_span(&conn).unwrap(), Some((4, 133)));
    }

    #[test]
    fn an_unreadable_time_is_never_pruned_by_age() {
        // Row 1's time cannot be read; row 2 is young. Age cuts nothing before a young row.
        let conn = journal(&[1, 9_999], &[]);
        conn.execute("UPDATE changes SET observed_at = 'garbage' WHERE seq = 1", []).unwrap();
        let bound = Retention { max_rows: 10, max_age_ms: 100_000 };
        prune_journal(&conn, bound, 10_000_000, secs).unwrap();
        let kept: Vec<u64> = changes_after(&conn, 0, None, 100).unwrap().iter().map(|e| e.seq).collect();
        assert_eq!(kept, vec![1, 2]);
    }
}
