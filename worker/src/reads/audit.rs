//! `GET /api/audit` and `svc audit`: read-only findings over the index and the folders it
//! reads: files that cannot be read, links to nothing, anchors to missing headings, note names
//! that make bare links ambiguous, files whose index differs from the disk, documents without
//! vectors, and what the rules leave out. Each kind is counted in full and listed up to the
//! request's limit, in a stable order (kind, collection, path, line, column).

use super::anchors::AnchorBook;
use super::links::{resolver, Resolver};
use crate::config::CollectionConfig;
use crate::index::drift::{drift, Drift};
use crate::paths::file_name;
use crate::shared::Shared;
use crate::stores::catalog::{self, DocRow, LinkRow};
use crate::stores::DocKey;
use crate::{time_fmt, uri};
use protocol::api::{AuditCount, AuditFinding, AuditKind, AuditResponse, AuditSeverity, LeftOutBy};
use protocol::{ApiError, Audit, LinkKind};
use std::collections::{BTreeMap, HashSet};

pub fn audit(w: &Shared, q: &Audit) -> Result<AuditResponse, ApiError> {
    let config = w.settings.config();
    let collections: Vec<CollectionConfig> = match &q.collection {
        Some(name) => vec![config
            .find(name.as_str())
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("Collection not found: {name}")))?],
        None => config.collections.clone(),
    };
    drop(config);
    let names: HashSet<&str> = collections.iter().map(|c| c.name.as_str()).collect();
    let mut findings = Vec::new();
    links(w, &names, &mut findings)?;
    let mut walk_truncated = false;
    for coll in &collections {
        let known = catalog::file_states(&w.stores.catalog.reader(), &coll.name)?;
        let report = drift(coll, &known)?;
        walk_truncated |= report.truncated;
        findings.extend(report.found.into_iter().map(|d| of_drift(&coll.name, d)));
    }
    let vectors_checked = vectors(w, &names, &mut findings)?;
    Ok(listed(findings, q.limit, names.into_iter().map(str::to_string).collect(), vectors_checked, walk_truncated))
}

/// Sorts the findings, counts every kind and keeps `limit` of each.
fn listed(
    mut findings: Vec<AuditFinding>,
    limit: u32,
    mut collections: Vec<String>,
    vectors_checked: bool,
    walk_truncated: bool,
) -> AuditResponse {
    findings.sort_by(|a, b| {
        (a.kind, &a.collection, &a.path, a.line, a.column, &a.target).cmp(&(
            b.kind,
            &b.collection,
            &b.path,
            b.line,
            b.column,
            &b.target,
        ))
    });
    let mut counts: BTreeMap<AuditKind, (u64, u64)> = AuditKind::ALL.iter().map(|k| (*k, (0, 0))).collect();
    findings.retain(|f| {
        let (count, listed) = counts.entry(f.kind).or_default();
        *count += 1;
        let keep = *listed < u64::from(limit);
        *listed += u64::from(keep);
        keep
    });
    collections.sort();
    let counts: Vec<AuditCount> = counts
        .into_iter()
        .map(|(kind, (count, listed))| AuditCount { kind, severity: kind.severity(), count, listed })
        .collect();
    let clean = counts.iter().all(|c| c.count == 0 || c.severity == AuditSeverity::Info);
    AuditResponse {
        collections,
        checked_at: time_fmt::now_iso(),
        limit_per_kind: limit,
        clean,
        counts,
        findings,
        vectors_checked,
        walk_truncated,
    }
}

fn finding(kind: AuditKind, collection: &str, path: &str, message: String) -> AuditFinding {
    AuditFinding {
        kind,
        severity: kind.severity(),
        collection: collection.to_string(),
        path: path.to_string(),
        uri: None,
        line: None,
        column: None,
        target: None,
        anchor: None,
        rule: None,
        candidates: Vec::new(),
        message,
    }
}

/// A link as its note writes it, near enough to find it (`[[Note#Heading]]`, `](x.md#h)`).
fn written(l: &LinkRow) -> String {
    let anchor = l.target_anchor.as_deref().map(|a| format!("#{a}")).unwrap_or_default();
    match l.link_type {
        LinkKind::Wiki => format!("[[{}{anchor}]]", l.target_ref),
        LinkKind::Markdown => format!("]({}{anchor})", l.target_ref),
    }
}

