//! The BM25 index's bookkeeping in the catalog: which rows it has not absorbed yet (`gen` ahead
//! of `bm25_gen`), and the content-type rules its categories were fed with.

use super::Result;
use crate::paths::dir_of;
use crate::stores::DocKey;
use rusqlite::{params, Connection, OptionalExtension};

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

/// A row the BM25 index absorbed, and what it read of the row's language
/// (`bm25::KeywordLanguage::stored`; `None` for a row that left the index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absorbed {
    pub version: RowVersion,
    pub keyword_lang: Option<String>,
}

impl Absorbed {
    /// A row that left the index.
    pub fn left(version: RowVersion) -> Self {
        Absorbed { version, keyword_lang: None }
    }
}

/// A folder of a collection: its path from the collection's root, `""` for the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Folder {
    pub collection: String,
    pub path: String,
}

impl Folder {
    /// The folder of `collection` a document's path is in: a mailbox's message
    /// (`<file>/<part key>`) is in its file's, beside the other messages.
    pub fn of(collection: &str, rel_path: &str) -> Folder {
        Folder { collection: collection.to_string(), path: dir_of(rel_path).to_string() }
    }
}

/// Records that the BM25 index absorbed these rows at their current generation, and what it
/// read of their language. Returns the folders of the rows whose language changed as
/// `differs` (before, after) judges.
pub fn mark_bm25_absorbed(
    conn: &mut Connection,
    rows: &[Absorbed],
    differs: impl Fn(Option<&str>, Option<&str>) -> bool,
) -> Result<std::collections::BTreeSet<Folder>> {
    let mut changed = std::collections::BTreeSet::new();
    let tx = conn.transaction()?;
    {
        let mut read =
            tx.prepare_cached("SELECT collection, rel_path, keyword_lang FROM documents WHERE id = ?1 AND gen = ?2")?;
        let mut write =
            tx.prepare_cached("UPDATE documents SET bm25_gen = ?2, keyword_lang = ?3 WHERE id = ?1 AND gen = ?2")?;
        for row in rows {
            let (id, gen) = (row.version.id, row.version.gen);
            let before: Option<(String, String, Option<String>)> =
                read.query_row(params![id, gen], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional()?;
            let Some((collection, rel_path, before)) = before else { continue };
            write.execute(params![id, gen, row.keyword_lang])?;
            if differs(before.as_deref(), row.keyword_lang.as_deref()) {
                changed.insert(Folder::of(&collection, &rel_path));
            }
        }
    }
    tx.commit()?;
    Ok(changed)
}

/// Entries of a folder's range (its notes and its subfolders', by path) read at most for its
/// languages ([`folder_languages`]): a folder of a hundred thousand notes is judged by a
/// sample, not read whole for each short note in it.
const FOLDER_SAMPLE: i64 = 2_000;

/// The bounds of a folder's paths (`rel_path >= lo AND rel_path < hi`: the root's are every
/// path, another folder's [`super::docs::paths_under`] it), and the character after which a
/// path of it names a note directly in it.
fn folder_range(folder: &str) -> (String, String, i64) {
    if folder.is_empty() {
        return (String::new(), char::MAX.to_string(), 1);
    }
    let (lo, hi) = super::docs::paths_under(folder);
    let name_at = lo.chars().count() as i64 + 1;
    (lo, hi, name_at)
}

/// What the keyword index read of the languages of the active notes directly in `folder` (a
/// sample: the first [`FOLDER_SAMPLE`] entries of its range).
pub fn folder_languages(conn: &Connection, folder: &Folder) -> Result<Vec<String>> {
    let (lo, hi, name_at) = folder_range(&folder.path);
    let mut stmt = conn.prepare_cached(
        "SELECT keyword_lang FROM (
           SELECT rel_path, keyword_lang, active FROM documents
           WHERE collection = ?1 AND rel_path >= ?2 AND rel_path < ?3 LIMIT ?5)
         WHERE active = 1 AND keyword_lang IS NOT NULL AND instr(substr(rel_path, ?4), '/') = 0",
    )?;
    let rows = stmt.query_map(params![folder.collection, lo, hi, name_at, FOLDER_SAMPLE], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The active notes directly in `folder` whose stored language starts with `prefix`, with it.
pub fn folder_rows_with_language(conn: &Connection, folder: &Folder, prefix: &str) -> Result<Vec<(DocKey, String)>> {
    let (lo, hi, name_at) = folder_range(&folder.path);
    let mut stmt = conn.prepare_cached(
        "SELECT id, keyword_lang FROM documents
         WHERE collection = ?1 AND rel_path >= ?2 AND rel_path < ?3 AND active = 1
           AND substr(keyword_lang, 1, length(?5)) = ?5 AND instr(substr(rel_path, ?4), '/') = 0",
    )?;
    let rows = stmt.query_map(params![folder.collection, lo, hi, name_at, prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::catalog::schema::{add_missing_columns, SCHEMA};

    fn catalog(rows: &[(&str, bool)]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        add_missing_columns(&conn).unwrap();
        for (rel, active) in rows {
            crate::stores::catalog::test_rows::insert(&conn, rel, *active);
        }
        conn
    }

    fn id(conn: &Connection, rel: &str) -> DocKey {
        conn.query_row("SELECT id FROM documents WHERE rel_path = ?1", [rel], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_folders_languages_are_its_own_active_notes_and_a_change_names_the_folder() {
        let rels = ["a/x.md", "a/y.md", "a/z.md", "a/b/w.md", "a-b/v.md", "top.md", "a/gone.md"];
        let mut conn = catalog(&rels.iter().map(|r| (*r, *r != "a/gone.md")).collect::<Vec<_>>());
        let absorbed = |rel: &str, lang: Option<&str>| Absorbed {
            version: RowVersion { id: id(&conn, rel), gen: 1 },
            keyword_lang: lang.map(str::to_string),
        };
        let rows = [
            absorbed("a/x.md", Some("deu")),
            absorbed("a/y.md", Some("deu")),
            absorbed("a/z.md", Some("~")),
            absorbed("a/b/w.md", Some("fra")),
            absorbed("a-b/v.md", Some("eng")),
            absorbed("top.md", Some("~eng")),
            absorbed("a/gone.md", Some("eng")),
        ];
        let differs = |a: Option<&str>, b: Option<&str>| a != b && !b.is_some_and(|b| b.starts_with('~'));
        let changed = mark_bm25_absorbed(&mut conn, &rows, differs).unwrap();
        let folder = |path: &str| Folder { collection: "c".into(), path: path.into() };
        assert_eq!(changed.into_iter().collect::<Vec<_>>(), [folder("a"), folder("a-b"), folder("a/b")]);
        let mut langs = folder_languages(&conn, &folder("a")).unwrap();
        langs.sort();
        assert_eq!(langs, ["deu", "deu", "~"], "not a subfolder's, a sibling folder's or an inactive note's");
        assert_eq!(folder_languages(&conn, &folder("")).unwrap(), ["~eng"], "the root's own");
        assert_eq!(folder_languages(&conn, &folder("other")).unwrap(), Vec::<String>::new());
        let shorts = folder_rows_with_language(&conn, &folder("a"), "~").unwrap();
        assert_eq!(shorts, [(id(&conn, "a/z.md"), "~".to_string())]);
        // Absorbed again with the same languages: no folder changed.
        assert!(mark_bm25_absorbed(&mut conn, &rows, differs).unwrap().is_empty());
        assert_eq!(Folder::of("c", "a/b/w.md"), folder("a/b"));
        assert_eq!(Folder::of("c", "top.md"), folder(""));
    }
}
