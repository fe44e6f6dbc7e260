//! The live index: files changed on disk by another program (no API call, no sync) become
//! what search, `/api/doc` and `/api/changes` say.

use crate::common::*;
use serde_json::{json, Value};
use std::time::Duration;

/// How long a change on disk may take to show (the target is well under a second; CI machines
/// are slow and busy).
const WITHIN: Duration = Duration::from_secs(30);

fn hits(s: &Server, word: &str) -> Vec<String> {
    let mut u = uris(&s.search(json!({"query": word, "limit": 20})));
    u.sort();
    u
}

fn wait_hits(s: &Server, word: &str, want: &[&str]) {
    s.wait_until(WITHIN, |s| hits(s, word) == want);
}

fn watched(s: &Server, files: &[(&str, &str)]) -> std::path::PathBuf {
    let n = s.path("notes");
    write_notes(&n, files);
    s.add_collection_with(&n, "notes", true);
    n
}

#[test]
fn edits_in_another_program_become_searchable_without_a_sync() {
    let s = Server::start();
    let n = watched(&s, &[("a.md", "# A\nalpha aardvark\n"), ("keep.md", "# Keep\nlinks to [[A]]\n")]);

    // Created, then modified, in place.
    std::fs::write(n.join("b.md"), "# B\nbravo bison\n").unwrap();
    wait_hits(&s, "bison", &["svc://notes/b.md"]);
    std::fs::write(n.join("a.md"), "# A\nalpha albatross\n").unwrap();
    wait_hits(&s, "albatross", &["svc://notes/a.md"]);
    assert!(hits(&s, "aardvark").is_empty());
    assert!(s.get("/api/doc?uri=svc://notes/a.md").json()["content"].as_str().unwrap_or("").contains("albatross"));

    // Saved the way editors save: a temporary file renamed over the note.
    std::fs::write(n.join(".b.md.tmp"), "# B\nbravo buffalo\n").unwrap();
    std::fs::rename(n.join(".b.md.tmp"), n.join("b.md")).unwrap();
    wait_hits(&s, "buffalo", &["svc://notes/b.md"]);
    assert!(hits(&s, "bison").is_empty());

    // Renamed: the same document under its new path.
    let docid = s.get("/api/doc?uri=svc://notes/b.md").json()["docid"].clone();
    std::fs::rename(n.join("b.md"), n.join("renamed.md")).unwrap();
    wait_hits(&s, "buffalo", &["svc://notes/renamed.md"]);
    assert_eq!(s.get("/api/doc?uri=svc://notes/renamed.md").json()["docid"], docid, "a move keeps the document");

    // Deleted.
    std::fs::remove_file(n.join("renamed.md")).unwrap();
    wait_hits(&s, "buffalo", &[]);

    // Every change above is journaled once.
    let changes = s.get("/api/changes?limit=100").json();
    let kinds: Vec<(String, String)> = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let snap = if c["current"].is_null() { &c["previous"] } else { &c["current"] };
            (c["kind"].as_str().unwrap().to_string(), snap["relPath"].as_str().unwrap_or("").to_string())
        })
        .collect();
    for want in [("create", "b.md"), ("update", "a.md"), ("rename", "renamed.md"), ("inactivate", "renamed.md")] {
        assert!(kinds.iter().any(|(k, p)| k == want.0 && p == want.1), "{want:?} missing from {kinds:?}");
    }
    let updates_of_a = kinds.iter().filter(|(k, p)| k == "update" && p == "a.md").count();
    assert_eq!(updates_of_a, 1, "one edit, one journal entry: {kinds:?}");
}

