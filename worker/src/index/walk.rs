//! Which files of a collection folder belong to it.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// Folders never indexed, whatever the patterns say.
pub const ALWAYS_EXCLUDED: &[&str] = &[".git", "node_modules", ".venv", "__pycache__", ".DS_Store", ".obsidian"];

#[derive(Debug, thiserror::Error)]
#[error("invalid glob {glob:?}: {source}")]
pub struct PatternError {
    pub glob: String,
    pub source: globset::Error,
}

/// Editors' and tools' temporary files, never indexed whatever the patterns say: emacs lock
/// links (`.#note.md`) and autosaves (`#note.md#`), backups (`note.md~`), vim swap files and
/// its write probe (`4913`), office lock files, partial downloads and temporary files
/// (svc's own atomic writes are `.note.md.svc-….tmp`).
pub fn is_litter(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || name.ends_with('~')
        || [".swp", ".swo", ".swx", ".tmp", ".part", ".crdownload"].iter().any(|ext| name.ends_with(ext))
        || name.starts_with(".~lock.")
        || name.starts_with("~$")
        || name == "4913"
}

/// Whether `rel` (with `/` separators) is a file of the collection: the matcher accepts it, no
/// folder on its way is one svc never indexes, and it is no editor's litter.
pub fn belongs(rel: &str, matcher: &FileMatcher) -> bool {
    !is_litter(rel) && !rel.split('/').any(|part| ALWAYS_EXCLUDED.contains(&part)) && matcher.matches(rel)
}

/// `pattern` plus the comma-separated `include` globs, minus the `exclude` globs.
#[derive(Debug, Clone)]
pub struct FileMatcher {
    include: GlobSet,
    exclude: GlobSet,
}

fn glob(g: &str) -> Result<Glob, PatternError> {
    GlobBuilder::new(g).literal_separator(true).build().map_err(|source| PatternError { glob: g.to_string(), source })
}

fn set<'a>(globs: impl Iterator<Item = &'a str>) -> Result<GlobSet, PatternError> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(glob(g)?);
    }
    b.build().map_err(|source| PatternError { glob: String::new(), source })
}

