//! A collection's folder held against its index, read-only (`svc audit`): files changed or
//! gone since they were indexed, files the rules take that the index does not hold, files
//! that cannot be read, and the files and folders a rule leaves out. The files are those the
//! sync's own walk finds ([`super::walk`]), compared as the sync compares them (size and
//! modification time; a split file by its parts' stamps).

use super::explain::{by_rule, format_rule, sync_rule};
use super::reading::{parts_by_file, unchanged_parts};
use super::rules::{FileMatcher, Left, Rules};
use super::walk::{self, FoundFile, WalkItem};
use crate::config::CollectionConfig;
use crate::stores::catalog::FileState;
use protocol::api::{LeftOutBy, LeftOutKind};
use protocol::ApiError;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// What the folder says that the index does not.
#[derive(Debug, Clone, PartialEq)]
pub enum Drift {
    /// The file's size or modification time differs from the indexed one's.
    Changed { rel: String },
    /// `docs` indexed documents of the file `rel` (itself, or its parts), which the walk did
    /// not find; `rule`: the file is there, but a rule leaves it out now.
    Gone { rel: String, docs: usize, rule: Option<LeftOutBy> },
    /// A file the rules take that the index does not hold.
    NotIndexed { rel: String },
    /// A file that cannot be read or converted; `indexed`: an older version is in the index.
    Unreadable { rel: String, reason: String, indexed: bool },
    /// A file, or a folder and all it holds, that a rule leaves out.
    LeftOut { rel: String, folder: bool, rule: LeftOutBy },
}

/// A collection's drifts, and whether the walk for left-out files stopped at its bound.
#[derive(Debug, Default)]
pub struct DriftReport {
    pub found: Vec<Drift>,
    pub truncated: bool,
}

/// Entries the walk for left-out files and folders looks at, at most.
const MAX_ENTRIES: usize = 200_000;

/// Files not in the index that are read and converted to tell an unreadable one from one
/// waiting for the next sync, at most (the rest count as not indexed).
const MAX_READS: usize = 500;

/// The drifts of collection `coll`, whose documents the catalog holds as `known`.
pub fn drift(coll: &CollectionConfig, known: &HashMap<String, FileState>) -> Result<DriftReport, ApiError> {
    let Some(root) = Path::new(&coll.path).canonicalize().ok().filter(|p| p.is_dir()) else {
        return Ok(DriftReport { found: gone(known, &HashSet::new(), None), truncated: false });
    };
    let matcher = FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude)
        .map_err(|e| ApiError::validation(e.to_string()))?;
    let rules = Rules::new(&root, matcher);
    let parts_of = parts_by_file(known);
    let mut found = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    // The sync's rules for a file (format, size, and whether it reads), reading it only while
    // the budget lasts.
    let mut reads = 0;
    let mut rule_of = |file: &FoundFile| {
        reads += 1;
        if reads <= MAX_READS {
            sync_rule(&file.abs, &file.rel, file.size)
        } else {
            format_rule(&file.rel, file.size)
        }
    };
    for item in walk::walk(&rules) {
        let file = match item {
            WalkItem::File(f) => f,
            WalkItem::Error { rel, reason } => {
                let indexed = known.get(&rel).is_some_and(|s| s.active);
                taken.insert(rel.clone());
                found.push(Drift::Unreadable { rel, reason, indexed });
                continue;
            }
        };
        taken.insert(file.rel.clone());
        let whole = known.get(&file.rel).filter(|s| s.active && s.part_of.is_none());
        let parts = parts_of.get(file.rel.as_str()).map_or(&[][..], Vec::as_slice);
        let has_parts = parts.iter().any(|p| known.get(*p).is_some_and(|s| s.active));
        let unchanged = match whole {
            Some(s) => s.size == file.size && s.mtime_ns == file.mtime_ns,
            None if has_parts => unchanged_parts(known, parts, file.mtime_ns).is_some(),
            None => {
                // Not in the index: a rule of the sync's, a file it cannot read, or one the
                // next sync takes.
                found.push(match rule_of(&file) {
                    Some(LeftOutBy { kind: LeftOutKind::Unreadable, detail, .. }) => {
                        Drift::Unreadable { rel: file.rel, reason: detail.unwrap_or_default(), indexed: false }
                    }
                    Some(rule) => Drift::LeftOut { rel: file.rel, folder: false, rule },
                    None => Drift::NotIndexed { rel: file.rel },
                });
                continue;
            }
        };
        if unchanged {
            continue;
        }
        // An indexed file that changed: the next sync takes it, unless it cannot be read.
        found.push(match rule_of(&file) {
            Some(LeftOutBy { kind: LeftOutKind::Unreadable, detail, .. }) => {
                Drift::Unreadable { rel: file.rel, reason: detail.unwrap_or_default(), indexed: true }
            }
            _ => Drift::Changed { rel: file.rel },
        });
    }
    found.extend(gone(known, &taken, Some(&rules)));
    let truncated = left_out(&rules, &taken, &mut found);
    Ok(DriftReport { found, truncated })
}

/// The indexed files the walk did not take (`taken`), each with its number of documents and,
/// when the file is there, the rule that leaves it out now.
fn gone(known: &HashMap<String, FileState>, taken: &HashSet<String>, rules: Option<&Rules>) -> Vec<Drift> {
    let mut by_file: BTreeMap<&str, usize> = BTreeMap::new();
    for (rel, state) in known.iter().filter(|(_, s)| s.active) {
        let file = state.part_of.as_deref().unwrap_or(rel);
        if !taken.contains(file) {
            *by_file.entry(file).or_default() += 1;
        }
    }
    by_file
        .into_iter()
        .map(|(rel, docs)| {
            let rule = rules.filter(|r| r.root().join(rel).is_file()).and_then(|r| r.explain(rel)).map(by_rule);
            Drift::Gone { rel: rel.to_string(), docs, rule }
        })
        .collect()
}

