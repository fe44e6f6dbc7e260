//! The document list (`GET /api/docs`: filters, sort, a page) and the quick switcher's title
//! matches, as the catalog's SQL.

use super::docs::{doc_from_row, DocRow, DOC_COLUMNS};
use super::Result;
use protocol::{DocsQuery, SortField, SortOrder};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, params_from_iter, Connection};
use std::collections::BTreeSet;

/// One page of active documents, with what the whole filtered list holds.
#[derive(Debug)]
pub struct DocPage {
    /// Documents the filters keep (all pages).
    pub total: u64,
    /// The front-matter date fields any of them has.
    pub date_fields: BTreeSet<String>,
    pub rows: Vec<DocRow>,
}

pub fn doc_page(conn: &Connection, q: &DocsQuery) -> Result<DocPage> {
    let mut clauses = vec!["d.active = 1".to_string()];
    let mut args: Vec<SqlValue> = Vec::new();
    if let Some(c) = &q.collection {
        args.push(SqlValue::Text(c.to_string()));
        clauses.push(format!("d.collection = ?{}", args.len()));
    }
    for t in &q.tags_all {
        args.push(SqlValue::Text(t.to_string()));
        clauses.push(format!("EXISTS (SELECT 1 FROM doc_tags t WHERE t.doc_id = d.id AND t.tag = ?{})", args.len()));
    }
    if !q.tags_any.is_empty() {
        let mut marks = Vec::new();
        for t in &q.tags_any {
            args.push(SqlValue::Text(t.to_string()));
            marks.push(format!("?{}", args.len()));
        }
        clauses.push(format!(
            "EXISTS (SELECT 1 FROM doc_tags t WHERE t.doc_id = d.id AND t.tag IN ({}))",
            marks.join(",")
        ));
    }
    let filter = clauses.join(" AND ");
    let dir = if q.sort_order == SortOrder::Asc { "ASC" } else { "DESC" };
    let (from, order) = match &q.sort_field {
        // By modification, the page is read from its index (`active IS 1`, the index's own term,
        // is in the page's query), a collection's too (the planner would sort the collection's
        // rows instead); ties by row in the same direction, so that one index gives either order.
        SortField::Modified => {
            ("documents d INDEXED BY documents_listed_by_modified", format!("d.source_mtime_ns {dir}, d.id {dir}"))
        }
        SortField::DateKey(field) => {
            // A DateKey is `[a-z0-9_]+` by construction: it can stand in the JSON path.
            let key = format!("json_extract(d.date_fields, '$.{}')", field.as_str());
            ("documents d", format!("({key} IS NULL), {key} {dir}, d.id"))
        }
    };
    let total: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM documents d WHERE {filter}"),
        params_from_iter(args.iter()),
        |r| r.get(0),
    )?;
    let date_fields: BTreeSet<String> = {
        // Each key once, by the index (a loose scan: the next key after the last), and kept
        // when a row that passes the filter has it.
        let sql = format!(
            "WITH RECURSIVE k(key) AS (
               SELECT MIN(key) FROM doc_date_keys
               UNION ALL
               SELECT (SELECT MIN(key) FROM doc_date_keys WHERE key > k.key) FROM k WHERE k.key IS NOT NULL)
             SELECT k.key FROM k WHERE k.key IS NOT NULL AND EXISTS (
               SELECT 1 FROM doc_date_keys x JOIN documents d ON d.id = x.doc_id WHERE x.key = k.key AND {filter})"
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params_from_iter(args.iter()), |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut page_args = args.clone();
    page_args.push(SqlValue::Integer(i64::from(q.limit)));
    page_args.push(SqlValue::Integer(i64::from(q.offset)));
    let n = page_args.len();
    let sql = format!(
        "SELECT {} FROM {from} WHERE {filter} AND d.active IS 1 ORDER BY {order} LIMIT ?{} OFFSET ?{}",
        DOC_COLUMNS.split(", ").map(|c| format!("d.{c}")).collect::<Vec<_>>().join(", "),
        n - 1,
        n
    );
    let rows: Vec<DocRow> = {
        let mut stmt = conn.prepare(&sql)?;
        let it = stmt.query_map(params_from_iter(page_args.iter()), doc_from_row)?;
        it.collect::<rusqlite::Result<_>>()?
    };
    Ok(DocPage { total: total.max(0) as u64, date_fields, rows })
}

/// An active document whose title matches a switcher query.
#[derive(Debug, Clone, PartialEq)]
pub struct TitleMatch {
    pub docid: String,
    pub collection: String,
    pub rel_path: String,
    pub title: String,
}

/// Titles starting with `query` first, then titles with a word starting with it; each group
/// in title order (case-insensitive), at most `limit`. `query` is lowercased.
pub fn title_matches(conn: &Connection, query: &str, collection: Option<&str>, limit: u32) -> Result<Vec<TitleMatch>> {
    let escaped: String =
        query.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    let mut stmt = conn.prepare_cached(
        "SELECT docid, collection, rel_path, title, CASE WHEN lower(title) LIKE ?1 || '%' ESCAPE '\\' THEN 0 ELSE 1 END AS rank \
         FROM documents WHERE active = 1 AND (?3 IS NULL OR collection = ?3) \
         AND (lower(title) LIKE ?1 || '%' ESCAPE '\\' OR lower(title) LIKE '% ' || ?1 || '%' ESCAPE '\\' \
              OR lower(title) LIKE '%-' || ?1 || '%' ESCAPE '\\' OR lower(title) LIKE '%/' || ?1 || '%' ESCAPE '\\') \
         ORDER BY rank, lower(title), collection, rel_path LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![escaped, limit, collection], |r| {
        Ok(TitleMatch { docid: r.get(0)?, collection: r.get(1)?, rel_path: r.get(2)?, title: r.get(3)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
