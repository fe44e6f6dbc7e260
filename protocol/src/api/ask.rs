//! `POST /api/ask`: an answer from the local generator with citations of indexed sources,
//! and the streamed form of the same reply.

use super::{SearchMode, SearchResult};
use serde::{Deserialize, Serialize};

/// The strategy that picks the sources an answer is generated from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerStrategy {
    /// A base of 3 sources, up to 5 so that every facet of the question is covered where the
    /// index can cover it, from a pool of the 12 best results; at most 1,500 characters of
    /// evidence per source.
    AdaptiveCoverageV1,
}

/// Why a pooled result was selected as a source, or left out.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceReason {
    /// Among the best-ranked results (the base).
    TopRank,
    /// Covers a facet of the question that the sources chosen before it did not.
    FacetCoverage,
    /// No pooled result holds enough of the question's weight (it is asked in other words
    /// than the notes use): among the best-ranked results that share a word with it.
    BestAvailable,
    /// Shares no word with the question.
    NoQueryTerms,
    /// Holds too little of the question, its words weighted by their rarity in the index
    /// (the rarest, naming what is asked about, are missing).
    BelowRelevance,
    /// Adds no facet once the base is taken.
    NoNewFacet,
    /// The answer already has its maximum number of sources.
    SourceLimit,
}

/// One pooled result in `answerContext.selected` or `answerContext.dropped`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceChoice {
    pub docid: String,
    pub uri: String,
    /// The first and last line of the source's evidence in the document (1-based, inclusive).
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
    /// Distinct words of the question found in the source's evidence or title.
    pub query_token_hits: u32,
    /// Facets of the question the source covers.
    pub facet_hits: u32,
    /// The share of the question's weight (its content words weighted by their rarity in the
    /// index) that the source's address, title and evidence hold, for the facet they hold best.
    pub relevance: f64,
    pub reason: SourceReason,
}

/// `meta.answerContext`: how the sources were chosen.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnswerContext {
    pub strategy: AnswerStrategy,
    /// How many sources the strategy aimed for (3..5).
    pub target_sources: u32,
    /// The question's facets (split on and/or/vs and commas; the whole question when one).
    pub facets: Vec<String>,
    /// The sources, numbered in this order in the prompt (`[1]` is the first).
    pub selected: Vec<SourceChoice>,
    pub dropped: Vec<SourceChoice>,
}

/// How a citation was found.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CitationVia {
    /// The answer cites the source with an `[n]` marker.
    Marker,
    /// A sentence of the answer without a marker holds the source's words (at least half of
    /// its content words and all its numbers, nothing contradicting): the source is credited.
    Attribution,
    /// A sentence of the answer without a marker, whose words no source holds, is closest in
    /// meaning to a sentence of the source (embedding cosine at least 0.6).
    Similarity,
    /// Verified mode: the source supports a verified claim.
    Verification,
    /// Raw mode, when the draft was withheld (`meta.declined`): one of the sources it was
    /// drafted from, cited as the closest note so that the user can open it. It supports
    /// nothing the answer says.
    Closest,
}

/// A source the answer rests on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub docid: String,
    pub uri: String,
    /// The source's number: its position in `answerContext.selected` (raw mode) or among the
    /// capsule passages the draft saw (verified mode), from 1.
    pub index: u32,
    /// The evidence's first and last line in the document (1-based, inclusive).
    pub start_line: u32,
    pub end_line: u32,
    pub via: CitationVia,
}

/// `meta` of an ask reply.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskMeta {
    pub expanded: bool,
    pub reranked: bool,
    pub vectors_used: bool,
    /// False when no source was found: nothing is generated then, and `answer` says so.
    pub answer_generated: bool,
    pub total_results: u64,
    /// `[n]` markers in the answer that name no source; they are not in `citations`.
    pub unmatched_citations: u32,
    /// Tokens of the prompt the generator read (0 when nothing was generated).
    pub prompt_tokens: u32,
    /// Tokens the generator produced.
    pub answer_tokens: u32,
    /// True when the answer was cut short: it reached `maxAnswerTokens` or the time limit
    /// (what was generated until then is the answer).
    pub truncated: bool,
    /// Why generation ended; absent when nothing was generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// Present when the drafted answer was withheld because its sources do not hold it: the
    /// reply's `answer` then says that the notes do not say, and `citations` holds only the
    /// sources it was drafted from, as `closest`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declined: Option<Declined>,
    pub answer_context: AnswerContext,
}