/// Appends the files and folders under the rules' root that a rule leaves out (a folder once,
/// not what it holds; editors' litter not at all); `taken`: the files the walk took. Whether
/// it stopped at [`MAX_ENTRIES`].
fn left_out(rules: &Rules, taken: &HashSet<String>, found: &mut Vec<Drift>) -> bool {
    let mut folders = vec![String::new()];
    let mut seen = 0usize;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(rules.root().join(&folder)) else { continue };
        let mut entries: Vec<(String, std::fs::FileType)> =
            entries.flatten().filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?))).collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return true;
            }
            let rel = if folder.is_empty() { name } else { format!("{folder}/{name}") };
            if kind.is_dir() {
                match rules.explain_folder(&rel) {
                    Some(left) => {
                        found.push(Drift::LeftOut { rel: format!("{rel}/"), folder: true, rule: by_rule(left) })
                    }
                    None => folders.push(rel),
                }
            } else if kind.is_file() && !taken.contains(&rel) {
                match rules.explain(&rel) {
                    None | Some(Left::Litter) => {}
                    Some(left) => found.push(Drift::LeftOut { rel, folder: false, rule: by_rule(left) }),
                }
            }
        }
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::stores::DocKey;

    fn coll(root: &Path) -> CollectionConfig {
        CollectionConfig {
            name: "c".into(),
            path: root.display().to_string(),
            pattern: crate::config::DEFAULT_PATTERN.into(),
            include: String::new(),
            exclude: String::new(),
            git_pull: false,
            watch: true,
            lang: None,
            shared: false,
            replica: false,
        }
    }

    fn state(id: i64, size: u64, mtime_ns: i64, part_of: Option<&str>) -> FileState {
        FileState {
            id: DocKey(id),
            size,
            mtime_ns,
            source_hash: format!("h{id}"),
            active: true,
            part_of: part_of.map(str::to_string),
            mirror_hash: format!("m{id}"),
        }
    }

    #[test]
    fn changed_gone_not_indexed_unreadable_and_left_out_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let write = |rel: &str, text: &[u8]| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("same.md", b"# Same\n");
        write("edited.md", b"# Edited\n");
        write("new.md", b"# New\n");
        write("broken.pdf", b"not a pdf at all");
        write("node_modules/pkg/readme.md", b"# pkg\n");
        write(".obsidian/app.json", b"{}");
        write("tool.exe", b"MZ");
        write("notes.md~", b"litter");
        let md = |rel: &str| std::fs::metadata(root.join(rel)).unwrap();
        let mtime = |rel: &str| walk::mtime_ns(&md(rel));
        let mut known = HashMap::new();
        known.insert("same.md".to_string(), state(1, md("same.md").len(), mtime("same.md"), None));
        known.insert("edited.md".to_string(), state(2, 3, mtime("edited.md"), None));
        known.insert("deleted.md".to_string(), state(3, 3, 0, None));
        known.insert("mail.mbox/1".to_string(), state(4, 3, 0, Some("mail.mbox")));
        known.insert("mail.mbox/2".to_string(), state(5, 3, 0, Some("mail.mbox")));

        let report = drift(&coll(&root), &known).unwrap();
        let mut found = report.found.clone();
        let reason = found.iter().find_map(|d| match d {
            Drift::Unreadable { reason, .. } => Some(reason.clone()),
            _ => None,
        });
        found.retain(|d| !matches!(d, Drift::Unreadable { .. }));
        assert!(reason.is_some(), "the PDF that is not one: {:?}", report.found);
        assert!(found.contains(&Drift::Changed { rel: "edited.md".into() }), "{found:?}");
        assert!(found.contains(&Drift::NotIndexed { rel: "new.md".into() }), "{found:?}");
        assert!(found.contains(&Drift::Gone { rel: "deleted.md".into(), docs: 1, rule: None }), "{found:?}");
        assert!(found.contains(&Drift::Gone { rel: "mail.mbox".into(), docs: 2, rule: None }), "{found:?}");
        let left: Vec<(&str, bool)> = found
            .iter()
            .filter_map(|d| match d {
                Drift::LeftOut { rel, folder, .. } => Some((rel.as_str(), *folder)),
                _ => None,
            })
            .collect();
        assert!(left.contains(&(".obsidian/", true)) && left.contains(&("node_modules/", true)), "{left:?}");
        assert!(left.contains(&("tool.exe", false)), "{left:?}");
        assert!(
            !left.iter().any(|(rel, _)| rel.contains('~') || rel.contains("pkg")),
            "litter and what a folder left out holds: {left:?}"
        );
        assert!(!found.iter().any(|d| matches!(d, Drift::Changed { rel } if rel == "same.md")));
        assert!(!report.truncated);
    }

    #[test]
    fn a_missing_folder_makes_every_document_gone() {
        let dir = tempfile::tempdir().unwrap();
        let mut known = HashMap::new();
        known.insert("a.md".to_string(), state(1, 1, 1, None));
        let report = drift(&coll(&dir.path().join("nope")), &known).unwrap();
        assert_eq!(report.found, [Drift::Gone { rel: "a.md".into(), docs: 1, rule: None }]);
    }
}
