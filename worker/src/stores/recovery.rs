//! Start-up checks. The notes on disk are the source of truth; the catalog is derived from
//! them, and the keyword index and the vector tables from the catalog. A store found damaged,
//! missing or out of step is rebuilt from what it derives from, and the repair is said in the
//! log and in `/api/status` (`repairs`), rather than the worker refusing to start.

use super::catalog::{Catalog, CatalogError};
use crate::time_fmt;
use protocol::api::{Repair, RepairedStore};
use rusqlite::ErrorCode;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The repairs made since the worker started.
#[derive(Debug, Default)]
pub struct Repairs(Mutex<Vec<Repair>>);

impl Repairs {
    /// Records a repair, with a warning in the log.
    pub fn record(&self, store: RepairedStore, message: String) {
        tracing::warn!(?store, "repaired: {message}");
        let repair = Repair { store, message, at: time_fmt::now_iso() };
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(repair);
    }

    pub fn list(&self) -> Vec<Repair> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Opens the catalog at `path`. One that SQLite reports damaged (its quick check, or an open
/// that fails as corrupt or as not a database) is set aside under a new name and a new one is
/// made; the second value is then true, and the caller fills it from the notes. Any other
/// failure (permissions, a full disk, a lock) is returned: it is no reason to drop the
/// catalog.
pub fn open_catalog(path: &Path, repairs: &Repairs) -> Result<(Catalog, bool), CatalogError> {
    let damage = match Catalog::open(path) {
        Ok(catalog) => match catalog.damage() {
            Ok(None) => return Ok((catalog, false)),
            Ok(Some(damage)) => damage,
            Err(e) if is_damage(&e) => e.to_string(),
            Err(e) => return Err(e),
        },
        Err(e) if is_damage(&e) => e.to_string(),
        Err(e) => return Err(e),
    };
    let kept = set_aside(path)?;
    let catalog = Catalog::open(path)?;
    repairs.record(
        RepairedStore::Catalog,
        format!(
            "the catalog was damaged ({damage}); it is kept as {} and a new one is filled from the notes on disk",
            kept.display()
        ),
    );
    Ok((catalog, true))
}

/// Whether SQLite says the file is damaged or no database.
fn is_damage(e: &CatalogError) -> bool {
    matches!(e, CatalogError::Sql(rusqlite::Error::SqliteFailure(f, _))
        if matches!(f.code, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase))
}

/// Renames the catalog and its write-ahead log aside (`catalog.sqlite.damaged-<ms>`), drops
/// its shared-memory index; returns the new name of the catalog.
fn set_aside(path: &Path) -> Result<PathBuf, CatalogError> {
    let suffix = format!("damaged-{}", time_fmt::now_ms());
    let renamed = |p: &Path| PathBuf::from(format!("{}.{suffix}", p.display()));
    let with = |ext: &str| PathBuf::from(format!("{}{ext}", path.display()));
    std::fs::rename(path, renamed(path))?;
    if with("-wal").exists() {
        std::fs::rename(with("-wal"), renamed(&with("-wal")))?;
    }
    let _ = std::fs::remove_file(with("-shm"));
    Ok(renamed(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    fn catalog_with_rows(path: &Path) {
        let (c, rebuilt) = open_catalog(path, &Repairs::default()).unwrap();
        assert!(!rebuilt);
        let conn = c.writer();
        conn.execute_batch("CREATE TABLE filler(x TEXT); PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
        for i in 0..2000 {
            conn.execute("INSERT INTO filler VALUES (?1)", [format!("row {i} {}", "x".repeat(200))]).unwrap();
        }
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    }

    #[test]
    fn a_sound_catalog_is_opened_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.sqlite");
        catalog_with_rows(&path);
        let repairs = Repairs::default();
        let (_, rebuilt) = open_catalog(&path, &repairs).unwrap();
        assert!(!rebuilt);
        assert!(repairs.list().is_empty());
    }

    #[test]
    fn a_damaged_catalog_is_set_aside_and_a_new_one_made() {
        for offset in [0u64, 40 * 4096] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("catalog.sqlite");
            catalog_with_rows(&path);
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.seek(SeekFrom::Start(offset)).unwrap();
            f.write_all(&[0xA5; 4096]).unwrap();
            drop(f);
            let repairs = Repairs::default();
            let (catalog, rebuilt) = open_catalog(&path, &repairs).unwrap();
            assert!(rebuilt, "damage at {offset} found");
            assert_eq!(catalog.damage().unwrap(), None);
            let listed = repairs.list();
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0].store, RepairedStore::Catalog);
            let kept: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("catalog.sqlite.damaged-"))
                .collect();
            assert_eq!(kept.len(), 1, "the damaged file is kept");
        }
    }
}
