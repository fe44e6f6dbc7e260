//! Writing notes: create, update, deactivate, folders, presets, assets and events.

use crate::common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

fn setup() -> (Server, std::path::PathBuf) {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(
        &n,
        &[("existing.md", "---\ntitle: Existing\ntags: [old]\nauthor: Ann\n---\n# Existing\nThe narwhal text.\n")],
    );
    s.add_collection(&n, "notes");
    (s, n.canonicalize().unwrap())
}

fn docid_of(s: &Server, rel: &str) -> String {
    s.get(&format!("/api/doc?uri=svc://notes/{rel}")).json()["docid"].as_str().unwrap().replace('#', "%23")
}

#[test]
fn create_raw_and_rich_notes_searchable_at_once() {
    let (s, root) = setup();
    let r = s.post(
        "/api/docs",
        json!({ "collection": "notes", "relPath": "inbox/first.md", "content": "# First\nA capybara appears.\n" }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let b = r.json();
    assert_eq!(b["uri"], format!("file://{}", root.join("inbox/first.md").display()));
    assert_eq!(b["path"], root.join("inbox/first.md").display().to_string());
    assert!(b["note"].is_string());
    let job = s.wait_job(b["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed");
    assert_eq!(uris(&s.search(json!({ "query": "capybara" }))), vec!["svc://notes/inbox/first.md"]);
    assert_eq!(std::fs::read_to_string(root.join("inbox/first.md")).unwrap(), "# First\nA capybara appears.\n");

    s.post("/api/docs", json!({ "collection": "notes", "relPath": "inbox/first.md", "content": "x" }))
        .assert_error(409, "CONFLICT");
    let over = s.post("/api/docs", json!({ "collection": "notes", "relPath": "inbox/first.md", "content": "# First\nnow a dugong\n", "overwrite": true }));
    assert_eq!(over.status, 202);
    assert_eq!(uris(&s.search(json!({ "query": "dugong" }))), vec!["svc://notes/inbox/first.md"]);

    let rich = s.post("/api/docs", json!({ "collection": "Notes", "title": "Meeting: Plans", "folderPath": "meetings", "tags": ["Team", "q3"], "presetId": "meeting" }));
    assert_eq!(rich.status, 202, "{}", String::from_utf8_lossy(&rich.body));
    let rel = rich.json()["relPath"].as_str().unwrap().to_string();
    assert_eq!(rel, "meetings/Meeting- Plans.md");
    let text = std::fs::read_to_string(root.join(&rel)).unwrap();
    assert!(text.starts_with("---\ntype: meeting\ntags: [team, q3]\n---\n# Meeting: Plans\n\n## Attendees"), "{text}");
    let again = s.post("/api/docs", json!({ "collection": "notes", "title": "Meeting: Plans", "folderPath": "meetings", "collisionPolicy": "create_with_suffix" }));
    assert_eq!(again.json()["relPath"], "meetings/Meeting- Plans-2.md");
    assert_eq!(again.json()["createdWithSuffix"], true);
    // Each later collision suffixes the name asked for, not the last try's.
    let third = s.post("/api/docs", json!({ "collection": "notes", "title": "Meeting: Plans", "folderPath": "meetings", "collisionPolicy": "create_with_suffix" }));
    assert_eq!(third.json()["relPath"], "meetings/Meeting- Plans-3.md");
    let open = s.post("/api/docs", json!({ "collection": "notes", "title": "Meeting: Plans", "folderPath": "meetings", "collisionPolicy": "open_existing" }));
    assert_eq!(open.status, 200);
    assert_eq!(open.json()["openedExisting"], true);
    assert_eq!(std::fs::read_to_string(root.join(&rel)).unwrap(), text, "open_existing writes nothing");
}

#[test]
fn create_refuses_bad_input_and_never_escapes() {
    let (s, root) = setup();
    s.post("/api/docs", json!({ "relPath": "a.md", "content": "x" })).assert_error(400, "VALIDATION");
    s.post("/api/docs", json!({ "collection": "notes", "content": "x" })).assert_error(400, "VALIDATION");
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "a.md" })).assert_error(400, "VALIDATION");
    s.post("/api/docs", json!({ "collection": "nope", "relPath": "a.md", "content": "x" }))
        .assert_error(404, "NOT_FOUND");
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "a.md", "content": 5 }))
        .assert_error(400, "VALIDATION");
    s.post(
        "/api/docs",
        json!({ "collection": "notes", "relPath": "a.md", "content": "x", "collisionPolicy": "clobber" }),
    )
    .assert_error(400, "VALIDATION");
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "a.md", "content": "x", "presetId": "nope" }))
        .assert_error(400, "VALIDATION");
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "a.md", "content": "x", "tags": ["bad tag!"] }))
        .assert_error(400, "VALIDATION");
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "image.png", "content": "x" }))
        .assert_error(400, "VALIDATION");
    let outside = s.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
    for bad in ["../x.md", "/etc/x.md", "a/../../x.md", "a\\b.md", "a\u{0}b.md", "escape/x.md", "..", "a//b.md"] {
        let r = s.post("/api/docs", json!({ "collection": "notes", "relPath": bad, "content": "x" }));
        assert_eq!(r.status, 400, "{bad}: {}", String::from_utf8_lossy(&r.body));
    }
    let r = s.post("/api/docs", json!({ "collection": "notes", "title": "x", "folderPath": "../up", "content": "x" }));
    assert_eq!(r.status, 400);
    s.post("/api/docs", json!({ "collection": "notes", "title": "x", "folderPath": "/etc", "content": "x" }))
        .assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "notes", "content": "x", "folderPath": "/etc" }))
        .assert_error(400, "VALIDATION");
    assert!(!root.join("etc").exists());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!s.path("x.md").exists());
}

