//! Context Capsules: `POST /api/context` (`context-capsule-v1@1.1`) and
//! `POST /api/context/verify` (`context-capsule-verification@1.0`).
//!
//! A capsule is sent as canonical JSON: keys sorted (UTF-16 code-unit order, which for
//! these ASCII keys is byte order) at every level. The structs below declare their fields in
//! that order, so serializing one is already canonical; `canonical_json` sorts any JSON
//! value the same way (a capsule a client sends back may come in any key order).

use super::capsule_codes::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `budget` of a capsule: what was asked and what the final canonical payload uses.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleBudget {
    pub authority: BudgetAuthority,
    pub estimator: TokenEstimator,
    pub requested_bytes: u64,
    pub requested_tokens: u64,
    pub safety_margin_bytes: u64,
    pub safety_margin_tokens: u64,
    pub tokenizer_fingerprint: Option<String>,
    /// UTF-8 bytes of the final canonical JSON (this field included).
    pub used_bytes: u64,
    pub used_tokens: u64,
}

/// What the compiler could use.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleCapabilities {
    pub configured_context: bool,
    /// The configured egress policy (`local_only` unless index.yml says otherwise).
    pub egress_policy: crate::api::EgressPolicy,
    pub exact_token_count: bool,
    pub graph_expansion: bool,
    pub lexical_search: bool,
    pub reranking: bool,
    pub semantic_search: bool,
}

/// Evidence for one facet of the goal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoveredFacet {
    pub evidence_ids: Vec<String>,
    pub facet: String,
}

/// A facet without evidence, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CoverageGap {
    pub code: GapCode,
    pub facet: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// Every facet has evidence.
    pub complete: bool,
    pub covered_facets: Vec<CoveredFacet>,
    pub gaps: Vec<CoverageGap>,
    pub requested_facets: Vec<String>,
    pub unresolved_facets: Vec<String>,
}

/// One exact passage of an indexed document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    pub collection: String,
    pub context_ids: Vec<String>,
    pub docid: String,
    /// The front-matter date, when the note has one.
    pub document_date: Option<String>,
    /// The configured egress policy.
    pub egress: crate::api::EgressPolicy,
    /// Last line of the passage (1-based, inclusive, canonical mirror).
    pub end_line: u32,
    /// SHA-256 of `{docid, endLine, mirrorHash, passageHash, sourceHash, startLine, uri}`.
    pub evidence_id: String,
    /// The goal's facets this passage covers.
    pub facets: Vec<String>,
    /// Added as a link neighbour of a retrieved document (`thorough`), not retrieved itself.
    pub graph_expanded: bool,
    /// The heading the passage sits under, if any.
    pub heading: Option<String>,
    /// SHA-256 of the document's canonical text.
    pub mirror_hash: String,
    /// The file's modification time (ISO 8601).
    pub modified_at: String,
    /// When the index recorded this version of the document (ISO 8601).
    pub observed_at: String,
    /// SHA-256 of `text`.
    pub passage_hash: String,
    /// 1-based rank of the document in the retrieval (`null` for graph neighbours).
    pub retrieval_rank: Option<u32>,
    pub retrieval_sources: Vec<RetrievalSource>,
    /// 1-based order in this capsule.
    pub selection_rank: u32,
    /// SHA-256 of the file's bytes.
    pub source_hash: String,
    /// First line of the passage (1-based, canonical mirror).
    pub start_line: u32,
    /// The passage: lines `startLine..=endLine` of the canonical mirror, exactly.
    pub text: String,
    pub title: String,
    pub trust: PassageTrust,
    pub uri: String,
}

/// A capability that was asked for but not available.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CapsuleFallback {
    pub capability: FallbackCapability,
    pub code: FallbackCode,
}

