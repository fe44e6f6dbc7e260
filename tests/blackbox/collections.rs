//! Collections, sync and jobs.

use crate::common::*;
use serde_json::json;

#[test]
fn add_list_remove_and_job_shapes() {
    let s = Server::start();
    let notes = s.path("My Notes");
    write_notes(
        &notes,
        &[("a.md", "# A\nalpha\n"), ("sub/b.md", "# B\nbeta\n"), ("c.png", "not a format svc reads\n")],
    );
    let r = s.post("/api/collections", json!({ "path": notes }));
    assert_eq!(r.status, 202);
    let body = r.json();
    assert_eq!(body["collection"]["name"], "my-notes");
    assert_eq!(body["collection"]["path"], notes.canonicalize().unwrap().display().to_string());
    let job = s.wait_job(body["jobId"].as_str().unwrap());
    assert_eq!(job["type"], "add");
    assert_eq!(job["status"], "completed");
    assert!(job["createdAt"].as_i64().unwrap() > 1_600_000_000_000);
    let res = &job["result"];
    for k in [
        "totalDurationMs",
        "totalFilesProcessed",
        "totalFilesAdded",
        "totalFilesUpdated",
        "totalFilesErrored",
        "totalFilesSkipped",
    ] {
        assert!(res[k].is_u64(), "{k} missing in {res}");
    }
    assert_eq!(res["totalFilesAdded"], 2);
    let c = &res["collections"][0];
    assert_eq!(c["collection"], "my-notes");
    for k in
        ["filesProcessed", "filesAdded", "filesUpdated", "filesUnchanged", "filesErrored", "filesSkipped", "durationMs"]
    {
        assert!(c[k].is_u64(), "{k} missing in {c}");
    }

    let list = s.get("/api/collections").json();
    assert_eq!(list[0]["name"], "my-notes");
    assert!(list[0]["path"].is_string());
    let cfg = std::fs::read_to_string(s.path("config/index.yml")).unwrap();
    assert!(cfg.contains("my-notes"), "{cfg}");

    s.post("/api/collections", json!({ "path": notes })).assert_error(409, "DUPLICATE");

    let del = s.delete("/api/collections/MY-NOTES");
    assert_eq!(del.status, 200);
    assert_eq!(del.json()["success"], true);
    assert_eq!(del.json()["collection"], "my-notes");
    assert!(s.search(json!({ "query": "alpha" }))["results"].as_array().unwrap().is_empty());
    s.delete("/api/collections/my-notes").assert_error(404, "NOT_FOUND");
    assert!(notes.join("a.md").exists(), "removing a collection never touches files");
}

#[test]
fn add_validates_its_body() {
    let s = Server::start();
    s.post("/api/collections", json!({})).assert_error(400, "VALIDATION");
    s.post("/api/collections", json!({ "path": 42 })).assert_error(400, "VALIDATION");
    s.post("/api/collections", json!({ "path": "relative/dir" })).assert_error(400, "VALIDATION");
    s.post("/api/collections", json!({ "path": "/definitely/not/here" })).assert_error(400, "PATH_NOT_FOUND");
    let file = s.path("file.md");
    std::fs::write(&file, "x").unwrap();
    s.post("/api/collections", json!({ "path": file })).assert_error(400, "VALIDATION");
    let dir = s.path("n");
    std::fs::create_dir_all(&dir).unwrap();
    s.post("/api/collections", json!({ "path": dir, "name": "Bad Name!" })).assert_error(400, "VALIDATION");
    s.post("/api/collections", json!({ "path": dir, "pattern": "[" })).assert_error(400, "VALIDATION");
    s.post("/api/collections", json!({ "path": dir, "gitPull": "yes" })).assert_error(400, "VALIDATION");
    s.post("/api/collections", json!({ "path": "/tmp/a\u{0}b" })).assert_error(400, "VALIDATION");
    assert_eq!(s.get("/api/collections").json(), json!([]));
}

#[test]
fn sync_one_or_all_and_unknown_jobs() {
    let s = Server::start();
    let a = s.path("a");
    let b = s.path("b");
    write_notes(&a, &[("x.md", "# X\nxylophone\n")]);
    write_notes(&b, &[("y.md", "# Y\nyodel\n")]);
    s.add_collection(&a, "a");
    s.add_collection(&b, "b");
    let all = s.sync(json!({}));
    assert_eq!(all["type"], "sync");
    assert_eq!(all["result"]["collections"].as_array().unwrap().len(), 2);
    let one = s.sync(json!({ "collection": "B" }));
    assert_eq!(one["result"]["collections"].as_array().unwrap().len(), 1);
    assert_eq!(one["result"]["collections"][0]["filesUnchanged"], 1);
    // an empty body is allowed
    let r = raw_request(s.port, "POST", "/api/sync", &[], b"");
    assert_eq!(r.status, 202);
    s.wait_job(r.json()["jobId"].as_str().unwrap());
    s.post("/api/sync", json!({ "collection": "nope" })).assert_error(404, "NOT_FOUND");
    s.post("/api/sync", json!({ "collection": 5 })).assert_error(400, "VALIDATION");
    s.get("/api/jobs/00000000-0000-4000-8000-000000000000").assert_error(404, "NOT_FOUND");
    s.get("/api/jobs/not-a-job").assert_error(404, "NOT_FOUND");
}

#[test]
fn a_second_job_while_one_runs_is_a_conflict() {
    let s = Server::start();
    let big = s.path("big");
    let body = "word ".repeat(400);
    for i in 0..4000 {
        let p = big.join(format!("d{}/n{i}.md", i % 40));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("# Note {i}\n{body}\n")).unwrap();
    }
    let r = s.post("/api/collections", json!({ "path": big }));
    assert_eq!(r.status, 202);
    let id = r.json()["jobId"].as_str().unwrap().to_string();
    let second = s.post("/api/sync", json!({}));
    second.assert_error(409, "CONFLICT");
    assert_eq!(second.json()["error"]["details"]["activeJobId"], id.as_str());
    // The running job is the active one (unless it already finished: then none is).
    let active = s.get("/api/jobs/active").json();
    assert!(active["activeJob"]["id"] == id.as_str() || active["activeJob"].is_null(), "{active}");
    if !active["activeJob"].is_null() {
        assert_eq!(active["activeJob"]["status"], "running");
        assert_eq!(active["activeJob"]["type"], "add");
    }
    let job = s.wait_job(&id);
    assert_eq!(job["result"]["totalFilesAdded"], 4000);
    assert_eq!(s.get("/api/jobs/active").json(), json!({ "activeJob": null }));
}

#[test]
fn git_pull_failure_fails_the_job_not_the_worker() {
    let s = Server::start();
    let repo = s.path("repo");
    write_notes(&repo, &[("a.md", "# A\napple\n")]);
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").arg("-C").arg(&repo).args(args).output().map(|o| o.status.success());
        ok.unwrap_or(false)
    };
    // git is part of the suite's set-up (.ci/run installs it): a missing git fails here.
    assert!(git(&["init", "-q"]), "git init failed: is git installed?");
    git(&["remote", "add", "origin", "/nonexistent/remote.git"]);
    s.add_collection(&repo, "repo");
    let job = s.sync(json!({ "gitPull": true }));
    assert_eq!(job["status"], "failed");
    assert!(job["error"].as_str().unwrap().contains("git pull"), "{job}");
    assert_eq!(s.search(json!({ "query": "apple" }))["results"].as_array().unwrap().len(), 1);
    assert_eq!(s.sync(json!({}))["status"], "completed");
}