/// Broken links, missing anchors and ambiguous names of the notes of `names`.
fn links(w: &Shared, names: &HashSet<&str>, out: &mut Vec<AuditFinding>) -> Result<(), ApiError> {
    let res = resolver(w)?;
    let all = catalog::active_links(&w.stores.catalog.reader())?;
    let mut anchors = AnchorBook::new(w);
    // Names several notes bear, by the notes that bear them: how many bare links name them.
    let mut shared_names: BTreeMap<Vec<DocKey>, u64> = BTreeMap::new();
    for l in &all {
        let Some(src) = res.doc(l.doc_id).filter(|d| names.contains(d.collection.as_str())) else { continue };
        let at = |kind, message| AuditFinding {
            uri: Some(uri::doc_uri(&src.collection, &src.rel_path)),
            line: Some(l.start_line),
            column: Some(l.start_col),
            target: Some(l.target_ref.clone()),
            anchor: l.target_anchor.clone(),
            ..finding(kind, &src.collection, &src.rel_path, message)
        };
        let namesakes = res.namesakes(src, l);
        if !namesakes.is_empty() {
            *shared_names.entry(namesakes.to_vec()).or_default() += 1;
        }
        let Some(target) = res.resolve(src, l).and_then(|id| res.doc(id)) else {
            out.push(at(
                AuditKind::BrokenLink,
                format!("{} on line {} reaches no document.", written(l), l.start_line),
            ));
            continue;
        };
        let Some(anchor) = l.target_anchor.as_deref() else { continue };
        if anchors.has(target, anchor)? == Some(false) {
            let whose = if target.id == src.id { "this note".to_string() } else { target.rel_path.clone() };
            let message =
                format!("{} on line {}: {whose} has no heading or block {anchor:?}.", written(l), l.start_line);
            out.push(at(AuditKind::MissingAnchor, message));
        }
    }
    for (notes, links) in shared_names {
        out.extend(ambiguous(&res, &notes, links));
    }
    Ok(())
}

/// The finding of notes that share a name which `links` bare links give (`notes` as
/// [`Resolver::namesakes`] orders them: the one a link from the collection's root reaches first).
fn ambiguous(res: &Resolver, notes: &[DocKey], links: u64) -> Option<AuditFinding> {
    let docs: Vec<&DocRow> = notes.iter().filter_map(|id| res.doc(*id)).collect();
    let first = docs.first()?;
    let name = file_name(&first.rel_path).trim_end_matches(".md").to_string();
    let message = format!(
        "{} notes are named {name:?} and {links} link{} name{} it bare: each reaches the one in its own \
         folder, else {} (the shortest path).",
        docs.len(),
        if links == 1 { "" } else { "s" },
        if links == 1 { "s" } else { "" },
        first.rel_path
    );
    Some(AuditFinding {
        target: Some(name),
        candidates: docs.iter().map(|d| d.rel_path.clone()).collect(),
        ..finding(AuditKind::AmbiguousName, &first.collection, &first.rel_path, message)
    })
}

/// The finding of one drift of collection `coll`'s folder.
fn of_drift(coll: &str, d: Drift) -> AuditFinding {
    let doc = |rel: &str| Some(uri::doc_uri(coll, rel));
    match d {
        Drift::Changed { rel } => AuditFinding {
            uri: doc(&rel),
            ..finding(
                AuditKind::ChangedOnDisk,
                coll,
                &rel,
                format!("{rel} changed on disk since it was indexed: the watcher or the next sync takes it."),
            )
        },
        Drift::Gone { rel, docs, rule } => {
            let what = if docs == 1 { "Its document is".to_string() } else { format!("Its {docs} documents are") };
            let why = match &rule {
                Some(r) => format!("{rel} is left out by a rule now ({})", left_out_kind(r)),
                None => format!("{rel} is gone from disk"),
            };
            AuditFinding {
                uri: (docs == 1).then(|| uri::doc_uri(coll, &rel)),
                rule,
                ..finding(
                    AuditKind::GoneFromDisk,
                    coll,
                    &rel,
                    format!("{why}. {what} still in the index until the next sync."),
                )
            }
        }
        Drift::NotIndexed { rel } => finding(
            AuditKind::NotIndexed,
            coll,
            &rel,
            format!("{rel} is not in the index: no rule leaves it out, the watcher or the next sync takes it."),
        ),
        Drift::Unreadable { rel, reason, indexed } => {
            let kept = if indexed { " The index keeps the version it read before." } else { "" };
            AuditFinding {
                uri: indexed.then(|| uri::doc_uri(coll, &rel)),
                ..finding(AuditKind::Unreadable, coll, &rel, format!("{rel}: {reason}.{kept}"))
            }
        }
        Drift::LeftOut { rel, folder, rule } => {
            let what = if folder { "The folder" } else { "The file" };
            let message = format!("{what} {rel} is left out ({}).", left_out_kind(&rule));
            AuditFinding { rule: Some(rule), ..finding(AuditKind::LeftOut, coll, &rel, message) }
        }
    }
}

/// The rule's kind as the wire names it (`ignore_file`).
fn left_out_kind(rule: &LeftOutBy) -> String {
    serde_json::to_value(rule.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The documents of `names` that the loaded embedding model has not embedded; whether the
/// vectors could be looked at (no model loaded: no table to hold them against).
fn vectors(w: &Shared, names: &HashSet<&str>, out: &mut Vec<AuditFinding>) -> Result<bool, ApiError> {
    let Some(table) = w.stores.embed_table().filter(|_| w.stores.vectors.is_some()) else {
        return Ok(false);
    };
    let docs = catalog::unembedded_docs(&w.stores.catalog.reader(), &table.name)?;
    for d in docs.into_iter().filter(|d| names.contains(d.collection.as_str())) {
        let message = match &d.failed {
            Some(error) => format!("{} has no vectors: the embedding model failed on it ({error}).", d.rel_path),
            None => format!("{} has no vectors yet: it waits for the embedding model.", d.rel_path),
        };
        out.push(AuditFinding {
            uri: Some(uri::doc_uri(&d.collection, &d.rel_path)),
            ..finding(AuditKind::NoVectors, &d.collection, &d.rel_path, message)
        });
    }
    Ok(true)
}
