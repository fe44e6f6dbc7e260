//! `POST /api/context/verify`: a read-only receipt for a capsule a client kept. The capsule's
//! identity is checked first (its `capsuleId`, every `passageHash` and `evidenceId`), and a
//! capsule of another index is refused, before any evidence is read. Then each evidence is
//! compared with the index as it is now, the retrieval is run again for its ranks, and the
//! fingerprints are compared.

use super::compile::{self, Hit};
use super::{fingerprint, identity};
use crate::stores::catalog;
use crate::{time_fmt, uri, Worker};
use protocol::api::*;
use protocol::{ApiError, ContextRequest, DepthPolicy, ErrorCode, QueryMode, QueryModeKind, SearchFilters};
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

/// The content state of one evidence now: (status, code, source hash, mirror hash, passage hash).
fn content_state(w: &Worker, e: &Evidence) -> Result<(&'static str, &'static str, [Option<String>; 3]), ApiError> {
    let load = |_| ApiError::context(ErrorCode::ContentLoadFailed);
    let conn = w.catalog.reader();
    let Some((coll, rel)) = uri::parse_uri(&e.uri) else {
        return Ok(("missing", "source_missing", [None, None, None]));
    };
    let Some(row) = catalog::doc_by_path(&conn, &coll, &rel).map_err(load)? else {
        return Ok(("missing", "source_missing", [None, None, None]));
    };
    let Some(text) = catalog::content_text(&conn, &row.mirror_hash).map_err(load)? else {
        return Ok(("missing", "mirror_missing", [Some(row.source_hash), None, None]));
    };
    let passage = identity::passage(&text, e.start_line, e.end_line).map(|p| identity::passage_hash(&p));
    let same_passage = passage.as_deref() == Some(e.passage_hash.as_str());
    // Unchanged only when the cited lines still hash to the passage: hashes a client can
    // recompute do not vouch for text the index never held at those lines.
    let state = if row.source_hash == e.source_hash && row.mirror_hash == e.mirror_hash && same_passage {
        ("unchanged", "verified_unchanged")
    } else if same_passage {
        // The file changed, but the cited lines still read the same.
        ("stale", "source_stale")
    } else {
        ("stale", "passage_stale")
    };
    Ok((state.0, state.1, [Some(row.source_hash), Some(row.mirror_hash), passage]))
}

