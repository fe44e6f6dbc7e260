//! Why a file of a collection folder is in or out, in one place: the walk ([`super::walk`])
//! applies these rules to whole folders through the `ignore` crate (ripgrep's walker), the
//! watcher and `explain` ask them for one path. A file is left out, in this order, when
//! - it is an editor's or a tool's litter ([`is_litter`]);
//! - a folder on its way, or the file, bears a name that is never notes ([`NEVER_NOTES`]);
//! - a folder on its way, or the file, is hidden (its name starts with a dot);
//! - a folder on its way holds a valid `CACHEDIR.TAG` (the Cache Directory Tagging convention:
//!   Cargo's `target/`, many build tools' output);
//! - an ignore file says so: `.svcignore` (svc's own), then `.ignore`, then `.gitignore` (in a
//!   git work tree only), each read the way git reads it, the deepest matching line deciding;
//!   the ones in the folders above the collection count too, as in ripgrep;
//! - the collection's pattern and include globs do not take it, or an exclude glob does.
//!
//! Size limits, formats and parse errors come after these, in the sync.

use crate::paths::file_name;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Names never notes, as a folder or a file, whatever the patterns say (version control,
/// dependency and environment folders, caches, OS litter).
pub const NEVER_NOTES: &[&str] = &[".git", "node_modules", ".venv", "__pycache__", ".DS_Store", ".obsidian"];

/// svc's own ignore file, read like `.gitignore` and before it.
pub const SVCIGNORE: &str = ".svcignore";

/// The ignore files, strongest first.
pub const IGNORE_FILES: [&str; 3] = [SVCIGNORE, ".ignore", ".gitignore"];

/// A folder holding this file (with the signature) is a cache: <https://bford.info/cachedir/>.
pub const CACHEDIR_TAG: &str = "CACHEDIR.TAG";
const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// Editors' and tools' temporary files, never indexed whatever the patterns say: emacs lock
/// links (`.#note.md`) and autosaves (`#note.md#`), backups (`note.md~`), vim swap files and
/// its write probe (`4913`), office lock files, partial downloads and temporary files
/// (svc's own atomic writes are `.note.md.svc-….tmp`).
pub fn is_litter(rel: &str) -> bool {
    let name = file_name(rel);
    name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || name.ends_with('~')
        || [".swp", ".swo", ".swx", ".tmp", ".part", ".crdownload"].iter().any(|ext| name.ends_with(ext))
        || name.starts_with(".~lock.")
        || name.starts_with("~$")
        || name == "4913"
}

/// Whether a path names an ignore file or a cache tag: a change to one changes which files
/// of the folders under it belong.
pub fn is_rule_file(rel: &str) -> bool {
    let name = file_name(rel);
    IGNORE_FILES.contains(&name) || name == CACHEDIR_TAG
}

/// Whether `dir` holds a `CACHEDIR.TAG` that starts with the convention's signature.
pub fn is_cache_dir(dir: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; CACHEDIR_SIGNATURE.len()];
    std::fs::File::open(dir.join(CACHEDIR_TAG)).and_then(|mut f| f.read_exact(&mut head)).is_ok()
        && head == CACHEDIR_SIGNATURE
}

/// The one rule that leaves a path out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Left {
    /// Editors' litter (a swap file, a backup, a lock file).
    Litter,
    /// `part` (a folder on the way, or the file) bears a name that is never notes.
    NeverNotes { part: String },
    /// `part` (a folder on the way, or the file) is hidden.
    Hidden { part: String },
    /// The folder `folder` (relative to the collection) holds a valid `CACHEDIR.TAG`.
    CacheDir { folder: String },
    /// Line `line` of the ignore file `file` (`pattern`) ignores the path or a folder on its way.
    IgnoreFile { file: PathBuf, line: usize, pattern: String },
    /// The collection's pattern and include globs do not take it.
    NotIncluded,
    /// The collection's exclude glob `glob` takes it.
    Excluded { glob: String },
}

/// The ignore files of one folder, strongest first (absent or unreadable ones match nothing).
struct FolderIgnores {
    matchers: [Option<Gitignore>; 3],
    /// The folder is a git work tree's top (it holds `.git`).
    git_top: bool,
}

/// The rules of one collection folder.
pub struct Rules {
    root: PathBuf,
    matcher: FileMatcher,
    /// Ignore files read so far, by folder (a `Rules` lives for one walk or one batch of
    /// events, so an edited ignore file is read again by the next one).
    folders: Mutex<HashMap<PathBuf, Arc<FolderIgnores>>>,
}

