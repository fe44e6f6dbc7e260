//! Reference-safe refactors: rename, move and duplicate a note. A plan
//! (`file-refactor-preview@1.0`) lists every reference it examined and a deterministic
//! `planDigest`; applying requires that exact digest, replans first and fails closed.

mod apply;
mod edit;

pub use apply::apply;

use crate::index::Indexing;
use crate::paths::{contain, dir_of, file_name, RelPath};
use crate::reads::links::Resolver;
use crate::stores::catalog::{self, DocRow, LinkRow};
use crate::stores::DocKey;
use crate::write::docs::collection;
use crate::{index::ingest, uri};
use protocol::api::{
    AffectedDocument, ExaminedReference, MutationBoundary, PlanBody, PlanPreconditions, PlanSafety, PlanSource,
    PlanTarget, RefactorOperation, RefactorPlan, RefactorWarnings, ReferenceClassification,
};
use protocol::{ApiError, DocRef, ErrorCode, JsonBody, LinkKind, RefactorOp};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const SCHEMA_VERSION: &str = "1.0";

/// One reference the plan looked at.
#[derive(Debug, Clone)]
pub(crate) struct Reference {
    /// The file that holds the link (relative path) and its indexed hash.
    pub file_rel: String,
    pub file_hash: String,
    pub link: LinkRow,
    pub classification: ReferenceClassification,
    pub reason: String,
    /// Byte range in the file and the new literal, for rewriteable references.
    pub edit: Option<(usize, usize, String)>,
}

/// A computed plan.
pub(crate) struct Plan {
    pub op: RefactorOp,
    pub source: DocRow,
    pub root: PathBuf,
    pub coll: crate::config::CollectionConfig,
    pub target_rel: RelPath,
    pub target_abs: PathBuf,
    pub references: Vec<Reference>,
    pub blockers: Vec<String>,
    /// The `file-refactor-preview@1.0` body.
    pub preview: RefactorPlan,
    pub digest: String,
}

impl Plan {
    pub fn can_apply(&self) -> bool {
        self.blockers.is_empty() && self.references.iter().all(|r| r.classification.lets_apply())
    }
    pub fn rewrites(&self) -> usize {
        self.references.iter().filter(|r| r.classification == ReferenceClassification::Rewriteable).count()
    }
}

fn op_name(op: &RefactorOp) -> RefactorOperation {
    match op {
        RefactorOp::Rename { .. } => RefactorOperation::Rename,
        RefactorOp::Move { .. } => RefactorOperation::Move,
        RefactorOp::Duplicate { .. } => RefactorOperation::Duplicate,
    }
}

fn with_ext(name: &str, source: &str) -> String {
    if Path::new(name).extension().is_some() {
        name.to_string()
    } else {
        let ext = Path::new(source).extension().and_then(|e| e.to_str()).unwrap_or("md");
        format!("{name}.{ext}")
    }
}

fn single_name(name: &str) -> Result<String, ApiError> {
    let n = name.trim();
    if n.is_empty() || n.contains('/') || n.contains('\\') || n == "." || n == ".." || n.contains('\0') {
        return Err(ApiError::validation("name must be a single file name"));
    }
    Ok(n.to_string())
}

fn target_of(source_rel: &RelPath, op: &RefactorOp, root: &Path) -> Result<RelPath, ApiError> {
    let folder = source_rel.parent();
    let join = |folder: Option<RelPath>, name: &str| match folder {
        Some(f) => f.join(name),
        None => RelPath::parse(name, "name"),
    };
    match op {
        RefactorOp::Rename { name } => join(folder, &with_ext(&single_name(name)?, source_rel.as_str())),
        RefactorOp::Move { folder_path, name } => {
            let name = match name {
                Some(n) => with_ext(&single_name(n)?, source_rel.as_str()),
                None => source_rel.file_name().to_string(),
            };
            join(RelPath::parse_folder(Some(folder_path), "folderPath")?, &name)
        }
        RefactorOp::Duplicate { folder_path, name } => {
            let folder = match folder_path {
                Some(f) => RelPath::parse_folder(Some(f), "folderPath")?,
                None => folder,
            };
            if let Some(n) = name {
                return join(folder, &with_ext(&single_name(n)?, source_rel.as_str()));
            }
            let file = source_rel.file_name();
            let (stem, ext) = file.rsplit_once('.').unwrap_or((file, "md"));
            for i in 1..1000 {
                let candidate = if i == 1 { format!("{stem} copy.{ext}") } else { format!("{stem} copy {i}.{ext}") };
                let rel = join(folder.clone(), &candidate)?;
                if !root.join(rel.as_str()).exists() {
                    return Ok(rel);
                }
            }
            Err(ApiError::conflict("No free name for the copy"))
        }
    }
}

