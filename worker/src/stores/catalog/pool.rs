//! Connections: one writer, a few readers. WAL lets readers run while a job writes.

use super::{schema::SCHEMA, Result};
use rusqlite::Connection;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

const READERS: usize = 4;

pub struct Catalog {
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
}

fn open_conn(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "cache_size", -16000)?;
    Ok(conn)
}

/// SQLite's quick integrity check on `conn`: `None` when the file is sound, else what is
/// wrong with it (the first five findings).
fn quick_check(conn: &Connection) -> Result<Option<String>> {
    let mut stmt = conn.prepare("PRAGMA quick_check(5)")?;
    let found: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok((found != ["ok"]).then(|| found.join("; ")))
}

impl Catalog {
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let writer = open_conn(path)?;
        writer.execute_batch(SCHEMA)?;
        super::schema::add_missing_columns(&writer)?;
        super::schema::fill_date_keys(&writer)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            readers.push(Mutex::new(open_conn(path)?));
        }
        Ok(Catalog { writer: Mutex::new(writer), readers, next_reader: AtomicUsize::new(0) })
    }

    /// SQLite's quick integrity check (`PRAGMA quick_check`): `None` when the file is sound,
    /// else what is wrong with it.
    pub fn damage(&self) -> Result<Option<String>> {
        quick_check(&self.writer())
    }

    /// [`Catalog::damage`] of the catalog file at `path`, read on a connection of its own
    /// (read-only), so that the catalog's own connections stay free while it reads every page.
    pub fn check_file(path: &Path) -> Result<Option<String>> {
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        quick_check(&conn)
    }

    /// Folds the write-ahead log into the database file and empties it.
    pub fn checkpoint(&self) -> Result<()> {
        self.writer().execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    }

    /// The single writing connection. Jobs hold it per batch, never across a whole job.
    pub fn writer(&self) -> MutexGuard<'_, Connection> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A reading connection: the first free one, else waits on one in turn.
    pub fn reader(&self) -> MutexGuard<'_, Connection> {
        for r in &self.readers {
            if let Ok(g) = r.try_lock() {
                return g;
            }
        }
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        self.readers[i].lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One read snapshot on a reading connection: every query through it sees the same
/// committed state, even while the writer commits.
pub fn snapshot(conn: &Connection) -> super::Result<rusqlite::Transaction<'_>> {
    Ok(conn.unchecked_transaction()?)
}
