//! `POST /api/query/diagnose`: where one target document went in the hybrid pipeline.
//! The closed `query-diagnose@1.0` shape: the target (what the catalog knows about it and
//! which of the request's filters shut it out), for each stage (bm25, vector, fusion, graph,
//! rerank) whether the target was present, its rank and score, whether it went on, and why
//! not; the chunk of the target the pipeline uses; and the run's meta.

use crate::config::content_types::{self, ContentTypes};
use crate::retrieval::common::{self, Scope};
use crate::retrieval::hybrid::{self, Trace};
use crate::shared::Shared;
use crate::stores::bm25::query::KeywordQuery;
use crate::stores::catalog::{self, Chunk, DocRow};
use crate::stores::DocKey;
use crate::uri;
use protocol::api::{
    DiagnoseChunk, DiagnoseMeta, DiagnoseMode, DiagnoseResponse, DiagnoseStage, DiagnoseTarget, DropReason, StageId,
    StageStatus, TargetStatus,
};
use protocol::{ApiError, DocRef, QueryMode, QueryModeKind, QueryRequest, SearchFilters, SearchRequest};

/// The `reason` of the graph stage, which never runs.
const GRAPH_REASON: &str =
    "Graph expansion is not part of this pipeline: no linked or similar documents are added to the candidates.";

fn skipped_stage(id: StageId) -> DiagnoseStage {
    DiagnoseStage {
        id,
        status: StageStatus::Skipped,
        source_count: 0,
        present: false,
        rank: None,
        score: None,
        survived: false,
        drop_reason: Some(DropReason::Skipped),
        reason: None,
    }
}

fn stage(
    id: StageId,
    list: Option<&Vec<(DocKey, f32)>>,
    target: DocKey,
    survived: impl Fn(usize) -> bool,
) -> DiagnoseStage {
    let Some(list) = list else {
        return skipped_stage(id);
    };
    let found = list.iter().position(|(d, _)| *d == target);
    let (rank, score) = match found.and_then(|i| list.get(i).map(|(_, s)| (i, *s))) {
        Some((i, s)) => (Some(i as u64 + 1), Some(f64::from(s))),
        None => (None, None),
    };
    let went_on = found.is_some_and(|i| survived(i + 1));
    let drop_reason = match (found, went_on) {
        (None, _) => Some(DropReason::NotInCandidateSet),
        (Some(_), false) => Some(DropReason::BelowCutoff),
        (Some(_), true) => None,
    };
    DiagnoseStage {
        id,
        status: StageStatus::Active,
        source_count: list.len() as u64,
        present: found.is_some(),
        rank,
        score,
        survived: went_on,
        drop_reason,
        reason: None,
    }
}

fn graph_stage() -> DiagnoseStage {
    DiagnoseStage { reason: Some(GRAPH_REASON.to_string()), ..skipped_stage(StageId::Graph) }
}

/// A short sentence for a stage's `dropReason`.
fn drop_reason_text(id: StageId, drop: DropReason, t: &Trace, no_rerank: bool) -> String {
    use DropReason::{BelowCutoff, NotInCandidateSet, Skipped};
    match (id, drop) {
        (StageId::Graph, _) => GRAPH_REASON.to_string(),
        (StageId::Vector, Skipped) => "Vector retrieval did not run: no embedder or vector store is available.".to_string(),
        (StageId::Rerank, Skipped) if no_rerank => "Reranking did not run: the request set noRerank.".to_string(),
        (StageId::Rerank, Skipped) if t.fusion.is_empty() => "Reranking did not run: there were no fused candidates.".to_string(),
        (StageId::Rerank, Skipped) => "Reranking did not run: no cross-encoder (rerank model) is installed.".to_string(),
        (StageId::Bm25, NotInCandidateSet) => {
            "BM25 did not return the target: it matches none of the query's keywords under the request's filters, or ranked past the candidate pool.".to_string()
        }
        (StageId::Vector, NotInCandidateSet) => {
            "Vector retrieval did not return the target: none of its chunks was among the nearest chunks under the request's filters.".to_string()
        }
        (StageId::Fusion, NotInCandidateSet) => {
            "No retrieval list (BM25, vector or a query variant) held the target, so fusion never saw it.".to_string()
        }
        (StageId::Fusion, BelowCutoff) if t.rerank.is_some() => {
            format!("The target ranked past the first {} fused candidates, the ones the reranker scores.", t.candidate_limit)
        }
        (StageId::Fusion, BelowCutoff) => "The target ranked past the returned results (limit or minScore).".to_string(),
        (StageId::Rerank, NotInCandidateSet) => {
            format!("The target was not among the first {} fused candidates, the ones the reranker scores.", t.candidate_limit)
        }
        (StageId::Rerank, BelowCutoff) => {
            "After blending the rerank and fusion scores the target fell outside the returned results (limit or minScore).".to_string()
        }
        (_, BelowCutoff) => "The target was found but did not reach fusion.".to_string(),
        _ => "The target did not go on from this stage.".to_string(),
    }
}