fn stem(rel: &str) -> &str {
    let name = file_name(rel);
    name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name)
}

/// Reads a file and returns its text when it is exactly its canonical form (so link
/// positions from the index are byte-exact) and unchanged since it was indexed.
fn editable_text(abs: &Path, indexed_hash: &str) -> Result<String, &'static str> {
    let bytes = std::fs::read(abs).map_err(|_| "the file cannot be read")?;
    if crate::digest::sha256_hex(&bytes) != indexed_hash {
        return Err("the file changed since it was indexed; sync first");
    }
    let text = String::from_utf8(bytes).map_err(|_| "the file is not UTF-8")?;
    if ingest::canonicalize(&text) != text {
        return Err(
            "the file is not in canonical form (CRLF, BOM or trailing spaces); links cannot be rewritten safely",
        );
    }
    Ok(text)
}

/// Computes the plan for `op` on the document `doc`: the target, what blocks it, every
/// reference examined, and the preview with its digest.
pub(crate) fn plan(w: &Indexing, doc: &DocRef, op: RefactorOp) -> Result<Plan, ApiError> {
    let source = w.core.resolve_doc(doc)?;
    if let Some(file) = &source.part_of {
        return Err(ApiError::new(
            ErrorCode::Unsupported,
            format!(
                "This document is a part of {file} (a message of a mailbox): move, rename or copy that file instead"
            ),
        ));
    }
    let (coll, root) = collection(w, &source.collection)?;
    let source_rel = RelPath::parse(&source.rel_path, "relPath")?;
    let target_rel = target_of(&source_rel, &op, &root)?;
    if target_rel == source_rel {
        return Err(ApiError::validation("The target is the note itself"));
    }
    let target_abs = contain(&root, &target_rel)?;
    let mut blockers = Vec::new();
    if target_abs.exists() || target_abs.symlink_metadata().is_ok() {
        blockers.push("target_occupied".to_string());
    }
    if crate::index::indexer::source_kind(target_rel.as_str())
        != crate::index::indexer::source_kind(source_rel.as_str())
    {
        blockers.push("target_type_differs".to_string());
    }

    let conn = w.core.stores.catalog.reader();
    let docs = catalog::active_docs(&conn, None)?;
    let links = catalog::active_links(&conn)?;
    drop(conn);
    let moved = |mut d: DocRow| {
        if d.id == source.id {
            d.rel_path = target_rel.as_str().to_string();
        }
        d
    };
    let mut examiner = Examiner {
        now: Resolver::new(docs.clone()),
        after: Resolver::new(docs.into_iter().map(moved).collect()),
        source: &source,
        target_rel: &target_rel,
        root: &root,
        is_dup: matches!(op, RefactorOp::Duplicate { .. }),
        texts: BTreeMap::new(),
    };
    let mut references: Vec<Reference> = links.iter().filter_map(|l| examiner.examine(l)).collect();
    references.sort_by(|a, b| {
        (&a.file_rel, a.link.start_line, a.link.start_col).cmp(&(&b.file_rel, b.link.start_line, b.link.start_col))
    });
    let (preview, digest) = preview_of(&op, &source, &coll.name, &target_rel, &references, &blockers)?;
    Ok(Plan { op, source, root, coll, target_rel, target_abs, references, blockers, preview, digest })
}

/// Classifies the links that point at the note (and, for a move, the note's own relative
/// links) under the change, reading each file that would be edited once.
struct Examiner<'a> {
    /// Link resolution as the notes are now, and as they would be after the change.
    now: Resolver,
    after: Resolver,
    source: &'a DocRow,
    target_rel: &'a RelPath,
    root: &'a Path,
    is_dup: bool,
    texts: BTreeMap<DocKey, Result<String, &'static str>>,
}