impl Rules {
    /// The rules of the folder `root` (canonical) with the collection's globs.
    pub fn new(root: &Path, matcher: FileMatcher) -> Rules {
        Rules { root: root.to_path_buf(), matcher, folders: Mutex::new(HashMap::new()) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn matcher(&self) -> &FileMatcher {
        &self.matcher
    }

    /// Whether the file at `rel` (`/` separators) belongs to the collection by these rules.
    pub fn belongs(&self, rel: &str) -> bool {
        self.explain(rel).is_none()
    }

    /// The rule that leaves the file at `rel` out, or none when it belongs.
    pub fn explain(&self, rel: &str) -> Option<Left> {
        if is_litter(rel) {
            return Some(Left::Litter);
        }
        self.on_the_way(rel, false).or_else(|| self.matcher.left_out(rel))
    }

    /// The rule that leaves the folder at `rel` out (and everything in it), or none: a name,
    /// a `CACHEDIR.TAG`, an ignore file's line, an exclude glob. The include globs are a
    /// file's rule, not a folder's.
    pub fn explain_folder(&self, rel: &str) -> Option<Left> {
        self.on_the_way(rel, true).or_else(|| self.matcher.excluded(rel))
    }

    /// The rule a part of `rel` breaks (its folders, and its last part: a folder when
    /// `last_is_dir`).
    fn on_the_way(&self, rel: &str, last_is_dir: bool) -> Option<Left> {
        let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            let is_dir = last_is_dir || i + 1 < parts.len();
            if NEVER_NOTES.contains(part) {
                return Some(Left::NeverNotes { part: parts[..=i].join("/") });
            }
            if part.starts_with('.') {
                return Some(Left::Hidden { part: parts[..=i].join("/") });
            }
            let abs = self.root.join(parts[..=i].join("/"));
            if is_dir && is_cache_dir(&abs) {
                return Some(Left::CacheDir { folder: parts[..=i].join("/") });
            }
            if let Some(left) = self.ignored(&abs, is_dir) {
                return Some(left);
            }
        }
        None
    }

    /// What the ignore files say of `abs`: each kind's deepest matching line (its last one in
    /// that file), `.gitignore` only up to the git work tree's top; the strongest kind decides.
    fn ignored(&self, abs: &Path, is_dir: bool) -> Option<Left> {
        let folders: Vec<(&Path, Arc<FolderIgnores>)> = abs.ancestors().skip(1).map(|d| (d, self.folder(d))).collect();
        let in_git = folders.iter().any(|(_, f)| f.git_top);
        let mut found: [Option<Match<&ignore::gitignore::Glob>>; 3] = [None, None, None];
        let mut past_git_top = false;
        for (_, f) in &folders {
            for (k, m) in f.matchers.iter().enumerate() {
                let is_git = k == 2;
                if found[k].is_some() || (is_git && (!in_git || past_git_top)) {
                    continue;
                }
                if let Some(m) = m {
                    let hit = m.matched(abs, is_dir);
                    if !hit.is_none() {
                        found[k] = Some(hit);
                    }
                }
            }
            past_git_top |= f.git_top;
        }
        let decided = found.into_iter().flatten().next()?;
        let left = match decided {
            Match::Ignore(glob) => {
                let file = glob.from().map(Path::to_path_buf).unwrap_or_default();
                let line = line_of(&file, glob.original());
                Some(Left::IgnoreFile { file, line, pattern: glob.original().to_string() })
            }
            Match::Whitelist(_) | Match::None => None,
        };
        left
    }

    /// The ignore files of `dir`, read once per `Rules`.
    fn folder(&self, dir: &Path) -> Arc<FolderIgnores> {
        let mut folders = self.folders.lock().unwrap_or_else(|p| p.into_inner());
        folders
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let read = |name: &str| {
                    let path = dir.join(name);
                    if !path.is_file() {
                        return None;
                    }
                    let mut b = GitignoreBuilder::new(dir);
                    // A bad line is skipped, as git skips it; the others still count.
                    if let Some(e) = b.add(&path) {
                        tracing::debug!("{}: {e}", path.display());
                    }
                    b.build().ok()
                };
                Arc::new(FolderIgnores { matchers: IGNORE_FILES.map(read), git_top: dir.join(".git").exists() })
            })
            .clone()
    }
}

/// The line number (from 1) of the last line of `file` that reads `pattern` (0 when the file
/// cannot be read again).
fn line_of(file: &Path, pattern: &str) -> usize {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.lines().collect::<Vec<_>>().iter().rposition(|l| l.trim() == pattern))
        .map_or(0, |i| i + 1)
}

#[derive(Debug, thiserror::Error)]
#[error("invalid glob {glob:?}: {source}")]
pub struct PatternError {
    pub glob: String,
    pub source: globset::Error,
}

