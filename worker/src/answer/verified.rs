//! Verified answers: one closed Context Capsule is compiled for the question, holding first the
//! passages a raw answer would be drafted from, and checked for freshness; a draft is generated
//! from those passages alone, and every claim of the draft is held against the passages it
//! cites, first by its words ([`claims::lexical`]), then by meaning (the passage with the
//! sentence closest to the claim, and the generator's ruling when the preset's judges). The
//! draft is returned only when every substantive claim is supported; otherwise the answer
//! abstains.

use super::claims::{self, Claim};
use super::generator_unavailable;
use super::judge::{self, Judgement, Ruling};
use super::relevance;
use super::subject::Subject;
use crate::evidence::compile::{self, Pinned};
use crate::evidence::verify;
use crate::models::generator::Generator;
use crate::question::Question;
use crate::retrieval::common::Scope;
use crate::shared::Shared;
use protocol::api::{
    AbstentionReason, AnswerStatus, CapabilityOutcome, Capsule, CapsuleReceipt, Citation, CitationVia, ClaimCoverage,
    ClaimEvidence, ClaimRationale, ClaimStatus, ClaimVerdict, ClaimVerification, ContentStatus, Evidence,
    RejectedCitation, RejectedCitationReason, SearchMode, SemanticCheck, SemanticReason, SemanticStatus, Verification,
    VerifiedAskMeta, VerifiedAskResponse, ABSTENTION_TEXT,
};
use protocol::{ApiError, AskRequest, ContextRequest, DepthPolicy, SearchFilters, VerifiedAsk};
use sha2::{Digest, Sha256};
use std::time::Instant;

/// Passages the draft is generated from at most (the generator's prompt is short).
const PROMPT_PASSAGES: usize = 5;
/// Cosine similarity (unit vectors) between a claim and a sentence of its passage at or above
/// which the semantic layer confirms the claim when no generator judges. With a judge the
/// closest sentence only picks the passage the claim is judged against: with the judge's
/// odds at [`MEANING_YES`] this gate withheld no wrong answer, and two right ones on
/// rustdocs-ask ("the maximum length of a package name is 64 characters", 0.53) and one on
/// ask-docs (`scripts/judge_odds.py`, docs/retrieval.md, stop 82).
const SUPPORT_SIMILARITY: f64 = 0.6;

/// A claim its passages hold in other words (less than [`claims::MIN_COVERAGE`] of its
/// words, or what it adds not in one sentence) may still rest on a passage by meaning: its
/// numbers there, nothing there against it, the question's subject named, something added to
/// the question, and the judge's "yes" at least this share of its "yes" and "no" on its first
/// step. Chosen on rustdocs-ask in stop 81 (`scripts/judge_odds.py` over a run that took every
/// share); replayed in stop 82 with drafts from the raw answer's passages and no similarity
/// gate: 0.7 vouched for 14 right answers and 2 wrong there, 27 and 1 on ask-docs; 0.65 for 16
/// and 2 there but 29 and 2 on ask-docs (docs/retrieval.md).
const MEANING_YES: f64 = 0.7;

/// The semantic layer's name in fingerprints: embedding similarity, then the generator as
/// judge ([`JUDGED`]) when the preset's generator judges.
const VERIFIER: &str = "embedding-similarity-v1";
const JUDGED: &str = "embedding-similarity-v1+generator-judge-v1";

/// The draft of a verified answer: one paragraph. What the small generator writes after a
/// blank line is drift (the worked example's sources again, new questions), and every such
/// sentence would be a claim no passage supports.
const DRAFT: super::Instruction = super::Instruction {
    system: super::SYSTEM,
    stops: &["\n\n", "\nQuestion:", "\nSources:", "\n[", "\n#", "<|im_start|>", "<|im_end|>"],
};

/// The fresh passages the draft may rest on: capsule evidence by its number in the prompt.
struct Source<'c> {
    evidence: &'c Evidence,
    /// `unchanged`, `stale` or `missing`, from the freshness receipt.
    fresh: Result<(), RejectedCitationReason>,
}