#[test]
fn editor_litter_and_excluded_folders_are_never_indexed() {
    let s = Server::start();
    let n = watched(&s, &[("a.md", "# A\nalpha\n")]);
    std::fs::write(n.join("a.md~"), "# backup\nlitterword\n").unwrap();
    std::fs::write(n.join(".a.md.swp"), "litterword").unwrap();
    std::os::unix::fs::symlink("user@host.1234", n.join(".#a.md")).unwrap();
    std::fs::create_dir_all(n.join("node_modules/pkg")).unwrap();
    std::fs::write(n.join("node_modules/pkg/readme.md"), "# Pkg\nlitterword\n").unwrap();
    // A real note written after the litter: once it shows, the litter had its chance to.
    std::fs::write(n.join("z.md"), "# Z\nlitterword sentinel\n").unwrap();
    wait_hits(&s, "sentinel", &["svc://notes/z.md"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(hits(&s, "litterword"), vec!["svc://notes/z.md"]);
    let st = s.get("/api/status").json();
    assert_eq!(st["collections"][0]["documentCount"], 2, "{st}");
}

#[test]
fn folders_moved_and_deleted_follow() {
    let s = Server::start();
    let n = watched(&s, &[("top.md", "# Top\n")]);
    std::fs::create_dir_all(n.join("inbox/deep")).unwrap();
    std::fs::write(n.join("inbox/one.md"), "# One\nfolderword\n").unwrap();
    std::fs::write(n.join("inbox/deep/two.md"), "# Two\nfolderword\n").unwrap();
    wait_hits(&s, "folderword", &["svc://notes/inbox/deep/two.md", "svc://notes/inbox/one.md"]);
    std::fs::rename(n.join("inbox"), n.join("archive")).unwrap();
    wait_hits(&s, "folderword", &["svc://notes/archive/deep/two.md", "svc://notes/archive/one.md"]);
    std::fs::remove_dir_all(n.join("archive")).unwrap();
    wait_hits(&s, "folderword", &[]);
    // A folder moved in from outside the collection, files and all.
    let outside = s.path("outside");
    write_notes(&outside, &[("three.md", "# Three\nmovedword\n")]);
    std::fs::rename(&outside, n.join("moved")).unwrap();
    wait_hits(&s, "movedword", &["svc://notes/moved/three.md"]);
}

fn watch_state(s: &Server) -> Value {
    s.get("/api/status").json()["collections"][0]["watch"].clone()
}

#[test]
fn a_folder_that_goes_away_is_polled_until_it_is_back() {
    let s = Server::start_with(&[("SVC_WATCH_POLL_MS", "300")]);
    let n = watched(&s, &[("a.md", "# A\nalpha\n")]);
    s.wait_until(WITHIN, |s| watch_state(s)["state"] == "watching");
    let out = s.cmd().arg("status").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("[watching]"));
    std::fs::remove_dir_all(&n).unwrap();
    s.wait_until(WITHIN, |s| {
        let w = watch_state(s);
        w["state"] == "polling" && w["intervalMs"] == 300 && w["reason"].as_str().is_some_and(|r| r.contains("gone"))
    });
    write_notes(&n, &[("b.md", "# B\nreturnword\n")]);
    wait_hits(&s, "returnword", &["svc://notes/b.md"]);
    s.wait_until(WITHIN, |s| watch_state(s)["state"] == "watching");
    // Watched again: a change shows without waiting for a poll.
    std::fs::write(n.join("c.md"), "# C\nagainword\n").unwrap();
    wait_hits(&s, "againword", &["svc://notes/c.md"]);
}

#[test]
fn a_burst_of_files_is_indexed_whole() {
    let s = Server::start();
    let n = watched(&s, &[("a.md", "# A\n")]);
    for i in 0..300 {
        std::fs::write(n.join(format!("burst-{i:03}.md")), format!("# Burst {i}\nburstword item{i}\n")).unwrap();
    }
    s.wait_until(WITHIN, |s| s.get("/api/status").json()["collections"][0]["documentCount"] == 301);
    // The catalog counts a batch when it is written; the keyword index commits at the end of
    // the watcher's batch, so the last file is waited for by its word too.
    wait_hits(&s, "item299", &["svc://notes/burst-299.md"]);
    assert_eq!(hits(&s, "burstword").len(), 20, "a page of the burst's hits");
}

#[test]
fn changes_made_while_stopped_are_picked_up_at_start() {
    let mut s = Server::start();
    let n = watched(&s, &[("a.md", "# A\nbefore\n"), ("gone.md", "# Gone\ngoneword\n")]);
    s.stop();
    std::fs::write(n.join("a.md"), "# A\nafterword\n").unwrap();
    std::fs::write(n.join("new.md"), "# New\nnewword\n").unwrap();
    std::fs::remove_file(n.join("gone.md")).unwrap();
    s.spawn();
    wait_hits(&s, "afterword", &["svc://notes/a.md"]);
    wait_hits(&s, "newword", &["svc://notes/new.md"]);
    wait_hits(&s, "goneword", &[]);
}

#[test]
fn a_collection_can_opt_out_of_watching() {
    let s = Server::start();
    let n = s.path("mount");
    write_notes(&n, &[("a.md", "# A\n")]);
    let r = s.post("/api/collections", json!({"path": n, "name": "mount", "watch": false}));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert!(std::fs::read_to_string(s.path("config/index.yml")).unwrap().contains("watch: false"));
    assert_eq!(watch_state(&s), json!({"state": "off"}));
    let out = s.cmd().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.contains("mount") && l.contains("[not watched]")), "{text}");
    std::fs::write(n.join("b.md"), "# B\noptoutword\n").unwrap();
    // A watched collection would show it well within this time.
    std::thread::sleep(Duration::from_secs(2));
    assert!(hits(&s, "optoutword").is_empty());
    s.sync(json!({"collection": "mount"}));
    assert_eq!(hits(&s, "optoutword"), vec!["svc://mount/b.md"]);
    s.post("/api/collections", json!({"path": n, "watch": "no"})).assert_error(400, "VALIDATION");
    // The CLI's form.
    let other = s.path("other");
    write_notes(&other, &[("x.md", "# X\n")]);
    let out =
        s.cmd().args(["collection", "add", other.to_str().unwrap(), "--name", "other", "--no-watch"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let st = s.get("/api/status").json();
    let other = st["collections"].as_array().unwrap().iter().find(|c| c["name"] == "other").cloned().unwrap();
    assert_eq!(other["watch"], json!({"state": "off"}), "{st}");
}

#[test]
fn the_watchers_changes_are_events_with_their_own_origin() {
    let s = Server::start();
    let n = watched(&s, &[("a.md", "# A\n")]);
    // The event stream: `curl`-like read of /api/events while a file changes.
    let port = s.port;
    let reader = subscribe_to_changes(port, 1, Duration::from_secs(20));
    let text = "# A\nchanged by another program\n";
    std::fs::write(n.join("a.md"), text).unwrap();
    let events: Vec<Value> = reader.join().unwrap().into_iter().map(|(_, e)| e).collect();
    let changed: Vec<&Value> = events.iter().filter(|e| e["uri"] == "svc://notes/a.md").collect();
    assert!(!changed.is_empty(), "no document-changed event: {events:?}");
    assert!(changed.iter().all(|e| e["origin"] == "watcher"), "{changed:?}");
    // The version now indexed, so a page that saved a note knows its own echo.
    let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(text.as_bytes()));
    assert_eq!(changed.last().unwrap()["sourceHash"], sha, "{changed:?}");
}

