//! Where svc keeps its files. Every process derives the same paths from the environment.

use std::path::{Path, PathBuf};

/// The directories of one index, resolved from `SVC_CONFIG_DIR`, `SVC_DATA_DIR`,
/// `SVC_CACHE_DIR` and `SVC_INDEX`, falling back to the XDG defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub cache_dir: PathBuf,
    pub index_name: String,
}

fn env_dir(var: &str, xdg: &str, fallback: &str) -> PathBuf {
    if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        return PathBuf::from(v);
    }
    if let Some(v) = std::env::var_os(xdg).filter(|v| !v.is_empty()) {
        return PathBuf::from(v).join("svc");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(fallback).join("svc")
}

impl Dirs {
    pub fn from_env() -> Self {
        let index_name = std::env::var("SVC_INDEX")
            .ok()
            .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or_else(|| "default".to_string());
        Dirs {
            config_dir: env_dir("SVC_CONFIG_DIR", "XDG_CONFIG_HOME", ".config"),
            data_dir: env_dir("SVC_DATA_DIR", "XDG_DATA_HOME", ".local/share"),
            cache_dir: env_dir("SVC_CACHE_DIR", "XDG_CACHE_HOME", ".cache"),
            index_name,
        }
    }

    /// `<config>/index.yml`
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("index.yml")
    }
    /// `<data>/<index>/`: every store of the index.
    pub fn index_dir(&self) -> PathBuf {
        self.data_dir.join(&self.index_name)
    }
    pub fn catalog_file(&self) -> PathBuf {
        self.index_dir().join("catalog.sqlite")
    }
    pub fn bm25_dir(&self) -> PathBuf {
        self.index_dir().join("bm25")
    }
    /// LanceDB: one vector table per embedding model.
    pub fn vectors_dir(&self) -> PathBuf {
        self.index_dir().join("vectors")
    }
    /// `<data>/<index>/connectors.json`: the gateway's saved connector verifications.
    pub fn connectors_file(&self) -> PathBuf {
        self.index_dir().join("connectors.json")
    }
    /// The worker's last published status, served passively by the gateway.
    pub fn status_file(&self) -> PathBuf {
        self.index_dir().join("status.json")
    }
    /// The worker's local socket.
    pub fn worker_socket(&self) -> PathBuf {
        self.index_dir().join("worker.sock")
    }
    /// Why the worker's last start failed, in its own words (written by the worker as it
    /// gives up; removed once one starts).
    pub fn worker_start_error_file(&self) -> PathBuf {
        self.index_dir().join("worker-start-error.txt")
    }
    /// The supervisor's record of a worker that keeps failing to start
    /// ([`crate::api::WorkerFailure`], JSON); absent while starts succeed.
    pub fn worker_failure_file(&self) -> PathBuf {
        self.index_dir().join("worker-failure.json")
    }
    /// The server's pidfile (JSON: pid, port, url). Locked while a server runs.
    pub fn pid_file(&self) -> PathBuf {
        self.index_dir().join("svc.pid")
    }
    pub fn log_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }
    pub fn models_dir(&self) -> PathBuf {
        self.cache_dir.join("models")
    }
}

/// Writes `bytes` to `path` through a temp file in the same directory, fsync and rename,
/// so a reader never sees a partial file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_file(path, bytes, true)
}

/// The one atomic write: a temp file in the target's folder, fsync, then rename (or link,
/// when an existing file must never be replaced), then fsync the folder. With
/// `replace == false` an existing file is never touched (`AlreadyExists`), even one that
/// appeared a moment ago. A failed write leaves neither a partial target nor a temp file.
pub fn write_file(target: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    write_with(target, bytes, replace, None, true)
}

/// [`write_file`] without its two fsyncs: a reader still never sees a partial file, but the
/// bytes may not be on the disk yet. For a batch of files the caller makes durable at once
/// (syncfs) before it records them anywhere: a team's replica takes a thousand files in one.
pub fn write_file_unsynced(target: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    write_with(target, bytes, replace, None, false)
}

/// [`write_atomic`] that gives the new file the replaced file's permissions (set on the temp
/// file before the rename, so a user's 0600 file is never readable by others, even briefly).
pub fn write_atomic_keeping_permissions(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    write_with(path, bytes, true, permissions, true)
}

fn write_with(
    target: &Path,
    bytes: &[u8],
    replace: bool,
    permissions: Option<std::fs::Permissions>,
    sync: bool,
) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let tmp = temp_path(target);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        drop(f);
        if replace {
            std::fs::rename(&tmp, target)
        } else {
            // link(2) creates the name atomically or fails with EEXIST.
            std::fs::hard_link(&tmp, target).and_then(|_| std::fs::remove_file(&tmp))
        }
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    if sync {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// A temp name next to `target`, unique per call, not just per process: two threads (the job
/// thread and the embedding thread both publish status.json) must never share a temp file.
fn temp_path(target: &Path) -> std::path::PathBuf {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    // At most the name's first 100 bytes: a name near the file system's 255-byte limit must
    // still leave room for the temp file's own.
    let mut cut = name.len().min(100);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    target.with_file_name(format!(".{}.svc-{}-{seq}.tmp", &name[..cut], std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_at_the_file_systems_limit_can_be_written() {
        let dir = tempfile::tempdir().unwrap();
        for name in [format!("{}.md", "n".repeat(252)), format!("{}.md", "é".repeat(126))] {
            assert!(name.len() <= 255);
            let target = dir.path().join(&name);
            write_file(&target, b"x", false).expect("written");
            assert_eq!(std::fs::read(&target).unwrap(), b"x");
        }
    }

    #[test]
    fn a_replacement_can_keep_the_old_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.json");
        write_atomic(&p, b"{}").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic_keeping_permissions(&p, b"{\"a\":1}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file left");
    }

    #[test]
    fn writes_replaces_and_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/n.md");
        write_file(&p, b"one", false).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let e = write_file(&p, b"two", false).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_atomic(&p, b"three").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn concurrent_writers_of_one_file_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("status.json");
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    (0..50).all(|_| write_atomic(&p, format!("{{\"writer\":{i}}}").as_bytes()).is_ok())
                })
            })
            .collect();
        assert!(writers.into_iter().all(|w| w.join().unwrap()), "every write succeeds");
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("{\"writer\":") && text.ends_with('}'), "{text}");
    }
}