pub fn ask(
    w: &Shared,
    req: &AskRequest,
    settings: &VerifiedAsk,
    started: Instant,
) -> Result<VerifiedAskResponse, ApiError> {
    // The same 404 as the raw mode's retrieval for a collection that does not exist.
    Scope::of(w, &req.query.search)?;
    // The passages raw mode would answer from (the section of each page that answers, not
    // always the chunk retrieval matched) are the capsule's first, and the draft's.
    let drawn = super::draw(w, &req.query)?;
    let pinned: Vec<Pinned> = drawn
        .choice
        .sources(&drawn.pool)
        .map(|e| Pinned { docid: e.docid.clone(), start_line: e.start_line, end_line: e.end_line })
        .collect();
    let compiled = compile::compile_pinned(w, &capsule_request(req, settings), &pinned)?;
    let freshness = verify::verify(w, &compiled.json)?;
    let capsule: Capsule = serde_json::from_str(&compiled.json)
        .map_err(|e| crate::errors::internal(format!("the compiled capsule could not be read back: {e}")))?;
    let weighed = drawn.weighed;
    let mut drafted_from: Vec<&Evidence> = capsule
        .evidence
        .iter()
        .filter(|e| {
            pinned.iter().any(|p| p.docid == e.docid && p.start_line == e.start_line && p.end_line == e.end_line)
        })
        .collect();
    if drafted_from.is_empty() {
        // No source chosen (none shares a word with the question) or none left in the
        // capsule: its best-ranked passages.
        drafted_from = capsule.evidence.iter().take(PROMPT_PASSAGES).collect();
    }
    let sources: Vec<Source<'_>> =
        drafted_from.into_iter().map(|e| Source { evidence: e, fresh: fresh(&freshness, e) }).collect();

    let generator = w.models.generator().map_err(generator_unavailable)?;
    let titled: Vec<(&str, &str)> =
        sources.iter().map(|s| (s.evidence.title.as_str(), s.evidence.text.as_str())).collect();
    // No passage to draft from: nothing is drafted. (A question asked in other words than its
    // passage's is drafted and checked claim by claim, as in raw mode: the share of the
    // question a passage holds kept 7 of the 30 answers raw mode got right on rustdocs-ask
    // from being drafted at all.)
    let draft = if sources.is_empty() {
        None
    } else {
        Some(
            super::draft(
                &generator,
                &DRAFT,
                &super::user_turn(
                    weighed.question(),
                    &super::shown_sources(weighed.question(), &titled),
                    super::QuestionPlace::After,
                ),
                req.max_answer_tokens,
                started,
                "verified draft",
                &mut |_| crate::models::generator::Flow::Continue,
            )?
            .text,
        )
    };
    let answer_generated = draft.is_some();
    let text = draft.unwrap_or_default();
    let claims = claims::split(&text);
    let mut judged = judge(w, &generator, &weighed, &claims, &sources, super::generation_deadline(started));
    let mut verification =
        claim_verification(&capsule.capsule_id, &text, &claims, &judged.verdicts, &sources, judged.verifier);
    let mut text = text;
    if verification.answer_status == AnswerStatus::Verified {
        // The markers of claims held by another passage than the one they named are rewritten
        // to name it; the claims are read again from the text as it is answered.
        if let Some((recited, again)) = recite(&text, &claims, &judged.verdicts) {
            verification =
                claim_verification(&capsule.capsule_id, &recited, &again, &judged.verdicts, &sources, judged.verifier);
            text = recited;
        } else if judged.verdicts.iter().any(|v| v.recited) {
            for v in judged.verdicts.iter_mut().filter(|v| v.recited) {
                (v.status, v.rationale, v.sources) =
                    (ClaimStatus::Insufficient, ClaimRationale::NoValidEvidence, Vec::new());
            }
            verification =
                claim_verification(&capsule.capsule_id, &text, &claims, &judged.verdicts, &sources, judged.verifier);
        }
    }
    let verified = verification.answer_status == AnswerStatus::Verified;
    let citations = if verified { citations_of(&judged.verdicts, &sources) } else { Vec::new() };
    Ok(VerifiedAskResponse {
        query: req.query.search.query.clone(),
        mode: SearchMode::Hybrid,
        query_language: None,
        answer: if verified { text } else { ABSTENTION_TEXT.to_string() },
        citations,
        results: Vec::new(),
        meta: VerifiedAskMeta {
            expanded: false,
            reranked: capsule.retrieval.capability_states.reranking.outcome == CapabilityOutcome::Used,
            vectors_used: capsule.retrieval.capability_states.semantic_search.outcome == CapabilityOutcome::Used,
            answer_generated,
            total_results: capsule.evidence.len() as u64,
            verification_requested: true,
            abstained: !verified,
        },
        verification: Verification {
            schema_version: "1.0".into(),
            mode: "closed_capsule".into(),
            capsule,
            freshness,
            claims: verification,
            semantic: judged.semantic,
        },
    })
}