#[test]
fn update_content_tags_and_optimistic_concurrency() {
    let (s, root) = setup();
    let id = docid_of(&s, "existing.md");
    let r = s.request("PUT", &format!("/api/docs/{id}"), Some(&json!({ "tags": ["New", "project/alpha"] })));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let b = r.json();
    assert_eq!(b["success"], true);
    let text = std::fs::read_to_string(root.join("existing.md")).unwrap();
    assert_eq!(
        text,
        "---\ntitle: Existing\ntags: [new, project/alpha]\nauthor: Ann\n---\n# Existing\nThe narwhal text.\n"
    );
    let version = b["version"].clone();
    let new_id = b["docId"].as_str().unwrap().replace('#', "%23");
    assert_eq!(s.get("/api/docs?tagsAll=project/alpha").json()["total"], 1);

    // a stale expectation is refused with the current version, nothing written
    let stale = s.request(
        "PUT",
        &format!("/api/docs/{new_id}"),
        Some(&json!({ "content": "lost", "expectedSourceHash": "0".repeat(64) })),
    );
    stale.assert_error(409, "CONFLICT");
    assert_eq!(stale.json()["error"]["details"]["currentVersion"]["sourceHash"], version["sourceHash"]);
    assert_eq!(std::fs::read_to_string(root.join("existing.md")).unwrap(), text);
    let stale_t = s.request(
        "PUT",
        &format!("/api/docs/{new_id}"),
        Some(&json!({ "content": "lost", "expectedModifiedAt": "2001-01-01T00:00:00Z" })),
    );
    stale_t.assert_error(409, "CONFLICT");
    let ok = s.request(
        "PUT",
        &format!("/api/docs/{new_id}"),
        Some(&json!({ "content": "# Existing\nNow about walruses.\n", "expectedSourceHash": version["sourceHash"], "expectedModifiedAt": version["modifiedAt"] })),
    );
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    assert_eq!(uris(&s.search(json!({ "query": "walruses" }))), vec!["svc://notes/existing.md"]);
    assert!(s.search(json!({ "query": "narwhal" }))["results"].as_array().unwrap().is_empty());

    let cur = s.get("/api/doc?uri=svc://notes/existing.md").json()["docid"].as_str().unwrap().replace('#', "%23");
    s.request("PUT", &format!("/api/docs/{cur}"), Some(&json!({}))).assert_error(400, "VALIDATION");
    s.request("PUT", &format!("/api/docs/{cur}"), Some(&json!({ "tags": "notalist!" })))
        .assert_error(400, "VALIDATION");
    s.request("PUT", "/api/docs/%23deadbeef", Some(&json!({ "content": "x" }))).assert_error(404, "NOT_FOUND");
    std::fs::remove_file(root.join("existing.md")).unwrap();
    s.request("PUT", &format!("/api/docs/{cur}"), Some(&json!({ "content": "x" }))).assert_error(404, "FILE_NOT_FOUND");
    assert!(!root.join("existing.md").exists());
}