/// A drafted answer that was withheld: what it said is not in the sources it was drawn from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Declined {
    pub reason: DeclineReason,
    /// The draft as generated (the text a streaming client has already received).
    pub draft: String,
    /// The words and numbers the draft added to the question that no source holds; for
    /// `other_subject`, the names the question asks about that the sources holding the draft
    /// do not name.
    pub not_in_sources: Vec<String>,
}

/// Why a drafted answer was withheld.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeclineReason {
    /// The draft only restates the question: it adds no word or number to it.
    AddsNothing,
    /// What the draft adds to the question (a number, or most of its words) is in none of the
    /// sources: the model answered from what it knows, not from the notes.
    NotInSources,
    /// What the draft adds is held only by sources about something else than what the
    /// question names (its subject): "the compression level is 3" from another tool's page.
    OtherSubject,
}

/// Why a generation ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model ended its answer.
    EndOfTurn,
    /// The answer reached a point where it would go on to something else (a new question, a
    /// heading, the sources); that part is not in the answer.
    StopSequence,
    /// The model began repeating itself; the repetition is not in the answer.
    Repetition,
    /// `maxAnswerTokens` was reached.
    MaxTokens,
    /// The time limit was reached.
    TimeLimit,
    /// The client stopped reading (a streamed answer whose connection closed).
    Cancelled,
}

impl FinishReason {
    /// Whether the answer was cut short (the model had more to say).
    pub fn truncated(self) -> bool {
        matches!(self, FinishReason::MaxTokens | FinishReason::TimeLimit | FinishReason::Cancelled)
    }
}

#[cfg(test)]
mod finish_tests {
    use super::FinishReason;

    #[test]
    fn only_an_answer_cut_short_is_truncated() {
        assert!(FinishReason::MaxTokens.truncated() && FinishReason::TimeLimit.truncated());
        assert!(!FinishReason::EndOfTurn.truncated());
        assert!(!FinishReason::Repetition.truncated() && !FinishReason::StopSequence.truncated());
    }
}

/// `POST /api/ask` without `verify`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskResponse {
    pub query: String,
    /// Always `hybrid`: sources come from hybrid retrieval.
    pub mode: SearchMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_language: Option<String>,
    /// Absent when no source was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Each cited source once, in the order the answer first cites it.
    pub citations: Vec<Citation>,
    /// The best `limit` results of the retrieval.
    pub results: Vec<SearchResult>,
    pub meta: AskMeta,
}

/// The data of a `token` event of a streamed ask (`Accept: text/event-stream`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct AnswerToken {
    /// Text the generator added; the concatenation of all of them is `answer`.
    pub text: String,
}

/// The fixed answer of a verified ask that abstains.
pub const ABSTENTION_TEXT: &str = "I cannot provide this answer as verified from the supplied Context Capsule.";

/// A claim's verdict.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// Its evidence holds its content words, numbers and negations, and the semantic check
    /// agrees.
    Supported,
    /// A passage it rests on states otherwise (a negation or a different number).
    Contradicted,
    /// No fresh passage of the capsule holds what it says.
    Insufficient,
    /// The words are there, but the semantic check could not confirm it (unavailable,
    /// failed, or in between).
    Uncertain,
}

/// Why a claim got its verdict.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClaimRationale {
    SemanticEntailment,
    SemanticContradiction,
    NoValidEvidence,
    SemanticJudgmentUnavailable,
}

/// Why a citation marker was not accepted.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RejectedCitationReason {
    /// The number names no source the draft was given.
    OutOfCapsule,
    /// The passage changed since the capsule was compiled.
    EvidenceStale,
    /// The passage's document is gone.
    EvidenceMissing,
}

/// A citation marker of the draft that was not accepted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RejectedCitation {
    /// The marker as written (`[7]`).
    pub marker: String,
    /// Offsets of the marker in the draft, in UTF-16 code units.
    pub start: u32,
    pub end: u32,
    pub evidence_id: Option<String>,
    pub reason: RejectedCitationReason,
}

/// A capsule passage a claim rests on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimEvidence {
    pub evidence_id: String,
    pub uri: String,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
    pub source_hash: String,
    pub mirror_hash: String,
    pub passage_hash: String,
}