/// What produced the capsule: any change makes a verification report drift.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleFingerprints {
    pub config: String,
    pub embedding_model: Option<String>,
    pub rerank_model: Option<String>,
    pub retrieval: String,
    pub tokenizer: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleGuidance {
    /// Always empty: svc has no configured contexts.
    pub configured_contexts: Vec<Value>,
    pub evidence_trust: GuidanceTrust,
    /// Always true: answer from the evidence's words.
    pub extractive_only: bool,
    pub instruction_boundary: InstructionBoundary,
}

/// A passage left out, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Omission {
    pub end_line: u32,
    pub reason: OmissionReason,
    pub start_line: u32,
    pub uri: String,
}

/// How many passages each reason left out.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct OmissionCounts {
    pub document_share_cap: u64,
    pub duplicate: u64,
    pub filtered_by_scope: u64,
    pub global_budget: u64,
    pub invalid_coordinates: u64,
    pub overlap: u64,
    pub redundant_coverage: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Omissions {
    /// At most 100.
    pub items: Vec<Omission>,
    pub reason_counts: OmissionCounts,
    pub total: u64,
    /// More than 100 were left out.
    pub truncated: bool,
}

/// One capability's path through a compile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityState {
    pub attempted: bool,
    pub fallback_reasons: Vec<FallbackCode>,
    pub outcome: CapabilityOutcome,
    pub requested: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityStates {
    pub graph_expansion: CapabilityState,
    pub reranking: CapabilityState,
    pub semantic_search: CapabilityState,
}

/// The index's fingerprint before and after the compile (they must match).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct IndexSnapshot {
    pub after: String,
    pub before: String,
    pub stable: bool,
}

/// A `queryModes` entry as the request gave it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CapsuleQueryMode {
    pub mode: crate::QueryModeKind,
    pub text: String,
}

/// The retrieval parameters of the request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleRequest {
    pub author: Option<String>,
    pub candidate_limit: u32,
    pub exclude: Vec<String>,
    pub graph_requested: bool,
    pub intent: Option<String>,
    pub lang: Option<String>,
    pub limit: u32,
    /// Written as JSON writes it in every language (a whole value without a fraction), so
    /// a client that re-serializes the capsule keeps its identity.
    #[serde(serialize_with = "whole_as_integer")]
    pub min_score: Option<f64>,
    pub query_modes: Vec<CapsuleQueryMode>,
    pub rerank_requested: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleRetrieval {
    pub capability_states: CapabilityStates,
    pub depth_policy: crate::DepthPolicy,
    pub expansion_policy: ExpansionPolicy,
    pub facets: Vec<String>,
    pub index_snapshot: IndexSnapshot,
    pub query_variants: Vec<String>,
    pub request: CapsuleRequest,
}

/// The filters the evidence was drawn under.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleScope {
    pub categories: Vec<String>,
    /// Collections searched, in canonical (name) order.
    pub collections: Vec<String>,
    pub index_name: String,
    pub since: Option<String>,
    #[schema(value_type = Vec<String>)]
    pub tags_all: Vec<crate::Tag>,
    #[schema(value_type = Vec<String>)]
    pub tags_any: Vec<crate::Tag>,
    pub until: Option<String>,
    pub uri_prefix: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct CapsuleWarning {
    pub code: CapsuleWarningCode,
    pub message: String,
}

/// `POST /api/context`: `context-capsule-v1@1.1`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capsule {
    pub budget: CapsuleBudget,
    pub capabilities: CapsuleCapabilities,
    /// SHA-256 of the canonical capsule without `capsuleId`, `budget.usedBytes` and `budget.usedTokens`.
    pub capsule_id: String,
    pub coordinate_space: CoordinateSpace,
    pub coverage: Coverage,
    pub evidence: Vec<Evidence>,
    pub fallbacks: Vec<CapsuleFallback>,
    pub fingerprints: CapsuleFingerprints,
    pub goal: String,
    pub guidance: CapsuleGuidance,
    pub omissions: Omissions,
    pub query: String,
    pub retrieval: CapsuleRetrieval,
    pub schema_version: CapsuleVersion,
    pub scope: CapsuleScope,
    /// Something was left out (budget, limit or coverage).
    pub truncated: bool,
    pub warnings: Vec<CapsuleWarning>,
}

