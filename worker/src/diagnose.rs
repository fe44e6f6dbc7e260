//! `POST /api/query/diagnose`: where one target document went in the hybrid pipeline.
//! The closed `query-diagnose@1.0` shape: the target (what the catalog knows about it and
//! which of the request's filters shut it out), for each stage (bm25, vector, fusion, graph,
//! rerank) whether the target was present, its rank and score, whether it went on, and why
//! not; the chunk of the target the pipeline uses; and the run's meta.

use crate::catalog::{self, ChunkRow, DocRow};
use crate::hybrid::{self, Trace};
use crate::query::KeywordQuery;
use crate::retrieve::{self, Scope};
use crate::{runtime, uri, Worker};
use protocol::{ApiError, JsonBody, QueryMode, QueryModeKind, QueryRequest, SearchFilters, SearchRequest};
use serde_json::{json, Value};

/// The `reason` of the graph stage, which never runs.
const GRAPH_REASON: &str = "Graph expansion is not part of this pipeline: no linked or similar documents are added to the candidates.";

fn stage(id: &str, list: Option<&Vec<(i64, f32)>>, target: i64, survived: impl Fn(usize) -> bool) -> Value {
    let Some(list) = list else {
        return json!({ "id": id, "status": "skipped", "sourceCount": 0, "present": false, "rank": null, "score": null,
                       "survived": false, "dropReason": "skipped" });
    };
    let found = list.iter().position(|(d, _)| *d == target);
    let (rank, score) = match found.and_then(|i| list.get(i).map(|(_, s)| (i, *s))) {
        Some((i, s)) => (json!(i + 1), json!(s)),
        None => (Value::Null, Value::Null),
    };
    let went_on = found.is_some_and(|i| survived(i + 1));
    let reason = match (found, went_on) {
        (None, _) => json!("not_in_candidate_set"),
        (Some(_), false) => json!("below_cutoff"),
        (Some(_), true) => Value::Null,
    };
    json!({ "id": id, "status": "active", "sourceCount": list.len(), "present": found.is_some(), "rank": rank, "score": score,
            "survived": went_on, "dropReason": reason })
}

fn graph_stage() -> Value {
    json!({ "id": "graph", "status": "skipped", "sourceCount": 0, "present": false, "rank": null, "score": null,
            "survived": false, "dropReason": "skipped", "reason": GRAPH_REASON })
}

/// A short sentence for a stage's `dropReason`.
fn drop_reason_text(id: &str, drop: &str, t: &Trace, no_rerank: bool) -> String {
    match (id, drop) {
        ("graph", _) => GRAPH_REASON.to_string(),
        ("vector", "skipped") => "Vector retrieval did not run: no embedder or vector store is available.".to_string(),
        ("rerank", "skipped") if no_rerank => "Reranking did not run: the request set noRerank.".to_string(),
        ("rerank", "skipped") if t.fusion.is_empty() => "Reranking did not run: there were no fused candidates.".to_string(),
        ("rerank", "skipped") => "Reranking did not run: no cross-encoder (rerank model) is installed.".to_string(),
        ("bm25", "not_in_candidate_set") => {
            "BM25 did not return the target: it matches none of the query's keywords under the request's filters, or ranked past the candidate pool.".to_string()
        }
        ("vector", "not_in_candidate_set") => {
            "Vector retrieval did not return the target: none of its chunks was among the nearest chunks under the request's filters.".to_string()
        }
        ("fusion", "not_in_candidate_set") => {
            "No retrieval list (BM25, vector or a query variant) held the target, so fusion never saw it.".to_string()
        }
        ("fusion", "below_cutoff") if t.rerank.is_some() => {
            format!("The target ranked past the first {} fused candidates, the ones the reranker scores.", t.candidate_limit)
        }
        ("fusion", "below_cutoff") => "The target ranked past the returned results (limit or minScore).".to_string(),
        ("rerank", "not_in_candidate_set") => {
            format!("The target was not among the first {} fused candidates, the ones the reranker scores.", t.candidate_limit)
        }
        ("rerank", "below_cutoff") => {
            "After blending the rerank and fusion scores the target fell outside the returned results (limit or minScore).".to_string()
        }
        (_, "below_cutoff") => "The target was found but did not reach fusion.".to_string(),
        _ => "The target did not go on from this stage.".to_string(),
    }
}