/// The stages in pipeline order: bm25, vector, fusion, graph, rerank. A stage whose
/// `dropReason` is not null carries a `reason` sentence.
fn stages(t: &Trace, target: DocKey, no_rerank: bool) -> Vec<DiagnoseStage> {
    let returned = |id: DocKey| t.returned.contains(&id);
    let in_fusion = |id: DocKey| t.fusion.iter().any(|(d, _)| *d == id);
    let fusion_cut = if t.rerank.is_some() { t.candidate_limit } else { usize::MAX };
    let mut out = vec![
        stage(StageId::Bm25, Some(&t.bm25), target, |_| in_fusion(target)),
        stage(StageId::Vector, t.vector.as_ref(), target, |_| in_fusion(target)),
        stage(StageId::Fusion, Some(&t.fusion), target, |rank| {
            rank <= fusion_cut && (t.rerank.is_some() || returned(target))
        }),
        graph_stage(),
        stage(StageId::Rerank, t.rerank.as_ref(), target, |_| returned(target)),
    ];
    for s in &mut out {
        if let (Some(code), None) = (s.drop_reason, &s.reason) {
            s.reason = Some(drop_reason_text(s.id, code, t, no_rerank));
        }
    }
    out
}

/// The `target` object. Every key is always there: null (or empty) where there is no
/// document to say it.
fn target_of(
    target_ref: &str,
    status: TargetStatus,
    found: Option<(&DocRow, usize)>,
    filter_reasons: &[&str],
    rules: &ContentTypes,
) -> DiagnoseTarget {
    let mut t = DiagnoseTarget {
        target_ref: target_ref.to_string(),
        status,
        docid: None,
        uri: None,
        title: None,
        content_type: None,
        content_type_source: None,
        categories: Vec::new(),
        graph_hints: Vec::new(),
        content_type_rules_fingerprint: None,
        content_type_fingerprint_matches: None,
        content_type_boost: None,
        mirror_hash: None,
        chunk_count: None,
        filter_reasons: filter_reasons.iter().map(|r| r.to_string()).collect(),
    };
    if let Some((r, chunk_count)) = found {
        let (kind, kind_source) = rules.resolve(r.fm_type.as_deref(), &r.rel_path);
        let boost = rules.additive(&kind);
        t.docid = Some(r.docid.clone());
        t.uri = Some(uri::doc_uri(&r.collection, &r.rel_path));
        t.title = Some(r.title.clone());
        t.categories = content_types::with_type(&r.categories, kind.clone());
        t.content_type = Some(kind);
        t.content_type_source = Some(kind_source);
        // The BM25 index is re-fed whenever the rules change (at worker start), so the
        // indexed type is always the one these rules give.
        t.content_type_rules_fingerprint = Some(rules.fingerprint().to_string());
        t.content_type_fingerprint_matches = Some(true);
        t.content_type_boost = (boost != 0.0).then_some(boost);
        t.mirror_hash = Some(r.mirror_hash.clone());
        t.chunk_count = Some(chunk_count as u64);
    }
    t
}

/// The request's filters one at a time, named as in `filterReasons`, each as a request
/// that carries only that filter (so that retrieval's own admission rules judge it).
fn single_filters(req: &SearchRequest) -> Vec<(&'static str, SearchRequest)> {
    let f = &req.filters;
    let only = |filters: SearchFilters, exclude: Vec<String>| SearchRequest {
        query: req.query.clone(),
        limit: req.limit,
        filters,
        exclude,
        ..Default::default()
    };
    let mut out = Vec::new();
    if let Some(c) = &f.collection {
        out.push(("collection", only(SearchFilters { collection: Some(c.clone()), ..Default::default() }, Vec::new())));
    }
    if let Some(v) = f.since_ms {
        out.push(("since", only(SearchFilters { since_ms: Some(v), ..Default::default() }, Vec::new())));
    }
    if let Some(v) = f.until_ms {
        out.push(("until", only(SearchFilters { until_ms: Some(v), ..Default::default() }, Vec::new())));
    }
    if !f.categories.is_empty() {
        out.push((
            "categories",
            only(SearchFilters { categories: f.categories.clone(), ..Default::default() }, Vec::new()),
        ));
    }
    if let Some(a) = &f.author {
        out.push(("author", only(SearchFilters { author: Some(a.clone()), ..Default::default() }, Vec::new())));
    }
    if !f.tags_all.is_empty() {
        out.push(("tagsAll", only(SearchFilters { tags_all: f.tags_all.clone(), ..Default::default() }, Vec::new())));
    }
    if !f.tags_any.is_empty() {
        out.push(("tagsAny", only(SearchFilters { tags_any: f.tags_any.clone(), ..Default::default() }, Vec::new())));
    }
    if !f.languages.is_empty() {
        out.push((
            "language",
            only(SearchFilters { languages: f.languages.clone(), ..Default::default() }, Vec::new()),
        ));
    }
    if !req.exclude.is_empty() {
        out.push(("exclude", only(SearchFilters::default(), req.exclude.clone())));
    }
    out
}

