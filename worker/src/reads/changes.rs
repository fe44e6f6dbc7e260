//! Change reads over the journal: `changes@1.0` (pages of changes with opaque cursors) and
//! `document-diff@1.0` (one document's change, metadata only). The journal keeps identity,
//! hashes and structure, never bodies; retention (`journal` in `index.yml`) bounds it, and
//! every read says when retention dropped something it asked for.

use crate::shared::Shared;
use crate::stores::catalog::{self, JournalEntry, Snapshot};
use crate::{time_fmt, uri};
use protocol::api::{
    ChangeEntry, ChangeSnapshot, ChangesPage, ChangesResponse, DateChange, DiffContent, DiffDocument, DiffHistory,
    DiffResponse, DiffStatus, HistoryStatus, SetChange, StructureDelta,
};
use protocol::{ApiError, ChangeCursor, ChangesQuery, ChangesSince, DocRef};

pub const SCHEMA_VERSION: &str = "1.0";

/// Entries kept per structure list of a change; the rest is counted as `truncated`.
const MAX_DELTA_ENTRIES: usize = 50;

fn snapshot(s: Snapshot) -> ChangeSnapshot {
    ChangeSnapshot {
        rel_path: s.rel_path,
        docid: s.docid,
        uri: s.uri,
        source_hash: s.source_hash,
        mirror_hash: Some(s.mirror_hash).filter(|h| !h.is_empty()),
        active: s.active,
    }
}

/// Keeps the first entries of a list; says whether it cut any.
fn capped(mut v: Vec<String>, cut: &mut bool) -> Vec<String> {
    if v.len() > MAX_DELTA_ENTRIES {
        v.truncate(MAX_DELTA_ENTRIES);
        *cut = true;
    }
    v
}

fn change_entry(e: JournalEntry) -> ChangeEntry {
    let mut truncated = false;
    let d = e.delta;
    let mut set = |s: catalog::SetDelta| SetChange {
        added: capped(s.added, &mut truncated),
        removed: capped(s.removed, &mut truncated),
    };
    let headings = set(d.headings);
    let links = set(d.links);
    let dates = DateChange {
        added: capped(d.dates.added, &mut truncated),
        removed: capped(d.dates.removed, &mut truncated),
        changed: capped(d.dates.changed, &mut truncated),
    };
    ChangeEntry {
        id: ChangeCursor(e.seq).encode(),
        kind: e.kind,
        collection: e.collection,
        observed_at: e.observed_at,
        previous: e.previous.map(snapshot),
        current: e.current.map(snapshot),
        structure_delta: StructureDelta { headings, links, typed_edges: SetChange::default(), dates, truncated },
    }
}

/// `GET /api/changes`: changes after `since`, oldest first.
pub fn changes(w: &Shared, q: &ChangesQuery) -> Result<ChangesResponse, ApiError> {
    if let Some(c) = &q.collection {
        if w.settings.config().find(c).is_none() {
            return Err(ApiError::not_found(format!("Collection not found: {c}")));
        }
    }
    let guard = w.stores.catalog.reader();
    // One read snapshot: the cut, the span and the rows agree even while a prune commits.
    let conn = catalog::snapshot(&guard)?;
    let cut = catalog::journal_cut(&conn)?;
    let pruned = cut.seq;
    let newest = catalog::journal_newest(&conn, pruned)?;
    let after = match q.since {
        ChangesSince::Start => pruned,
        ChangesSince::Cursor(c) => c.0,
        ChangesSince::Time(ms) => catalog::sequence_before_time(&conn, ms, time_fmt::iso_to_ms)?,
    };
    let mut warnings = Vec::new();
    if after > newest {
        return Err(ApiError::validation("since is a cursor this journal never issued"));
    }
    let cursor_expired = matches!(q.since, ChangesSince::Cursor(c) if c.0 < pruned);
    // Retention dropped changes this read would have returned: it starts before the cut, or
    // (a time read) the newest dropped change was observed at or after its instant.
    let retention_truncated = pruned > 0
        && match q.since {
            ChangesSince::Start => true,
            ChangesSince::Cursor(c) => c.0 < pruned,
            ChangesSince::Time(ms) => cut.observed_at.as_deref().and_then(time_fmt::iso_to_ms).is_none_or(|t| t >= ms),
        };
    if cursor_expired {
        warnings.push("The cursor is older than the retained journal: changes after it were dropped.".to_string());
    } else if retention_truncated {
        warnings.push("Changes older than the journal's retention bound were dropped.".to_string());
    }
    let mut rows = catalog::changes_after(&conn, after.max(pruned), q.collection.as_deref(), q.limit + 1)?;
    let truncated = rows.len() > q.limit as usize;
    rows.truncate(q.limit as usize);
    let next_cursor = truncated.then(|| rows.last().map(|e| ChangeCursor(e.seq).encode())).flatten();
    Ok(ChangesResponse {
        schema_version: SCHEMA_VERSION.to_string(),
        changes: rows.into_iter().map(change_entry).collect(),
        page: ChangesPage {
            next_cursor,
            earliest_cursor: ChangeCursor(pruned).encode(),
            latest_cursor: ChangeCursor(newest).encode(),
            cursor_expired,
            truncated,
            retention_truncated,
        },
        warnings,
    })
}

/// `GET /api/diff`: one change of a document (its newest without `change`).
pub fn diff(w: &Shared, r: &DocRef, change: Option<ChangeCursor>) -> Result<DiffResponse, ApiError> {
    let doc = w.resolve_any_doc(r)?;
    let guard = w.stores.catalog.reader();
    let conn = catalog::snapshot(&guard)?;
    let pruned = catalog::journal_cut(&conn)?.seq;
    let history = catalog::changes_of_doc(&conn, doc.id)?;
    let (status, entry) = match change {
        None => match history.last() {
            Some(e) => (DiffStatus::Available, Some(e.clone())),
            None => (DiffStatus::Unavailable, None),
        },
        Some(c) => match history.iter().find(|e| e.seq == c.0) {
            Some(e) => (DiffStatus::Available, Some(e.clone())),
            None if c.0 <= pruned => (DiffStatus::Expired, None),
            None => return Err(ApiError::not_found("No such change of this document")),
        },
    };
    let starts_with_create = history.first().is_some_and(|e| e.kind == catalog::ChangeKind::Create);
    let history_state = match history.first() {
        None => DiffHistory { status: HistoryStatus::Unavailable, reason: "no_retained_changes".into() },
        Some(_) if starts_with_create || pruned == 0 => {
            DiffHistory { status: HistoryStatus::Available, reason: "complete_journal".into() }
        }
        Some(_) => DiffHistory { status: HistoryStatus::Partial, reason: "retention_truncated".into() },
    };
    let mut warnings = Vec::new();
    if status == DiffStatus::Expired {
        warnings.push("The change was dropped by the journal's retention bound.".to_string());
    }
    Ok(DiffResponse {
        schema_version: SCHEMA_VERSION.to_string(),
        status,
        document: DiffDocument {
            id: doc.docid.clone(),
            uri: uri::doc_uri(&doc.collection, &doc.rel_path),
            title: doc.title.clone(),
            collection: doc.collection.clone(),
            rel_path: doc.rel_path.clone(),
            active: doc.active,
        },
        change: entry.map(change_entry),
        content: DiffContent { status: "not_retained".into(), reason: "journal_metadata_only".into() },
        history: history_state,
        warnings,
    })
}