#[test]
fn deactivate_then_sync_restores_and_folders() {
    let (s, root) = setup();
    let id = docid_of(&s, "existing.md");
    let r = s.post(&format!("/api/docs/{id}/deactivate"), json!({}));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["success"], true);
    assert!(r.json()["warning"].is_string());
    assert!(root.join("existing.md").exists());
    assert!(s.search(json!({ "query": "narwhal" }))["results"].as_array().unwrap().is_empty());
    s.post(&format!("/api/docs/{id}/deactivate"), json!({})).assert_error(404, "NOT_FOUND");
    s.sync(json!({}));
    assert_eq!(s.search(json!({ "query": "narwhal" }))["results"].as_array().unwrap().len(), 1);

    let f = s.post("/api/folders", json!({ "collection": "notes", "name": "projects", "parentPath": "work" }));
    assert_eq!(f.status, 200, "{}", String::from_utf8_lossy(&f.body));
    assert_eq!(f.json()["folderPath"], "work/projects");
    assert!(root.join("work/projects").is_dir());
    s.post("/api/folders", json!({ "collection": "notes", "name": "projects", "parentPath": "work" }))
        .assert_error(409, "CONFLICT");
    s.post("/api/folders", json!({ "collection": "notes", "name": "a/b" })).assert_error(400, "VALIDATION");
    s.post("/api/folders", json!({ "collection": "notes", "name": ".." })).assert_error(400, "VALIDATION");
    s.post("/api/folders", json!({ "collection": "nope", "name": "x" })).assert_error(404, "NOT_FOUND");
    s.post("/api/folders", json!({ "collection": "notes" })).assert_error(400, "VALIDATION");
    // An absolute parent is refused, never made relative to the collection.
    for absolute in ["/etc", "/", "/work"] {
        s.post("/api/folders", json!({ "collection": "notes", "name": "x", "parentPath": absolute }))
            .assert_error(400, "VALIDATION");
    }
    assert!(!root.join("etc").exists() && !root.join("x").exists());

    let p = s.get("/api/note-presets").json();
    let ids: Vec<&str> = p["presets"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"blank") && ids.contains(&"meeting"));
    assert!(p["presets"][1]["preview"].as_str().unwrap().contains("# Untitled"));
}