impl Examiner<'_> {
    /// The reference `l` makes, or `None` when it is not about the note.
    fn examine(&mut self, l: &LinkRow) -> Option<Reference> {
        let holder = self.now.doc(l.doc_id)?;
        let incoming = l.doc_id != self.source.id && self.now.resolve(holder, l) == Some(self.source.id);
        let outgoing = l.doc_id == self.source.id && l.link_type == LinkKind::Markdown && !self.is_dup;
        if !incoming && !outgoing {
            return None;
        }
        let holder = holder.clone();
        let mut r = Reference {
            file_rel: holder.rel_path.clone(),
            file_hash: holder.source_hash.clone(),
            link: l.clone(),
            classification: ReferenceClassification::Unchanged,
            reason: String::new(),
            edit: None,
        };
        if self.is_dup {
            r.reason = "a copy leaves links to the original alone".into();
            return Some(r);
        }
        match self.new_target(&holder, l, incoming) {
            NewTarget::Same => r.reason = "still resolves after the change".into(),
            NewTarget::Unsupported(why) => {
                r.classification = ReferenceClassification::Unsupported;
                r.reason = why.into();
            }
            NewTarget::Ambiguous(why) => {
                r.classification = ReferenceClassification::Ambiguous;
                r.reason = why.into();
            }
            NewTarget::Rewrite(new) => self.rewrite(&mut r, &holder, &new),
        }
        Some(r)
    }

    /// What the link must say after the change.
    fn new_target(&self, holder: &DocRow, l: &LinkRow, incoming: bool) -> NewTarget {
        let (source, target) = (self.source, self.target_rel.as_str());
        if !incoming {
            // A relative markdown link of the moved note: keep pointing at the same file.
            return if dir_of(&source.rel_path) == dir_of(target) {
                NewTarget::Same
            } else {
                NewTarget::Rewrite(edit::relative(dir_of(target), &l.target_ref_norm))
            };
        }
        if self.after.resolve(holder, l) == Some(source.id) {
            return NewTarget::Same;
        }
        if holder.collection != source.collection {
            return NewTarget::Unsupported("a reference from another collection cannot be rewritten");
        }
        if l.link_type != LinkKind::Wiki {
            return NewTarget::Rewrite(edit::relative(dir_of(&holder.rel_path), target));
        }
        let probe = |t: &str| LinkRow {
            doc_id: l.doc_id,
            link: catalog::Link { target_ref: t.to_string(), target_ref_norm: t.to_lowercase(), ..l.link.clone() },
        };
        let bare = stem(target).to_string();
        let path = target.strip_suffix(".md").unwrap_or(target).to_string();
        [bare, path]
            .into_iter()
            .find(|t| !t.contains(['[', ']', '|', '#']) && self.after.resolve(holder, &probe(t)) == Some(source.id))
            .map_or(NewTarget::Ambiguous("no link text would resolve to the note after the change"), NewTarget::Rewrite)
    }

    /// Locates the link in its file and plans the edit to `new`.
    fn rewrite(&mut self, r: &mut Reference, holder: &DocRow, new: &str) {
        let text = self
            .texts
            .entry(holder.id)
            .or_insert_with(|| match holder.part_of {
                // Its bytes are a slice of another file: no position in it is a file's.
                Some(_) => Err("the link is in a message of a mailbox, which is not edited"),
                None => editable_text(&self.root.join(&holder.rel_path), &holder.source_hash),
            })
            .clone();
        let text = match text {
            Ok(t) => t,
            Err(why) => {
                r.classification = ReferenceClassification::Unsupported;
                r.reason = why.into();
                return;
            }
        };
        let l = &r.link;
        let planned = edit::span(&text, l.start_line, l.start_col, l.end_line, l.end_col).and_then(|(s, e)| {
            edit::replace_target(&text[s..e], l.link_type == LinkKind::Wiki, &l.target_ref, new).map(|lit| (s, e, lit))
        });
        match planned {
            Some(e) => {
                r.classification = ReferenceClassification::Rewriteable;
                r.reason = format!("rewrite to {new}");
                r.edit = Some(e);
            }
            None => {
                r.classification = ReferenceClassification::Malformed;
                r.reason = "the link text is not where the index says".into();
            }
        }
    }
}

