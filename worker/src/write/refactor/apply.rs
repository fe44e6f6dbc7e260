//! Applying a plan: replan, compare digests, rewrite references, move or copy the note,
//! and roll every file back if any step fails.

use super::{plan, Plan, SCHEMA_VERSION};
use crate::index::Indexing;
use crate::paths::RelPath;
use crate::stores::catalog::Origin;
use crate::uri;
use crate::write::atomic;
use protocol::api::{
    ApplyResult, ApplyStatus, ConvergenceState, Filesystem, FilesystemState, IndexConvergence, RefactorApplied,
    RefactorErrorDetails, RefactorErrorStatus, ReferenceClassification, StalePlanDetails,
};
use protocol::{ApiError, ApplyConfirmation, DocRef, ErrorCode, RefactorOp};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Undo log of the filesystem steps taken so far.
#[derive(Default)]
struct Undo {
    /// Files overwritten, with their original bytes.
    rewritten: Vec<(PathBuf, Vec<u8>)>,
    /// Files created.
    created: Vec<PathBuf>,
    /// Files removed, with their bytes.
    removed: Vec<(PathBuf, Vec<u8>)>,
}

impl Undo {
    fn roll_back(self) -> bool {
        let mut ok = true;
        for p in self.created.iter().rev() {
            ok &= std::fs::remove_file(p).is_ok();
        }
        for (p, bytes) in self.removed.iter().rev().chain(self.rewritten.iter().rev()) {
            ok &= atomic::write_file(p, bytes, true).is_ok();
        }
        ok
    }
}

fn refuse(plan: &Plan) -> ApiError {
    let code =
        if plan.blockers.iter().any(|b| b == "target_occupied") { ErrorCode::Conflict } else { ErrorCode::Unsupported };
    let why: Vec<String> = plan
        .blockers
        .iter()
        .cloned()
        .chain(
            plan.references
                .iter()
                .filter(|r| !r.classification.lets_apply())
                .map(|r| format!("{}:{}: {}", r.file_rel, r.link.start_line, r.reason)),
        )
        .collect();
    ApiError::new(code, format!("The plan cannot be applied: {}", why.join("; "))).with_details(RefactorErrorDetails {
        plan_digest: plan.digest.clone(),
        status: RefactorErrorStatus::Refused,
        filesystem: Filesystem { state: FilesystemState::Unchanged },
    })
}

