//! `POST /api/context`: compiles one Context Capsule, a deterministic bundle of exact
//! indexed passages for a goal, within a token budget that covers the whole payload.
//!
//! Stages: retrieval by depth policy (BM25, hybrid, plus link neighbours), passages (the
//! caller's pinned passages first, then each hit's chunk, as exact canonical lines),
//! admission (scope, duplicates, limit), selection
//! under the budget, coverage of the goal's facets, then the payload's size settled and its
//! identity computed. The index fingerprint is read before and after; a change in between
//! restarts the compile (twice) and then fails with `index_changed_during_compile`.

use super::budget::{settle_size, Limits, TokenCounter};
use super::gather::{candidate_limit, fail, graph_requested, retrieve, Hit, Retrieved};
use super::{fingerprint, identity};
use crate::question::words::words;
use crate::question::{Facet, Question};
use crate::stores::DocKey;

use crate::index::indexer::{source_kind, SourceKind};
use crate::shared::Shared;
use crate::stores::catalog::{self};
use crate::{time_fmt, uri};
use protocol::api::*;
use protocol::{ApiError, ContextRequest, DepthPolicy, ErrorCode};
use std::collections::{BTreeSet, HashSet};

const OMISSION_ITEMS: usize = 100;

/// The title of the last ATX heading at or before `line` (1-based), outside fenced code.
fn heading_at(text: &str, line: u32) -> Option<String> {
    let mut fence: Option<&str> = None;
    let mut last = None;
    for l in text.lines().take(line as usize) {
        let t = l.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (None, None) => {
                let level = t.chars().take_while(|c| *c == '#').count();
                if (1..=6).contains(&level) && t[level..].starts_with([' ', '\t']) {
                    let title = t[level..].trim().trim_end_matches('#').trim();
                    if !title.is_empty() {
                        last = Some(title.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    last
}

/// A passage the capsule is to hold before retrieval's own, by its document and lines: the
/// sources an answer is drafted from ([`crate::answer`]'s verified mode), which are the
/// section of a page that answers, not always the chunk retrieval matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub docid: String,
    /// 1-based lines of the canonical text, inclusive.
    pub start_line: u32,
    pub end_line: u32,
}

/// The passage of a hit: its chunk's lines, exactly as the canonical mirror has them.
fn evidence_of(w: &Shared, hit: &Hit, facets: &[Facet], observed_at: &str) -> Result<Option<Evidence>, ApiError> {
    let Some((text, chunks)) = content_of(w, hit)? else { return Ok(None) };
    let Some(chunk) = chunks.iter().find(|c| c.seq == hit.seq).or_else(|| chunks.first()) else {
        return Ok(None);
    };
    Ok(evidence_at(w, hit, &text, (chunk.start_line, chunk.end_line), chunk.symbol.clone(), facets, observed_at))
}

/// The pinned passage `pin` of a hit's document: its lines, under the symbol of the chunk
/// they start in.
fn pinned_evidence(
    w: &Shared,
    hit: &Hit,
    pin: &Pinned,
    facets: &[Facet],
    observed_at: &str,
) -> Result<Option<Evidence>, ApiError> {
    let Some((text, chunks)) = content_of(w, hit)? else { return Ok(None) };
    let symbol =
        chunks.iter().find(|c| (c.start_line..=c.end_line).contains(&pin.start_line)).and_then(|c| c.symbol.clone());
    Ok(evidence_at(w, hit, &text, (pin.start_line, pin.end_line), symbol, facets, observed_at))
}

/// A hit's canonical text and its chunks; `None` when the text is gone.
fn content_of(w: &Shared, hit: &Hit) -> Result<Option<(String, Vec<catalog::Chunk>)>, ApiError> {
    let conn = w.stores.catalog.reader();
    let load = fail(ErrorCode::ContentLoadFailed);
    let Some(text) = catalog::content_text(&conn, &hit.row.mirror_hash).map_err(|e| load(e.to_string()))? else {
        return Ok(None);
    };
    let chunks = catalog::chunks_of(&conn, &hit.row.mirror_hash).map_err(|e| load(e.to_string()))?;
    Ok(Some((text, chunks)))
}

/// The evidence of `lines` of a hit's canonical `text`; `None` when they are not in it.
fn evidence_at(
    w: &Shared,
    hit: &Hit,
    text: &str,
    (start_line, end_line): (u32, u32),
    symbol: Option<String>,
    facets: &[Facet],
    observed_at: &str,
) -> Option<Evidence> {
    let passage = identity::passage(text, start_line, end_line)?;
    let heading = source_kind(&hit.row.rel_path).and_then(|kind| match kind {
        // Code: the innermost symbol that starts in the passage, else the one it sits in.
        SourceKind::Code(_) => symbol,
        // A scanned PDF read by OCR: the page the passage is on.
        SourceKind::Pdf => crate::index::pictures::page_at(text, start_line),
        _ => crate::index::ingest::as_markdown(kind, text).and_then(|markdown| heading_at(&markdown, start_line)),
    });
    let doc_uri = uri::doc_uri(&hit.row.collection, &hit.row.rel_path);
    let passage_hash = identity::passage_hash(&passage);
    let words = words(&passage);
    let evidence_id = identity::evidence_id(
        &hit.row.docid,
        start_line,
        end_line,
        &hit.row.mirror_hash,
        &passage_hash,
        &hit.row.source_hash,
        &doc_uri,
    );
    Some(Evidence {
        collection: hit.row.collection.clone(),
        context_ids: vec![],
        docid: hit.row.docid.clone(),
        document_date: hit.row.fm_date.clone(),
        egress: w.models.egress(),
        end_line,
        evidence_id,
        facets: facets.iter().filter(|f| f.covered_by(&words)).map(|f| f.text().to_string()).collect(),
        graph_expanded: hit.graph,
        heading,
        mirror_hash: hit.row.mirror_hash.clone(),
        modified_at: time_fmt::ms_to_iso(hit.row.source_mtime_ns / 1_000_000),
        observed_at: observed_at.to_string(),
        passage_hash,
        retrieval_rank: hit.rank,
        retrieval_sources: hit.sources.clone(),
        selection_rank: 0,
        source_hash: hit.row.source_hash.clone(),
        start_line,
        text: passage,
        title: hit.row.title.clone(),
        trust: PassageTrust::Untrusted,
        uri: doc_uri,
    })
}

/// Each pinned passage with its document as a hit: retrieval's rank and sources when
/// retrieval found the document, none when only the pin names it; a pin whose document is no
/// longer indexed is left out.
fn pinned_hits(w: &Shared, hits: &[Hit], pinned: &[Pinned]) -> Result<Vec<(Hit, Pinned)>, ApiError> {
    let conn = w.stores.catalog.reader();
    let mut out = Vec::with_capacity(pinned.len());
    for pin in pinned {
        let hit = match hits.iter().find(|h| h.row.docid == pin.docid) {
            Some(h) => h.clone(),
            None => {
                let row = catalog::doc_by_docid(&conn, &pin.docid)
                    .map_err(|e| fail(ErrorCode::RetrievalFailed)(e.to_string()))?;
                let Some(row) = row else { continue };
                Hit { row, seq: 0, rank: None, sources: Vec::new(), graph: false }
            }
        };
        out.push((hit, pin.clone()));
    }
    Ok(out)
}

/// Passages left out, counted by reason, with the first [`OMISSION_ITEMS`] listed.
#[derive(Default, Clone)]
struct Left {
    items: Vec<Omission>,
    counts: OmissionCounts,
    total: u64,
}

impl Left {
    fn add(&mut self, uri: &str, start: u32, end: u32, reason: OmissionReason) {
        self.total += 1;
        let c = &mut self.counts;
        *match reason {
            OmissionReason::Duplicate => &mut c.duplicate,
            OmissionReason::Overlap => &mut c.overlap,
            OmissionReason::GlobalBudget => &mut c.global_budget,
            OmissionReason::FilteredByScope => &mut c.filtered_by_scope,
            OmissionReason::InvalidCoordinates => &mut c.invalid_coordinates,
            OmissionReason::DocumentShareCap => &mut c.document_share_cap,
            OmissionReason::RedundantCoverage => &mut c.redundant_coverage,
        } += 1;
        if self.items.len() < OMISSION_ITEMS {
            self.items.push(Omission { end_line: end, reason, start_line: start, uri: uri.into() });
        }
    }

    fn omissions(&self) -> Omissions {
        Omissions {
            items: self.items.clone(),
            reason_counts: self.counts.clone(),
            total: self.total,
            truncated: self.total as usize > self.items.len(),
        }
    }
}

fn coverage(facets: &[String], evidence: &[Evidence], budget_cut: &BTreeSet<String>) -> Coverage {
    let mut covered = Vec::new();
    let mut unresolved = Vec::new();
    let mut gaps = Vec::new();
    for f in facets {
        let ids: Vec<String> =
            evidence.iter().filter(|e| e.facets.contains(f)).map(|e| e.evidence_id.clone()).collect();
        if ids.is_empty() {
            unresolved.push(f.clone());
            let code = if budget_cut.contains(f) { GapCode::GlobalBudgetExhausted } else { GapCode::FacetNotFound };
            gaps.push(CoverageGap { code, facet: f.clone() });
        } else {
            covered.push(CoveredFacet { evidence_ids: ids, facet: f.clone() });
        }
    }
    Coverage {
        complete: unresolved.is_empty(),
        covered_facets: covered,
        gaps,
        requested_facets: facets.to_vec(),
        unresolved_facets: unresolved,
    }
}

/// Everything but the evidence, the coverage and the omissions, which selection fills in.
struct Frame {
    capsule: Capsule,
    limits: Limits,
}

fn frame(w: &Shared, req: &ContextRequest, retrieved: &Retrieved, counter: &TokenCounter, snapshot: &str) -> Frame {
    let embedding_model =
        (retrieved.semantic.outcome == CapabilityOutcome::Used).then(|| fingerprint::model(w.models.embed_model_ref()));
    let rerank_model = (retrieved.reranking.outcome == CapabilityOutcome::Used)
        .then(|| w.models.rerank_model_ref().map(fingerprint::model))
        .flatten();
    let mut warnings = Vec::new();
    if !counter.exact() {
        warnings.push(CapsuleWarning {
            code: CapsuleWarningCode::TokenEstimateUsed,
            message: "Tokens were estimated as one per UTF-8 byte: no tokenizer is available.".into(),
        });
    }
    let mut fallbacks = retrieved.fallbacks.clone();
    if !counter.exact() {
        fallbacks.push(CapsuleFallback {
            capability: FallbackCapability::ExactTokenCount,
            code: FallbackCode::TokenizerUnavailable,
        });
    }
    let capsule = Capsule {
        budget: CapsuleBudget {
            authority: BudgetAuthority::CanonicalJson,
            estimator: counter.estimator(),
            requested_bytes: req.budget_bytes,
            requested_tokens: req.budget_tokens,
            safety_margin_bytes: req.safety_margin_bytes,
            safety_margin_tokens: req.safety_margin_tokens,
            tokenizer_fingerprint: counter.fingerprint(),
            used_bytes: 0,
            used_tokens: 0,
        },
        capabilities: CapsuleCapabilities {
            configured_context: false,
            egress_policy: w.models.egress(),
            exact_token_count: counter.exact(),
            graph_expansion: retrieved.graph.outcome == CapabilityOutcome::Used,
            lexical_search: true,
            reranking: retrieved.reranking.outcome == CapabilityOutcome::Used,
            semantic_search: retrieved.semantic.outcome == CapabilityOutcome::Used,
        },
        capsule_id: String::new(),
        coordinate_space: CoordinateSpace::CanonicalMirror,
        coverage: coverage(&[], &[], &BTreeSet::new()),
        evidence: vec![],
        fallbacks,
        fingerprints: CapsuleFingerprints {
            config: fingerprint::config(w),
            embedding_model,
            rerank_model,
            retrieval: fingerprint::retrieval(req.depth, candidate_limit(req)),
            tokenizer: counter.fingerprint(),
        },
        goal: req.goal.clone(),
        guidance: CapsuleGuidance {
            configured_contexts: vec![],
            evidence_trust: GuidanceTrust::UntrustedData,
            extractive_only: true,
            instruction_boundary: InstructionBoundary::HardDelimited,
        },
        omissions: Left::default().omissions(),
        query: req.query.clone(),
        retrieval: CapsuleRetrieval {
            capability_states: CapabilityStates {
                graph_expansion: retrieved.graph.clone(),
                reranking: retrieved.reranking.clone(),
                semantic_search: retrieved.semantic.clone(),
            },
            depth_policy: req.depth,
            expansion_policy: ExpansionPolicy::DeterministicOnly,
            facets: Question::read(&req.goal).facets().iter().map(|f| f.text().to_string()).collect(),
            index_snapshot: IndexSnapshot { after: snapshot.into(), before: snapshot.into(), stable: true },
            query_variants: vec![req.query.clone()],
            request: CapsuleRequest {
                author: req.filters.author.clone(),
                candidate_limit: candidate_limit(req),
                exclude: req.exclude.clone(),
                graph_requested: graph_requested(req),
                intent: req.intent.clone(),
                lang: req.lang.clone(),
                limit: req.limit,
                min_score: req.min_score,
                query_modes: req
                    .query_modes
                    .iter()
                    .map(|m| CapsuleQueryMode { mode: m.kind, text: m.text.clone() })
                    .collect(),
                rerank_requested: req.depth != DepthPolicy::Fast && !req.no_rerank,
            },
        },
        schema_version: CapsuleVersion::V1_1,
        scope: CapsuleScope {
            categories: req.filters.categories.clone(),
            collections: req.collections.iter().map(ToString::to_string).collect(),
            index_name: w.settings.dirs.index_name.clone(),
            // As resolved (a relative token becomes its instant), so verification reads it back.
            since: req.filters.since_ms.map(time_fmt::ms_to_iso),
            tags_all: req.filters.tags_all.clone(),
            tags_any: req.filters.tags_any.clone(),
            until: req.filters.until_ms.map(time_fmt::ms_to_iso),
            uri_prefix: req.uri_prefix.clone(),
        },
        truncated: false,
        warnings,
    };
    let limits = Limits {
        tokens: req.budget_tokens.saturating_sub(req.safety_margin_tokens),
        bytes: req.budget_bytes.saturating_sub(req.safety_margin_bytes),
    };
    Frame { capsule, limits }
}

/// Fills the frame with `chosen` and the omissions; returns the settled JSON when it fits.
fn assemble(
    frame: &Frame,
    chosen: &[Evidence],
    left: &Left,
    budget_cut: &BTreeSet<String>,
    cut: bool,
    counter: &TokenCounter,
) -> Result<(Capsule, String, bool), ApiError> {
    let mut c = frame.capsule.clone();
    c.evidence = chosen.to_vec();
    for (i, e) in c.evidence.iter_mut().enumerate() {
        e.selection_rank = i as u32 + 1;
    }
    c.coverage = coverage(&c.retrieval.facets, &c.evidence, budget_cut);
    c.omissions = left.omissions();
    if !c.coverage.complete {
        c.warnings.push(CapsuleWarning {
            code: CapsuleWarningCode::IncompleteCoverage,
            message: "Some facets of the goal have no evidence (see coverage.gaps).".into(),
        });
    }
    if c.omissions.truncated {
        c.warnings.push(CapsuleWarning {
            code: CapsuleWarningCode::OmissionsTruncated,
            message: "Not every omission is listed; reasonCounts counts them all.".into(),
        });
    }
    c.truncated = cut || !c.coverage.complete;
    let id = identity::capsule_id(&serde_json::to_value(&c).map_err(|_| ApiError::context(ErrorCode::RuntimeError))?);
    c.capsule_id = id;
    let json = settle_size(&mut c, counter)?;
    let fits = frame.limits.fits(c.budget.used_tokens, c.budget.used_bytes);
    Ok((c, json, fits))
}

/// A compiled capsule's canonical JSON.
pub struct Compiled {
    pub json: String,
}

pub fn compile(w: &Shared, req: &ContextRequest) -> Result<Compiled, ApiError> {
    compile_pinned(w, req, &[])
}

/// [`compile`], the capsule holding the `pinned` passages first (those whose document is
/// still indexed and whose lines it still has), then retrieval's, one per other document.
pub fn compile_pinned(w: &Shared, req: &ContextRequest, pinned: &[Pinned]) -> Result<Compiled, ApiError> {
    for _ in 0..3 {
        let before = fingerprint::index(w).map_err(|e| fail(ErrorCode::RuntimeError)(e.to_string()))?;
        let compiled = compile_once(w, req, pinned, &before)?;
        let after = fingerprint::index(w).map_err(|e| fail(ErrorCode::RuntimeError)(e.to_string()))?;
        if before == after {
            return Ok(compiled);
        }
    }
    Err(ApiError::context(ErrorCode::IndexChangedDuringCompile))
}

fn counter(w: &Shared) -> TokenCounter {
    match w.models.counting_tokenizer() {
        Ok(t) => TokenCounter::Tokenizer(t),
        Err(_) => TokenCounter::Conservative,
    }
}

fn compile_once(w: &Shared, req: &ContextRequest, pinned: &[Pinned], snapshot: &str) -> Result<Compiled, ApiError> {
    let retrieved = retrieve(w, req)?;
    if retrieved.hits.is_empty() {
        return Err(ApiError::context(ErrorCode::NoEvidence));
    }
    let counter = counter(w);
    let frame = frame(w, req, &retrieved, &counter, snapshot);
    let facets: Vec<Facet> = frame.capsule.retrieval.facets.iter().map(|f| Facet::read(f)).collect();
    let pins = pinned_hits(w, &retrieved.hits, pinned)?;
    let ids: Vec<DocKey> = retrieved.hits.iter().chain(pins.iter().map(|(hit, _)| hit)).map(|h| h.row.id).collect();
    let observed = catalog::indexed_at(&w.stores.catalog.reader(), &ids)
        .map_err(|e| fail(ErrorCode::ContentLoadFailed)(e.to_string()))?;

    // Admission: scope, one passage per document, no duplicate passage, at most `limit`.
    let mut left = Left::default();
    for (u, s, e) in &retrieved.filtered {
        left.add(u, *s, *e, OmissionReason::FilteredByScope);
    }
    let mut admitted: Vec<Evidence> = Vec::new();
    let mut seen_docs: HashSet<DocKey> = HashSet::new();
    let mut seen_passages: HashSet<String> = HashSet::new();
    let mut over_limit = false;
    // The pinned passages first: their documents give no other passage.
    for (hit, pin) in &pins {
        let at = observed.get(&hit.row.id).cloned().unwrap_or_default();
        let Some(ev) = pinned_evidence(w, hit, pin, &facets, &at)? else { continue };
        if admitted.len() < req.limit as usize && seen_passages.insert(ev.passage_hash.clone()) {
            seen_docs.insert(hit.row.id);
            admitted.push(ev);
        }
    }
    for hit in &retrieved.hits {
        if admitted.len() >= req.limit as usize {
            over_limit = true;
            break;
        }
        if !seen_docs.insert(hit.row.id) {
            continue;
        }
        let at = observed.get(&hit.row.id).cloned().unwrap_or_default();
        let Some(ev) = evidence_of(w, hit, &facets, &at)? else {
            left.add(&uri::doc_uri(&hit.row.collection, &hit.row.rel_path), 0, 0, OmissionReason::InvalidCoordinates);
            continue;
        };
        if !seen_passages.insert(ev.passage_hash.clone()) {
            left.add(&ev.uri, ev.start_line, ev.end_line, OmissionReason::Duplicate);
            continue;
        }
        admitted.push(ev);
    }
    if admitted.is_empty() {
        return Err(ApiError::context(ErrorCode::NoEvidence));
    }

    // Selection: in rank order, each passage that still fits; the estimate per passage is
    // its own JSON, and the assembled payload is measured exactly at the end (dropping the
    // last chosen passage while it does not fit).
    // The frame alone, measured once (its size fields are still zero: a few bytes short,
    // which the exact measure at the end makes up for).
    let base = serde_json::to_string(&frame.capsule).map_err(|_| ApiError::context(ErrorCode::RuntimeError))?;
    let (mut tokens, mut bytes) = (counter.count(&base)?, base.len() as u64);
    // Tokens per byte of this payload's JSON, a little high: passages are estimated from their
    // JSON's length (counting each would cost as much as the whole compile).
    let ratio = (tokens as f64 / bytes.max(1) as f64) * 1.1;
    let mut chosen: Vec<Evidence> = Vec::new();
    let mut dropped: Vec<Evidence> = Vec::new();
    for ev in admitted {
        let piece = serde_json::to_string(&ev).map_err(|_| ApiError::context(ErrorCode::RuntimeError))?;
        // Plus its share of the coverage lists, roughly: its id once per facet it covers.
        let extra = 80 * (ev.facets.len() as u64 + 1);
        let b = piece.len() as u64 + extra;
        let t = if counter.exact() { (b as f64 * ratio).ceil() as u64 } else { b };
        if frame.limits.fits(tokens + t, bytes + b) {
            tokens += t;
            bytes += b;
            chosen.push(ev);
        } else {
            dropped.push(ev);
        }
    }
    if chosen.is_empty() {
        // Not even one passage fits: the budget is too small for any evidence.
        return Err(ApiError::context(ErrorCode::InvalidBudget));
    }
    // Measure exactly; while over the budget, list fewer omissions (they stay counted),
    // then drop the last chosen passage.
    let mut listed = OMISSION_ITEMS;
    loop {
        let mut left_now = left.clone();
        for d in &dropped {
            left_now.add(&d.uri, d.start_line, d.end_line, OmissionReason::GlobalBudget);
        }
        listed = listed.min(left_now.items.len());
        left_now.items.truncate(listed);
        let covered: BTreeSet<&String> = chosen.iter().flat_map(|e| e.facets.iter()).collect();
        let budget_cut: BTreeSet<String> =
            dropped.iter().flat_map(|e| e.facets.iter()).filter(|f| !covered.contains(f)).cloned().collect();
        let cut = over_limit || !dropped.is_empty();
        let (_, json, fits) = assemble(&frame, &chosen, &left_now, &budget_cut, cut, &counter)?;
        if fits {
            return Ok(Compiled { json });
        }
        if listed > 0 {
            listed /= 2;
            continue;
        }
        if let Some(last) = chosen.pop() {
            dropped.insert(0, last);
        }
        if chosen.is_empty() {
            return Err(ApiError::context(ErrorCode::InvalidBudget));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::heading_at;

    #[test]
    fn the_heading_a_line_sits_under() {
        let text = "# Top\nintro\n## Part\n```\n# not a heading\n```\nbody\n#nospace\n";
        assert_eq!(heading_at(text, 1).as_deref(), Some("Top"));
        assert_eq!(heading_at(text, 2).as_deref(), Some("Top"));
        assert_eq!(heading_at(text, 7).as_deref(), Some("Part"));
        assert_eq!(heading_at(text, 8).as_deref(), Some("Part"));
        assert_eq!(heading_at("plain\n", 1), None);
    }
}