/// What a reference's link must say after the change.
enum NewTarget {
    /// It resolves to the note as it is.
    Same,
    Rewrite(String),
    Unsupported(&'static str),
    Ambiguous(&'static str),
}

/// The preview the client sees, and its digest (over the compact JSON of the plan body).
fn preview_of(
    op: &RefactorOp,
    source: &DocRow,
    coll: &str,
    target_rel: &RelPath,
    references: &[Reference],
    blockers: &[String],
) -> Result<(RefactorPlan, String), ApiError> {
    let is_dup = matches!(op, RefactorOp::Duplicate { .. });
    let examined: Vec<ExaminedReference> = references
        .iter()
        .map(|r| {
            Ok(ExaminedReference {
                source_rel_path: r.file_rel.clone(),
                source_uri: uri::doc_uri(coll, &r.file_rel),
                link_type: r.link.link_type,
                target_ref: r.link.target_ref.clone(),
                start_line: r.link.start_line,
                start_col: r.link.start_col,
                end_line: r.link.end_line,
                end_col: r.link.end_col,
                classification: r.classification,
                reason: r.reason.clone(),
                replacement: r.edit.as_ref().map(|e| e.2.clone()),
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let mut affected: BTreeMap<String, String> = BTreeMap::new();
    for r in references.iter().filter(|r| r.classification == ReferenceClassification::Rewriteable) {
        affected.insert(r.file_rel.clone(), r.file_hash.clone());
    }
    let count = |t: LinkKind| references.iter().filter(|r| r.link.link_type == t && r.link.doc_id != source.id).count();
    let backlinks = references.iter().filter(|r| r.link.doc_id != source.id).count();
    let mut warnings: Vec<String> = Vec::new();
    if is_dup && backlinks > 0 {
        warnings.push(format!("{backlinks} links point to the original and stay there"));
    }
    let occupied = blockers.iter().any(|b| b == "target_occupied");
    let body = PlanBody {
        schema_version: SCHEMA_VERSION.to_string(),
        schema: "file-refactor-preview@1.0".to_string(),
        operation: op_name(op),
        conflict_policy: "fail".to_string(),
        source: PlanSource {
            docid: source.docid.clone(),
            uri: uri::doc_uri(coll, &source.rel_path),
            collection: coll.to_string(),
            rel_path: source.rel_path.clone(),
            source_hash: source.source_hash.clone(),
        },
        target: PlanTarget {
            collection: coll.to_string(),
            rel_path: target_rel.as_str().to_string(),
            uri: uri::doc_uri(coll, target_rel.as_str()),
            occupied,
        },
        affected_documents: affected
            .iter()
            .map(|(rel, hash)| AffectedDocument {
                rel_path: rel.clone(),
                uri: uri::doc_uri(coll, rel),
                source_hash: hash.clone(),
            })
            .collect(),
        examined_references: examined,
        mutation_boundary: MutationBoundary { collection: coll.to_string(), files: 1 + affected.len() as u64 },
        preconditions: PlanPreconditions {
            source_hash: source.source_hash.clone(),
            target_absent: !occupied,
            files: affected,
        },
        safety: PlanSafety { cross_collection: false, read_only: false, blockers: blockers.to_vec() },
        can_apply: blockers.is_empty() && references.iter().all(|r| r.classification.lets_apply()),
    };
    // The digest covers the compact JSON of the body, before the keys that follow it.
    let digest = crate::digest::sha256_hex(&JsonBody::of(&body)?.bytes);
    let preview = RefactorPlan {
        plan: body,
        plan_digest: digest.clone(),
        next_rel_path: target_rel.as_str().to_string(),
        next_uri: uri::doc_uri(coll, target_rel.as_str()),
        refactor_warnings: RefactorWarnings {
            warnings,
            backlink_count: backlinks as u64,
            wiki_link_count: count(LinkKind::Wiki) as u64,
            markdown_link_count: count(LinkKind::Markdown) as u64,
        },
    };
    Ok((preview, digest))
}

pub fn preview(w: &Indexing, doc: &DocRef, op: RefactorOp) -> Result<RefactorPlan, ApiError> {
    Ok(plan(w, doc, op)?.preview)
}