/// Whether `row` gets past `req`'s filters the way retrieval judges it: the BM25 index's
/// filter set (vector retrieval uses the same one) and the scope's admission (author,
/// exclude).
fn passes(w: &Shared, req: &SearchRequest, row: &DocRow) -> Result<bool, ApiError> {
    if let Some(keys) = w.stores.bm25.filter_keys(&req.filters)? {
        if !keys.contains(&row.id) {
            return Ok(false);
        }
    }
    let scope = Scope::of(w, req)?;
    let conn = w.stores.catalog.reader();
    Ok(scope.admit(&conn, row)?.is_some())
}

/// The names of the request's filters that shut `row` out, in request-field order.
fn filter_reasons(w: &Shared, req: &SearchRequest, row: &DocRow) -> Result<Vec<&'static str>, ApiError> {
    let mut out = Vec::new();
    for (name, single) in single_filters(req) {
        if !passes(w, &single, row)? {
            out.push(name);
        }
    }
    Ok(out)
}

/// The chunk a result for the target shows: the one holding the most query terms (intent
/// terms count less), as `common::results` picks it.
fn chosen_chunk<'a>(chunks: &'a [Chunk], req: &SearchRequest) -> Option<&'a Chunk> {
    let terms = match KeywordQuery::parse(&req.query) {
        Ok(q) => q.highlight_terms(),
        Err(_) => crate::question::words::words(&req.query),
    };
    let intent = common::intent_terms(req.intent.as_deref());
    common::best_chunk(chunks, &terms, &intent, None)
}

/// The `chunk` object; the catalog keeps no chunk language, so `language` is null.
fn chunk_of(chunk: Option<&Chunk>) -> Option<DiagnoseChunk> {
    chunk.map(|c| DiagnoseChunk { seq: c.seq, start_line: c.start_line, end_line: c.end_line, language: None })
}

/// The distinct `queryModes` kinds, in the order the request gave them.
fn mode_names(modes: &[QueryMode]) -> Vec<QueryModeKind> {
    let mut out: Vec<QueryModeKind> = Vec::new();
    for m in modes {
        if !out.contains(&m.kind) {
            out.push(m.kind);
        }
    }
    out
}

