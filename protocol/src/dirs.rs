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
    /// The worker's last published status, served passively by the gateway.
    pub fn status_file(&self) -> PathBuf {
        self.index_dir().join("status.json")
    }
    /// The worker's local socket.
    pub fn worker_socket(&self) -> PathBuf {
        self.index_dir().join("worker.sock")
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
    use std::io::Write;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