#[test]
fn doc_assets_with_ranges_and_containment() {
    let (s, root) = setup();
    std::fs::create_dir_all(root.join("img")).unwrap();
    std::fs::write(root.join("img/pic.png"), (0u8..=255).collect::<Vec<u8>>()).unwrap();
    std::fs::write(s.path("secret.txt"), "secret").unwrap();
    let base = "/api/doc-asset?uri=svc%3A%2F%2Fnotes%2Fexisting.md";
    let whole = s.get(base);
    assert_eq!(whole.status, 200);
    assert_eq!(whole.header("content-type"), Some("text/markdown"));
    assert!(String::from_utf8_lossy(&whole.body).contains("narwhal"));
    let img = s.get(&format!("{base}&path=img/pic.png"));
    assert_eq!((img.status, img.body.len()), (200, 256));
    assert_eq!(img.header("content-type"), Some("image/png"));
    assert_eq!(img.header("accept-ranges"), Some("bytes"));
    // A folder's file is sandboxed data, never a page of this origin.
    let csp = img.header("content-security-policy").unwrap_or_default();
    assert!(csp.starts_with("sandbox;") && csp.contains("default-src 'none'"), "{csp}");
    let part = raw_request(s.port, "GET", &format!("{base}&path=img/pic.png"), &[("Range", "bytes=10-19")], b"");
    assert_eq!(part.status, 206);
    assert_eq!(part.body, (10u8..=19).collect::<Vec<u8>>());
    assert_eq!(part.header("content-range"), Some("bytes 10-19/256"));
    let tail = raw_request(s.port, "GET", &format!("{base}&path=img/pic.png"), &[("Range", "bytes=-6")], b"");
    assert_eq!(tail.body, (250u8..=255).collect::<Vec<u8>>());
    let bad = raw_request(s.port, "GET", &format!("{base}&path=img/pic.png"), &[("Range", "bytes=300-400")], b"");
    assert_eq!(bad.status, 416);
    assert_eq!(bad.header("content-range"), Some("bytes */256"));
    let multi = raw_request(s.port, "GET", &format!("{base}&path=img/pic.png"), &[("Range", "bytes=0-1,5-6")], b"");
    assert_eq!(multi.status, 416);
    for bad in ["../secret.txt", "..%2Fsecret.txt", "%2Fetc%2Fpasswd", "img%5Cpic.png", "a%00b"] {
        let r = s.get(&format!("{base}&path={bad}"));
        assert!(r.status == 400 || r.status == 404, "{bad}: {}", r.status);
        assert!(!String::from_utf8_lossy(&r.body).contains("secret"));
    }
    s.get(&format!("{base}&path=img/none.png")).assert_error(404, "NOT_FOUND");
    s.get("/api/doc-asset").assert_error(400, "VALIDATION");
    s.get("/api/doc-asset?uri=svc://notes/none.md").assert_error(404, "NOT_FOUND");

    // The contract's form names the asset itself, indexed or not.
    let direct = s.get("/api/doc-asset?uri=svc%3A%2F%2Fnotes%2Fimg%2Fpic.png");
    assert_eq!((direct.status, direct.header("content-type")), (200, Some("image/png")));
    assert_eq!(direct.body, (0u8..=255).collect::<Vec<u8>>());
    let ranged =
        raw_request(s.port, "GET", "/api/doc-asset?uri=svc://notes/img/pic.png", &[("Range", "bytes=0-3")], b"");
    assert_eq!((ranged.status, ranged.body.as_slice()), (206, &[0u8, 1, 2, 3][..]));
    std::fs::write(root.join("paper.pdf"), b"%PDF-1.4 not really").unwrap();
    let pdf = s.get("/api/doc-asset?uri=svc://notes/paper.pdf");
    assert_eq!((pdf.status, pdf.header("content-type")), (200, Some("application/pdf")));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]").unwrap();
    s.get("/api/doc-asset?uri=svc://notes/.git/config").assert_error(404, "NOT_FOUND");
    s.get("/api/doc-asset?uri=svc://notes/img").assert_error(404, "NOT_FOUND");
    s.get("/api/doc-asset?uri=svc://elsewhere/img/pic.png").assert_error(404, "NOT_FOUND");
    for bad in ["svc://notes/..%2Fsecret.txt", "file:///etc/passwd", "svc://notes/%2e%2e/secret.txt"] {
        let r = s.get(&format!("/api/doc-asset?uri={}", bad.replace('/', "%2F").replace(':', "%3A")));
        r.assert_error(400, "VALIDATION");
    }
}

/// The JSON payloads of an event stream's `data:` lines.
fn events_data(stream: &str) -> Vec<Value> {
    stream.lines().filter_map(|l| l.strip_prefix("data: ")).filter_map(|d| serde_json::from_str(d).ok()).collect()
}

#[test]
fn events_stream_document_changes_and_jobs() {
    let (s, _root) = setup();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n", s.port).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    assert!(head.contains("200") && head.to_lowercase().contains("text/event-stream"), "{head}");
    let mut seen = String::new();
    let mut saw_retry = false;
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "ev.md", "content": "# Ev\n" }));
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            break;
        }
        saw_retry |= line.contains("retry: 2000");
        seen.push_str(&line);
        // Other jobs (the first sync's embedding) may finish first: wait for this write's.
        let data = events_data(&seen);
        if data.iter().any(|d| d["relPath"] == "ev.md")
            && data.iter().any(|d| d["status"] == "completed" && d["type"] == "sync")
        {
            break;
        }
    }
    assert!(saw_retry, "{seen}");
    assert!(seen.contains("event: document-changed") && seen.contains("event: job-finished"), "{seen}");
    let data = events_data(&seen);
    let changed = data.iter().find(|d| d["relPath"] == "ev.md").unwrap_or_else(|| panic!("{seen}"));
    assert_eq!(changed["uri"], "svc://notes/ev.md");
    assert_eq!(changed["origin"], "create");
    assert!(data.iter().any(|d| d["status"] == "completed" && d["type"] == "sync"), "{seen}");
    assert!(!seen.contains("# Ev"), "events never carry content");
}

