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

/// A catalog of at most this size is checked whole before the worker opens (SQLite's quick
/// check reads every page: about 0.1 s for this much from a cold disk here); a larger one
/// is opened at once and checked beside serving ([`deferred_check`]). A catalog of 200,000
/// notes is some 2 GB: checked before opening, the worker answered 10 s after a cold start.
pub const CHECK_BEFORE_OPEN_MAX_BYTES: u64 = 64 << 20;

/// When the catalog's pages are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogCheck {
    /// Before the catalog is opened: a damaged one is set aside at once.
    BeforeOpen,
    /// After it is opened, beside serving ([`deferred_check`]); an open that fails as damaged
    /// is still set aside at once.
    Deferred,
}

impl CatalogCheck {
    /// The check the catalog at `path` gets: before opening when it is small, when the last
    /// deferred check found it damaged (its mark is there), or when its size cannot be read.
    pub fn for_catalog(path: &Path) -> CatalogCheck {
        let small = std::fs::metadata(path).map_or(true, |m| m.len() <= CHECK_BEFORE_OPEN_MAX_BYTES);
        if small || damage_mark(path).exists() {
            CatalogCheck::BeforeOpen
        } else {
            CatalogCheck::Deferred
        }
    }
}

/// The file that says a deferred check found the catalog damaged: the next open checks it
/// first (and sets it aside), then removes the mark.
fn damage_mark(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.damaged", path.display()))
}

/// The deferred check of the catalog at `path`, on a connection of its own (the worker's
/// go on serving): `Some(what is wrong)` when it is damaged, and then its mark is written, so
/// that the next open sets it aside. The caller restarts the worker.
pub fn deferred_check(path: &Path) -> Result<Option<String>, CatalogError> {
    let damage = match Catalog::check_file(path) {
        Ok(found) => found,
        Err(e) if is_damage(&e) => Some(e.to_string()),
        Err(e) => return Err(e),
    };
    if let Some(damage) = &damage {
        protocol::write_atomic(&damage_mark(path), damage.as_bytes())?;
    }
    Ok(damage)
}

/// Opens the catalog at `path`. One that SQLite reports damaged (its quick check, when
/// `check` runs it now, or an open that fails as corrupt or as not a database) is set aside
/// under a new name and a new one is made; the second value is then true, and the caller
/// fills it from the notes. Any other failure (permissions, a full disk, a lock) is returned:
/// it is no reason to drop the catalog.
pub fn open_catalog(path: &Path, repairs: &Repairs, check: CatalogCheck) -> Result<(Catalog, bool), CatalogError> {
    let damage = match Catalog::open(path) {
        Ok(catalog) if check == CatalogCheck::Deferred => return Ok((catalog, false)),
        Ok(catalog) => match catalog.damage() {
            Ok(None) => {
                remove_mark(path);
                return Ok((catalog, false));
            }
            Ok(Some(damage)) => damage,
            Err(e) if is_damage(&e) => e.to_string(),
            Err(e) => return Err(e),
        },
        Err(e) if is_damage(&e) => e.to_string(),
        Err(e) => return Err(e),
    };
    let kept = set_aside(path)?;
    remove_mark(path);
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

fn remove_mark(path: &Path) {
    match std::fs::remove_file(damage_mark(path)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            tracing::warn!("could not remove {}: {e}", damage_mark(path).display())
        }
        _ => {}
    }
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
        let (c, rebuilt) = open_catalog(path, &Repairs::default(), CatalogCheck::BeforeOpen).unwrap();
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
        let (_, rebuilt) = open_catalog(&path, &repairs, CatalogCheck::BeforeOpen).unwrap();
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
            let (catalog, rebuilt) = open_catalog(&path, &repairs, CatalogCheck::BeforeOpen).unwrap();
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

    #[test]
    fn a_large_catalog_is_checked_after_it_opens_unless_a_check_found_it_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.sqlite");
        assert_eq!(CatalogCheck::for_catalog(&path), CatalogCheck::BeforeOpen, "no file yet");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(CHECK_BEFORE_OPEN_MAX_BYTES).unwrap();
        assert_eq!(CatalogCheck::for_catalog(&path), CatalogCheck::BeforeOpen);
        f.set_len(CHECK_BEFORE_OPEN_MAX_BYTES + 1).unwrap();
        assert_eq!(CatalogCheck::for_catalog(&path), CatalogCheck::Deferred);
        std::fs::write(damage_mark(&path), "found damaged").unwrap();
        assert_eq!(CatalogCheck::for_catalog(&path), CatalogCheck::BeforeOpen);
    }

    #[test]
    fn a_deferred_check_marks_a_damaged_catalog_and_the_next_open_sets_it_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.sqlite");
        catalog_with_rows(&path);
        assert_eq!(deferred_check(&path).unwrap(), None);
        assert!(!damage_mark(&path).exists());

        // Opened unchecked (as a large one is), then damaged under the open catalog.
        let (open, rebuilt) = open_catalog(&path, &Repairs::default(), CatalogCheck::Deferred).unwrap();
        assert!(!rebuilt);
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(SeekFrom::Start(40 * 4096)).unwrap();
        f.write_all(&[0xA5; 4096]).unwrap();
        drop(f);
        assert!(deferred_check(&path).unwrap().is_some(), "the damage is found beside the open catalog");
        assert!(damage_mark(&path).exists());
        drop(open);

        let repairs = Repairs::default();
        let check = CatalogCheck::for_catalog(&path);
        assert_eq!(check, CatalogCheck::BeforeOpen);
        let (catalog, rebuilt) = open_catalog(&path, &repairs, check).unwrap();
        assert!(rebuilt);
        assert_eq!(catalog.damage().unwrap(), None);
        assert_eq!(repairs.list().len(), 1);
        assert!(!damage_mark(&path).exists(), "the mark goes with the damaged catalog");
    }
}
