//! `GET /api/explain` and `svc explain PATH`: whether a path is indexed and, when it is not,
//! the one rule that left it out: the collection rules ([`super::rules`]: litter, names
//! never notes, hidden names, `CACHEDIR.TAG`, ignore files, the globs), then the sync's own
//! (the format, the size limit, a file that cannot be read or converted).

use super::reading;
use super::rules::FileMatcher;
use super::rules::{Left, Rules};
use crate::config::CollectionConfig;
use crate::index::Indexing;
use crate::paths::RelPath;
use crate::stores::catalog;
use protocol::api::{ExplainResponse, ExplainVerdict, LeftOutBy, LeftOutKind};
use protocol::source_kind::source_kind;
use protocol::{uri, ApiError, Explain};
use std::path::{Path, PathBuf};

pub fn explain(w: &Indexing, target: &Explain) -> Result<ExplainResponse, ApiError> {
    let collections = w.core.settings.config().collections.clone();
    let (abs, found) = match target {
        Explain::Uri(u) => {
            let (name, rel) = uri::parse_uri(u)
                .ok_or_else(|| ApiError::validation("path must be a svc://<collection>/<path> URI"))?;
            let rel = RelPath::parse(&rel, "uri")?;
            let (coll, root) = w.core.settings.config().with_root(&name)?;
            (root.join(rel.as_str()), Some((coll, root, rel.as_str().to_string())))
        }
        Explain::Path(p) => {
            let abs = resolved(Path::new(p));
            let found = holder(&collections, &abs);
            (abs, found)
        }
    };
    let path = abs.display().to_string();
    let Some((coll, root, rel)) = found else {
        let message = format!("{path} is outside every collection's folder.");
        return Ok(reply(path, ExplainVerdict::Outside, None, None, message));
    };
    let at = |verdict, rule, message| {
        let mut r = reply(path.clone(), verdict, Some(&coll), Some(&rel), message);
        r.rule = rule;
        r
    };
    if rel.is_empty() || abs.is_dir() {
        let message = format!("{path} is a folder: ask about one of its files.");
        return Err(ApiError::validation(message));
    }
    let conn = w.core.stores.catalog.reader();
    if let Some(state) = catalog::file_state(&conn, &coll.name, &rel)?.filter(|s| s.active) {
        let mut r = at(ExplainVerdict::Indexed, None, format!("{} is indexed.", uri::doc_uri(&coll.name, &rel)));
        r.indexed = true;
        r.docid = Some(catalog::docid_of(&state.source_hash));
        return Ok(r);
    }
    let parts = catalog::part_states(&conn, &coll.name, &rel)?.into_values().filter(|s| s.active).count();
    drop(conn);
    if parts > 0 {
        let mut r = at(ExplainVerdict::Indexed, None, format!("{path} is indexed as {parts} documents, one per part."));
        r.indexed = true;
        return Ok(r);
    }
    let Ok(md) = std::fs::metadata(&abs) else {
        return Ok(at(ExplainVerdict::Missing, None, format!("No file is at {path}.")));
    };
    let matcher = FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude)
        .map_err(|e| ApiError::validation(e.to_string()))?;
    let rule = match Rules::new(&root, matcher).explain(&rel) {
        Some(left) => Some(by_rule(left)),
        None => sync_rule(&abs, &rel, md.len()),
    };
    Ok(match rule {
        Some(rule) => {
            let message = format!("{path} is left out: {}.", sentence(&rule));
            at(ExplainVerdict::LeftOut, Some(rule), message)
        }
        None => at(
            ExplainVerdict::NotYetIndexed,
            None,
            format!("No rule leaves {path} out: the watcher or the next sync indexes it."),
        ),
    })
}

/// `p` made canonical as far as it exists (a missing file keeps its name under its folder's
/// canonical path), so it compares with the collections' canonical roots.
fn resolved(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent().and_then(|d| d.canonicalize().ok()), p.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => p.to_path_buf(),
    }
}