/// Runs the filesystem steps of a plan; on failure everything done so far is undone.
fn execute(plan: &Plan) -> Result<(), (String, bool)> {
    let mut undo = Undo::default();
    let result = (|| -> Result<(), String> {
        // Group edits per file; verify every file is still what the plan saw.
        let mut per_file: BTreeMap<&str, Vec<(usize, usize, String)>> = BTreeMap::new();
        let mut hashes: BTreeMap<&str, &str> = BTreeMap::new();
        for r in plan.references.iter().filter(|r| r.classification == ReferenceClassification::Rewriteable) {
            if let Some(e) = &r.edit {
                per_file.entry(r.file_rel.as_str()).or_default().push(e.clone());
                hashes.insert(r.file_rel.as_str(), r.file_hash.as_str());
            }
        }
        let mut new_texts: BTreeMap<&str, (Vec<u8>, String)> = BTreeMap::new();
        for (rel, edits) in per_file {
            let path = plan.root.join(rel);
            let bytes = std::fs::read(&path).map_err(|e| format!("{rel}: {}", crate::errors::io_kind(&e)))?;
            if crate::digest::sha256_hex(&bytes) != hashes[rel] {
                return Err(format!("{rel} changed after planning"));
            }
            let text = String::from_utf8(bytes.clone()).map_err(|_| format!("{rel} is not UTF-8"))?;
            let new = super::edit::apply(&text, edits).ok_or_else(|| format!("{rel}: overlapping edits"))?;
            new_texts.insert(rel, (bytes, new));
        }
        let source_abs = plan.root.join(&plan.source.rel_path);
        let source_bytes = std::fs::read(&source_abs)
            .map_err(|e| format!("{}: {}", plan.source.rel_path, crate::errors::io_kind(&e)))?;
        if crate::digest::sha256_hex(&source_bytes) != plan.source.source_hash {
            return Err("the note changed after planning".into());
        }
        // The note's own content (its relative links may be rewritten) goes to the target.
        let source_new = new_texts
            .remove(plan.source.rel_path.as_str())
            .map(|(_, t)| t.into_bytes())
            .unwrap_or_else(|| source_bytes.clone());
        for (rel, (old, new)) in &new_texts {
            let path = plan.root.join(rel);
            atomic::write_file(&path, new.as_bytes(), true)
                .map_err(|e| format!("{rel}: {}", crate::errors::io_kind(&e)))?;
            undo.rewritten.push((path, old.clone()));
        }
        atomic::write_file(&plan.target_abs, &source_new, false)
            .map_err(|e| format!("{}: {}", plan.target_rel, crate::errors::io_kind(&e)))?;
        undo.created.push(plan.target_abs.clone());
        if !matches!(plan.op, RefactorOp::Duplicate { .. }) {
            std::fs::remove_file(&source_abs)
                .map_err(|e| format!("{}: {}", plan.source.rel_path, crate::errors::io_kind(&e)))?;
            undo.removed.push((source_abs, source_bytes));
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(()),
        Err(e) => {
            let clean = undo.roll_back();
            Err((e, clean))
        }
    }
}

pub fn apply(
    w: &Arc<Indexing>,
    doc: &DocRef,
    op: RefactorOp,
    confirm: ApplyConfirmation,
) -> Result<RefactorApplied, ApiError> {
    let is_move = matches!(op, RefactorOp::Move { .. });
    let is_dup = matches!(op, RefactorOp::Duplicate { .. });
    // A duplicate needs no confirmation; a move without a digest is checked against its plan below.
    if !is_dup && (confirm.plan_digest.is_some() || !is_move) {
        if confirm.confirmation.as_deref() != Some("apply") {
            return Err(ApiError::validation("confirmation must be \"apply\""));
        }
        if confirm.schema_version.as_deref() != Some(SCHEMA_VERSION) {
            return Err(ApiError::validation("schemaVersion must be \"1.0\""));
        }
        if confirm.plan_digest.is_none() {
            return Err(ApiError::validation("planDigest is required: request a refactor-plan first"));
        }
    }
    let _write = w.write_lock();
    let plan = plan(w, doc, op)?;
    // A refactor of a shared collection is published from the journal once written.
    crate::index::team::require_connected(w, &plan.coll)?;
    if let Some(d) = &confirm.plan_digest {
        if !d.eq_ignore_ascii_case(&plan.digest) {
            return Err(ApiError::new(
                ErrorCode::StalePlan,
                "The plan is stale: the notes changed since it was made; request a new plan",
            )
            .with_details(StalePlanDetails {
                plan_digest: d.clone(),
                current_plan_digest: plan.digest.clone(),
                status: RefactorErrorStatus::StalePlan,
            }));
        }
    } else if is_move && plan.rewrites() > 0 {
        return Err(ApiError::conflict(format!(
            "Moving this note needs {} references rewritten: request a refactor-plan and apply it with its planDigest",
            plan.rewrites()
        )));
    }
    if !plan.can_apply() {
        return Err(refuse(&plan));
    }
    if let Err((why, clean)) = execute(&plan) {
        let (state, said) = if clean {
            (FilesystemState::RolledBack, "rolled back")
        } else {
            (FilesystemState::RecoveryRequired, "recovery required")
        };
        return Err(ApiError::runtime(format!("The refactor failed and was {said}: {why}")).with_details(
            RefactorErrorDetails {
                plan_digest: plan.digest.clone(),
                status: RefactorErrorStatus::FailedRolledBack,
                filesystem: Filesystem { state },
            },
        ));
    }
    // Index: the note moves in the catalog (keeping its identity and history), then every
    // rewritten file is synced.
    let mut pending = Vec::new();
    let ix = w.indexer();
    let moved = if is_dup {
        ix.sync_file(&plan.coll, &plan.root, plan.target_rel.as_str(), Origin::Create).map(|_| ())
    } else {
        ix.rename_doc(&plan.coll, &plan.root, plan.source.id, plan.target_rel.as_str(), Origin::Save)
    };
    if let Err(e) = moved {
        pending.push(format!("{}: {e}", plan.target_rel));
    }
    let mut files: Vec<&str> = plan
        .references
        .iter()
        .filter(|r| r.classification == ReferenceClassification::Rewriteable && r.file_rel != plan.source.rel_path)
        .map(|r| r.file_rel.as_str())
        .collect();
    files.dedup();
    for rel in files {
        if let Err(e) = ix.sync_file(&plan.coll, &plan.root, rel, Origin::Save) {
            pending.push(format!("{rel}: {e}"));
        }
    }
    // As after a job: saved capsules whose evidence moved are verified again.
    w.after_job();
    let status = if pending.is_empty() { ApplyStatus::Applied } else { ApplyStatus::AppliedWithSyncPending };
    let index_convergence = if pending.is_empty() {
        IndexConvergence { state: ConvergenceState::Converged, recovery_instruction: None, errors: None }
    } else {
        IndexConvergence {
            state: ConvergenceState::Pending,
            recovery_instruction: Some("run a sync (POST /api/sync)".to_string()),
            errors: Some(pending),
        }
    };
    let target_rel = RelPath::parse(plan.target_rel.as_str(), "relPath")?;
    let preview = &plan.preview;
    Ok(RefactorApplied {
        success: true,
        uri: crate::write::docs::file_uri(&plan.target_abs),
        doc_uri: uri::doc_uri(&plan.coll.name, target_rel.as_str()),
        path: plan.target_abs.display().to_string(),
        rel_path: target_rel.as_str().to_string(),
        plan_digest: plan.digest.clone(),
        status,
        apply: ApplyResult {
            schema_version: SCHEMA_VERSION.to_string(),
            schema: "file-refactor-apply-result@1.0".to_string(),
            status,
            plan_digest: plan.digest.clone(),
            operation: preview.plan.operation,
            source: preview.plan.source.clone(),
            target: preview.plan.target.clone(),
            rewritten_references: plan.rewrites() as u64,
            filesystem: Filesystem { state: FilesystemState::Committed },
            index_convergence,
        },
        refactor_warnings: preview.refactor_warnings.clone(),
    })
}