/// `draft` with the markers of each supported claim held by another passage than it named
/// ([`Verdict::recited`]) rewritten to name that passage (`[2]` -> `[1]`), and its claims read
/// again; `None` when no marker changes, or when the text read again does not give the same
/// claims (then those claims are not vouched for).
fn recite(draft: &str, claims: &[Claim], verdicts: &[Verdict]) -> Option<(String, Vec<Claim>)> {
    let mut units: Vec<u16> = draft.encode_utf16().collect();
    let mut edits: Vec<(u32, u32, String)> = Vec::new();
    for (claim, v) in claims.iter().zip(verdicts) {
        let Some(&n) = v.sources.first().filter(|_| v.recited && v.status == ClaimStatus::Supported) else {
            continue;
        };
        for m in claim.markers.iter().filter(|m| m.number != n || m.text != format!("[{n}]")) {
            edits.push((m.start, m.end, format!("[{n}]")));
        }
    }
    if edits.is_empty() {
        return None;
    }
    // From the end, so earlier offsets hold; a group (`[1, 3]`) is one marker per number over
    // one range, rewritten once.
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    edits.dedup_by_key(|(start, end, _)| (*start, *end));
    for (start, end, marker) in edits {
        let (start, end) = (start as usize, end as usize);
        if start > end || end > units.len() {
            return None;
        }
        units.splice(start..end, marker.encode_utf16());
    }
    let text = String::from_utf16(&units).ok()?;
    let again = claims::split(&text);
    let same = again.len() == claims.len() && again.iter().zip(claims).all(|(a, c)| a.plain == c.plain);
    same.then_some((text, again))
}

/// The capsule of a verified ask: the question as goal, `balanced`, the request's filters.
fn capsule_request(req: &AskRequest, settings: &VerifiedAsk) -> ContextRequest {
    let q = &req.query;
    let s = &q.search;
    ContextRequest {
        goal: s.query.clone(),
        query: s.query.clone(),
        collections: s.filters.collection.iter().cloned().collect(),
        uri_prefix: None,
        query_modes: q.query_modes.clone(),
        filters: SearchFilters { collection: None, ..s.filters.clone() },
        intent: s.intent.clone(),
        exclude: s.exclude.clone(),
        min_score: s.min_score,
        lang: q.lang.clone(),
        graph: None,
        no_rerank: q.no_rerank,
        limit: 20,
        candidate_limit: s.candidate_limit,
        budget_tokens: settings.budget_tokens,
        budget_bytes: settings.budget_tokens.saturating_mul(4),
        safety_margin_tokens: 0,
        safety_margin_bytes: 0,
        depth: DepthPolicy::Balanced,
    }
}

fn fresh(receipt: &CapsuleReceipt, e: &Evidence) -> Result<(), RejectedCitationReason> {
    match receipt.evidence.iter().find(|c| c.evidence_id == e.evidence_id).map(|c| c.content_status) {
        Some(ContentStatus::Unchanged) => Ok(()),
        Some(ContentStatus::Stale) => Err(RejectedCitationReason::EvidenceStale),
        Some(ContentStatus::Missing) | None => Err(RejectedCitationReason::EvidenceMissing),
    }
}

/// What the checks found for one claim.
struct Verdict {
    status: ClaimStatus,
    rationale: ClaimRationale,
    confidence: Option<f64>,
    /// Numbers (from 1) of the sources it rests on.
    sources: Vec<usize>,
    rejected: Vec<RejectedCitation>,
    substantive: bool,
    /// Its citations did not hold it and another passage does: its markers are to name that
    /// passage ([`recite`]).
    recited: bool,
}

