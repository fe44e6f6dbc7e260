//! The files of a collection folder: the walk, which applies every rule of [`super::rules`]
//! (the collection's globs among them) through the `ignore` crate (ripgrep's parallel walker).

use super::rules::{self, FileMatcher, Rules};
use std::path::{Path, PathBuf};

/// A file found under a collection root.
#[derive(Clone)]
pub struct FoundFile {
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
}

impl WalkItem {
    pub fn rel(&self) -> &str {
        match self {
            WalkItem::File(f) => &f.rel,
            WalkItem::Error { rel, .. } => rel,
        }
    }
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

/// Every regular file under the rules' root that they accept, sorted by path. Symlinks are
/// followed only when their target stays inside the root. Folders are read in parallel
/// (`ignore`'s walker, which applies the ignore files and hidden names as [`Rules`] does).
pub fn walk(rules: &Rules) -> Vec<WalkItem> {
    let root = rules.root().to_path_buf();
    let mut builder = ignore::WalkBuilder::new(&root);
    builder
        .hidden(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(false)
        .parents(true)
        .require_git(true)
        .follow_links(true)
        .add_custom_ignore_filename(rules::SVCIGNORE)
        .filter_entry(|e| {
            let name = e.file_name().to_str().unwrap_or("");
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let left_out = rules::NEVER_NOTES.contains(&name) || (is_dir && rules::is_cache_dir(e.path()));
            e.depth() == 0 || !left_out
        });
    let (tx, rx) = std::sync::mpsc::channel::<WalkItem>();
    builder.build_parallel().run(|| {
        let tx = tx.clone();
        let root = root.clone();
        let matcher = rules.matcher().clone();
        Box::new(move |entry| {
            if let Some(item) = item_of(&root, &matcher, entry) {
                let _ = tx.send(item);
            }
            ignore::WalkState::Continue
        })
    });
    drop(tx);
    let mut out: Vec<WalkItem> = rx.into_iter().collect();
    out.sort_by(|a, b| a.rel().cmp(b.rel()));
    out
}

/// What one entry of the walk gives: a file the globs take, a path that cannot be used, or
/// nothing (a folder, a file the globs leave out, a link out of the root).
fn item_of(root: &Path, matcher: &FileMatcher, entry: Result<ignore::DirEntry, ignore::Error>) -> Option<WalkItem> {
    let wanted = |rel: &str| matcher.matches(rel) && !rules::is_litter(rel);
    let entry = match entry {
        Ok(e) => e,
        Err(e) => {
            let rel = error_path(&e)?.strip_prefix(root).ok()?.to_str()?.to_string();
            return wanted(&rel).then(|| WalkItem::Error { rel, reason: format!("cannot be read: {e}") });
        }
    };
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let rel_path = entry.path().strip_prefix(root).ok()?;
    let Some(rel) = rel_path.to_str() else {
        let reason = "its name is not valid UTF-8".to_string();
        return Some(WalkItem::Error { rel: rel_path.display().to_string(), reason });
    };
    if !wanted(rel) {
        return None;
    }
    if entry.path_is_symlink() {
        match entry.path().canonicalize() {
            Ok(real) if real.starts_with(root) => {}
            _ => return None,
        }
    }
    Some(match entry.metadata() {
        Ok(md) => WalkItem::File(FoundFile {
            rel: rel.to_string(),
            abs: entry.path().to_path_buf(),
            size: md.len(),
            mtime_ns: mtime_ns(&md),
        }),
        Err(e) => WalkItem::Error { rel: rel.to_string(), reason: format!("cannot be read: {e}") },
    })
}

/// The path an error of the walk is about, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::rules::Left;

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
        assert_eq!(by_dir.left_out("archive/old/a.md"), Some(Left::Excluded { glob: "archive".into() }));
        assert!(!by_dir.matches("b.txt"), "an include replaces the defaults");
    }

    #[test]
    fn empty_include_and_exclude_take_the_defaults() {
        let m = FileMatcher::new("**/*.md", "", "").unwrap();
        for yes in [
            "a.md",
            "n/b.txt",
            "d/r.pdf",
            "s/deck.pptx",
            "mail/x.eml",
            "src/lib.rs",
            "web/app.tsx",
            "c.yaml",
            "img.png",
        ] {
            assert!(m.matches(yes), "{yes}");
        }
        for yes in ["target/debug/x.rs", "crate/target/x.rs", "dist/app.js"] {
            assert!(m.matches(yes), "build output is left out by evidence, not by name: {yes}");
        }
        for no in ["song.mp3", "Cargo.lock", "a/app.min.js"] {
            assert!(!m.matches(no), "{no}");
        }
    }

    fn found(root: &Path) -> Vec<String> {
        let rules = Rules::new(root, FileMatcher::new("**/*.md", "", "").unwrap());
        walk(&rules)
            .into_iter()
            .filter_map(|i| match i {
                WalkItem::File(f) => Some(f.rel),
                WalkItem::Error { .. } => None,
            })
            .collect()
    }

    #[test]
    fn walks_and_skips_what_the_rules_leave_out_and_escaping_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        for d in ["sub", ".git", "node_modules/x", ".hidden", "target/debug", "build", "notes/target"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "a.md",
            "sub/b.md",
            ".git/c.md",
            "node_modules/x/d.md",
            ".hidden/e.md",
            "target/debug/f.md",
            "build/g.md",
            "notes/target/h.md",
            "sub/.i.md.swp",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::fs::write(root.join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(dir.path().join("outside.md"), "o").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.md"), root.join("link.md")).unwrap();
        let root = root.canonicalize().unwrap();
        assert_eq!(found(&root), vec!["a.md", "notes/target/h.md", "sub/b.md"]);
        // The walk and the rules agree on every path.
        let rules = Rules::new(&root, FileMatcher::new("**/*.md", "", "").unwrap());
        for rel in ["a.md", "notes/target/h.md", "sub/b.md"] {
            assert!(rules.belongs(rel), "{rel}");
        }
        for rel in [".git/c.md", "node_modules/x/d.md", ".hidden/e.md", "target/debug/f.md", "build/g.md"] {
            assert!(!rules.belongs(rel), "{rel}");
        }
    }
}