/// Fault injection: the worker is killed while it follows a burst of files written by another
/// program. The restarted worker reconciles the folder at start, so every file ends up indexed
/// once, with no sync request.
#[test]
fn a_worker_killed_during_a_burst_on_disk_catches_up_when_it_restarts() {
    let s = Server::start();
    let n = watched(&s, &[("seed.md", "# Seed\nfirst\n")]);
    let worker = s.child_pid("worker").unwrap();
    let writer = {
        let n = n.clone();
        std::thread::spawn(move || {
            for i in 0..600 {
                let p = n.join(format!("burst/d{}/b-{i}.md", i % 10));
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, format!("# Burst {i}\nburstword and marker{i}\n")).unwrap();
                if i % 50 == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        })
    };
    // Killed once some of the burst is in the index, not all of it.
    let total = |s: &Server| {
        let r = s.get("/api/docs?limit=1");
        if r.status == 200 {
            r.json()["total"].as_u64().unwrap_or(0)
        } else {
            0
        }
    };
    s.wait_until(WITHIN, |s| total(s) > 1);
    nix_kill(worker, libc::SIGKILL);
    writer.join().unwrap();
    // A new worker, then every file exactly once.
    s.wait_until(WITHIN, |s| s.child_pid("worker").is_some_and(|p| p != worker));
    s.wait_until(Duration::from_secs(60), |s| total(s) == 601);
    // The published status follows once the new worker's scan is done.
    s.wait_until(WITHIN, |s| s.get("/api/status").json()["totalDocuments"] == 601);
    // A scan writes the catalog batch by batch and commits the keyword index at its end: the
    // last file is found by its word once that commit is done.
    s.wait_until(WITHIN, |s| hits(s, "marker599") == ["svc://notes/burst/d9/b-599.md"]);
    let mut all = uris(&s.search(json!({"query": "burstword", "limit": 50})));
    let n_all = all.len();
    all.dedup();
    assert_eq!(all.len(), n_all, "no document twice");
}

/// A mailbox message as it sits in an `.mbox` file: its `From ` line, headers and text.
fn mbox_message(from: &str, subject: &str, day: u32, text: &str) -> String {
    format!(
        "From {from} Tue Mar  {day} 09:15:00 2026\nFrom: {from}\nSubject: {subject}\nDate: Tue, {day} Mar 2026 09:15:00 +0000\n\n{text}\n\n"
    )
}

