//! Change reads: `/api/changes` paging and cursors, retention, `/api/diff` and
//! `/api/impact` with their bounds, the CLI's `changes`/`diff`/`impact`, and bad input.

use crate::common::*;
use serde_json::{json, Value};
use std::time::Duration;

fn kinds(page: &Value) -> Vec<(String, String)> {
    page["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let snap = if c["current"].is_null() { &c["previous"] } else { &c["current"] };
            (c["kind"].as_str().unwrap().to_string(), snap["relPath"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn changes_page_with_cursors_and_report_structure() {
    let s = Server::start();
    let n = s.path("n");
    write_notes(&n, &[("a.md", "# A\nfirst\n"), ("b.md", "# B\nlinks to [[A]]\n"), ("c.md", "# C\n")]);
    s.add_collection(&n, "n");
    let all = s.get("/api/changes").json();
    assert_eq!(all["schemaVersion"], "1.0");
    let mut got = kinds(&all);
    got.sort();
    assert_eq!(
        got,
        vec![("create".into(), "a.md".into()), ("create".into(), "b.md".into()), ("create".into(), "c.md".into())]
    );
    assert_eq!(all["page"]["truncated"], false);
    assert_eq!(all["page"]["nextCursor"], Value::Null);
    assert_eq!(all["page"]["retentionTruncated"], false);
    assert_eq!(all["page"]["cursorExpired"], false);
    // No body is ever part of a change.
    assert!(!all.to_string().contains("first"), "{all}");

    // Paging: two pages of limit 2 return the same three changes in order.
    let p1 = s.get("/api/changes?limit=2").json();
    assert_eq!(p1["changes"].as_array().unwrap().len(), 2);
    assert_eq!(p1["page"]["truncated"], true);
    let next = p1["page"]["nextCursor"].as_str().unwrap().to_string();
    assert!(next.starts_with("svc-change-v1."), "{next}");
    let p2 = s.get(&format!("/api/changes?limit=2&since={}", urlencode(&next))).json();
    let mut paged = kinds(&p1);
    paged.extend(kinds(&p2));
    assert_eq!(paged, kinds(&all));
    assert_eq!(p2["page"]["nextCursor"], Value::Null);

    // Polling from the latest cursor sees only what comes after it: an edit with structure.
    let latest = all["page"]["latestCursor"].as_str().unwrap().to_string();
    assert_eq!(s.get(&format!("/api/changes?since={}", urlencode(&latest))).json()["changes"], json!([]));
    std::fs::write(n.join("a.md"), "---\ndate: 2024-05-01\n---\n# A\n## New part\nsee [[C]]\n").unwrap();
    s.sync(json!({}));
    let polled = s.get(&format!("/api/changes?since={}", urlencode(&latest))).json();
    assert_eq!(kinds(&polled), vec![("update".to_string(), "a.md".to_string())]);
    let ch = &polled["changes"][0];
    assert_eq!(ch["structureDelta"]["headings"]["added"], json!(["New part"]));
    assert_eq!(ch["structureDelta"]["links"]["added"], json!(["wiki:c"]));
    assert_eq!(ch["structureDelta"]["dates"]["added"], json!(["date"]));
    assert_ne!(ch["previous"]["sourceHash"], ch["current"]["sourceHash"]);
    assert_eq!(ch["current"]["uri"], "svc://n/a.md");

    // A time bound: everything observed from a minute ago, nothing from tomorrow.
    assert_eq!(s.get("/api/changes?since=2000-01-01").json()["changes"].as_array().unwrap().len(), 4);
    assert_eq!(s.get("/api/changes?since=2999-01-01").json()["changes"], json!([]));
    // Collection filter.
    assert_eq!(s.get("/api/changes?collection=N").json()["changes"].as_array().unwrap().len(), 4);

    // Diff: the newest change of a.md by URI; an explicit change id by docid.
    let d = s.get("/api/diff?ref=svc%3A%2F%2Fn%2Fa.md").json();
    assert_eq!(d["schemaVersion"], "1.0");
    assert_eq!(d["status"], "available");
    assert_eq!(d["change"]["kind"], "update");
    assert_eq!(d["content"], json!({ "status": "not_retained", "reason": "journal_metadata_only" }));
    assert_eq!(d["history"]["status"], "available");
    assert_eq!(d["document"]["active"], true);
    let first_id = all["changes"].as_array().unwrap().iter().find(|c| c["current"]["relPath"] == "b.md").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b_docid = s.get("/api/doc?uri=svc://n/b.md").json()["docid"].as_str().unwrap().to_string();
    let db = s.get(&format!("/api/diff?ref={}&change={}", urlencode(&b_docid), urlencode(&first_id))).json();
    assert_eq!(db["change"]["kind"], "create");
    // Another document's change id is not this document's.
    let a_docid = s.get("/api/doc?uri=svc://n/a.md").json()["docid"].as_str().unwrap().to_string();
    s.get(&format!("/api/diff?ref={}&change={}", urlencode(&a_docid), urlencode(&first_id)))
        .assert_error(404, "NOT_FOUND");

    // Deleting a note: an inactivate change, and diff still speaks of the inactive note.
    std::fs::remove_file(n.join("c.md")).unwrap();
    s.sync(json!({}));
    let d = s.get("/api/diff?ref=svc%3A%2F%2Fn%2Fc.md").json();
    assert_eq!(d["change"]["kind"], "inactivate");
    assert_eq!(d["document"]["active"], false);
    assert_eq!(d["change"]["current"]["active"], false);
}

#[test]
fn changes_and_diff_refuse_bad_input() {
    let s = Server::start();
    let n = s.path("n");
    write_notes(&n, &[("a.md", "# A\n")]);
    s.add_collection(&n, "n");
    for q in [
        "limit=0",
        "limit=x",
        "limit=",
        "since=yesterdayish",
        "since=svc-change-v1.%21%21",
        "since=svc-change-v1.eyJzZXF1ZW5jZSI6OTk5OTl9",
    ] {
        s.get(&format!("/api/changes?{q}")).assert_error(400, "VALIDATION");
    }
    s.get("/api/changes?collection=nope").assert_error(404, "NOT_FOUND");
    // Above the maximum is clamped, not refused.
    assert_eq!(s.get("/api/changes?limit=5000").status, 200);
    for q in ["", "ref=", "ref=zz", "ref=svc%3A%2F%2F", "ref=%23abcdef12&change=nope", "ref=/etc/passwd"] {
        s.get(&format!("/api/diff?{q}")).assert_error(400, "VALIDATION");
        if !q.contains("change") {
            s.get(&format!("/api/impact?{q}")).assert_error(400, "VALIDATION");
        }
    }
    s.get("/api/diff?ref=%23abcdef12").assert_error(404, "NOT_FOUND");
    s.get("/api/impact?ref=svc%3A%2F%2Fn%2Fnope.md").assert_error(404, "NOT_FOUND");
    for q in ["maxDepth=0", "maxNodes=-1", "maxEdges=x", "frontierLimit=", "visitedLimit=0"] {
        s.get(&format!("/api/impact?ref=svc%3A%2F%2Fn%2Fa.md&{q}")).assert_error(400, "VALIDATION");
    }
    s.post("/api/changes", json!({})).assert_error(405, "METHOD_NOT_ALLOWED");
}

#[test]
fn journal_retention_drops_only_past_its_bound_and_says_so() {
    let mut s = Server::start();
    let n = s.path("n");
    write_notes(&n, &[("a.md", "# A\n0\n")]);
    s.add_collection(&n, "n");
    // Keep only the newest 3 changes from now on.
    s.stop();
    let cfg = s.path("config/index.yml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{text}journal:\n  maxRows: 3\n  maxAgeDays: 30\n")).unwrap();
    s.spawn();
    let first = s.get("/api/changes").json();
    let first_id = first["changes"][0]["id"].as_str().unwrap().to_string();
    for i in 1..=5 {
        std::fs::write(n.join("a.md"), format!("# A\n{i}\n")).unwrap();
        s.sync(json!({}));
    }
    let page = s.get("/api/changes").json();
    // 6 changes were journaled; the newest 3 are kept, none newer than the bound dropped.
    assert_eq!(page["changes"].as_array().unwrap().len(), 3, "{page}");
    assert_eq!(page["page"]["retentionTruncated"], true);
    let kept: Vec<&str> = page["changes"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kept, vec!["update", "update", "update"]);
    // The newest change is the last edit.
    let newest = s.get("/api/diff?ref=svc%3A%2F%2Fn%2Fa.md").json();
    assert_eq!(newest["change"]["id"], page["changes"][2]["id"]);
    // The first change's cursor has expired; its diff says so.
    let expired = s.get(&format!("/api/changes?since={}", urlencode(&first_id))).json();
    assert_eq!(expired["page"]["cursorExpired"], true);
    assert_eq!(expired["changes"].as_array().unwrap().len(), 3);
    assert!(!expired["warnings"].as_array().unwrap().is_empty());
    let d = s.get(&format!("/api/diff?ref=svc%3A%2F%2Fn%2Fa.md&change={}", urlencode(&first_id))).json();
    assert_eq!(d["status"], "expired");
    assert_eq!(d["change"], Value::Null);
    assert_eq!(d["history"]["status"], "partial");
    // The earliest cursor reads exactly what is retained.
    let earliest = page["page"]["earliestCursor"].as_str().unwrap();
    let again = s.get(&format!("/api/changes?since={}", urlencode(earliest))).json();
    assert_eq!(again["changes"], page["changes"]);
    assert_eq!(again["page"]["cursorExpired"], false);
}

#[test]
fn impact_walks_backlinks_within_bounds() {
    let s = Server::start();
    let n = s.path("n");
    // root <- a <- b <- c, and d -> root directly; e links to nothing.
    write_notes(
        &n,
        &[
            ("root.md", "# Root\n"),
            ("a.md", "# A\n[[Root]]\n"),
            ("b.md", "# B\n[a](a.md)\n"),
            ("c.md", "# C\n[[B]]\n"),
            ("d.md", "# D\n[[Root]] and [[Root]] again\n"),
            ("e.md", "# E\n"),
        ],
    );
    s.add_collection(&n, "n");
    let r = s.get("/api/impact?ref=svc%3A%2F%2Fn%2Froot.md").json();
    assert_eq!(r["schemaVersion"], "1.0");
    assert_eq!(r["root"]["uri"], "svc://n/root.md");
    let got: Vec<(String, u64)> = r["impacted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["document"]["relPath"].as_str().unwrap().to_string(), d["depth"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, vec![("a.md".into(), 1), ("d.md".into(), 1), ("b.md".into(), 2), ("c.md".into(), 3)]);
    let c = &r["impacted"][3]["evidencePath"];
    let hops: Vec<(&str, &str, &str)> = c
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["source"]["uri"].as_str().unwrap(),
                e["target"]["uri"].as_str().unwrap(),
                e["edgeType"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hops,
        vec![
            ("svc://n/c.md", "svc://n/b.md", "wiki"),
            ("svc://n/b.md", "svc://n/a.md", "markdown"),
            ("svc://n/a.md", "svc://n/root.md", "wiki")
        ]
    );
    assert_eq!(r["meta"]["truncated"], false);
    assert_eq!(r["meta"]["returnedEdges"], 1 + 1 + 2 + 3);
    assert_eq!(r["meta"]["maxDepth"], 3);
    // Each bound bites and says so.
    let shallow = s.get("/api/impact?ref=svc%3A%2F%2Fn%2Froot.md&maxDepth=1").json();
    assert_eq!(shallow["impacted"].as_array().unwrap().len(), 2);
    assert_eq!(shallow["meta"]["truncated"], true);
    let few = s.get("/api/impact?ref=svc%3A%2F%2Fn%2Froot.md&maxNodes=1").json();
    assert_eq!(few["impacted"].as_array().unwrap().len(), 1);
    assert_eq!(few["meta"]["truncated"], true);
    let edges = s.get("/api/impact?ref=svc%3A%2F%2Fn%2Froot.md&maxEdges=4").json();
    assert!(edges["meta"]["returnedEdges"].as_u64().unwrap() <= 4);
    assert_eq!(edges["meta"]["truncated"], true);
    let visited = s.get("/api/impact?ref=svc%3A%2F%2Fn%2Froot.md&visitedLimit=2").json();
    assert_eq!(visited["impacted"].as_array().unwrap().len(), 1);
    assert_eq!(visited["meta"]["truncated"], true);
    // Clamped above the maximum.
    assert_eq!(s.get("/api/impact?ref=svc%3A%2F%2Fn%2Froot.md&maxDepth=99").json()["meta"]["maxDepth"], 6);
    // A note nobody links to.
    let e = s.get("/api/impact?ref=svc%3A%2F%2Fn%2Fe.md").json();
    assert_eq!(e["impacted"], json!([]));
    assert_eq!(e["meta"]["truncated"], false);
}

#[test]
fn cli_reads_changes_diff_and_impact() {
    let mut s = Server::start();
    let n = s.path("n");
    write_notes(&n, &[("a.md", "# A\n"), ("b.md", "# B\n[[A]]\n")]);
    s.add_collection(&n, "n");
    let run = |s: &Server, args: &[&str]| {
        let out = s.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for over_server in [true, false] {
        if !over_server {
            s.stop();
        }
        let page: Value = serde_json::from_str(&run(&s, &["changes", "--json"])).unwrap();
        assert_eq!(page["changes"].as_array().unwrap().len(), 2);
        let text = run(&s, &["changes"]);
        assert!(text.contains("create") && text.contains("svc://n/b.md"), "{text}");
        let d: Value = serde_json::from_str(&run(&s, &["diff", "svc://n/a.md", "--json"])).unwrap();
        assert_eq!(d["change"]["kind"], "create");
        let i: Value = serde_json::from_str(&run(&s, &["impact", "svc://n/a.md", "--json"])).unwrap();
        assert_eq!(i["impacted"][0]["document"]["uri"], "svc://n/b.md");
        assert!(run(&s, &["impact", "svc://n/a.md"]).contains("svc://n/b.md"));
    }
}

/// A subscriber that reconnects with the last event id it got (as browsers do) first receives
/// the changes it missed, from the journal, in order; an id that is no change cursor replays
/// nothing.
#[test]
fn a_reconnecting_subscriber_gets_the_changes_it_missed() {
    let s = Server::start();
    write_notes(&s.path("notes"), &[("a.md", "# A\nfirst\n")]);
    s.add_collection(&s.path("notes"), "notes");
    let port = s.port;
    let reader = subscribe_to_changes(port, 1, Duration::from_secs(20));
    let create = |rel: &str, body: &str| {
        let r =
            s.post("/api/docs", json!({ "collection": "notes", "relPath": rel, "content": body, "overwrite": true }));
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    };
    create("b.md", "# B\n");
    let seen = reader.join().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (last_id, first) = &seen[0];
    assert_eq!(first["uri"], "svc://notes/b.md");
    assert!(last_id.starts_with("svc-change-v1."), "{last_id}");
    assert_eq!(first["changeId"], last_id.as_str());

    // Missed while disconnected.
    create("c.md", "# C\n");
    create("a.md", "# A\nsecond\n");
    create("d.md", "# D\n");
    let replayed = read_changed_events(port, Some(last_id), 3, Duration::from_secs(10));
    let uris: Vec<&str> = replayed.iter().map(|(_, e)| e["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, vec!["svc://notes/c.md", "svc://notes/a.md", "svc://notes/d.md"], "{replayed:?}");
    let ids: std::collections::HashSet<&str> = replayed.iter().map(|(id, _)| id.as_str()).collect();
    assert!(ids.len() == 3 && ids.iter().all(|id| id.starts_with("svc-change-v1.")), "{replayed:?}");
    assert!(replayed.iter().all(|(_, e)| e["origin"] == "save" || e["origin"] == "create"), "{replayed:?}");
    // The ids are change cursors: /api/changes reads from them.
    let after = s.get(&format!("/api/changes?since={}", replayed[0].0)).json();
    assert_eq!(after["changes"].as_array().unwrap().len(), 2, "{after}");
    // A write is announced after its keyword commit, so an announcement of the writes above can
    // still be on its way: a later write's, which comes after them, is waited for first.
    let reader = subscribe_to_changes(port, 5, Duration::from_secs(3));
    create("e.md", "# E\n");
    let live = reader.join().unwrap();
    assert!(live.iter().any(|(_, e)| e["uri"] == "svc://notes/e.md"), "{live:?}");
    // Nothing is replayed from an id that is no cursor.
    assert!(read_changed_events(port, Some("not-a-cursor"), 1, Duration::from_secs(1)).is_empty());
}
