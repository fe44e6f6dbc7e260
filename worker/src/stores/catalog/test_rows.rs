//! Document rows for the catalog's unit tests: a row of collection `c` at a path, active or
//! not, with nothing else of a document.

use rusqlite::{params, Connection};

/// Inserts a row of collection `c` at `rel`, at generation 1.
pub(crate) fn insert(conn: &Connection, rel: &str, active: bool) {
    conn.execute(
        "INSERT INTO documents(collection, rel_path, docid, source_hash, mirror_hash, source_mime, source_ext,
           source_size, source_mtime_ns, title, active, gen, indexed_at)
         VALUES ('c', ?1, ?1, 'h', 'h', 'text/markdown', 'md', 1, 0, 't', ?2, 1, 'now')",
        params![rel, active],
    )
    .unwrap();
}
