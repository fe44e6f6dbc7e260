//! `POST /api/query/diagnose`: where one target document went in the hybrid pipeline.
//! The closed `query-diagnose@1.0` shape: for each stage (bm25, vector, fusion, rerank)
//! whether the target was present, its rank and score, whether it went on, and why not.

use crate::hybrid::{self, Trace};
use crate::{catalog, runtime, uri, Worker};
use protocol::{ApiError, JsonBody, QueryRequest};
use serde_json::{json, Value};

fn stage(id: &str, list: Option<&Vec<(i64, f32)>>, target: i64, survived: impl Fn(usize) -> bool) -> Value {
    let Some(list) = list else {
        return json!({ "id": id, "status": "skipped", "sourceCount": 0, "present": false, "rank": null, "score": null,
                       "survived": false, "dropReason": "skipped" });
    };
    let found = list.iter().position(|(d, _)| *d == target);
    let (rank, score) = match found {
        Some(i) => (json!(i + 1), json!(list[i].1)),
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

fn stages(t: &Trace, target: i64) -> Vec<Value> {
    let returned = |id: i64| t.returned.contains(&id);
    let in_fusion = |id: i64| t.fusion.iter().any(|(d, _)| *d == id);
    let mut out = vec![
        stage("bm25", Some(&t.bm25), target, |_| in_fusion(target)),
        stage("vector", t.vector.as_ref(), target, |_| in_fusion(target)),
    ];
    let fusion_cut = if t.rerank.is_some() { t.candidate_limit } else { usize::MAX };
    out.push(stage("fusion", Some(&t.fusion), target, |rank| rank <= fusion_cut && (t.rerank.is_some() || returned(target))));
    out.push(stage("rerank", t.rerank.as_ref(), target, |_| returned(target)));
    out
}

pub fn diagnose(w: &Worker, req: &QueryRequest, target_ref: &str) -> Result<JsonBody, ApiError> {
    let row = {
        let conn = w.catalog.reader();
        if target_ref.starts_with('#') {
            catalog::doc_by_docid(&conn, target_ref).map_err(runtime)?
        } else {
            match uri::parse_uri(target_ref) {
                Some((c, rel)) => catalog::doc_by_path(&conn, &c, &rel).map_err(runtime)?,
                None => return Err(ApiError::validation("target must be a docid (#abcd1234) or a svc:// uri")),
            }
        }
    };
    let outcome = hybrid::run(w, req)?;
    let meta = &outcome.response.meta;
    let mode = if meta.vectors_used == Some(true) { "hybrid" } else { "bm25_only" };
    let (target, stage_list) = match &row {
        None => (json!({ "ref": target_ref, "status": "not_found" }), Vec::new()),
        Some(r) => {
            let chunk_count = catalog::chunks_of(&w.catalog.reader(), &r.mirror_hash).map_err(runtime)?.len();
            let status = if !r.active {
                "inactive"
            } else if chunk_count == 0 {
                "no_indexed_content"
            } else if req.search.filters.collection.as_deref().is_some_and(|c| c != r.collection) {
                "filtered_out"
            } else {
                "diagnosed"
            };
            let target = json!({
                "ref": target_ref, "status": status, "docid": r.docid, "uri": uri::doc_uri(&r.collection, &r.rel_path),
                "title": r.title, "collection": r.collection, "mirrorHash": r.mirror_hash, "chunkCount": chunk_count,
                "filterReasons": if status == "filtered_out" { json!(["collection"]) } else { json!([]) },
            });
            (target, stages(&outcome.trace, r.id))
        }
    };
    JsonBody::of(&json!({
        "schemaVersion": "1.0",
        "query": req.search.query,
        "target": target,
        "stages": stage_list,
        "meta": { "mode": mode, "vectorsUsed": meta.vectors_used, "reranked": meta.reranked, "expanded": meta.expanded,
                  "totalResults": meta.total_results },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = stages(&t, 1);
        assert_eq!(s[0]["present"], true);
        assert_eq!(s[0]["rank"], 1);
        assert_eq!(s[1]["status"], "skipped");
        assert_eq!(s[2]["survived"], true);
        assert_eq!(s[3]["dropReason"], "below_cutoff");
        let s3 = stages(&t, 3);
        assert_eq!(s3[0]["dropReason"], "not_in_candidate_set");
        assert_eq!(s3[2]["dropReason"], "below_cutoff", "rank 3 is past the rerank candidates");
        assert_eq!(stages(&t, 2)[3]["survived"], true);
    }
}
