//! Reference-safe refactors: the `file-refactor-preview@1.0` plan and the apply result.

use super::LinkKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The refactor a plan describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefactorOperation {
    Rename,
    Move,
    Duplicate,
}

/// How a plan judged one reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReferenceClassification {
    /// The link text is rewritten to keep pointing at the note.
    Rewriteable,
    /// The link still resolves after the change.
    Unchanged,
    /// No link text would resolve to the note.
    Ambiguous,
    /// The link is not where the index says.
    Malformed,
    /// Another collection, a changed file, or a file not in canonical form.
    Unsupported,
}

impl ReferenceClassification {
    /// Whether a plan can be applied with this reference: it is rewritten or still resolves.
    pub fn lets_apply(self) -> bool {
        matches!(self, ReferenceClassification::Rewriteable | ReferenceClassification::Unchanged)
    }
}

/// `source` of a refactor plan: the note as indexed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanSource {
    pub docid: String,
    pub uri: String,
    pub collection: String,
    pub rel_path: String,
    pub source_hash: String,
}

/// `target` of a refactor plan: where the note goes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanTarget {
    pub collection: String,
    pub rel_path: String,
    pub uri: String,
    /// A file (or link) is already there.
    pub occupied: bool,
}

/// An entry of a refactor plan's `affectedDocuments`: a file whose links are rewritten.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AffectedDocument {
    pub rel_path: String,
    pub uri: String,
    pub source_hash: String,
}

/// An entry of a refactor plan's `examinedReferences`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExaminedReference {
    /// The file that holds the link.
    pub source_rel_path: String,
    pub source_uri: String,
    pub link_type: LinkKind,
    pub target_ref: String,
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
    pub classification: ReferenceClassification,
    pub reason: String,
    /// The new link literal, for rewriteable references (else `null`).
    pub replacement: Option<String>,
}

/// `preconditions` of a refactor plan: what apply checks the files against.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanPreconditions {
    pub source_hash: String,
    pub target_absent: bool,
    /// Relative path to the SHA-256 of every file whose links are rewritten.
    pub files: BTreeMap<String, String>,
}

/// `safety` of a refactor plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanSafety {
    pub cross_collection: bool,
    pub read_only: bool,
    /// `target_occupied`, `target_type_differs`.
    pub blockers: Vec<String>,
}

/// `mutationBoundary` of a refactor plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct MutationBoundary {
    pub collection: String,
    /// Files written: the note plus every affected document.
    pub files: u64,
}

/// The part of a refactor plan that `planDigest` is the SHA-256 of (its compact JSON).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanBody {
    /// `1.0`
    pub schema_version: String,
    /// `file-refactor-preview@1.0`
    pub schema: String,
    pub operation: RefactorOperation,
    /// Always `fail`.
    pub conflict_policy: String,
    pub source: PlanSource,
    pub target: PlanTarget,
    pub affected_documents: Vec<AffectedDocument>,
    pub examined_references: Vec<ExaminedReference>,
    pub preconditions: PlanPreconditions,
    pub safety: PlanSafety,
    pub mutation_boundary: MutationBoundary,
    pub can_apply: bool,
}

/// `refactorWarnings` of a plan and of an apply result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorWarnings {
    pub warnings: Vec<String>,
    pub backlink_count: u64,
    pub wiki_link_count: u64,
    pub markdown_link_count: u64,
}

/// `POST /api/docs/{id}/refactor-plan`: the `file-refactor-preview@1.0` plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorPlan {
    #[serde(flatten)]
    pub plan: PlanBody,
    /// SHA-256 hex of the compact JSON of [`PlanBody`].
    pub plan_digest: String,
    pub next_rel_path: String,
    pub next_uri: String,
    pub refactor_warnings: RefactorWarnings,
}

/// `status` of an applied refactor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApplyStatus {
    Applied,
    /// The files changed; re-indexing some of them failed (a sync repairs it).
    AppliedWithSyncPending,
}

/// The state of the files after (or instead of) a refactor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FilesystemState {
    Committed,
    Unchanged,
    RolledBack,
    RecoveryRequired,
}

/// `{state}` of the files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Filesystem {
    pub state: FilesystemState,
}

/// Whether the index caught up with an applied refactor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConvergenceState {
    Converged,
    Pending,
}

/// `apply.indexConvergence`: `{state: converged}` or `{state: pending,
/// recoveryInstruction, errors}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexConvergence {
    pub state: ConvergenceState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_instruction: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
}

/// `apply` of an applied refactor: the `file-refactor-apply-result@1.0` record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyResult {
    /// `1.0`
    pub schema_version: String,
    /// `file-refactor-apply-result@1.0`
    pub schema: String,
    pub status: ApplyStatus,
    pub plan_digest: String,
    pub operation: RefactorOperation,
    pub source: PlanSource,
    pub target: PlanTarget,
    pub rewritten_references: u64,
    pub filesystem: Filesystem,
    pub index_convergence: IndexConvergence,
}