#[test]
fn parallel_writes_during_a_sync_all_land() {
    let (s, root) = setup();
    for i in 0..20 {
        write_notes(&root, &[(&format!("p/n{i}.md"), &format!("# N{i}\noriginal{i}\n"))]);
    }
    for i in 0..1500 {
        write_notes(&root, &[(&format!("bulk/b{i}.md"), &format!("# B{i}\nbulk words {}\n", "filler ".repeat(100)))]);
    }
    s.sync(json!({}));
    for i in 0..1500 {
        write_notes(
            &root,
            &[(&format!("bulk/b{i}.md"), &format!("# B{i}\nedited bulk words {}\n", "filler ".repeat(101)))],
        );
    }
    let r = s.post("/api/sync", json!({}));
    assert_eq!(r.status, 202);
    let sync_id = r.json()["jobId"].as_str().unwrap().to_string();
    let ids: Vec<String> = (0..20).map(|i| docid_of(&s, &format!("p/n{i}.md"))).collect();
    let port = s.port;
    let handles: Vec<_> = ids
        .into_iter()
        .enumerate()
        .map(|(i, id)| {
            std::thread::spawn(move || {
                let body = json!({ "content": format!("# N{i}\nrewritten{i} zeugma\n") }).to_string();
                raw_request(
                    port,
                    "PUT",
                    &format!("/api/docs/{id}"),
                    &[("Content-Type", "application/json")],
                    body.as_bytes(),
                )
                .status
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 200);
    }
    s.wait_job(&sync_id);
    for i in 0..20 {
        assert_eq!(
            std::fs::read_to_string(root.join(format!("p/n{i}.md"))).unwrap(),
            format!("# N{i}\nrewritten{i} zeugma\n")
        );
        assert_eq!(
            uris(&s.search(json!({ "query": format!("rewritten{i}") }))),
            vec![format!("svc://notes/p/n{i}.md")]
        );
    }
    assert_eq!(s.search(json!({ "query": "zeugma", "limit": 50 }))["results"].as_array().unwrap().len(), 20);
}

#[test]
fn kill_during_a_write_burst_leaves_old_or_new_files() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Instant;
    let (s, root) = setup();
    let old = |i: usize| format!("old {i}\n{}", "x".repeat(20000));
    let new = |round: usize, i: usize| format!("v{round} {i}\n{}", "y".repeat(20000));
    for i in 0..30 {
        write_notes(&root, &[(&format!("k/n{i}.md"), &old(i))]);
    }
    s.sync(json!({}));
    // Addressed by URI: a note's docid follows its content, so it changes with every round.
    let targets: Vec<String> =
        (0..30).map(|i| format!("/api/docs/%23000000?uri=svc%3A%2F%2Fnotes%2Fk%2Fn{i}.md")).collect();
    let worker = s.child_pid("worker").expect("a worker to kill");
    let port = s.port;
    let written = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Writes round after round until the burst has seen the worker go away and come back, or
    // has gone on for two more rounds after the kill (a restart quicker than one request
    // shows no 503 at all).
    let writer = {
        let written = Arc::clone(&written);
        let killed = Arc::clone(&killed);
        std::thread::spawn(move || {
            let mut after_kill = 0usize;
            let start = Instant::now();
            let mut statuses = Vec::new();
            for round in 0.. {
                for (i, target) in targets.iter().enumerate() {
                    let body = json!({ "content": new(round, i) }).to_string();
                    let r = raw_request(port, "PUT", target, &[("Content-Type", "application/json")], body.as_bytes());
                    if r.status == 200 {
                        written.fetch_add(1, Ordering::SeqCst);
                    }
                    statuses.push(r.status);
                    if killed.load(Ordering::SeqCst) {
                        after_kill += 1;
                    }
                }
                let recovered = statuses.iter().position(|&st| st != 200).is_some_and(|f| statuses[f..].contains(&200));
                if recovered || after_kill >= 60 || start.elapsed() > Duration::from_secs(60) {
                    return (round, statuses);
                }
            }
            unreachable!()
        })
    };
    let start = Instant::now();
    while written.load(Ordering::SeqCst) < 5 {
        assert!(start.elapsed() < Duration::from_secs(30), "the burst did not start");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(nix_kill(worker, libc::SIGKILL), 0, "the worker was there to kill");
    killed.store(true, Ordering::SeqCst);
    let (rounds, statuses) = writer.join().unwrap();
    assert!(statuses.iter().all(|&st| st == 200 || st == 503), "{statuses:?}");
    assert_ne!(s.child_pid("worker"), Some(worker), "the worker was replaced");
    for i in 0..30 {
        let t = std::fs::read_to_string(root.join(format!("k/n{i}.md"))).unwrap();
        let whole = t == old(i) || (0..=rounds).any(|r| t == new(r, i));
        assert!(whole, "note {i} is partial ({} bytes)", t.len());
    }
    let leftovers: Vec<_> = std::fs::read_dir(root.join("k"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.len() <= 1, "at most the one write the kill interrupted leaves a temp file");
    s.wait_until(Duration::from_secs(10), |s| s.post("/api/search", json!({ "query": "x" })).status == 200);
    let done = s.sync(json!({}));
    assert_eq!(done["status"], "completed");
    assert_eq!(s.get("/api/docs?limit=1").json()["total"], 31);
}

#[test]
fn capture_with_provenance_never_replaces() {
    let (s, root) = setup();
    let r = s.post(
        "/api/capture",
        json!({ "collection": "notes", "content": "An axolotl fact.\n", "tags": ["Inbox"], "source": { "kind": "web", "url": "https://example.org/a", "title": "A \"page\"" } }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let b = r.json();
    assert_eq!(b["sync"]["status"], "pending");
    let job = s.wait_job(b["sync"]["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed");
    let rel = b["relPath"].as_str().unwrap();
    assert!(rel.starts_with("inbox/") && rel.contains("/capture-") && rel.ends_with(".md"), "{rel}");
    assert_eq!(b["source"]["kind"], "web");
    assert!(b["source"]["capturedAt"].is_string());
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    assert!(text.starts_with("---\ntags: [inbox]\nsource:\n  kind: \"web\"\n  title: \"A \\\"page\\\"\"\n  url: \"https://example.org/a\"\n  capturedAt: "), "{text}");
    assert!(text.ends_with("---\nAn axolotl fact.\n"));
    assert_eq!(uris(&s.search(json!({ "query": "axolotl" }))), vec![format!("svc://notes/{rel}")]);
    let doc = s.get(&format!("/api/doc?uri=svc://notes/{rel}")).json();
    assert_eq!(doc["tags"], json!(["inbox"]));

    // the same content again opens the existing capture; a given path that exists fails
    let again = s.post("/api/capture", json!({ "collection": "notes", "content": "An axolotl fact.\n" }));
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["openedExisting"], true);
    s.post("/api/capture", json!({ "collection": "notes", "relPath": "existing.md", "content": "x" }))
        .assert_error(409, "CONFLICT");
    assert!(std::fs::read_to_string(root.join("existing.md")).unwrap().contains("narwhal"));
    s.post("/api/capture", json!({ "collection": "notes", "content": "x", "overwrite": true }))
        .assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "notes", "content": 12 })).assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "notes" })).assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "notes", "content": "x", "source": { "kind": "carrier-pigeon" } }))
        .assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "notes", "content": "x", "source": { "secret": "y" } }))
        .assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "notes", "content": "x", "relPath": "../x.md" }))
        .assert_error(400, "VALIDATION");
    let titled = s.post(
        "/api/capture",
        json!({ "collection": "notes", "title": "Idea", "folderPath": "ideas", "presetId": "research-note" }),
    );
    assert_eq!(titled.status, 202);
    assert_eq!(titled.json()["relPath"], "ideas/Idea.md");
}
