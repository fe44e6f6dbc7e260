//! `POST /api/context/verify`: a read-only receipt for a capsule a client kept. The capsule's
//! identity is checked first (its `capsuleId`, every `passageHash` and `evidenceId`), and a
//! capsule of another index is refused, before any evidence is read. Then each evidence is
//! compared with the index as it is now, the retrieval is run again for its ranks, and the
//! fingerprints are compared.

use super::gather::{retrieve_hits, Hit};
use super::{fingerprint, identity};
use crate::shared::Shared;
use crate::stores::catalog;
use crate::{time_fmt, uri};
use protocol::api::*;
use protocol::{ApiError, CollectionName, ContextRequest, ErrorCode, QueryMode, SearchFilters};
use serde_json::Value;

fn malformed() -> ApiError {
    ApiError::context(ErrorCode::InvalidInput)
}

/// Reads and checks a capsule's identity; nothing of the index is read here.
fn checked_capsule(raw: &str) -> Result<Capsule, ApiError> {
    let value: Value = serde_json::from_str(raw).map_err(|_| malformed())?;
    if !value.is_object() {
        return Err(malformed());
    }
    let capsule: Capsule = serde_json::from_value(value.clone()).map_err(|_| {
        // A capsule changed after it was compiled (a closed set given a value it never has
        // included) is a mismatch of its identity, not a malformed request.
        let claimed = value.get("capsuleId").and_then(Value::as_str);
        match claimed {
            Some(id) if identity::capsule_id(&value) != id => ApiError::context(ErrorCode::IdentityMismatch),
            _ => malformed(),
        }
    })?;
    if capsule.evidence.is_empty() {
        return Err(malformed());
    }
    if identity::capsule_id(&value) != capsule.capsule_id {
        return Err(ApiError::context(ErrorCode::IdentityMismatch));
    }
    for e in &capsule.evidence {
        let passage_hash = identity::passage_hash(&e.text);
        let id = identity::evidence_id(
            &e.docid,
            e.start_line,
            e.end_line,
            &e.mirror_hash,
            &passage_hash,
            &e.source_hash,
            &e.uri,
        );
        if passage_hash != e.passage_hash || id != e.evidence_id {
            return Err(ApiError::context(ErrorCode::IdentityMismatch));
        }
    }
    Ok(capsule)
}

/// The content state of one evidence now: its code, then the source, mirror and passage hashes.
fn content_state(w: &Shared, e: &Evidence) -> Result<(EvidenceContentCode, [Option<String>; 3]), ApiError> {
    use EvidenceContentCode::*;
    let load = |_| ApiError::context(ErrorCode::ContentLoadFailed);
    let conn = w.stores.catalog.reader();
    let Some((coll, rel)) = uri::parse_uri(&e.uri) else {
        return Ok((SourceMissing, [None, None, None]));
    };
    let Some(row) = catalog::doc_by_path(&conn, &coll, &rel).map_err(load)? else {
        return Ok((SourceMissing, [None, None, None]));
    };
    let Some(text) = catalog::content_text(&conn, &row.mirror_hash).map_err(load)? else {
        return Ok((MirrorMissing, [Some(row.source_hash), None, None]));
    };
    let passage = identity::passage(&text, e.start_line, e.end_line).map(|p| identity::passage_hash(&p));
    let same_passage = passage.as_deref() == Some(e.passage_hash.as_str());
    // Unchanged only when the cited lines still hash to the passage: hashes a client can
    // recompute do not vouch for text the index never held at those lines.
    let code = if row.source_hash == e.source_hash && row.mirror_hash == e.mirror_hash && same_passage {
        VerifiedUnchanged
    } else if same_passage {
        SourceStale
    } else {
        PassageStale
    };
    Ok((code, [Some(row.source_hash), Some(row.mirror_hash), passage]))
}

/// The request a capsule was compiled from, as far as it recorded it; `None` when a filter
/// it names can no longer be read (then ranking is `unavailable`).
fn request_of(c: &Capsule) -> Option<ContextRequest> {
    let r = &c.retrieval.request;
    let depth = c.retrieval.depth_policy;
    let query_modes = r.query_modes.iter().map(|m| QueryMode { kind: m.mode, text: m.text.clone() }).collect();
    // The bounds as the compile resolved them (RFC 3339).
    let since_ms = match &c.scope.since {
        Some(s) => Some(time_fmt::iso_to_ms(s)?),
        None => None,
    };
    let until_ms = match &c.scope.until {
        Some(s) => Some(time_fmt::iso_to_ms(s)?),
        None => None,
    };
    let collections = c.scope.collections.iter().map(|c| CollectionName::parse(c).ok()).collect::<Option<Vec<_>>>()?;
    // What the gateway would accept: a capsule asking for more cannot be re-ranked.
    if r.candidate_limit > 200 || r.limit > 100 || r.query_modes.len() > 16 {
        return None;
    }
    Some(ContextRequest {
        goal: c.goal.clone(),
        query: c.query.clone(),
        collections,
        uri_prefix: c.scope.uri_prefix.clone(),
        query_modes,
        filters: SearchFilters {
            collection: None,
            since_ms,
            until_ms,
            categories: c.scope.categories.clone(),
            author: r.author.clone(),
            tags_all: c.scope.tags_all.clone(),
            tags_any: c.scope.tags_any.clone(),
            // Capsules take no language filter (their scope has none to replay).
            languages: Vec::new(),
        },
        intent: r.intent.clone(),
        exclude: r.exclude.clone(),
        min_score: r.min_score,
        lang: r.lang.clone(),
        graph: Some(r.graph_requested),
        no_rerank: !r.rerank_requested,
        limit: r.limit,
        candidate_limit: Some(r.candidate_limit),
        budget_tokens: c.budget.requested_tokens,
        budget_bytes: c.budget.requested_bytes,
        safety_margin_tokens: c.budget.safety_margin_tokens,
        safety_margin_bytes: c.budget.safety_margin_bytes,
        depth,
    })
}

