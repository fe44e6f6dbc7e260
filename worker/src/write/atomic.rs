//! Atomic file writes: temp file in the same folder, fsync, then rename (or link, when an
//! existing file must never be replaced), then fsync the folder.

use std::io::Write;
use std::path::{Path, PathBuf};

fn temp_path(target: &Path) -> PathBuf {
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("note");
    target.with_file_name(format!(".{name}.svc-{}.tmp", uuid::Uuid::new_v4().simple()))
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to `target`. With `replace == false` an existing file is never touched
/// (`AlreadyExists`), even one that appeared a moment ago.
pub fn write_file(target: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    let dir = target.parent().ok_or_else(|| std::io::Error::other("target has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = temp_path(target);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        if replace {
            std::fs::rename(&tmp, target)
        } else {
            // link(2) creates the name atomically or fails with EEXIST.
            std::fs::hard_link(&tmp, target).and_then(|_| std::fs::remove_file(&tmp))
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    sync_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replaces_and_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/n.md");
        write_file(&p, b"one", false).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let e = write_file(&p, b"two", false).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_file(&p, b"three", true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
        assert!(leftovers.is_empty());
    }
}
