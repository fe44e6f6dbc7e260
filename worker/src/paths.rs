//! Paths that come from requests: a [`RelPath`] cannot hold `..`, an absolute path, NUL,
//! a backslash or an empty segment, and [`contain`] checks the real location after
//! following symlinks.

use protocol::ApiError;
use std::fmt;
use std::path::{Path, PathBuf};

const MAX_SEGMENT: usize = 255;
const MAX_PATH: usize = 4096;

/// A relative path inside a collection, `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelPath(String);

fn bad(what: &str, raw: &str) -> ApiError {
    ApiError::validation(format!(
        "Invalid {what} {raw:?}: use a relative path inside the collection, without '..', '\\\\' or NUL"
    ))
}

impl RelPath {
    /// `what` names the field in the error (`relPath`, `folderPath`, ...).
    pub fn parse(raw: &str, what: &str) -> Result<Self, ApiError> {
        if raw.is_empty()
            || raw.len() > MAX_PATH
            || raw.starts_with('/')
            || raw.contains('\\')
            || raw.chars().any(char::is_control)
        {
            return Err(bad(what, raw));
        }
        let trimmed = raw.trim_end_matches('/');
        for seg in trimmed.split('/') {
            if seg.is_empty() || seg == "." || seg == ".." || seg.len() > MAX_SEGMENT || seg.trim().is_empty() {
                return Err(bad(what, raw));
            }
        }
        if trimmed.is_empty() {
            return Err(bad(what, raw));
        }
        Ok(RelPath(trimmed.to_string()))
    }