pub fn split_list(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// What a collection leaves out when its `exclude` is empty: build output, lock files and
/// minified or mapped bundles (generated, not written by anyone).
pub const DEFAULT_EXCLUDE: &str =
    "target,**/target,dist,**/dist,**/*.lock,**/package-lock.json,**/pnpm-lock.yaml,**/*.min.js,**/*.min.css,**/*.map";

/// What a collection adds to its pattern when its `include` is empty: every format svc reads.
pub fn default_include() -> String {
    protocol::source_kind::known_extensions().map(|e| format!("**/*.{e}")).collect::<Vec<_>>().join(",")
}

impl FileMatcher {
    /// `pattern` plus `include` (every known format when empty) minus `exclude`
    /// ([`DEFAULT_EXCLUDE`] when empty).
    pub fn new(pattern: &str, include: &str, exclude: &str) -> Result<Self, PatternError> {
        let include = match include.trim() {
            "" => set(std::iter::once(pattern).chain(split_list(&default_include())))?,
            given => set(std::iter::once(pattern).chain(split_list(given)))?,
        };
        let exclude = set(split_list(match exclude.trim() {
            "" => DEFAULT_EXCLUDE,
            given => given,
        }))?;
        Ok(FileMatcher { include, exclude })
    }

    /// `rel` uses `/` separators. An exclude glob that matches a parent folder excludes the file.
    pub fn matches(&self, rel: &str) -> bool {
        if !self.include.is_match(rel) || self.exclude.is_match(rel) {
            return false;
        }
        let mut prefix = rel;
        while let Some(i) = prefix.rfind('/') {
            prefix = &prefix[..i];
            if self.exclude.is_match(prefix) {
                return false;
            }
        }
        true
    }
}

/// A file found under a collection root.
pub struct FoundFile {
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
}

pub enum WalkItem {
    File(FoundFile),
    /// A matching path that could not be used (unreadable metadata, non-UTF-8 name), and why.
    Error {
        rel: String,
        reason: String,
    },
}

pub fn mtime_ns(md: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    md.mtime().saturating_mul(1_000_000_000).saturating_add(md.mtime_nsec())
}

/// Every regular file under `root` that the matcher accepts. Symlinks are followed only
/// when their target stays inside `root`.
pub fn walk(root: &Path, matcher: &FileMatcher) -> Vec<WalkItem> {
    let mut out = Vec::new();
    let it = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_str().is_some_and(|n| ALWAYS_EXCLUDED.contains(&n)));
    for entry in it {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                if let Some(p) = e.path() {
                    if let Ok(rel) = p.strip_prefix(root) {
                        if rel.to_str().is_some_and(|r| matcher.matches(r) && !is_litter(r)) {
                            let reason = format!("cannot be read: {e}");
                            out.push(WalkItem::Error { rel: rel.display().to_string(), reason });
                        }
                    }
                }
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel_path) = entry.path().strip_prefix(root) else { continue };
        let Some(rel) = rel_path.to_str() else {
            let reason = "its name is not valid UTF-8".to_string();
            out.push(WalkItem::Error { rel: rel_path.display().to_string(), reason });
            continue;
        };
        if !matcher.matches(rel) || is_litter(rel) {
            continue;
        }
        if entry.path_is_symlink() {
            match entry.path().canonicalize() {
                Ok(real) if real.starts_with(root) => {}
                _ => continue,
            }
        }
        match entry.metadata() {
            Ok(md) => out.push(WalkItem::File(FoundFile {
                rel: rel.to_string(),
                abs: entry.path().to_path_buf(),
                size: md.len(),
                mtime_ns: mtime_ns(&md),
            })),
            Err(e) => out.push(WalkItem::Error { rel: rel.to_string(), reason: format!("cannot be read: {e}") }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_litter_never_belongs() {
        let m = FileMatcher::new("**/*", "", "").unwrap();
        for litter in
            [".#note.md", "#note.md#", "note.md~", "d/.note.md.swp", "4913", ".note.md.svc-1-2.tmp", "~$report.docx"]
        {
            assert!(!belongs(litter, &m), "{litter}");
        }
        assert!(belongs("d/note.md", &m));
        assert!(!belongs("node_modules/x/readme.md", &m));
    }

    #[test]
    fn pattern_include_exclude() {
        let m = FileMatcher::new("**/*.md", "**/*.txt", "drafts/**,secret.md").unwrap();
        assert!(m.matches("a.md"));
        assert!(m.matches("x/y/a.md"));
        assert!(m.matches("x/a.txt"));
        assert!(!m.matches("x/a.pdf"));
        assert!(!m.matches("drafts/a.md"));
        assert!(!m.matches("secret.md"));
        let by_dir = FileMatcher::new("**/*.md", "**/*.md", "archive").unwrap();
        assert!(!by_dir.matches("archive/old/a.md"));
        assert!(!by_dir.matches("b.txt"), "an include replaces the defaults");
        assert!(by_dir.matches("target/a.md"), "an exclude replaces the defaults");
    }

    #[test]
    fn empty_include_and_exclude_take_the_defaults() {
        let m = FileMatcher::new("**/*.md", "", "").unwrap();
        for yes in ["a.md", "n/b.txt", "d/r.pdf", "s/deck.pptx", "mail/x.eml", "src/lib.rs", "web/app.tsx", "c.yaml"] {
            assert!(m.matches(yes), "{yes}");
        }
        for no in ["img.png", "target/debug/x.rs", "crate/target/x.rs", "dist/app.js", "Cargo.lock", "a/app.min.js"] {
            assert!(!m.matches(no), "{no}");
        }
    }

    #[test]
    fn walks_and_skips_always_excluded_and_escaping_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("a.md"), "a").unwrap();
        std::fs::write(root.join("sub/b.md"), "b").unwrap();
        std::fs::write(root.join(".git/c.md"), "c").unwrap();
        std::fs::write(dir.path().join("outside.md"), "o").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.md"), root.join("link.md")).unwrap();
        let root = root.canonicalize().unwrap();
        let m = FileMatcher::new("**/*.md", "", "").unwrap();
        let found: Vec<String> = walk(&root, &m)
            .into_iter()
            .filter_map(|i| match i {
                WalkItem::File(f) => Some(f.rel),
                WalkItem::Error { .. } => None,
            })
            .collect();
        assert_eq!(found, vec!["a.md", "sub/b.md"]);
    }
}
