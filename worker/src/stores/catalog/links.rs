//! The links of documents as stored: one document's, and every active one's (the graph).

use super::{Link, LinkRow, Result};
use crate::stores::DocKey;
use protocol::LinkKind;
use rusqlite::{params, Connection, Row};

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
        embed: r.get(11)?,
    };
    Ok(LinkRow { doc_id: r.get(0)?, link })
}

const LINK_COLUMNS: &str =
    "l.doc_id, l.link_type, l.target_ref, l.target_ref_norm, l.target_anchor, l.target_collection, \
     l.link_text, l.start_line, l.start_col, l.end_line, l.end_col, l.embed";

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

/// The links document `doc_id` holds now: its stored ones replaced by `links`.
pub fn replace_links(conn: &Connection, doc_id: DocKey, links: &[Link]) -> Result<()> {
    conn.execute("DELETE FROM doc_links WHERE doc_id = ?1", [doc_id])?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO doc_links(doc_id, link_type, target_ref, target_ref_norm, target_anchor, target_collection, link_text, \
           start_line, start_col, end_line, end_col, embed) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    for l in links {
        stmt.execute(params![
            doc_id,
            l.link_type.as_str(),
            l.target_ref,
            l.target_ref_norm,
            l.target_anchor,
            l.target_collection,
            l.link_text,
            i64::from(l.start_line),
            i64::from(l.start_col),
            i64::from(l.end_line),
            i64::from(l.end_col),
            l.embed
        ])?;
    }
    Ok(())
}

/// The version of the link parser the stored links come from (0: older than versions).
pub fn links_version(conn: &Connection) -> Result<u32> {
    Ok(super::changes::meta_value(conn, "links_version")?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

pub fn set_links_version(conn: &Connection, version: u32) -> Result<()> {
    super::changes::set_meta(conn, "links_version", &version.to_string())
}

/// Every document's key, path and content hash: what its links are parsed from.
pub fn link_sources(conn: &Connection) -> Result<Vec<(DocKey, String, String)>> {
    let mut stmt = conn.prepare("SELECT id, rel_path, mirror_hash FROM documents ORDER BY id")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