/// Per evidence of a verification receipt.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceCheck {
    pub evidence_id: String,
    pub uri: String,
    pub content_status: ContentStatus,
    pub content_code: EvidenceContentCode,
    pub ranking_status: RankingStatus,
    pub ranking_code: RankingCode,
    pub current_source_hash: Option<String>,
    pub current_mirror_hash: Option<String>,
    pub current_passage_hash: Option<String>,
    pub current_retrieval_rank: Option<u32>,
}

/// The fingerprints of the index now.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentFingerprints {
    pub config: String,
    pub retrieval: String,
    pub embedding_model: Option<String>,
    pub rerank_model: Option<String>,
    pub tokenizer: Option<String>,
    pub index: String,
}

/// `POST /api/context/verify`: `context-capsule-verification@1.0`, read-only.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapsuleReceipt {
    pub schema_version: ReceiptVersion,
    pub coordinate_space: CoordinateSpace,
    pub capsule_id: String,
    pub operation_status: OperationStatus,
    /// `unchanged` (every evidence unchanged), `stale` (one or more stale, none missing) or `missing`.
    pub content_status: ContentStatus,
    pub content_code: ReceiptContentCode,
    pub ranking_status: RankingStatus,
    pub ranking_code: RankingCode,
    pub current_fingerprints: CurrentFingerprints,
    pub fingerprint_status: FingerprintStatus,
    pub fingerprint_reasons: Vec<FingerprintReason>,
    /// The index fingerprint the capsule recorded and the current one.
    pub index_snapshot: IndexSnapshot,
    pub evidence: Vec<EvidenceCheck>,
}

/// A whole, finite float (as `1.0`) is written as the integer it is (`1`).
fn is_whole(x: f64) -> bool {
    x.is_finite() && x.fract() == 0.0 && x.abs() < 9.0e15
}

fn whole_as_integer<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) if is_whole(*x) => s.serialize_some(&(*x as i64)),
        Some(x) => s.serialize_some(x),
        None => s.serialize_none(),
    }
}