/// `pattern` plus the comma-separated `include` globs, minus the `exclude` globs.
#[derive(Debug, Clone)]
pub struct FileMatcher {
    include: GlobSet,
    exclude: GlobSet,
    /// The exclude globs as given, in the order of `exclude`'s indices.
    exclude_globs: Vec<String>,
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

/// What a collection leaves out when its `exclude` is empty: lock files and minified or mapped
/// bundles (generated, never notes). Build output is left out by evidence, not by its folder's
/// name: a `CACHEDIR.TAG` or an ignore file ([`super::rules`]); a notes folder named `target`
/// or `dist` is indexed.
pub const DEFAULT_EXCLUDE: &str = "**/*.lock,**/package-lock.json,**/pnpm-lock.yaml,**/*.min.js,**/*.min.css,**/*.map";

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
        let exclude_globs: Vec<String> = split_list(match exclude.trim() {
            "" => DEFAULT_EXCLUDE,
            given => given,
        })
        .map(str::to_string)
        .collect();
        let exclude = set(exclude_globs.iter().map(String::as_str))?;
        Ok(FileMatcher { include, exclude, exclude_globs })
    }

    /// `rel` uses `/` separators. An exclude glob that matches a parent folder excludes the file.
    pub fn matches(&self, rel: &str) -> bool {
        self.left_out(rel).is_none()
    }

    /// Why the globs leave `rel` out: not included, or the first exclude glob that takes it or
    /// a folder on its way.
    pub fn left_out(&self, rel: &str) -> Option<Left> {
        if !self.include.is_match(rel) {
            return Some(Left::NotIncluded);
        }
        self.excluded(rel)
    }

    /// The first exclude glob that takes `rel` or a folder on its way.
    pub fn excluded(&self, rel: &str) -> Option<Left> {
        let mut prefix = rel;
        loop {
            if let Some(&i) = self.exclude.matches(prefix).first() {
                return Some(Left::Excluded { glob: self.exclude_globs[i].clone() });
            }
            match prefix.rfind('/') {
                Some(i) => prefix = &prefix[..i],
                None => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(root: &Path) -> Rules {
        Rules::new(root, FileMatcher::new("**/*", "", "").unwrap())
    }

    #[test]
    fn editor_litter_and_names_never_notes() {
        let dir = tempfile::tempdir().unwrap();
        let r = rules(dir.path());
        for litter in
            [".#note.md", "#note.md#", "note.md~", "d/.note.md.swp", "4913", ".note.md.svc-1-2.tmp", "~$report.docx"]
        {
            assert_eq!(r.explain(litter), Some(Left::Litter), "{litter}");
        }
        assert_eq!(r.explain("a/node_modules/x/readme.md"), Some(Left::NeverNotes { part: "a/node_modules".into() }));
        assert_eq!(r.explain(".hidden/x.md"), Some(Left::Hidden { part: ".hidden".into() }));
        assert!(r.belongs("d/note.md"));
        assert!(r.belongs("target/note.md"), "target/ without evidence is a folder of notes");
        assert!(r.belongs("dist/plan.md"));
    }

    #[test]
    fn a_cache_dir_needs_the_signature() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("target/debug")).unwrap();
        std::fs::create_dir_all(dir.path().join("fake")).unwrap();
        std::fs::write(dir.path().join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n# x")
            .unwrap();
        std::fs::write(dir.path().join("fake/CACHEDIR.TAG"), "not a tag").unwrap();
        let r = rules(dir.path());
        assert_eq!(r.explain("target/debug/x.md"), Some(Left::CacheDir { folder: "target".into() }));
        assert!(r.belongs("fake/x.md"));
    }

    #[test]
    fn ignore_files_by_strength_and_depth_and_gitignore_only_in_a_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join(".gitignore"), "# notes\nbuild/\n*.log.md\n").unwrap();
        std::fs::write(root.join(".ignore"), "drafts/\n").unwrap();
        std::fs::write(root.join("sub/.svcignore"), "!keep.log.md\nsecret.md\n").unwrap();
        let r = rules(root);
        assert!(r.belongs("build/a.md"), "no git work tree: .gitignore does not count");
        assert_eq!(
            r.explain("drafts/a.md"),
            Some(Left::IgnoreFile { file: root.join(".ignore"), line: 1, pattern: "drafts/".into() })
        );
        std::fs::create_dir(root.join(".git")).unwrap();
        let r = rules(root);
        assert_eq!(
            r.explain("build/deep/a.md"),
            Some(Left::IgnoreFile { file: root.join(".gitignore"), line: 2, pattern: "build/".into() })
        );
        assert!(!r.belongs("sub/x.log.md"));
        assert!(r.belongs("sub/keep.log.md"), ".svcignore's whitelist is stronger than .gitignore");
        assert_eq!(
            r.explain("sub/secret.md"),
            Some(Left::IgnoreFile { file: root.join("sub/.svcignore"), line: 2, pattern: "secret.md".into() })
        );
    }

    #[test]
    fn the_globs_come_last_and_name_the_exclude() {
        let dir = tempfile::tempdir().unwrap();
        let r = Rules::new(dir.path(), FileMatcher::new("**/*.md", "**/*.md", "archive/**").unwrap());
        assert_eq!(r.explain("a.txt"), Some(Left::NotIncluded));
        assert_eq!(r.explain("archive/a.md"), Some(Left::Excluded { glob: "archive/**".into() }));
        assert!(r.belongs("a.md"));
    }

    #[test]
    fn rule_files() {
        assert!(is_rule_file("a/.gitignore") && is_rule_file(".svcignore") && is_rule_file("t/CACHEDIR.TAG"));
        assert!(!is_rule_file("a/gitignore.md"));
    }
}