pub fn diagnose(w: &Shared, req: &QueryRequest, target: &DocRef) -> Result<DiagnoseResponse, ApiError> {
    let target_ref = target.as_str();
    let row = {
        let conn = w.stores.catalog.reader();
        match target {
            DocRef::Docid(id) => catalog::any_doc_by_docid(&conn, id)?,
            DocRef::Uri(u) => match uri::parse_uri(u) {
                Some((c, rel)) => catalog::any_doc_by_path(&conn, &c, &rel)?,
                None => return Err(ApiError::validation("target must be a docid (#abcd1234) or a svc:// uri")),
            },
        }
    };
    let outcome = hybrid::run(w, req)?;
    let meta = &outcome.response.meta;
    let mode = if meta.vectors_used == Some(true) { DiagnoseMode::Hybrid } else { DiagnoseMode::Bm25Only };
    let (target, stage_list, chunk) = match &row {
        None => (target_of(target_ref, TargetStatus::NotFound, None, &[], &w.settings.content_types), Vec::new(), None),
        Some(r) => {
            let chunks = catalog::chunks_of(&w.stores.catalog.reader(), &r.mirror_hash)?;
            let configured = w.settings.config().collections.iter().any(|c| c.name == r.collection);
            let mut reasons: Vec<&'static str> = Vec::new();
            let status = if !r.active || !configured {
                TargetStatus::Inactive
            } else if chunks.is_empty() {
                TargetStatus::NoIndexedContent
            } else {
                reasons = filter_reasons(w, &req.search, r)?;
                if reasons.is_empty() {
                    TargetStatus::Diagnosed
                } else {
                    TargetStatus::FilteredOut
                }
            };
            let target = target_of(target_ref, status, Some((r, chunks.len())), &reasons, &w.settings.content_types);
            let chunk = chunk_of(chosen_chunk(&chunks, &req.search));
            (target, stages(&outcome.trace, r.id, req.no_rerank), chunk)
        }
    };
    Ok(DiagnoseResponse {
        schema_version: "1.0".to_string(),
        query: req.search.query.clone(),
        target,
        stages: stage_list,
        chunk,
        meta: DiagnoseMeta {
            mode,
            vectors_used: meta.vectors_used.unwrap_or(false),
            reranked: meta.reranked.unwrap_or(false),
            total_results: meta.total_results,
            query_modes: (!req.query_modes.is_empty()).then(|| mode_names(&req.query_modes)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::collections::BTreeMap;

    /// What goes on the wire.
    fn wire<T: serde::Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap()
    }

    fn wire_stages(t: &Trace, target: i64, no_rerank: bool) -> Vec<Value> {
        stages(t, DocKey(target), no_rerank).iter().map(wire).collect()
    }

    /// Ranked documents by their keys.
    fn ranked(pairs: &[(i64, f32)]) -> Vec<(DocKey, f32)> {
        pairs.iter().map(|&(k, s)| (DocKey(k), s)).collect()
    }

    const TARGET_KEYS: [&str; 14] = [
        "categories",
        "chunkCount",
        "contentType",
        "contentTypeFingerprintMatches",
        "contentTypeRulesFingerprint",
        "contentTypeSource",
        "docid",
        "filterReasons",
        "graphHints",
        "mirrorHash",
        "ref",
        "status",
        "title",
        "uri",
    ];

    fn keys(v: &Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        k.sort();
        k
    }

    fn row() -> DocRow {
        DocRow {
            id: DocKey(7),
            collection: "notes".into(),
            rel_path: "a/b.md".into(),
            docid: "#abcd1234".into(),
            source_hash: "s".into(),
            mirror_hash: "m".into(),
            source_mime: "text/markdown".into(),
            source_ext: ".md".into(),
            source_size: 10,
            source_mtime_ns: 0,
            title: "B".into(),
            author: None,
            categories: vec!["guide".into()],
            fm_date: None,
            date_fields: BTreeMap::new(),
            body_start_line: 1,
            active: true,
            gen: 1,
            bm25_gen: 1,
            fm_type: None,
            part_of: None,
        }
    }

    #[test]
    fn stages_say_where_the_target_dropped() {
        let t = Trace {
            bm25: ranked(&[(1, 9.0), (2, 5.0)]),
            vector: None,
            fusion: ranked(&[(1, 1.0), (2, 0.5), (3, 0.1)]),
            rerank: Some(ranked(&[(1, 0.2), (2, 1.0)])),
            candidate_limit: 2,
            returned: vec![DocKey(2)],
            ..Default::default()
        };
        let s = wire_stages(&t, 1, false);
        let ids: Vec<&str> = s.iter().map(|x| x["id"].as_str().unwrap_or_default()).collect();
        assert_eq!(ids, ["bm25", "vector", "fusion", "graph", "rerank"]);
        assert_eq!(s[0]["present"], true);
        assert_eq!(s[0]["rank"], 1);
        assert!(s[0].get("reason").is_none(), "no reason when the target went on");
        assert_eq!(s[1]["status"], "skipped");
        assert!(s[1]["reason"].is_string());
        assert_eq!(s[2]["survived"], true);
        assert_eq!(s[3]["status"], "skipped");
        assert_eq!(s[3]["dropReason"], "skipped");
        assert_eq!(s[3]["reason"], GRAPH_REASON);
        assert_eq!(s[4]["dropReason"], "below_cutoff");
        assert!(s[4]["reason"].is_string());
        let s3 = wire_stages(&t, 3, false);
        assert_eq!(s3[0]["dropReason"], "not_in_candidate_set");
        assert_eq!(s3[2]["dropReason"], "below_cutoff", "rank 3 is past the rerank candidates");
        assert!(s3[2]["reason"].as_str().is_some_and(|r| r.contains('2')), "{}", s3[2]);
        assert_eq!(wire_stages(&t, 2, false)[4]["survived"], true);
        let no_rerank = Trace {
            bm25: ranked(&[(1, 1.0)]),
            fusion: ranked(&[(1, 1.0)]),
            returned: vec![DocKey(1)],
            ..Default::default()
        };
        let s = wire_stages(&no_rerank, 1, true);
        assert_eq!(s[4]["dropReason"], "skipped");
        assert!(s[4]["reason"].as_str().is_some_and(|r| r.contains("noRerank")));
        assert_eq!(s[2]["survived"], true);
    }

    #[test]
    fn not_found_carries_every_target_key() {
        let nf = wire(&target_of("#00000000", TargetStatus::NotFound, None, &[], &ContentTypes::default()));
        assert_eq!(keys(&nf), TARGET_KEYS);
        assert_eq!(nf["status"], "not_found");
        assert!(
            nf["docid"].is_null() && nf["uri"].is_null() && nf["contentType"].is_null() && nf["chunkCount"].is_null()
        );
        assert_eq!(nf["categories"], json!([]));
        assert_eq!(nf["graphHints"], json!([]));
        assert_eq!(nf["filterReasons"], json!([]));
        let r = row();
        let found = wire(&target_of(
            "svc://notes/a/b.md",
            TargetStatus::FilteredOut,
            Some((&r, 3)),
            &["categories", "until"],
            &ContentTypes::default(),
        ));
        assert_eq!(found["status"], "filtered_out");
        assert_eq!(keys(&found), TARGET_KEYS);
        assert_eq!(found["contentType"], "prose");
        assert_eq!(found["contentTypeSource"], "fallback");
        assert_eq!(found["categories"], json!(["guide", "prose"]));
        assert_eq!(found["chunkCount"], 3);
        assert_eq!(found["filterReasons"], json!(["categories", "until"]));
        assert_eq!(
            (found["contentTypeRulesFingerprint"].as_str(), found["contentTypeFingerprintMatches"].as_bool()),
            (Some("none"), Some(true))
        );
        assert!(found.get("contentTypeBoost").is_none(), "no rule boosts it");
        assert_eq!(wire(&chunk_of(None)), Value::Null);
        let c = Chunk { seq: 2, text: "x".into(), start_line: 4, end_line: 9, symbol: None };
        assert_eq!(wire(&chunk_of(Some(&c))), json!({ "seq": 2, "startLine": 4, "endLine": 9, "language": null }));
    }

    #[test]
    fn every_filter_is_judged_on_its_own() {
        assert!(single_filters(&SearchRequest::default()).is_empty());
        let req = SearchRequest {
            query: "q".into(),
            filters: SearchFilters {
                collection: Some(protocol::CollectionName::parse("notes").unwrap()),
                since_ms: Some(1),
                until_ms: Some(2),
                categories: vec!["guide".into()],
                author: Some("ann".into()),
                tags_all: protocol::Tag::parse_all(&["a"]).unwrap(),
                tags_any: protocol::Tag::parse_all(&["b", "c"]).unwrap(),
                languages: vec![protocol::source_kind::CodeLanguage::Rust],
            },
            exclude: vec!["x".into()],
            ..Default::default()
        };
        let singles = single_filters(&req);
        let names: Vec<&str> = singles.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["collection", "since", "until", "categories", "author", "tagsAll", "tagsAny", "language", "exclude"]
        );
        for (name, single) in &singles {
            let f = &single.filters;
            let set = [
                f.collection.is_some(),
                f.since_ms.is_some(),
                f.until_ms.is_some(),
                !f.categories.is_empty(),
                f.author.is_some(),
                !f.tags_all.is_empty(),
                !f.tags_any.is_empty(),
                !f.languages.is_empty(),
                !single.exclude.is_empty(),
            ];
            assert_eq!(set.iter().filter(|x| **x).count(), 1, "{name} carries exactly one filter");
        }
        assert_eq!(singles[6].1.filters.tags_any, ["b", "c"]);
        assert_eq!(singles[8].1.exclude, vec!["x".to_string()]);
    }

    #[test]
    fn query_modes_are_listed_once_in_order() {
        let m = |kind, text: &str| QueryMode { kind, text: text.into() };
        let modes = vec![m(QueryModeKind::Term, "a"), m(QueryModeKind::Hyde, "b"), m(QueryModeKind::Term, "c")];
        assert_eq!(mode_names(&modes), [QueryModeKind::Term, QueryModeKind::Hyde]);
        assert_eq!(wire(&mode_names(&modes)), json!(["term", "hyde"]));
        assert!(mode_names(&[]).is_empty());
    }
}
