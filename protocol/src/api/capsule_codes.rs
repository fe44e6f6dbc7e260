//! The closed sets of a Context Capsule and its receipt: versions, statuses, codes and
//! reasons, each printed as its wire name (the Markdown form of a capsule shows them).

use serde::{Deserialize, Serialize};

/// These closed sets print as their wire names.
macro_rules! display_as_wire {
    ($($t:ty),*) => {
        $(impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match serde_json::to_value(self) {
                    Ok(serde_json::Value::String(name)) => f.write_str(&name),
                    _ => Err(std::fmt::Error),
                }
            }
        })*
    };
}

display_as_wire!(
    TokenEstimator,
    GapCode,
    RetrievalSource,
    FallbackCapability,
    FallbackCode,
    CapabilityOutcome,
    OmissionReason,
    CapsuleWarningCode,
    BudgetAuthority,
    CoordinateSpace,
    PassageTrust,
    GuidanceTrust,
    InstructionBoundary,
    ExpansionPolicy,
    CapsuleVersion,
    ReceiptVersion,
    OperationStatus,
    ContentStatus,
    EvidenceContentCode,
    ReceiptContentCode,
    RankingStatus,
    RankingCode,
    FingerprintStatus,
    FingerprintReason
);

/// `budget.estimator`: how the payload's tokens were counted.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenEstimator {
    /// The embedder's tokenizer counted the payload.
    ActiveTokenizer,
    /// One token per UTF-8 byte: never an under-count.
    UnicodeConservative,
}

/// `coverage.gaps[].code`: why a facet of the goal has no passage.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GapCode {
    FacetNotFound,
    GlobalBudgetExhausted,
    CapabilityUnavailable,
    FilteredByScope,
}

/// `evidence[].retrievalSources[]`: a retrieval that found the passage's document.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetrievalSource {
    Bm25,
    Vector,
    Graph,
}

/// `fallbacks[].capability`: what the compile had to do without.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum FallbackCapability {
    SemanticSearch,
    Reranking,
    GraphExpansion,
    ExactTokenCount,
}

/// `fallbacks[].code` and `capabilityStates.*.fallbackReasons[]`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FallbackCode {
    EmbeddingUnavailable,
    RerankingUnavailable,
    GraphUnavailable,
    TokenizerUnavailable,
}

/// `capabilityStates.*.outcome`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityOutcome {
    NotRequested,
    NotAttempted,
    Used,
    Unavailable,
}

/// `omissions.items[].reason`: why a passage was left out (each has its count in
/// `omissions.reasonCounts`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OmissionReason {
    DocumentShareCap,
    Duplicate,
    FilteredByScope,
    GlobalBudget,
    InvalidCoordinates,
    Overlap,
    RedundantCoverage,
}

/// `warnings[].code`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapsuleWarningCode {
    IncompleteCoverage,
    OmissionsTruncated,
    TokenEstimateUsed,
}

/// `budget.authority`: the budget covers the whole canonical payload.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BudgetAuthority {
    CanonicalJson,
}

/// `coordinateSpace` of a capsule and its receipt: lines of the canonical mirror.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoordinateSpace {
    CanonicalMirror,
}

/// `evidence[].trust`: indexed text is data, never instructions.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PassageTrust {
    Untrusted,
}

/// `guidance.evidenceTrust`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuidanceTrust {
    UntrustedData,
}

/// `guidance.instructionBoundary`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstructionBoundary {
    HardDelimited,
}

/// `retrieval.expansionPolicy`: no generated query variants.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExpansionPolicy {
    DeterministicOnly,
}

/// `schemaVersion` of a capsule.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub enum CapsuleVersion {
    #[serde(rename = "1.1")]
    V1_1,
}

/// `schemaVersion` of a verification receipt.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub enum ReceiptVersion {
    #[serde(rename = "1.0")]
    V1_0,
}

/// `operationStatus` of a receipt: a verification that cannot complete is an error.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationStatus {
    Completed,
}

/// `contentStatus` of a receipt and of each of its evidence.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContentStatus {
    Unchanged,
    Stale,
    Missing,
}

/// `evidence[].contentCode` of a receipt.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceContentCode {
    VerifiedUnchanged,
    /// The file changed, but the cited lines still read the same.
    SourceStale,
    PassageStale,
    MirrorMissing,
    SourceMissing,
}

impl EvidenceContentCode {
    /// The status the code stands for.
    pub fn status(self) -> ContentStatus {
        match self {
            EvidenceContentCode::VerifiedUnchanged => ContentStatus::Unchanged,
            EvidenceContentCode::SourceStale | EvidenceContentCode::PassageStale => ContentStatus::Stale,
            EvidenceContentCode::MirrorMissing | EvidenceContentCode::SourceMissing => ContentStatus::Missing,
        }
    }
}

impl ContentStatus {
    /// A receipt's code for its overall status.
    pub fn receipt_code(self) -> ReceiptContentCode {
        match self {
            ContentStatus::Unchanged => ReceiptContentCode::VerifiedUnchanged,
            ContentStatus::Stale => ReceiptContentCode::ContentStale,
            ContentStatus::Missing => ReceiptContentCode::ContentMissing,
        }
    }
}

/// `contentCode` of a receipt.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptContentCode {
    VerifiedUnchanged,
    ContentStale,
    ContentMissing,
}

/// `rankingStatus` of a receipt and of each of its evidence.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankingStatus {
    Unchanged,
    Reranked,
    Unavailable,
}

/// `rankingCode` of a receipt and of each of its evidence.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankingCode {
    RankingUnchanged,
    RankingChanged,
    RankingUnavailable,
}

impl RankingStatus {
    /// The code that goes with the status.
    pub fn code(self) -> RankingCode {
        match self {
            RankingStatus::Unchanged => RankingCode::RankingUnchanged,
            RankingStatus::Reranked => RankingCode::RankingChanged,
            RankingStatus::Unavailable => RankingCode::RankingUnavailable,
        }
    }
}

/// `fingerprintStatus` of a receipt.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FingerprintStatus {
    Unchanged,
    Drifted,
}

/// `fingerprintReasons[]` of a receipt, listed in this order.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FingerprintReason {
    ConfigChanged,
    RetrievalChanged,
    EmbeddingModelChanged,
    RerankModelChanged,
    TokenizerChanged,
    IndexChanged,
}
