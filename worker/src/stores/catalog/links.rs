//! The links of documents as stored: one document's, and every active one's (the graph).

use super::{Link, LinkRow, Result};
use crate::stores::DocKey;
use protocol::LinkKind;
use rusqlite::{Connection, Row};

fn link_from_row(r: &Row<'_>) -> rusqlite::Result<LinkRow> {
    let link = Link {
        link_type: {
            let stored: String = r.get(1)?;
            LinkKind::parse(&stored).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Text,
                    format!("unknown link type {stored:?}").into(),
                )
            })?
        },
        target_ref: r.get(2)?,
        target_ref_norm: r.get(3)?,
        target_anchor: r.get(4)?,
        target_collection: r.get(5)?,
        link_text: r.get(6)?,
        start_line: r.get::<_, i64>(7)? as u32,
        start_col: r.get::<_, i64>(8)? as u32,
        end_line: r.get::<_, i64>(9)? as u32,
        end_col: r.get::<_, i64>(10)? as u32,
    };
    Ok(LinkRow { doc_id: r.get(0)?, link })
}

const LINK_COLUMNS: &str =
    "l.doc_id, l.link_type, l.target_ref, l.target_ref_norm, l.target_anchor, l.target_collection, \
     l.link_text, l.start_line, l.start_col, l.end_line, l.end_col";

pub fn links_of(conn: &Connection, doc_id: DocKey) -> Result<Vec<LinkRow>> {
    let sql = format!("SELECT {LINK_COLUMNS} FROM doc_links l WHERE l.doc_id = ?1 ORDER BY l.start_line, l.start_col");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([doc_id], link_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every link whose source document is active.
pub fn active_links(conn: &Connection) -> Result<Vec<LinkRow>> {
    let sql = format!(
        "SELECT {LINK_COLUMNS} FROM doc_links l JOIN documents d ON d.id = l.doc_id WHERE d.active = 1 \
         ORDER BY l.doc_id, l.start_line, l.start_col"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], link_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