/// The stages in pipeline order: bm25, vector, fusion, graph, rerank. A stage whose
/// `dropReason` is not null carries a `reason` sentence.
fn stages(t: &Trace, target: i64, no_rerank: bool) -> Vec<Value> {
    let returned = |id: i64| t.returned.contains(&id);
    let in_fusion = |id: i64| t.fusion.iter().any(|(d, _)| *d == id);
    let fusion_cut = if t.rerank.is_some() { t.candidate_limit } else { usize::MAX };
    let mut out = vec![
        stage("bm25", Some(&t.bm25), target, |_| in_fusion(target)),
        stage("vector", t.vector.as_ref(), target, |_| in_fusion(target)),
        stage("fusion", Some(&t.fusion), target, |rank| rank <= fusion_cut && (t.rerank.is_some() || returned(target))),
        graph_stage(),
        stage("rerank", t.rerank.as_ref(), target, |_| returned(target)),
    ];
    for s in &mut out {
        let id = s["id"].as_str().unwrap_or_default().to_string();
        let Some(code) = s["dropReason"].as_str().map(str::to_string) else { continue };
        if s.get("reason").is_some() {
            continue;
        }
        let text = drop_reason_text(&id, &code, t, no_rerank);
        if let Some(m) = s.as_object_mut() {
            m.insert("reason".to_string(), json!(text));
        }
    }
    out
}

/// The content type the catalog knows, and where it came from: the file extension, else
/// the stored MIME type; `(None, None)` when neither says.
fn content_type(ext: &str, mime: &str) -> (Option<&'static str>, Option<&'static str>) {
    let by_ext = match ext.trim_start_matches('.').to_ascii_lowercase().as_str() {
        "md" | "markdown" | "mdx" => Some("markdown"),
        "txt" | "text" => Some("text"),
        "pdf" => Some("pdf"),
        "docx" => Some("docx"),
        _ => None,
    };
    if by_ext.is_some() {
        return (by_ext, Some("extension"));
    }
    let by_mime = match mime.trim().to_ascii_lowercase().as_str() {
        "text/markdown" | "text/x-markdown" => Some("markdown"),
        "text/plain" => Some("text"),
        "application/pdf" => Some("pdf"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => Some("docx"),
        _ => None,
    };
    match by_mime {
        Some(t) => (Some(t), Some("mime")),
        None => (None, None),
    }
}

/// The `target` object. Every key is always there: null (or empty) where there is no
/// document to say it.
fn target_json(target_ref: &str, status: &str, found: Option<(&DocRow, usize)>, filter_reasons: &[&str]) -> Value {
    match found {
        None => json!({
            "ref": target_ref, "status": status, "docid": null, "uri": null, "title": null,
            "contentType": null, "contentTypeSource": null, "categories": [], "graphHints": [],
            "contentTypeRulesFingerprint": null, "contentTypeFingerprintMatches": null,
            "mirrorHash": null, "chunkCount": null, "filterReasons": filter_reasons,
        }),
        Some((r, chunk_count)) => {
            let (kind, kind_source) = content_type(&r.source_ext, &r.source_mime);
            json!({
                "ref": target_ref, "status": status, "docid": r.docid, "uri": uri::doc_uri(&r.collection, &r.rel_path),
                "title": r.title, "contentType": kind, "contentTypeSource": kind_source,
                "categories": r.categories, "graphHints": [], "contentTypeRulesFingerprint": null,
                "contentTypeFingerprintMatches": null, "mirrorHash": r.mirror_hash, "chunkCount": chunk_count,
                "filterReasons": filter_reasons,
            })
        }
    }
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
        out.push(("categories", only(SearchFilters { categories: f.categories.clone(), ..Default::default() }, Vec::new())));
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
    if !req.exclude.is_empty() {
        out.push(("exclude", only(SearchFilters::default(), req.exclude.clone())));
    }
    out
}

/// Whether `row` gets past `req`'s filters the way retrieval judges it: the BM25 index's
/// filter set (vector retrieval uses the same one) and the scope's admission (author,
/// exclude).
fn passes(w: &Worker, req: &SearchRequest, row: &DocRow) -> Result<bool, ApiError> {
    if let Some(keys) = w.bm25.filter_keys(&req.filters).map_err(runtime)? {
        if !keys.contains(&row.id) {
            return Ok(false);
        }
    }
    let scope = Scope::of(w, req)?;
    let conn = w.catalog.reader();
    Ok(scope.admit(&conn, row)?.is_some())
}

/// The names of the request's filters that shut `row` out, in request-field order.
fn filter_reasons(w: &Worker, req: &SearchRequest, row: &DocRow) -> Result<Vec<&'static str>, ApiError> {
    let mut out = Vec::new();
    for (name, single) in single_filters(req) {
        if !passes(w, &single, row)? {
            out.push(name);
        }
    }
    Ok(out)
}