/// `value` as canonical JSON: object keys sorted at every level, no whitespace, whole
/// numbers without a fraction.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            // UTF-16 code-unit order, as the reference's JSON.stringify-based rule sorts.
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(k) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() && is_whole(x) => out.push_str(&(x as i64).to_string()),
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {

    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_closed_set_documents_its_wire_names() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(BudgetAuthority::schema()).unwrap();
        assert_eq!(schema["enum"], serde_json::json!(["canonical_json"]), "{schema}");
        let schema = serde_json::to_value(CapsuleVersion::schema()).unwrap();
        assert_eq!(schema["enum"], serde_json::json!(["1.1"]), "{schema}");
        assert_eq!(serde_json::to_value(CapsuleVersion::V1_1).unwrap(), "1.1");
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let v: Value = serde_json::from_str(r#"{"b":1.0,"a":{"z":[{"y":1,"x":2.5}],"Z":null},"aB":"é"}"#).unwrap();
        assert_eq!(canonical_json(&v), r#"{"a":{"Z":null,"z":[{"x":2.5,"y":1}]},"aB":"é","b":1}"#);
    }

    fn state() -> CapabilityState {
        CapabilityState {
            attempted: false,
            fallback_reasons: vec![],
            outcome: CapabilityOutcome::NotRequested,
            requested: false,
        }
    }

    /// The structs declare their fields in canonical order: serializing a capsule is
    /// already canonical JSON (every nested type is part of the sample).
    #[test]
    fn a_serialized_capsule_is_canonical() {
        let c = Capsule {
            budget: CapsuleBudget {
                authority: BudgetAuthority::CanonicalJson,
                estimator: TokenEstimator::UnicodeConservative,
                requested_bytes: 1,
                requested_tokens: 1,
                safety_margin_bytes: 0,
                safety_margin_tokens: 0,
                tokenizer_fingerprint: None,
                used_bytes: 1,
                used_tokens: 1,
            },
            capabilities: CapsuleCapabilities {
                configured_context: false,
                egress_policy: crate::api::EgressPolicy::LocalOnly,
                exact_token_count: false,
                graph_expansion: false,
                lexical_search: true,
                reranking: false,
                semantic_search: false,
            },
            capsule_id: "x".into(),
            coordinate_space: CoordinateSpace::CanonicalMirror,
            coverage: Coverage {
                complete: false,
                covered_facets: vec![CoveredFacet { evidence_ids: vec!["e".into()], facet: "f".into() }],
                gaps: vec![CoverageGap { code: GapCode::FacetNotFound, facet: "g".into() }],
                requested_facets: vec![],
                unresolved_facets: vec![],
            },
            evidence: vec![Evidence {
                collection: "n".into(),
                context_ids: vec![],
                docid: "#1".into(),
                document_date: None,
                egress: crate::api::EgressPolicy::LocalOnly,
                end_line: 2,
                evidence_id: "e".into(),
                facets: vec![],
                graph_expanded: false,
                heading: Some("h".into()),
                mirror_hash: "m".into(),
                modified_at: "t".into(),
                observed_at: "t".into(),
                passage_hash: "p".into(),
                retrieval_rank: Some(1),
                retrieval_sources: vec![RetrievalSource::Bm25],
                selection_rank: 1,
                source_hash: "s".into(),
                start_line: 1,
                text: "x".into(),
                title: "t".into(),
                trust: PassageTrust::Untrusted,
                uri: "svc://n/a.md".into(),
            }],
            fallbacks: vec![CapsuleFallback {
                capability: FallbackCapability::SemanticSearch,
                code: FallbackCode::EmbeddingUnavailable,
            }],
            fingerprints: CapsuleFingerprints {
                config: "c".into(),
                embedding_model: None,
                rerank_model: None,
                retrieval: "r".into(),
                tokenizer: None,
            },
            goal: "g".into(),
            guidance: CapsuleGuidance {
                configured_contexts: vec![],
                evidence_trust: GuidanceTrust::UntrustedData,
                extractive_only: true,
                instruction_boundary: InstructionBoundary::HardDelimited,
            },
            omissions: Omissions {
                items: vec![Omission {
                    end_line: 1,
                    reason: OmissionReason::Duplicate,
                    start_line: 1,
                    uri: "u".into(),
                }],
                reason_counts: OmissionCounts::default(),
                total: 1,
                truncated: false,
            },
            query: "q".into(),
            retrieval: CapsuleRetrieval {
                capability_states: CapabilityStates {
                    graph_expansion: state(),
                    reranking: state(),
                    semantic_search: state(),
                },
                depth_policy: crate::DepthPolicy::Fast,
                expansion_policy: ExpansionPolicy::DeterministicOnly,
                facets: vec![],
                index_snapshot: IndexSnapshot { after: "a".into(), before: "a".into(), stable: true },
                query_variants: vec![],
                request: CapsuleRequest {
                    author: None,
                    candidate_limit: 40,
                    exclude: vec![],
                    graph_requested: false,
                    intent: None,
                    lang: None,
                    limit: 20,
                    min_score: Some(1.0),
                    query_modes: vec![CapsuleQueryMode { mode: crate::QueryModeKind::Term, text: "t".into() }],
                    rerank_requested: false,
                },
            },
            schema_version: CapsuleVersion::V1_1,
            scope: CapsuleScope {
                categories: vec![],
                collections: vec![],
                index_name: "default".into(),
                since: None,
                tags_all: vec![],
                tags_any: vec![],
                until: None,
                uri_prefix: None,
            },
            truncated: false,
            warnings: vec![CapsuleWarning { code: CapsuleWarningCode::IncompleteCoverage, message: "m".into() }],
        };
        let plain = serde_json::to_string(&c).unwrap();
        assert_eq!(plain, canonical_json(&serde_json::to_value(&c).unwrap()));
    }
}