struct Judged {
    verdicts: Vec<Verdict>,
    semantic: SemanticCheck,
    /// The semantic layer's name ([`VERIFIER`] or [`JUDGED`]).
    verifier: &'static str,
}

/// Where a passage stands and what it says: its address, title, heading and text, where
/// [`Subject::held_by`] looks for what the question names.
fn place(e: &Evidence) -> String {
    format!("{} {} {} {}", e.uri, e.title, e.heading.as_deref().unwrap_or(""), e.text)
}

/// Both layers over every claim of the answer to `question`.
fn judge(
    w: &Shared,
    generator: &Generator,
    question: &relevance::Weighed,
    claims: &[Claim],
    sources: &[Source<'_>],
    deadline: Instant,
) -> Judged {
    let started = Instant::now();
    let mut verdicts: Vec<Verdict> = Vec::with_capacity(claims.len());
    // Claims the deterministic layer leaves to the semantic one.
    let mut candidates: Vec<Candidate> = Vec::new();
    let subject =
        Subject::of(question.question(), sources.iter().map(|s| (s.evidence.title.as_str(), s.evidence.text.as_str())));
    for (i, claim) in claims.iter().enumerate() {
        let mut rejected = Vec::new();
        let mut cited: Vec<usize> = Vec::new();
        for m in &claim.markers {
            let reason = match sources.get(m.number.wrapping_sub(1)) {
                None => Some(RejectedCitationReason::OutOfCapsule),
                Some(s) => s.fresh.err(),
            };
            match reason {
                Some(reason) => rejected.push(RejectedCitation {
                    marker: m.text.clone(),
                    start: m.start,
                    end: m.end,
                    evidence_id: sources.get(m.number.wrapping_sub(1)).map(|s| s.evidence.evidence_id.clone()),
                    reason,
                }),
                None if !cited.contains(&m.number) => cited.push(m.number),
                None => {}
            }
        }
        // A claim without a usable citation is held against every fresh passage.
        let pool: Vec<usize> = if cited.is_empty() && claim.markers.is_empty() {
            (1..=sources.len()).filter(|n| sources[n - 1].fresh.is_ok()).collect()
        } else {
            cited
        };
        let checks: Vec<(usize, claims::Lexical)> =
            pool.iter().map(|&n| (n, claims::lexical(&claim.plain, &sources[n - 1].evidence.text))).collect();
        // A passage supports the claim when it holds the claim's words and, in one place,
        // what the claim adds to the question: a claim made of the question's words and any
        // word of the passage is not an answer the passage gives. And it speaks of what the
        // question names: the right words said of another thing are no support.
        let addition = claims::Addition::of(&claim.plain, question.question());
        let supports = |checks: &[(usize, claims::Lexical)]| -> Vec<usize> {
            checks
                .iter()
                .filter(|(_, l)| l.coverage >= claims::MIN_COVERAGE && l.numbers_present && !l.conflicts)
                .map(|(n, _)| *n)
                .filter(|&n| addition.held_by(question, &sources[n - 1].evidence.title, &sources[n - 1].evidence.text))
                .filter(|&n| subject.held_by(&place(sources[n - 1].evidence)))
                .collect()
        };
        let mut supporting = supports(&checks);
        let mut held = Held::ByWords;
        let conflicting: Vec<usize> = checks.iter().filter(|(_, l)| l.conflicts).map(|(n, _)| *n).collect();
        // A claim its citations do not hold (nor contradict) is held against the other fresh
        // passages it was drafted from: the draft may name the wrong one of them. One that
        // holds it by every gate is its evidence, and its markers are rewritten to name it.
        let others: Vec<(usize, claims::Lexical)> =
            if supporting.is_empty() && conflicting.is_empty() && !claim.markers.is_empty() && !pool.is_empty() {
                (1..=sources.len())
                    .filter(|n| !pool.contains(n) && sources[n - 1].fresh.is_ok())
                    .map(|n| (n, claims::lexical(&claim.plain, &sources[n - 1].evidence.text)))
                    .collect()
            } else {
                Vec::new()
            };
        let mut recited = false;
        if supporting.is_empty() {
            supporting = supports(&others);
            recited = !supporting.is_empty();
        }
        // Held by none in its words: a passage that may hold it in others is left to the
        // judge, its cited ones first. Not a claim that adds nothing to the question: a
        // restatement is never a candidate, in any words.
        let judges = w.models.preset().judges;
        if supporting.is_empty() && conflicting.is_empty() && judges && !addition.is_empty() {
            let by_meaning = |checks: &[(usize, claims::Lexical)]| -> Vec<usize> {
                checks
                    .iter()
                    .filter(|(_, l)| l.numbers_present && !l.conflicts)
                    .map(|(n, _)| *n)
                    .filter(|&n| subject.held_by(&place(sources[n - 1].evidence)))
                    .collect()
            };
            supporting = by_meaning(&checks);
            if supporting.is_empty() {
                supporting = by_meaning(&others);
                recited = !supporting.is_empty();
            }
            held = Held::ByMeaning;
        }
        let substantive = claim.is_substantive();
        if tracing::enabled!(tracing::Level::DEBUG) {
            // Each passage's gates, for reading why a claim was not supported.
            let gates: Vec<String> = checks
                .iter()
                .map(|(n, l)| {
                    let e = sources[n - 1].evidence;
                    format!(
                        "[{n}] coverage {:.2} numbers {} conflicts {} addition {} subject {}",
                        l.coverage,
                        l.numbers_present,
                        l.conflicts,
                        addition.held_by(question, &e.title, &e.text),
                        subject.held_by(&place(e))
                    )
                })
                .collect();
            tracing::debug!(
                "verified: {:?} claim {i} {:?} (substantive {substantive}, recited {recited}, {held:?}): {}",
                question.question().text(),
                claim.plain,
                gates.join("; ")
            );
        }
        let (status, rationale, used) = if !substantive {
            (ClaimStatus::Insufficient, ClaimRationale::NoValidEvidence, Vec::new())
        } else if !conflicting.is_empty() {
            // Positive conflicting evidence outweighs support elsewhere: sources that
            // disagree do not verify a claim.
            (ClaimStatus::Contradicted, ClaimRationale::SemanticContradiction, conflicting)
        } else if supporting.is_empty() {
            (ClaimStatus::Insufficient, ClaimRationale::NoValidEvidence, Vec::new())
        } else {
            candidates.push(Candidate { claim: i, sources: supporting.clone(), held });
            (ClaimStatus::Uncertain, ClaimRationale::SemanticJudgmentUnavailable, supporting)
        };
        verdicts.push(Verdict { status, rationale, confidence: None, sources: used, rejected, substantive, recited });
    }
    // Only a generator measured to judge better than chance judges (`Preset::judges`).
    let judge = w.models.preset().judges.then_some(generator);
    let layer = SemanticLayer { judge, question: question.question(), deadline, started };
    let semantic = layer.run(w, claims, sources, &candidates, &mut verdicts);
    Judged { verdicts, semantic, verifier: layer.verifier() }
}

/// How a claim left to the semantic layer is held by its passages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// By every gate of its words: the judge's ruling decides.
    ByWords,
    /// In other words: only the judge's "yes" at [`MEANING_YES`] or more supports it.
    ByMeaning,
}