/// One claim of the draft and its verdict.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimVerdict {
    pub claim_id: String,
    /// The claim as written in the draft (markers included).
    pub text: String,
    /// Offsets of the claim in the draft, in UTF-16 code units.
    pub start: u32,
    pub end: u32,
    pub status: ClaimStatus,
    /// The semantic check's similarity (0..1) when it ran for this claim.
    pub confidence: Option<f64>,
    pub rationale_code: ClaimRationale,
    pub verifier_fingerprint: Option<String>,
    pub evidence: Vec<ClaimEvidence>,
    pub rejected_citations: Vec<RejectedCitation>,
}

/// Counts of the verdicts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimCoverage {
    pub total_claims: u32,
    pub supported_claims: u32,
    pub contradicted_claims: u32,
    pub insufficient_claims: u32,
    pub uncertain_claims: u32,
    /// Supported over total (0 when there are none).
    pub supported_ratio: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerStatus {
    Verified,
    Abstained,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AbstentionReason {
    ContradictionDetected,
    CoverageBelowThreshold,
    NoSubstantiveClaims,
    CitationHygieneFailed,
}

/// `verification.claims`: `claim-verification@1.0`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimVerification {
    /// `1.0`.
    pub schema_version: String,
    /// `utf16_code_units`.
    pub coordinate_space: String,
    pub capsule_id: String,
    /// SHA-256 of the draft.
    pub answer_hash: String,
    /// The share of substantive claims that must be supported (1: all of them).
    pub coverage_threshold: f64,
    pub claims: Vec<ClaimVerdict>,
    pub rejected_citations: Vec<RejectedCitation>,
    pub coverage: ClaimCoverage,
    pub answer_status: AnswerStatus,
    pub abstained: bool,
    pub abstention_reason: Option<AbstentionReason>,
    pub abstention_text: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SemanticStatus {
    Completed,
    Unavailable,
    Failed,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SemanticReason {
    /// The check ran on every candidate claim.
    Verified,
    /// No claim passed the deterministic checks, so there was nothing to judge.
    NoCandidates,
    /// No embedding model is loaded.
    VerifierUnavailable,
    /// The embedding model failed.
    GenerationFailed,
}

/// `verification.semantic`: the semantic layer (embedding similarity between each claim and
/// the sentences of its passages) and what it did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticCheck {
    pub status: SemanticStatus,
    pub reason: SemanticReason,
    /// Whether a structured output schema was requested / enforced (never: no generator judges).
    pub schema_requested: bool,
    pub schema_enforced: bool,
    /// The embedding model used, when one was.
    pub model_fingerprint: Option<String>,
    /// SHA-256 of the thresholds.
    pub config_fingerprint: String,
    pub verifier_fingerprint: Option<String>,
    pub candidate_claims: u32,
    pub verified_claims: u32,
    pub unresolved_claims: u32,
    pub model_calls: u32,
    pub duration_ms: u64,
}

/// `verification` of a verified ask.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// `1.0`.
    pub schema_version: String,
    /// `closed_capsule`: the draft saw only the capsule's evidence.
    pub mode: String,
    /// The capsule (`context-capsule-v1@1.1`) the draft was generated from.
    pub capsule: super::Capsule,
    /// Its verification right after compiling (`context-capsule-verification@1.0`).
    pub freshness: super::CapsuleReceipt,
    pub claims: ClaimVerification,
    pub semantic: SemanticCheck,
}

/// `meta` of a verified ask.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedAskMeta {
    pub expanded: bool,
    pub reranked: bool,
    pub vectors_used: bool,
    pub answer_generated: bool,
    /// Evidence passages in the capsule.
    pub total_results: u64,
    pub verification_requested: bool,
    pub abstained: bool,
}

/// `POST /api/ask` with `verify: true`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedAskResponse {
    pub query: String,
    pub mode: SearchMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_language: Option<String>,
    /// The draft when every substantive claim is supported, else [`ABSTENTION_TEXT`].
    pub answer: String,
    /// The evidence of the supported claims (none when abstaining).
    pub citations: Vec<Citation>,
    /// Always empty: the evidence is in `verification.capsule`.
    pub results: Vec<SearchResult>,
    pub meta: VerifiedAskMeta,
    pub verification: Verification,
}

/// The reply of `POST /api/ask`: raw, or verified with `verify: true`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(untagged)]
pub enum AskReply {
    Verified(Box<VerifiedAskResponse>),
    Raw(Box<AskResponse>),
}
