//! Schema, created idempotently at open (the only statement that is not a `CREATE ... IF NOT
//! EXISTS` empties `embed_failures`: a worker start retries what failed to embed).

pub(crate) const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS collections(
  name TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  synced_at TEXT
);
CREATE TABLE IF NOT EXISTS documents(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  collection TEXT NOT NULL,
  rel_path TEXT NOT NULL,
  docid TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  mirror_hash TEXT NOT NULL,
  source_mime TEXT NOT NULL,
  source_ext TEXT NOT NULL,
  source_size INTEGER NOT NULL,
  source_mtime_ns INTEGER NOT NULL,
  title TEXT NOT NULL,
  author TEXT,
  categories TEXT NOT NULL DEFAULT '[]',
  fm_date TEXT,
  date_fields TEXT NOT NULL DEFAULT '{}',
  body_start_line INTEGER NOT NULL DEFAULT 1,
  active INTEGER NOT NULL DEFAULT 1,
  gen INTEGER NOT NULL,
  bm25_gen INTEGER NOT NULL DEFAULT 0,
  indexed_at TEXT NOT NULL,
  fm_type TEXT,
  -- A document that is one part of a file (a mailbox's message, at `<file>/<part key>`):
  -- that file's path; NULL for a document that is a whole file.
  part_of TEXT,
  UNIQUE(collection, rel_path)
);
CREATE INDEX IF NOT EXISTS documents_docid ON documents(docid);
CREATE INDEX IF NOT EXISTS documents_active ON documents(collection, active);
CREATE INDEX IF NOT EXISTS documents_mirror ON documents(mirror_hash);
-- The listing's order (`GET /api/docs`, by modification): a page read from the index, not
-- every active row sorted. Partial on `active IS 1`, a term only the listing's query states,
-- so that the planner never takes it for another query: with `active` leading, or partial on
-- `active = 1`, it took it for every query that said `active = 1` (a search's rows by mirror
-- hash, the switcher's titles: a walk of the index and a row lookup per entry, 2.7x a scan).
DROP INDEX IF EXISTS documents_by_modified;
CREATE INDEX IF NOT EXISTS documents_listed_by_modified ON documents(source_mtime_ns, id) WHERE active IS 1;
-- The rows the keyword index has not absorbed at their generation (a few, or none, but for a
-- sync's batch in flight): counted and walked by this index, not by reading every row (1.3 s
-- at a million notes, at every start and in every status).
CREATE INDEX IF NOT EXISTS documents_keyword_pending ON documents(id) WHERE gen != bm25_gen;
-- Each row's front-matter date keys (its `date_fields`' keys), so that the listing's
-- `availableDateFields` reads each key once by its index instead of every row's JSON.
-- Filled for an older catalog at open (`fill_date_keys`).
CREATE TABLE IF NOT EXISTS doc_date_keys(
  key TEXT NOT NULL,
  doc_id INTEGER NOT NULL,
  PRIMARY KEY(key, doc_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS doc_date_keys_doc ON doc_date_keys(doc_id);
CREATE TABLE IF NOT EXISTS content(
  mirror_hash TEXT PRIMARY KEY,
  text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
  mirror_hash TEXT NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  symbol TEXT,
  PRIMARY KEY(mirror_hash, seq)
);
CREATE TABLE IF NOT EXISTS doc_tags(
  doc_id INTEGER NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY(doc_id, tag)
);
CREATE INDEX IF NOT EXISTS doc_tags_tag ON doc_tags(tag);
CREATE TABLE IF NOT EXISTS doc_links(
  doc_id INTEGER NOT NULL,
  link_type TEXT NOT NULL,
  target_ref TEXT NOT NULL,
  target_ref_norm TEXT NOT NULL,
  target_anchor TEXT,
  target_collection TEXT,
  link_text TEXT,
  start_line INTEGER NOT NULL,
  start_col INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  end_col INTEGER NOT NULL,
  -- An embed (`![[Note]]`, `![alt](pic.png)`) rather than a plain link.
  embed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS doc_links_doc ON doc_links(doc_id);
-- A team's shared documents as this replica last took them from the stream (or published
-- them): the stream sequence of that version, its content hash, and whether it is a tombstone.
CREATE TABLE IF NOT EXISTS team_docs(
  collection TEXT NOT NULL,
  rel_path TEXT NOT NULL,
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  deleted INTEGER NOT NULL,
  -- The vector table whose vectors that version carried on the stream; '' when they will not
  -- travel (too large, or a newer version came first); NULL while they have not.
  carried TEXT,
  -- Whether that version's bytes are in the team's object store (too large for a message).
  stored INTEGER NOT NULL DEFAULT 0,
  -- 0 for a version published from here that this member's consumer has not yet delivered
  -- back (the stream may have lost it: it is published again).
  echoed INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY(collection, rel_path)
);
CREATE TABLE IF NOT EXISTS changes(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  collection TEXT NOT NULL,
  rel_path TEXT NOT NULL,
  doc_id INTEGER NOT NULL,
  origin TEXT NOT NULL,
  observed_at TEXT NOT NULL,
  previous TEXT,
  current TEXT,
  delta TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_doc ON changes(doc_id);
CREATE INDEX IF NOT EXISTS changes_collection ON changes(collection, seq);
-- Saved Context Capsules (`svc context add`), re-verified when a change touches their
-- evidence: `checked_seq` is the last journal change looked at.
CREATE TABLE IF NOT EXISTS capsule_registrations(
  id TEXT PRIMARY KEY,
  label TEXT,
  capsule TEXT NOT NULL,
  capsule_id TEXT NOT NULL,
  uris TEXT NOT NULL,
  evidence_count INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  checked_seq INTEGER NOT NULL,
  content_status TEXT,
  receipt TEXT,
  verified_at TEXT
);
CREATE TABLE IF NOT EXISTS embeddings(
  mirror_hash TEXT NOT NULL,
  model TEXT NOT NULL,
  embedded_at TEXT NOT NULL,
  PRIMARY KEY(mirror_hash, model)
);
-- Contents an embedding model failed on: out of the backlog until their content changes (a
-- new mirror_hash) or the catalog is opened again. Every open (a worker start) empties it,
-- so a restart retries them.
CREATE TABLE IF NOT EXISTS embed_failures(
  mirror_hash TEXT NOT NULL,
  model TEXT NOT NULL,
  error TEXT NOT NULL,
  failed_at TEXT NOT NULL,
  PRIMARY KEY(mirror_hash, model)
);
DELETE FROM embed_failures;
CREATE TABLE IF NOT EXISTS jobs(
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  result TEXT,
  error TEXT
);
"#;

/// Columns added after a catalog was first created (`CREATE TABLE IF NOT EXISTS` leaves an
/// existing table as it is): `(table, column, declaration)`.
const ADDED_COLUMNS: [(&str, &str, &str); 8] = [
    ("documents", "fm_type", "TEXT"),
    ("chunks", "symbol", "TEXT"),
    ("documents", "part_of", "TEXT"),
    ("team_docs", "carried", "TEXT"),
    ("team_docs", "stored", "INTEGER NOT NULL DEFAULT 0"),
    ("team_docs", "echoed", "INTEGER NOT NULL DEFAULT 1"),
    ("doc_links", "embed", "INTEGER NOT NULL DEFAULT 0"),
    // What the keyword index read of a document's language (`bm25::KeywordLanguage`): the
    // notes beside a short one tell the language it is likely in.
    ("documents", "keyword_lang", "TEXT"),
];

/// Indexes over [`ADDED_COLUMNS`], made once an older catalog has them.
const ADDED_INDEXES: &str = r#"
-- The versions published here that the stream has not delivered back (a few at most).
CREATE INDEX IF NOT EXISTS team_docs_awaited ON team_docs(seq) WHERE echoed = 0;
"#;

/// Fills `doc_date_keys` from the rows' `date_fields` once, for a catalog made before the
/// table (a meta key says it was done; a new catalog's rows fill it as they are written).
pub(crate) fn fill_date_keys(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::OptionalExtension;
    const KEY: &str = "date_keys_filled";
    let done: Option<String> =
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [KEY], |r| r.get(0)).optional()?;
    if done.is_some() {
        return Ok(());
    }
    conn.execute_batch(&format!(
        "BEGIN;
         INSERT OR IGNORE INTO doc_date_keys(key, doc_id) SELECT j.key, d.id FROM documents d, json_each(d.date_fields) j;
         INSERT INTO meta(key, value) VALUES('{KEY}', '1') ON CONFLICT(key) DO UPDATE SET value = excluded.value;
         COMMIT;"
    ))
}

/// Adds the [`ADDED_COLUMNS`] an older catalog lacks, and the indexes over them. A row
/// indexed before a column existed holds NULL there until its file changes.
pub(crate) fn add_missing_columns(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    for (table, column, decl) in ADDED_COLUMNS {
        let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
        let names: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        if !names.iter().any(|n| n == column) {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
        }
    }
    conn.execute_batch(ADDED_INDEXES)
}