/// The chunk a result for the target shows: the one holding the most query terms (intent
/// terms count less), as `retrieve::results` picks it.
fn chosen_chunk<'a>(chunks: &'a [ChunkRow], req: &SearchRequest) -> Option<&'a ChunkRow> {
    let terms = match KeywordQuery::parse(&req.query) {
        Ok(q) => q.highlight_terms(),
        Err(_) => retrieve::query_terms(&req.query),
    };
    let intent = retrieve::intent_terms(req.intent.as_deref());
    retrieve::best_chunk(chunks, &terms, &intent, None)
}

/// The `chunk` object; the catalog keeps no chunk language, so `language` is null.
fn chunk_json(chunk: Option<&ChunkRow>) -> Value {
    match chunk {
        Some(c) => json!({ "seq": c.seq, "startLine": c.start_line, "endLine": c.end_line, "language": null }),
        None => Value::Null,
    }
}

/// The distinct `queryModes` kinds, in the order the request gave them.
fn mode_names(modes: &[QueryMode]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for m in modes {
        let name = match m.kind {
            QueryModeKind::Term => "term",
            QueryModeKind::Intent => "intent",
            QueryModeKind::Hyde => "hyde",
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

pub fn diagnose(w: &Worker, req: &QueryRequest, target_ref: &str) -> Result<JsonBody, ApiError> {
    let row = {
        let conn = w.catalog.reader();
        if target_ref.starts_with('#') {
            catalog::any_doc_by_docid(&conn, target_ref).map_err(runtime)?
        } else {
            match uri::parse_uri(target_ref) {
                Some((c, rel)) => catalog::any_doc_by_path(&conn, &c, &rel).map_err(runtime)?,
                None => return Err(ApiError::validation("target must be a docid (#abcd1234) or a svc:// uri")),
            }
        }
    };
    let outcome = hybrid::run(w, req)?;
    let meta = &outcome.response.meta;
    let mode = if meta.vectors_used == Some(true) { "hybrid" } else { "bm25_only" };
    let (target, stage_list, chunk) = match &row {
        None => (target_json(target_ref, "not_found", None, &[]), Vec::new(), Value::Null),
        Some(r) => {
            let chunks = catalog::chunks_of(&w.catalog.reader(), &r.mirror_hash).map_err(runtime)?;
            let configured = w.config().collections.iter().any(|c| c.name == r.collection);
            let mut reasons: Vec<&'static str> = Vec::new();
            let status = if !r.active || !configured {
                "inactive"
            } else if chunks.is_empty() {
                "no_indexed_content"
            } else {
                reasons = filter_reasons(w, &req.search, r)?;
                if reasons.is_empty() {
                    "diagnosed"
                } else {
                    "filtered_out"
                }
            };
            let target = target_json(target_ref, status, Some((r, chunks.len())), &reasons);
            let chunk = chunk_json(chosen_chunk(&chunks, &req.search));
            (target, stages(&outcome.trace, r.id, req.no_rerank), chunk)
        }
    };
    let mut meta_json = json!({
        "mode": mode,
        "vectorsUsed": meta.vectors_used.unwrap_or(false),
        "reranked": meta.reranked.unwrap_or(false),
        "totalResults": meta.total_results,
    });
    if !req.query_modes.is_empty() {
        if let Some(m) = meta_json.as_object_mut() {
            m.insert("queryModes".to_string(), json!(mode_names(&req.query_modes)));
        }
    }
    JsonBody::of(&json!({
        "schemaVersion": "1.0",
        "query": req.search.query,
        "target": target,
        "stages": stage_list,
        "chunk": chunk,
        "meta": meta_json,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

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
            id: 7,
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
        }
    }

    #[test]
    fn stages_say_where_the_target_dropped() {
        let t = Trace {
            bm25: vec![(1, 9.0), (2, 5.0)],
            vector: None,
            fusion: vec![(1, 1.0), (2, 0.5), (3, 0.1)],
            rerank: Some(vec![(1, 0.2), (2, 1.0)]),
            candidate_limit: 2,
            returned: vec![2],
        };
        let s = stages(&t, 1, false);
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
        let s3 = stages(&t, 3, false);
        assert_eq!(s3[0]["dropReason"], "not_in_candidate_set");
        assert_eq!(s3[2]["dropReason"], "below_cutoff", "rank 3 is past the rerank candidates");
        assert!(s3[2]["reason"].as_str().is_some_and(|r| r.contains('2')), "{}", s3[2]);
        assert_eq!(stages(&t, 2, false)[4]["survived"], true);
        let no_rerank = Trace { bm25: vec![(1, 1.0)], fusion: vec![(1, 1.0)], returned: vec![1], ..Default::default() };
        let s = stages(&no_rerank, 1, true);
        assert_eq!(s[4]["dropReason"], "skipped");
        assert!(s[4]["reason"].as_str().is_some_and(|r| r.contains("noRerank")));
        assert_eq!(s[2]["survived"], true);
    }

    #[test]
    fn not_found_carries_every_target_key() {
        let nf = target_json("#00000000", "not_found", None, &[]);
        assert_eq!(keys(&nf), TARGET_KEYS);
        assert_eq!(nf["status"], "not_found");
        assert!(nf["docid"].is_null() && nf["uri"].is_null() && nf["contentType"].is_null() && nf["chunkCount"].is_null());
        assert_eq!(nf["categories"], json!([]));
        assert_eq!(nf["graphHints"], json!([]));
        assert_eq!(nf["filterReasons"], json!([]));
        let r = row();
        let found = target_json("svc://notes/a/b.md", "filtered_out", Some((&r, 3)), &["categories", "until"]);
        assert_eq!(keys(&found), TARGET_KEYS);
        assert_eq!(found["contentType"], "markdown");
        assert_eq!(found["contentTypeSource"], "extension");
        assert_eq!(found["categories"], json!(["guide"]));
        assert_eq!(found["chunkCount"], 3);
        assert_eq!(found["filterReasons"], json!(["categories", "until"]));
        assert!(found["contentTypeRulesFingerprint"].is_null() && found["contentTypeFingerprintMatches"].is_null());
        assert_eq!(chunk_json(None), Value::Null);
        let c = ChunkRow { seq: 2, text: "x".into(), start_line: 4, end_line: 9 };
        assert_eq!(chunk_json(Some(&c)), json!({ "seq": 2, "startLine": 4, "endLine": 9, "language": null }));
    }

    #[test]
    fn content_type_from_extension_then_mime() {
        assert_eq!(content_type(".md", "text/markdown"), (Some("markdown"), Some("extension")));
        assert_eq!(content_type(".TXT", ""), (Some("text"), Some("extension")));
        assert_eq!(content_type(".pdf", "application/pdf"), (Some("pdf"), Some("extension")));
        assert_eq!(content_type("", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"), (Some("docx"), Some("mime")));
        assert_eq!(content_type(".bin", "application/octet-stream"), (None, None));
    }

    #[test]
    fn every_filter_is_judged_on_its_own() {
        assert!(single_filters(&SearchRequest::default()).is_empty());
        let req = SearchRequest {
            query: "q".into(),
            filters: SearchFilters {
                collection: Some("notes".into()),
                since_ms: Some(1),
                until_ms: Some(2),
                categories: vec!["guide".into()],
                author: Some("ann".into()),
                tags_all: vec!["a".into()],
                tags_any: vec!["b".into(), "c".into()],
            },
            exclude: vec!["x".into()],
            ..Default::default()
        };
        let singles = single_filters(&req);
        let names: Vec<&str> = singles.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["collection", "since", "until", "categories", "author", "tagsAll", "tagsAny", "exclude"]);
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
                !single.exclude.is_empty(),
            ];
            assert_eq!(set.iter().filter(|x| **x).count(), 1, "{name} carries exactly one filter");
        }
        assert_eq!(singles[6].1.filters.tags_any, vec!["b".to_string(), "c".to_string()]);
        assert_eq!(singles[7].1.exclude, vec!["x".to_string()]);
    }

    #[test]
    fn query_modes_are_listed_once_in_order() {
        let m = |kind, text: &str| QueryMode { kind, text: text.into() };
        let modes = vec![m(QueryModeKind::Term, "a"), m(QueryModeKind::Hyde, "b"), m(QueryModeKind::Term, "c")];
        assert_eq!(mode_names(&modes), ["term", "hyde"]);
        assert!(mode_names(&[]).is_empty());
    }
}