/// The collection whose folder holds `abs` (the deepest, when folders nest), its canonical
/// root and the path relative to it.
fn holder(collections: &[CollectionConfig], abs: &Path) -> Option<(CollectionConfig, PathBuf, String)> {
    collections
        .iter()
        .filter_map(|c| {
            let root = Path::new(&c.path).canonicalize().ok()?;
            let rel = abs.strip_prefix(&root).ok()?.to_str()?.to_string();
            Some((c.clone(), root, rel))
        })
        .max_by_key(|(_, root, _)| root.components().count())
}

fn reply(
    path: String,
    verdict: ExplainVerdict,
    coll: Option<&CollectionConfig>,
    rel: Option<&str>,
    message: String,
) -> ExplainResponse {
    ExplainResponse {
        path,
        verdict,
        indexed: false,
        collection: coll.map(|c| c.name.clone()),
        uri: coll.zip(rel).map(|(c, r)| uri::doc_uri(&c.name, r)),
        docid: None,
        rule: None,
        message,
    }
}

pub(super) fn rule(kind: LeftOutKind) -> LeftOutBy {
    LeftOutBy { kind, source: None, line: None, pattern: None, detail: None }
}

pub(super) fn by_rule(left: Left) -> LeftOutBy {
    match left {
        Left::Litter => rule(LeftOutKind::Litter),
        Left::NeverNotes { part } => LeftOutBy { source: Some(part), ..rule(LeftOutKind::NeverNotes) },
        Left::Hidden { part } => LeftOutBy { source: Some(part), ..rule(LeftOutKind::Hidden) },
        Left::CacheDir { folder } => LeftOutBy { source: Some(folder), ..rule(LeftOutKind::CacheDir) },
        Left::IgnoreFile { file, line, pattern } => LeftOutBy {
            source: Some(file.display().to_string()),
            line: Some(line as u32),
            pattern: Some(pattern),
            ..rule(LeftOutKind::IgnoreFile)
        },
        Left::NotIncluded => rule(LeftOutKind::NotIncluded),
        Left::Excluded { glob } => LeftOutBy { pattern: Some(glob), ..rule(LeftOutKind::Excluded) },
    }
}

/// The sync's own rules for a file the collection's rules take: its format, its size, and
/// whether it can be read and converted.
pub(super) fn sync_rule(abs: &Path, rel: &str, size: u64) -> Option<LeftOutBy> {
    let kind = source_kind(rel);
    format_rule(rel, size).or_else(|| {
        let why = reading::unreadable(abs, kind?, rel)?;
        Some(LeftOutBy { detail: Some(why), ..rule(LeftOutKind::Unreadable) })
    })
}

/// [`sync_rule`] without reading the file: its format and its size.
pub(super) fn format_rule(rel: &str, size: u64) -> Option<LeftOutBy> {
    if source_kind(rel).is_none() {
        return Some(rule(LeftOutKind::UnsupportedFormat));
    }
    let detail = reading::over_size_limit(size)?;
    Some(LeftOutBy { detail: Some(detail), ..rule(LeftOutKind::TooLarge) })
}

/// The rule in words, as `git check-ignore -v` would show an ignore file's line.
fn sentence(r: &LeftOutBy) -> String {
    let source = r.source.as_deref().unwrap_or("");
    match r.kind {
        LeftOutKind::Litter => "an editor's or a tool's temporary file".into(),
        LeftOutKind::NeverNotes => format!("{source} is never notes"),
        LeftOutKind::Hidden => format!("{source} is hidden"),
        LeftOutKind::CacheDir => format!("the folder {source} holds a CACHEDIR.TAG"),
        LeftOutKind::IgnoreFile => {
            format!("{source}:{}:{}", r.line.unwrap_or(0), r.pattern.as_deref().unwrap_or(""))
        }
        LeftOutKind::NotIncluded => "the collection's pattern and include globs do not take it".into(),
        LeftOutKind::Excluded => format!("the collection's exclude glob {}", r.pattern.as_deref().unwrap_or("")),
        LeftOutKind::TooLarge => r.detail.clone().unwrap_or_default(),
        LeftOutKind::UnsupportedFormat => "svc does not read this format".into(),
        LeftOutKind::Unreadable => format!("it cannot be read: {}", r.detail.as_deref().unwrap_or("")),
    }
}