/// A claim the deterministic layer leaves to the semantic one.
struct Candidate {
    /// Its index among the answer's claims.
    claim: usize,
    /// The passages that may hold it (numbers from 1).
    sources: Vec<usize>,
    held: Held,
}

/// The semantic layer: its two checks and the time they may take.
struct SemanticLayer<'a> {
    /// The generator that judges each close claim; none: closeness alone supports it.
    judge: Option<&'a Generator>,
    question: &'a Question,
    /// When the judge must have ruled (the request's generation deadline).
    deadline: Instant,
    started: Instant,
}

impl SemanticLayer<'_> {
    /// The layer's name in fingerprints: [`JUDGED`] when a generator judges, else [`VERIFIER`].
    fn verifier(&self) -> &'static str {
        if self.judge.is_some() {
            JUDGED
        } else {
            VERIFIER
        }
    }

    /// Over the candidates: when the preset's generator judges, a claim is supported when it
    /// rules that the passage with the sentence closest to the claim in meaning states the
    /// claims closest to it (read together) about what the question asks ([`judge`]); without
    /// a judge, when that sentence is close enough ([`SUPPORT_SIMILARITY`]). Claims the judge
    /// rules against have no valid evidence; one nothing could rule on (no embedder, a failed
    /// model, a ruling not asked once the answer is lost) stays uncertain.
    fn run(
        &self,
        w: &Shared,
        claims: &[Claim],
        sources: &[Source<'_>],
        candidates: &[Candidate],
        verdicts: &mut [Verdict],
    ) -> SemanticCheck {
        let verifier = self.verifier();
        let config = hex::encode(Sha256::digest(format!(
            "{verifier}\0{SUPPORT_SIMILARITY}\0{PROMPT_PASSAGES}\0addition-in-one-sentence-under-its-heading-names-as-written-subject-named\0{}\0{}\0judged-by-closest-passage-{}\0held-by-meaning-{MEANING_YES}\0similarity-without-judge-only",
            claims::MIN_COVERAGE,
            relevance::ABOUT_THE_QUESTION,
            judge::PASSAGE_CHARS
        )));
        let model = match self.judge {
            Some(_) => format!("{}+{}", w.models.embed_model_ref(), w.models.gen_model_ref()),
            None => w.models.embed_model_ref().to_string(),
        };
        let fingerprint = format!("{verifier}:{model}");
        let check = |status, reason, model_calls, verified: u32| SemanticCheck {
            status,
            reason,
            schema_requested: false,
            schema_enforced: false,
            model_fingerprint: (model_calls > 0).then(|| model.clone()),
            config_fingerprint: config.clone(),
            verifier_fingerprint: (model_calls > 0).then(|| fingerprint.clone()),
            candidate_claims: candidates.len() as u32,
            verified_claims: verified,
            unresolved_claims: candidates.len() as u32 - verified,
            model_calls,
            duration_ms: self.started.elapsed().as_millis() as u64,
        };
        if candidates.is_empty() {
            return check(SemanticStatus::Completed, SemanticReason::NoCandidates, 0, 0);
        }
        let embedder = match w.models.embedder() {
            Ok(e) => e,
            Err(_) => return check(SemanticStatus::Unavailable, SemanticReason::VerifierUnavailable, 0, 0),
        };
        // One call: every candidate claim, then every sentence of every passage they rest on.
        let mut texts: Vec<String> = candidates.iter().map(|c| claims[c.claim].plain.clone()).collect();
        let mut sentence_ranges: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        let mut seen: Vec<usize> = Vec::new();
        for c in candidates {
            for &n in &c.sources {
                if !seen.contains(&n) {
                    seen.push(n);
                    let sentences = claims::sentences(&sources[n - 1].evidence.text);
                    let from = texts.len();
                    texts.extend(sentences);
                    sentence_ranges.push((n, from..texts.len()));
                }
            }
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = match embedder.embed(&refs) {
            Ok(v) if v.len() == refs.len() => v,
            _ => {
                return check(SemanticStatus::Failed, SemanticReason::GenerationFailed, 1, 0);
            }
        };
        let mut calls = 1u32;
        let mut verified = 0u32;
        // Claims close to a passage, by that passage (the closest one's number), in order.
        let mut close_to: Vec<(usize, Vec<usize>)> = Vec::new();
        for (k, c) in candidates.iter().enumerate() {
            let i = &c.claim;
            let best = sentence_ranges
                .iter()
                .filter(|(n, _)| c.sources.contains(n))
                .filter_map(|(n, range)| {
                    let sentences = vectors[range.clone()].iter().map(|v| (v.as_slice(), *n));
                    claims::closest(&vectors[k], sentences)
                })
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let Some((sim, n)) = best else { continue };
            let verdict = &mut verdicts[*i];
            verdict.confidence = Some((sim.clamp(0.0, 1.0) * 1000.0).round() / 1000.0);
            if self.judge.is_none() && sim < SUPPORT_SIMILARITY {
                // No judge, and not close enough in meaning: uncertain.
                continue;
            }
            verdict.sources.sort_by_key(|s| *s != n);
            match close_to.iter_mut().find(|(m, _)| *m == n) {
                Some((_, group)) => group.push(*i),
                None => close_to.push((n, vec![*i])),
            }
        }
        let held_by_meaning = |i: &usize| candidates.iter().any(|c| c.claim == *i && c.held == Held::ByMeaning);
        // The answer abstains once one substantive claim is not supported (or one citation is
        // rejected): the judge is not asked about the rest, which stay uncertain. A ruling
        // costs seconds.
        let to_judge = |i: &usize| close_to.iter().any(|(_, group)| group.contains(i));
        let mut lost = verdicts.iter().enumerate().any(|(i, v)| {
            !v.rejected.is_empty() || (v.substantive && v.status != ClaimStatus::Supported && !to_judge(&i))
        });
        let mut failed = false;
        for (n, group) in &close_to {
            if lost {
                tracing::debug!(
                    "verified: {:?} claims {group:?} not judged: the answer abstains",
                    self.question.text()
                );
                continue;
            }
            // The claims a passage is closest to are judged together, as the answer that
            // passage gives: "It was built in 1890." reads as the bridge's only after "The
            // Old Bridge is 120 metres long."
            // Claims held in other words stand on the judge's odds alone; the others on its
            // ruling. Without a judge only claims held by their words are close enough.
            let by_meaning = group.iter().any(held_by_meaning);
            let judgement = match self.judge {
                None if by_meaning => Ok(Judgement { ruling: Ruling::DoesNotHold, yes: None }),
                None => Ok(Judgement { ruling: Ruling::Holds, yes: None }),
                Some(generator) => {
                    calls += 1;
                    let e = sources[n - 1].evidence;
                    let said: Vec<&str> = group.iter().map(|&i| claims[i].plain.as_str()).collect();
                    judge::rule(generator, self.question, &said.join(" "), &e.title, &e.text, self.deadline)
                }
            };
            let holds = judgement.map(|j| {
                let ruled = group.iter().all(held_by_meaning) || j.ruling == Ruling::Holds;
                let meant = !by_meaning || j.yes.is_some_and(|yes| yes >= MEANING_YES);
                tracing::debug!(
                    "verified judged: {:?} [{n}] claims {group:?} by meaning {by_meaning} ruling {:?} yes {:?}",
                    self.question.text(),
                    j.ruling,
                    j.yes
                );
                ruled && meant
            });
            let (status, rationale) = match holds {
                Ok(true) => (ClaimStatus::Supported, ClaimRationale::SemanticEntailment),
                Ok(false) => (ClaimStatus::Insufficient, ClaimRationale::NoValidEvidence),
                Err(e) => {
                    tracing::warn!("the verifier's judge could not rule: {e}");
                    (failed, lost) = (true, true);
                    continue;
                }
            };
            lost |= status != ClaimStatus::Supported && group.iter().any(|&i| verdicts[i].substantive);
            for &i in group {
                verdicts[i].status = status;
                verdicts[i].rationale = rationale;
                verified += u32::from(status == ClaimStatus::Supported);
            }
        }
        if failed {
            return check(SemanticStatus::Failed, SemanticReason::GenerationFailed, calls, verified);
        }
        check(SemanticStatus::Completed, SemanticReason::Verified, calls, verified)
    }
}

fn claim_verification(
    capsule_id: &str,
    draft: &str,
    claims: &[Claim],
    verdicts: &[Verdict],
    sources: &[Source<'_>],
    verifier: &str,
) -> ClaimVerification {
    let evidence = |v: &Verdict| -> Vec<ClaimEvidence> {
        v.sources
            .iter()
            .map(|&n| {
                let e = sources[n - 1].evidence;
                ClaimEvidence {
                    evidence_id: e.evidence_id.clone(),
                    uri: e.uri.clone(),
                    start_line: e.start_line,
                    end_line: e.end_line,
                    text: e.text.clone(),
                    source_hash: e.source_hash.clone(),
                    mirror_hash: e.mirror_hash.clone(),
                    passage_hash: e.passage_hash.clone(),
                }
            })
            .collect()
    };
    let count = |s: ClaimStatus| verdicts.iter().filter(|v| v.substantive && v.status == s).count() as u32;
    let total = verdicts.iter().filter(|v| v.substantive).count() as u32;
    let supported = count(ClaimStatus::Supported);
    let contradicted = count(ClaimStatus::Contradicted);
    let rejected: Vec<RejectedCitation> = verdicts.iter().flat_map(|v| v.rejected.clone()).collect();
    let reason = if total == 0 {
        Some(AbstentionReason::NoSubstantiveClaims)
    } else if contradicted > 0 {
        Some(AbstentionReason::ContradictionDetected)
    } else if supported < total {
        Some(AbstentionReason::CoverageBelowThreshold)
    } else if !rejected.is_empty() {
        Some(AbstentionReason::CitationHygieneFailed)
    } else {
        None
    };
    ClaimVerification {
        schema_version: "1.0".into(),
        coordinate_space: "utf16_code_units".into(),
        capsule_id: capsule_id.to_string(),
        answer_hash: hex::encode(Sha256::digest(draft.as_bytes())),
        coverage_threshold: 1.0,
        claims: claims
            .iter()
            .zip(verdicts)
            .filter(|(_, v)| v.substantive)
            .enumerate()
            .map(|(k, (c, v))| ClaimVerdict {
                claim_id: format!("c{}", k + 1),
                text: c.text.clone(),
                start: c.start,
                end: c.end,
                status: v.status,
                confidence: v.confidence,
                rationale_code: v.rationale,
                verifier_fingerprint: v.confidence.map(|_| verifier.to_string()),
                evidence: evidence(v),
                rejected_citations: v.rejected.clone(),
            })
            .collect(),
        rejected_citations: rejected,
        coverage: ClaimCoverage {
            total_claims: total,
            supported_claims: supported,
            contradicted_claims: contradicted,
            insufficient_claims: count(ClaimStatus::Insufficient),
            uncertain_claims: count(ClaimStatus::Uncertain),
            supported_ratio: if total == 0 { 0.0 } else { f64::from(supported) / f64::from(total) },
        },
        answer_status: if reason.is_none() { AnswerStatus::Verified } else { AnswerStatus::Abstained },
        abstained: reason.is_some(),
        abstention_reason: reason,
        abstention_text: ABSTENTION_TEXT.to_string(),
    }
}

fn citations_of(verdicts: &[Verdict], sources: &[Source<'_>]) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for v in verdicts.iter().filter(|v| v.status == ClaimStatus::Supported) {
        for &n in &v.sources {
            if out.iter().any(|c| c.index as usize == n) {
                continue;
            }
            let e = sources[n - 1].evidence;
            out.push(Citation {
                docid: e.docid.clone(),
                uri: e.uri.clone(),
                index: n as u32,
                start_line: e.start_line,
                end_line: e.end_line,
                via: CitationVia::Verification,
            });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn verdict(sources: Vec<usize>, recited: bool) -> Verdict {
        Verdict {
            status: ClaimStatus::Supported,
            rationale: ClaimRationale::SemanticEntailment,
            confidence: None,
            sources,
            rejected: Vec::new(),
            substantive: true,
            recited,
        }
    }

    #[test]
    fn a_recited_claim_names_the_passage_that_holds_it() {
        let draft = "Crates.io allows 5 keywords [2]. Café 😀 names are fine [1, 3]. The rest [1].";
        let claims = claims::split(draft);
        let verdicts = vec![verdict(vec![1], true), verdict(vec![3], true), verdict(vec![1], false)];
        let (text, again) = recite(draft, &claims, &verdicts).unwrap();
        assert_eq!(text, "Crates.io allows 5 keywords [1]. Café 😀 names are fine [3]. The rest [1].");
        assert_eq!(again.len(), 3);
        assert_eq!(again[1].markers.iter().map(|m| m.number).collect::<Vec<_>>(), [3]);
        let units: Vec<u16> = text.encode_utf16().collect();
        for c in &again {
            assert_eq!(String::from_utf16(&units[c.start as usize..c.end as usize]).unwrap(), c.text);
        }
        // Nothing recited, or a recited claim that already names its passage: no rewrite.
        assert!(recite(draft, &claims, &[verdict(vec![2], false), verdict(vec![1], false), verdict(vec![1], false)])
            .is_none());
        assert!(recite(draft, &claims, &[verdict(vec![2], true), verdict(vec![1], false), verdict(vec![1], false)])
            .is_none());
    }
}