/// `POST /api/docs/{id}/rename`, `/move` and `/duplicate`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorApplied {
    pub success: bool,
    /// `file://` URI of the note's new file.
    pub uri: String,
    pub doc_uri: String,
    pub path: String,
    pub rel_path: String,
    pub plan_digest: String,
    pub status: ApplyStatus,
    pub apply: ApplyResult,
    pub refactor_warnings: RefactorWarnings,
}

/// `status` of a refactor that was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefactorErrorStatus {
    /// 409: the plan is unsafe to apply.
    Refused,
    /// 409 `STALE_PLAN`.
    StalePlan,
    /// 500: a filesystem step failed (see `filesystem.state`).
    FailedRolledBack,
}

/// `error.details` of a refused (409) or failed (500) refactor.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefactorErrorDetails {
    pub plan_digest: String,
    pub status: RefactorErrorStatus,
    pub filesystem: Filesystem,
}

/// `error.details` of the 409 `STALE_PLAN` of a refactor apply.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StalePlanDetails {
    /// The digest the request sent.
    pub plan_digest: String,
    pub current_plan_digest: String,
    pub status: RefactorErrorStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifications_round_trip() {
        for s in ["rewriteable", "unchanged", "ambiguous", "malformed", "unsupported"] {
            let c: ReferenceClassification = serde_json::from_value(s.into()).unwrap();
            assert_eq!(serde_json::to_value(c).unwrap(), s);
        }
        assert!(serde_json::from_value::<ReferenceClassification>("other".into()).is_err());
        assert_eq!(serde_json::to_value(FilesystemState::RecoveryRequired).unwrap(), "recovery_required");
        assert_eq!(serde_json::to_value(RefactorErrorStatus::FailedRolledBack).unwrap(), "failed_rolled_back");
        assert_eq!(serde_json::to_value(ApplyStatus::AppliedWithSyncPending).unwrap(), "applied_with_sync_pending");
    }

    /// `planDigest` is the SHA-256 of this exact text: its keys and their order may not change,
    /// or every plan a client holds goes stale.
    #[test]
    fn the_digested_body_keeps_its_bytes() {
        let body = PlanBody {
            schema_version: "1.0".into(),
            schema: "file-refactor-preview@1.0".into(),
            operation: RefactorOperation::Move,
            conflict_policy: "fail".into(),
            source: PlanSource {
                docid: "#d".into(),
                uri: "svc://n/a.md".into(),
                collection: "n".into(),
                rel_path: "a.md".into(),
                source_hash: "h".into(),
            },
            target: PlanTarget {
                collection: "n".into(),
                rel_path: "x/a.md".into(),
                uri: "svc://n/x/a.md".into(),
                occupied: false,
            },
            affected_documents: vec![AffectedDocument {
                rel_path: "b.md".into(),
                uri: "svc://n/b.md".into(),
                source_hash: "hb".into(),
            }],
            examined_references: vec![ExaminedReference {
                source_rel_path: "b.md".into(),
                source_uri: "svc://n/b.md".into(),
                link_type: LinkKind::Markdown,
                target_ref: "a.md".into(),
                start_line: 1,
                start_col: 2,
                end_line: 1,
                end_col: 9,
                classification: ReferenceClassification::Rewriteable,
                reason: "rewrite to x/a.md".into(),
                replacement: Some("[a](x/a.md)".into()),
            }],
            preconditions: PlanPreconditions {
                source_hash: "h".into(),
                target_absent: true,
                files: [("b.md".to_string(), "hb".to_string())].into(),
            },
            safety: PlanSafety { cross_collection: false, read_only: false, blockers: vec![] },
            mutation_boundary: MutationBoundary { collection: "n".into(), files: 2 },
            can_apply: true,
        };
        let expected = concat!(
            r#"{"schemaVersion":"1.0","schema":"file-refactor-preview@1.0","operation":"move","conflictPolicy":"fail","#,
            r##""source":{"docid":"#d","uri":"svc://n/a.md","collection":"n","relPath":"a.md","sourceHash":"h"},"##,
            r#""target":{"collection":"n","relPath":"x/a.md","uri":"svc://n/x/a.md","occupied":false},"#,
            r#""affectedDocuments":[{"relPath":"b.md","uri":"svc://n/b.md","sourceHash":"hb"}],"#,
            r#""examinedReferences":[{"sourceRelPath":"b.md","sourceUri":"svc://n/b.md","linkType":"markdown","targetRef":"a.md","#,
            r#""startLine":1,"startCol":2,"endLine":1,"endCol":9,"classification":"rewriteable","reason":"rewrite to x/a.md","#,
            r#""replacement":"[a](x/a.md)"}],"#,
            r#""preconditions":{"sourceHash":"h","targetAbsent":true,"files":{"b.md":"hb"}},"#,
            r#""safety":{"crossCollection":false,"readOnly":false,"blockers":[]},"#,
            r#""mutationBoundary":{"collection":"n","files":2},"canApply":true}"#
        );
        assert_eq!(serde_json::to_string(&body).unwrap(), expected);
    }
}