/// An `.mbox` is a document per message at `<file>/<position>.eml`, titled by its subject,
/// that follows the file: a message appended is a new document, one removed shifts the rest,
/// the file renamed moves its messages (same documents), the file deleted takes them out. A
/// message is read-only: no edit, no move; its `absPath` is the mailbox file.
#[test]
fn a_mailbox_is_a_document_per_message_that_follows_its_file() {
    let s = Server::start();
    let n = watched(&s, &[("keep.md", "# Keep\n")]);
    let quokka = mbox_message("ann@example.org", "Quokka census", 3, "We counted quokkas on the island.");
    let wombat = mbox_message("bob@example.org", "Wombat burrows", 4, "Three wombat burrows near the creek.");
    let echidna = mbox_message("cy@example.org", "Echidna sighting", 5, "An echidna crossed the track.");
    std::fs::write(n.join("club.mbox"), format!("{quokka}{wombat}")).unwrap();
    wait_hits(&s, "quokkas", &["svc://notes/club.mbox/00001.eml"]);
    wait_hits(&s, "wombat", &["svc://notes/club.mbox/00002.eml"]);

    let hit = &s.search(json!({"query": "wombat"}))["results"][0];
    assert_eq!((hit["title"].as_str(), hit["contentType"].as_str()), (Some("Wombat burrows"), Some("mail")), "{hit}");
    assert_eq!(hit["source"]["absPath"].as_str(), n.join("club.mbox").canonicalize().unwrap().to_str(), "{hit}");
    let doc = s.get("/api/doc?uri=svc://notes/club.mbox/00002.eml").json();
    assert_eq!(doc["author"], "bob@example.org", "{doc}");
    assert!(doc["content"].as_str().unwrap().contains("# Wombat burrows\n\nFrom: bob@example.org"), "{doc}");
    let quokka_id = s.get("/api/doc?uri=svc://notes/club.mbox/00001.eml").json()["docid"].clone();

    // Read-only: the bytes are the mailbox's, which is what "Original file" serves.
    assert_eq!(doc["source"]["partOf"], "club.mbox", "{doc}");
    let original = s.get("/api/doc-asset?uri=svc%3A%2F%2Fnotes%2Fclub.mbox%2F00002.eml");
    assert_eq!(original.status, 200);
    assert_eq!(original.body, std::fs::read(n.join("club.mbox")).unwrap());
    let page = s.get("/doc?uri=svc%3A%2F%2Fnotes%2Fclub.mbox%2F00002.eml");
    assert_eq!(page.status, 200);
    let page = String::from_utf8_lossy(&page.body);
    assert!(page.contains("Wombat burrows") && !page.contains("rename-button"), "{page}");
    s.post("/api/docs", json!({ "collection": "notes", "relPath": "club.mbox/new.md", "content": "x" }))
        .assert_error(400, "VALIDATION");
    let id = doc["docid"].as_str().unwrap().replace('#', "%23");
    s.request("PUT", &format!("/api/docs/{id}"), Some(&json!({ "content": "overwritten" })))
        .assert_error(409, "UNSUPPORTED");
    s.post(&format!("/api/docs/{id}/refactor-plan"), json!({ "operation": "rename", "name": "other" }))
        .assert_error(409, "UNSUPPORTED");

    // Appended: a new document; the others are the same documents, unchanged.
    std::fs::write(n.join("club.mbox"), format!("{quokka}{wombat}{echidna}")).unwrap();
    wait_hits(&s, "echidna", &["svc://notes/club.mbox/00003.eml"]);
    assert_eq!(s.get("/api/doc?uri=svc://notes/club.mbox/00001.eml").json()["docid"], quokka_id);

    // The first removed: the rest move up a position, the last position leaves the index.
    std::fs::write(n.join("club.mbox"), format!("{wombat}{echidna}")).unwrap();
    wait_hits(&s, "echidna", &["svc://notes/club.mbox/00002.eml"]);
    wait_hits(&s, "quokkas", &[]);
    wait_hits(&s, "wombat", &["svc://notes/club.mbox/00001.eml"]);
    let echidna_id = s.get("/api/doc?uri=svc://notes/club.mbox/00002.eml").json()["docid"].clone();

    // Renamed: its messages under the new path, the same documents.
    std::fs::rename(n.join("club.mbox"), n.join("archive.mbox")).unwrap();
    wait_hits(&s, "echidna", &["svc://notes/archive.mbox/00002.eml"]);
    assert_eq!(s.get("/api/doc?uri=svc://notes/archive.mbox/00002.eml").json()["docid"], echidna_id);
    wait_hits(&s, "wombat", &["svc://notes/archive.mbox/00001.eml"]);
    let changes = s.get("/api/changes?limit=100").json();
    let renamed = changes["changes"].as_array().unwrap().iter().any(|c| {
        c["kind"] == "rename"
            && c["previous"]["relPath"] == "club.mbox/00002.eml"
            && c["current"]["relPath"] == "archive.mbox/00002.eml"
    });
    assert!(renamed, "{changes}");

    // Deleted: every message leaves the index.
    std::fs::remove_file(n.join("archive.mbox")).unwrap();
    wait_hits(&s, "echidna", &[]);
    wait_hits(&s, "wombat", &[]);
    // The status is published after the index commits: it may trail the search by a moment.
    s.wait_until(WITHIN, |s| s.get("/api/status").json()["collections"][0]["documentCount"] == 1);
}