    /// An optional folder: absent or empty means the collection root. A trailing `/` is
    /// dropped; a leading one makes the path absolute, which is refused like `..`.
    pub fn parse_folder(raw: Option<&str>, what: &str) -> Result<Option<Self>, ApiError> {
        if let Some(absolute) = raw.filter(|r| r.starts_with('/')) {
            return Err(bad(what, absolute));
        }
        match raw.map(|r| r.trim_end_matches('/')) {
            None | Some("") => Ok(None),
            Some(r) => Self::parse(r, what).map(Some),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn join(&self, name: &str) -> Result<RelPath, ApiError> {
        RelPath::parse(&format!("{}/{name}", self.0), "path")
    }

    pub fn file_name(&self) -> &str {
        file_name(&self.0)
    }

    pub fn parent(&self) -> Option<RelPath> {
        self.0.rsplit_once('/').map(|(p, _)| RelPath(p.to_string()))
    }

    /// The same path with `-n` before the extension (`a/note.md` → `a/note-2.md`).
    pub fn with_suffix(&self, n: u32) -> Result<RelPath, ApiError> {
        let name = self.file_name();
        let (stem, ext) = match name.rsplit_once('.') {
            Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
            _ => (name, String::new()),
        };
        let new = format!("{stem}-{n}{ext}");
        match self.parent() {
            Some(p) => p.join(&new),
            None => RelPath::parse(&new, "relPath"),
        }
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A relative path's last segment.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folder of a relative path (`""` at the root).
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `dir/path` joined and `.` and `..` resolved, by the text alone (a link's target, not a
/// file on disk); `None` when it climbs above the root.
pub fn lexical_join(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in dir.split('/').chain(path.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The absolute path of `rel` under `root` (canonical), refusing any location that a
/// symlink would take outside `root`. Components that do not exist yet are plain names.
pub fn contain(root: &Path, rel: &RelPath) -> Result<PathBuf, ApiError> {
    let target = root.join(rel.as_str());
    let mut existing = target.as_path();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match existing.parent() {
            Some(p) => existing = p,
            None => break,
        }
    }
    let real = existing
        .canonicalize()
        .map_err(|_| ApiError::validation(format!("{rel} points outside the collection (a dangling link?)")))?;
    if !real.starts_with(root) {
        return Err(ApiError::validation(format!("{rel} points outside the collection")));
    }
    // A path through a file (`club.mbox/x.md`, where club.mbox's messages are documents).
    if existing != target && !real.is_dir() {
        return Err(ApiError::validation(format!("{rel} goes through a file, not a folder")));
    }
    match target.strip_prefix(existing) {
        Ok(rest) if !rest.as_os_str().is_empty() => Ok(real.join(rest)),
        _ => Ok(real),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_keep_the_extension_and_folder() {
        let r = RelPath::parse("a/b/note.md", "p").unwrap();
        assert_eq!(r.with_suffix(2).unwrap().as_str(), "a/b/note-2.md");
        assert_eq!(RelPath::parse("x", "p").unwrap().with_suffix(3).unwrap().as_str(), "x-3");
    }

    #[test]
    fn refuses_escapes_and_odd_input() {
        for raw in [
            "",
            "/etc/passwd",
            "../x.md",
            "a/../../x.md",
            "a/./b.md",
            "a//b.md",
            "a\\b.md",
            "a\u{0}b.md",
            "a/\n/b.md",
            " /x",
            "..",
            ".",
        ] {
            assert!(RelPath::parse(raw, "relPath").is_err(), "{raw:?}");
        }
        assert_eq!(RelPath::parse("a/b c/d.md", "relPath").unwrap().as_str(), "a/b c/d.md");
        assert_eq!(RelPath::parse("%2e%2e/x.md", "relPath").unwrap().as_str(), "%2e%2e/x.md");
        assert_eq!(RelPath::parse_folder(Some("notes/"), "folderPath").unwrap().unwrap().as_str(), "notes");
        for absolute in ["/notes/", "/etc", "/srv/archive", "/"] {
            assert!(RelPath::parse_folder(Some(absolute), "folderPath").is_err(), "{absolute:?}");
        }
        assert!(RelPath::parse_folder(Some(""), "folderPath").unwrap().is_none());
    }

    #[test]
    fn contains_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("inside")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("escape")).unwrap();
        std::os::unix::fs::symlink(root.join("inside"), root.join("alias")).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(root.join("inside/there.md"), "x").unwrap();
        let there = contain(&root, &RelPath::parse("inside/there.md", "p").unwrap()).unwrap();
        assert_eq!(there, root.join("inside/there.md"));
        assert!(std::fs::read(&there).is_ok());
        let ok = contain(&root, &RelPath::parse("inside/new/n.md", "p").unwrap()).unwrap();
        assert_eq!(ok, root.join("inside/new/n.md"));
        assert!(contain(&root, &RelPath::parse("escape/n.md", "p").unwrap()).is_err());
        assert_eq!(contain(&root, &RelPath::parse("alias/n.md", "p").unwrap()).unwrap(), root.join("inside/n.md"));
        assert!(contain(&root, &RelPath::parse("inside/there.md/n.md", "p").unwrap()).is_err(), "through a file");
        std::os::unix::fs::symlink("/nonexistent/target", root.join("dangling.md")).unwrap();
        assert!(contain(&root, &RelPath::parse("dangling.md", "p").unwrap()).is_err());
    }

    mod property {
        use super::super::*;
        use proptest::prelude::*;

        fn segment() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("..".to_string()),
                Just(".".to_string()),
                Just("".to_string()),
                Just("escape".to_string()),
                Just("inside".to_string()),
                Just("%2e%2e".to_string()),
                Just("a\\..".to_string()),
                Just("/".to_string()),
                Just("\0".to_string()),
                "[a-z.%]{1,4}",
            ]
        }

        fn raw_path() -> impl Strategy<Value = String> {
            (proptest::collection::vec(segment(), 1..6), any::<bool>()).prop_map(|(segs, abs)| {
                let p = segs.join("/");
                if abs {
                    format!("/{p}")
                } else {
                    p
                }
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]
            #[test]
            fn nothing_resolves_outside_the_root(raw in raw_path()) {
                let dir = tempfile::tempdir().unwrap();
                let root = dir.path().join("root");
                std::fs::create_dir_all(root.join("inside")).unwrap();
                std::fs::create_dir_all(dir.path().join("outside")).unwrap();
                std::os::unix::fs::symlink(dir.path().join("outside"), root.join("escape")).unwrap();
                let root = root.canonicalize().unwrap();
                if let Ok(rel) = RelPath::parse(&raw, "p") {
                    prop_assert!(!rel.as_str().split('/').any(|s| s == ".." || s == "." || s.is_empty()));
                    if let Ok(abs) = contain(&root, &rel) {
                        prop_assert!(abs.starts_with(&root), "{raw:?} -> {abs:?}");
                        let mut existing = abs.as_path();
                        while !existing.exists() {
                            existing = existing.parent().unwrap();
                        }
                        prop_assert!(existing.canonicalize().unwrap().starts_with(&root), "{raw:?}");
                    }
                }
            }
        }
    }
}