/// The current retrieval rank of each document URI (`None` when retrieval cannot run).
fn current_ranks(w: &Shared, c: &Capsule) -> Option<Vec<(String, Option<u32>)>> {
    let req = request_of(c)?;
    let hits: Vec<Hit> = retrieve_hits(w, &req).ok()?;
    Some(hits.into_iter().map(|h| (uri::doc_uri(&h.row.collection, &h.row.rel_path), h.rank)).collect())
}

/// A capsule of this index whose identity holds (see [`checked_capsule`]).
pub fn own_capsule(w: &Shared, raw: &str) -> Result<Capsule, ApiError> {
    let c = checked_capsule(raw)?;
    if c.scope.index_name != w.settings.dirs.index_name {
        return Err(ApiError::context(ErrorCode::IndexSnapshotMismatch));
    }
    Ok(c)
}

/// Verifies a capsule against the index as it is now.
pub fn verify(w: &Shared, raw: &str) -> Result<CapsuleReceipt, ApiError> {
    let c = own_capsule(w, raw)?;
    let ranks = current_ranks(w, &c);
    let mut evidence = Vec::with_capacity(c.evidence.len());
    for e in &c.evidence {
        let (code, [source, mirror, passage]) = content_state(w, e)?;
        let current_rank = ranks.as_ref().and_then(|r| r.iter().find(|(u, _)| *u == e.uri).and_then(|(_, rank)| *rank));
        let ranking = match &ranks {
            None => RankingStatus::Unavailable,
            Some(_) if current_rank == e.retrieval_rank => RankingStatus::Unchanged,
            Some(_) => RankingStatus::Reranked,
        };
        evidence.push(EvidenceCheck {
            evidence_id: e.evidence_id.clone(),
            uri: e.uri.clone(),
            content_status: code.status(),
            content_code: code,
            ranking_status: ranking,
            ranking_code: ranking.code(),
            current_source_hash: source,
            current_mirror_hash: mirror,
            current_passage_hash: passage,
            current_retrieval_rank: current_rank,
        });
    }
    let any = |s: ContentStatus| evidence.iter().any(|e| e.content_status == s);
    let content_status = [ContentStatus::Missing, ContentStatus::Stale]
        .into_iter()
        .find(|&s| any(s))
        .unwrap_or(ContentStatus::Unchanged);
    let ranking_status = if ranks.is_none() {
        RankingStatus::Unavailable
    } else if evidence.iter().any(|e| e.ranking_status == RankingStatus::Reranked) {
        RankingStatus::Reranked
    } else {
        RankingStatus::Unchanged
    };
    // A capsule route's failure keeps its own code (`runtime_error`), not the generic one.
    let capsule_runtime_error = |e: crate::stores::catalog::CatalogError| {
        tracing::warn!("context verify: {e}");
        ApiError::context(ErrorCode::RuntimeError)
    };
    let depth = c.retrieval.depth_policy;
    // As a compile would compute them now, whatever the capsule recorded.
    let current = CurrentFingerprints {
        config: fingerprint::config(w),
        retrieval: fingerprint::retrieval(depth, c.retrieval.request.candidate_limit),
        embedding_model: fingerprint::embedding_now(w, depth),
        rerank_model: fingerprint::rerank_now(w, depth, c.retrieval.request.rerank_requested),
        tokenizer: w.models.counting_tokenizer().ok().map(|t| t.fingerprint.clone()),
        index: fingerprint::index(w).map_err(capsule_runtime_error)?,
    };
    let f = &c.fingerprints;
    let reasons: Vec<FingerprintReason> = [
        (f.config != current.config, FingerprintReason::ConfigChanged),
        (f.retrieval != current.retrieval, FingerprintReason::RetrievalChanged),
        (f.embedding_model != current.embedding_model, FingerprintReason::EmbeddingModelChanged),
        (f.rerank_model != current.rerank_model, FingerprintReason::RerankModelChanged),
        (f.tokenizer != current.tokenizer, FingerprintReason::TokenizerChanged),
        (c.retrieval.index_snapshot.after != current.index, FingerprintReason::IndexChanged),
    ]
    .into_iter()
    .filter(|(changed, _)| *changed)
    .map(|(_, r)| r)
    .collect();
    Ok(CapsuleReceipt {
        schema_version: ReceiptVersion::V1_0,
        coordinate_space: CoordinateSpace::CanonicalMirror,
        capsule_id: c.capsule_id.clone(),
        operation_status: OperationStatus::Completed,
        content_status,
        content_code: content_status.receipt_code(),
        ranking_status,
        ranking_code: ranking_status.code(),
        fingerprint_status: if reasons.is_empty() { FingerprintStatus::Unchanged } else { FingerprintStatus::Drifted },
        fingerprint_reasons: reasons,
        index_snapshot: IndexSnapshot {
            after: current.index.clone(),
            before: c.retrieval.index_snapshot.after.clone(),
            stable: c.retrieval.index_snapshot.after == current.index,
        },
        current_fingerprints: current,
        evidence,
    })
}