/// The request a capsule was compiled from, as far as it recorded it; `None` when a filter
/// it names can no longer be read (then ranking is `unavailable`).
fn request_of(c: &Capsule) -> Option<ContextRequest> {
    let r = &c.retrieval.request;
    let depth = DepthPolicy::parse(&c.retrieval.depth_policy)?;
    let query_modes = r
        .query_modes
        .iter()
        .map(|m| QueryModeKind::parse(&m.mode).map(|kind| QueryMode { kind, text: m.text.clone() }))
        .collect::<Option<Vec<_>>>()?;
    // The bounds as the compile resolved them (RFC 3339).
    let since_ms = match &c.scope.since {
        Some(s) => Some(time_fmt::iso_to_ms(s)?),
        None => None,
    };
    let until_ms = match &c.scope.until {
        Some(s) => Some(time_fmt::iso_to_ms(s)?),
        None => None,
    };
    // What the gateway would accept: a capsule asking for more cannot be re-ranked.
    if r.candidate_limit > 200 || r.limit > 100 || r.query_modes.len() > 16 {
        return None;
    }
    Some(ContextRequest {
        goal: c.goal.clone(),
        query: c.query.clone(),
        collections: c.scope.collections.clone(),
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
fn current_ranks(w: &Worker, c: &Capsule) -> Option<Vec<(String, Option<u32>)>> {
    let req = request_of(c)?;
    let hits: Vec<Hit> = compile::retrieve_hits(w, &req).ok()?;
    Some(hits.into_iter().map(|h| (uri::doc_uri(&h.row.collection, &h.row.rel_path), h.rank)).collect())
}

/// A capsule of this index whose identity holds (see [`checked_capsule`]).
pub fn own_capsule(w: &Worker, raw: &str) -> Result<Capsule, ApiError> {
    let c = checked_capsule(raw)?;
    if c.scope.index_name != w.dirs.index_name {
        return Err(ApiError::context(ErrorCode::IndexSnapshotMismatch));
    }
    Ok(c)
}

/// Verifies a capsule against the index as it is now.
pub fn verify(w: &Worker, raw: &str) -> Result<CapsuleReceipt, ApiError> {
    let c = own_capsule(w, raw)?;
    let ranks = current_ranks(w, &c);
    let mut evidence = Vec::with_capacity(c.evidence.len());
    for e in &c.evidence {
        let (status, code, [source, mirror, passage]) = content_state(w, e)?;
        let current_rank = ranks.as_ref().and_then(|r| r.iter().find(|(u, _)| *u == e.uri).and_then(|(_, rank)| *rank));
        let (ranking_status, ranking_code) = match &ranks {
            None => ("unavailable", "ranking_unavailable"),
            Some(_) if current_rank == e.retrieval_rank => ("unchanged", "ranking_unchanged"),
            Some(_) => ("reranked", "ranking_changed"),
        };
        evidence.push(EvidenceCheck {
            evidence_id: e.evidence_id.clone(),
            uri: e.uri.clone(),
            content_status: status.into(),
            content_code: code.into(),
            ranking_status: ranking_status.into(),
            ranking_code: ranking_code.into(),
            current_source_hash: source,
            current_mirror_hash: mirror,
            current_passage_hash: passage,
            current_retrieval_rank: current_rank,
        });
    }
    let any = |s: &str| evidence.iter().any(|e| e.content_status == s);
    let (content_status, content_code) = if any("missing") {
        ("missing", "content_missing")
    } else if any("stale") {
        ("stale", "content_stale")
    } else {
        ("unchanged", "verified_unchanged")
    };
    let ranking = |s: &str| evidence.iter().any(|e| e.ranking_status == s);
    let (ranking_status, ranking_code) = if ranks.is_none() {
        ("unavailable", "ranking_unavailable")
    } else if ranking("reranked") {
        ("reranked", "ranking_changed")
    } else {
        ("unchanged", "ranking_unchanged")
    };
    let runtime = |e: crate::WorkerError| {
        tracing::warn!("context verify: {e}");
        ApiError::context(ErrorCode::RuntimeError)
    };
    let depth = DepthPolicy::parse(&c.retrieval.depth_policy).unwrap_or_default();
    // As a compile would compute them now, whatever the capsule recorded.
    let current = CurrentFingerprints {
        config: fingerprint::config(w),
        retrieval: fingerprint::retrieval(depth, c.retrieval.request.candidate_limit),
        embedding_model: fingerprint::embedding_now(w, depth),
        rerank_model: fingerprint::rerank_now(w, depth, c.retrieval.request.rerank_requested),
        tokenizer: w.models.counting_tokenizer().ok().map(|t| t.fingerprint.clone()),
        index: fingerprint::index(w).map_err(runtime)?,
    };
    let f = &c.fingerprints;
    let reasons: Vec<String> = [
        (f.config != current.config, "config_changed"),
        (f.retrieval != current.retrieval, "retrieval_changed"),
        (f.embedding_model != current.embedding_model, "embedding_model_changed"),
        (f.rerank_model != current.rerank_model, "rerank_model_changed"),
        (f.tokenizer != current.tokenizer, "tokenizer_changed"),
        (c.retrieval.index_snapshot.after != current.index, "index_changed"),
    ]
    .into_iter()
    .filter(|(changed, _)| *changed)
    .map(|(_, r)| r.to_string())
    .collect();
    Ok(CapsuleReceipt {
        schema_version: RECEIPT_SCHEMA_VERSION.into(),
        coordinate_space: COORDINATE_SPACE.into(),
        capsule_id: c.capsule_id.clone(),
        operation_status: "completed".into(),
        content_status: content_status.into(),
        content_code: content_code.into(),
        ranking_status: ranking_status.into(),
        ranking_code: ranking_code.into(),
        fingerprint_status: if reasons.is_empty() { "unchanged" } else { "drifted" }.into(),
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
