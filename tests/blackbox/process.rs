//! The process tree: restarts, crash recovery, shutdown, single instance, detach.

use crate::common::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn corpus(root: &std::path::Path, n: usize) {
    for i in 0..n {
        let p = root.join(format!("d{}/note-{i}.md", i % 20));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("# Note {i}\nshared words and token{i} {}\n", "filler ".repeat(200))).unwrap();
    }
}

#[test]
fn killed_worker_restarts_and_search_returns_the_same_results() {
    let s = Server::start();
    let n = s.path("n");
    corpus(&n, 50);
    s.add_collection(&n, "n");
    let before = s.search(json!({ "query": "shared token7" }));
    let worker = s.child_pid("worker").expect("worker pid");
    nix_kill(worker, libc::SIGKILL);
    let start = Instant::now();
    let mut saw_health_fail = false;
    loop {
        saw_health_fail |= s.get("/api/health").status != 200;
        let r = s.post("/api/search", json!({ "query": "shared token7" }));
        if r.status == 200 {
            assert_eq!(r.json()["results"], before["results"]);
            break;
        }
        r.assert_error(503, "UNAVAILABLE");
        assert!(start.elapsed() < Duration::from_secs(5), "search did not come back within 5 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!saw_health_fail, "/api/health must answer 200 throughout");
    assert_ne!(s.child_pid("worker"), Some(worker));
    assert!(s.get("/api/status").json()["healthy"].as_bool().unwrap());
}

#[test]
fn worker_killed_during_sync_converges_without_duplicates() {
    let s = Server::start();
    let n = s.path("n");
    corpus(&n, 3000);
    let r = s.post("/api/collections", json!({ "path": n, "name": "n" }));
    assert_eq!(r.status, 202);
    let job_id = r.json()["jobId"].as_str().unwrap().to_string();
    // Kill once the sync has committed some notes but not all: the kill lands mid-sync.
    let docs_now = |s: &Server| {
        let r = s.get("/api/docs?limit=1");
        if r.status == 200 {
            r.json()["total"].as_u64().unwrap_or(0)
        } else {
            0
        }
    };
    let worker = s.child_pid("worker").unwrap();
    s.wait_until(Duration::from_secs(60), |s| docs_now(s) > 0);
    nix_kill(worker, libc::SIGKILL);
    s.wait_until(Duration::from_secs(10), |s| s.get(&format!("/api/jobs/{job_id}")).status == 200);
    let job = s.wait_job(&job_id);
    assert_eq!(job["status"], "failed", "the interrupted sync is reported as failed: {job}");
    let partial = docs_now(&s);
    assert!(partial > 0 && partial < 3000, "the kill landed mid-sync: {partial} notes indexed");
    let done = s.sync(json!({}));
    assert_eq!(done["status"], "completed", "{done}");
    let st = s.get("/api/status").json();
    assert_eq!(st["totalDocuments"], 3000, "{st} after {done}");
    assert_eq!(s.get("/api/docs?limit=1").json()["total"], 3000);
    let hits = s.search(json!({ "query": "token1234" }));
    assert_eq!(uris(&hits), vec!["svc://n/d14/note-1234.md"]);
    let all = s.search(json!({ "query": "shared", "limit": 50 }));
    let mut u = uris(&all);
    u.dedup();
    assert_eq!(u.len(), 50);
}

/// The executable a process runs, by its `/proc` link.
fn exe_name(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

#[test]
fn supervisor_and_gateway_run_the_lean_binary_and_the_worker_runs_svc() {
    if !crate::prepared::lean_server("process::supervisor_and_gateway_run_the_lean_binary_and_the_worker_runs_svc") {
        return;
    }
    let mut s = Server::start();
    assert_eq!(exe_name(s.pid()), "svc-server", "svc serve hands over to svc-server");
    assert_eq!(exe_name(s.child_pid("gateway").expect("gateway pid")), "svc-server");
    assert_eq!(exe_name(s.child_pid("worker").expect("worker pid")), "svc");
    assert_eq!(s.get("/api/health").status, 200);
    s.stop();
}

#[test]
fn sigterm_stops_every_process_within_ten_seconds() {
    let mut s = Server::start();
    let sup = s.pid();
    let gw = s.child_pid("gateway").unwrap();
    let wk = s.child_pid("worker").unwrap();
    let mut child = s.child.take().unwrap();
    nix_kill(sup, libc::SIGTERM);
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "supervisor still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    while alive(gw) || alive(wk) {
        assert!(start.elapsed() < Duration::from_secs(10), "a child outlived the supervisor");
        std::thread::sleep(Duration::from_millis(20));
    }
    s.stop();
}

#[test]
fn one_server_per_data_dir_and_port_in_use_fail_clearly() {
    let s = Server::start();
    let out = s.cmd().args(["serve", "--port", &free_port().to_string()]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already running"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let other = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args(["serve", "--port", &s.port.to_string()])
        .env("SVC_CONFIG_DIR", other.path().join("c"))
        .env("SVC_DATA_DIR", other.path().join("d"))
        .env("SVC_CACHE_DIR", other.path().join("k"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use"), "{err}");
}

#[test]
fn detach_status_and_stop() {
    let s = Server::start();
    let mut s2 = s; // reuse the dirs: stop the foreground server first
    s2.stop();
    let port = free_port();
    let out = s2.cmd().args(["serve", "--port", &port.to_string(), "--detach"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("http://127.0.0.1:{port}")) && text.contains("pid"), "{text}");
    assert_eq!(raw_request(port, "GET", "/api/health", &[], b"").status, 200);
    let st = s2.cmd().args(["status", "--json"]).output().unwrap();
    assert!(st.status.success());
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(v["running"], true);
    let stop = s2.cmd().arg("stop").output().unwrap();
    assert!(stop.status.success(), "{}", String::from_utf8_lossy(&stop.stderr));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    let st = s2.cmd().args(["status"]).output().unwrap();
    assert_eq!(st.status.code(), Some(3));
    assert!(s2.path("data/logs/svc.log").exists());
}

#[test]
fn cli_works_in_process_without_a_server() {
    let s = Server::start();
    let mut s = s;
    s.stop();
    let n = s.path("n");
    write_notes(&n, &[("a.md", "# Alpha\nthe aardvark note\n")]);
    let add = s.cmd().args(["collection", "add"]).arg(&n).args(["--name", "n"]).output().unwrap();
    assert!(add.status.success(), "{}", String::from_utf8_lossy(&add.stderr));
    let out = s.cmd().args(["search", "aardvark", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(uris(&v), vec!["svc://n/a.md"]);
    let mut batch = s
        .cmd()
        .args(["search", "--batch", "--limit", "100"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    batch
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"{\"id\":\"q1\",\"query\":\"aardvark\"}\n{\"id\":\"q2\",\"query\":\"nothing-matches\"}\n\
              {\"id\":\"q3\",\"query\":\"\\\"unclosed\"}\n",
        )
        .unwrap();
    let out = batch.wait_with_output().unwrap();
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["id"], "q1");
    assert_eq!(lines[0]["results"][0]["uri"], "svc://n/a.md");
    assert!(lines[0].get("error").is_none(), "{}", lines[0]);
    assert_eq!(lines[1]["results"], serde_json::json!([]));
    assert!(lines[1].get("error").is_none(), "no match is no error: {}", lines[1]);
    // A query the grammar refuses (an odd quote) says so on its own line.
    assert_eq!(lines[2]["error"]["code"], "VALIDATION", "{}", lines[2]);
    // the index the CLI built is the one the server then serves
    s.spawn();
    assert_eq!(uris(&s.search(serde_json::json!({ "query": "aardvark" }))), vec!["svc://n/a.md"]);
    let got = s.cmd().args(["get", "svc://n/a.md"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&got.stdout), "# Alpha\nthe aardvark note\n");
}

#[test]
fn killed_gateway_is_restarted_on_the_same_port() {
    let s = Server::start();
    let gw = s.child_pid("gateway").unwrap();
    nix_kill(gw, libc::SIGKILL);
    // the supervisor owns the listening socket: requests queue until the new gateway serves them
    s.wait_until(Duration::from_secs(5), |s| {
        s.get("/api/health").status == 200 && s.child_pid("gateway").is_some_and(|p| p != gw)
    });
    assert_eq!(s.get("/api/collections").status, 200);
}

#[test]
fn hung_worker_is_detected_and_replaced() {
    let s = Server::start();
    let n = s.path("n");
    write_notes(&n, &[("a.md", "# A\nthe okapi note\n")]);
    s.add_collection(&n, "n");
    let worker = s.child_pid("worker").unwrap();
    nix_kill(worker, libc::SIGSTOP);
    let start = Instant::now();
    s.wait_until(Duration::from_secs(20), |s| s.child_pid("worker").is_some_and(|p| p != worker));
    assert!(start.elapsed() >= Duration::from_secs(4), "a hung worker gets three heartbeats");
    s.wait_until(Duration::from_secs(5), |s| s.post("/api/search", json!({ "query": "okapi" })).status == 200);
    assert_eq!(uris(&s.search(json!({ "query": "okapi" }))), vec!["svc://n/a.md"]);
}

#[test]
fn a_worker_that_cannot_start_is_shown_failed_with_its_reason_and_recovers_once_fixed() {
    let mut s = Server::start();
    s.stop();
    let config = s.path("config/index.yml");
    std::fs::create_dir_all(s.path("config")).unwrap();
    std::fs::write(&config, "collections: [unclosed\n").unwrap();
    s.spawn_gateway_only();
    // Five starts that never answer (backoff 0.1 + 0.2 + 0.4 + 0.8 s), then the failed state.
    s.wait_until(Duration::from_secs(30), |s| s.get("/api/status").json()["worker"]["state"] == "failed");
    let st = s.get("/api/status").json();
    assert_eq!(st["healthy"], false, "{st}");
    assert!(st["worker"]["attempts"].as_u64().unwrap() >= 5, "{st}");
    assert!(st["worker"]["reason"].as_str().unwrap().contains("index.yml"), "{st}");
    // A call that needs the worker says why at once (no 5 s wait for a worker that will not come).
    let t = std::time::Instant::now();
    let r = s.get("/api/collections");
    r.assert_error(503, "UNAVAILABLE");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains("failed to start") && body.contains("index.yml"), "{body}");
    let out = s.cmd().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("worker: failed to start") && text.contains("index.yml"), "{text}");
    // Fixed: the next try starts it, and the failed state is gone.
    std::fs::write(&config, "collections: []\n").unwrap();
    s.wait_until(Duration::from_secs(30), |s| s.get("/api/collections").status == 200);
    let st = s.get("/api/status").json();
    assert_eq!(st["worker"]["state"], "running", "{st}");
    assert!(!s.path("data/default/worker-failure.json").exists());
}
