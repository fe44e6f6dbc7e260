//! Your folder as it is: which files a collection takes is decided by evidence (a
//! `CACHEDIR.TAG`, `.gitignore` in a git work tree, `.ignore`, `.svcignore`), not by a folder's
//! name, the watcher follows an edited ignore file, and `GET /api/explain` / `svc explain`
//! say why a file is not indexed.

use crate::common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag.\n";

fn explain(s: &Server, path: &Path) -> Value {
    let q = urlencode(path.to_str().unwrap());
    let r = s.get(&format!("/api/explain?path={q}"));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

fn indexed(s: &Server, uri: &str) -> bool {
    s.get(&format!("/api/doc?uri={uri}")).status == 200
}

#[test]
fn build_output_is_skipped_by_evidence_and_a_target_folder_of_notes_is_indexed() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(
        &n,
        &[
            ("plan.md", "# Plan\nSee [[target-note]].\n"),
            ("target/target-note.md", "# Targets 2027\nsell more apples\n"),
            ("dist/flyer.md", "# Flyer\nmarketing copy\n"),
            ("code/target/CACHEDIR.TAG", CACHEDIR_TAG),
            ("code/target/debug/build.md", "# Generated\nbuild output\n"),
        ],
    );
    s.add_collection(&n, "notes");
    assert!(indexed(&s, "svc://notes/target/target-note.md"), "a target/ of notes is indexed");
    assert!(indexed(&s, "svc://notes/dist/flyer.md"));
    assert!(!indexed(&s, "svc://notes/code/target/debug/build.md"), "a tagged cache folder is skipped");
    let e = explain(&s, &n.join("code/target/debug/build.md"));
    assert_eq!(e["verdict"], "left_out", "{e}");
    assert_eq!(e["rule"]["kind"], "cache_dir");
    assert_eq!(e["rule"]["source"], "code/target");
    let e = explain(&s, &n.join("target/target-note.md"));
    assert_eq!((e["verdict"].as_str(), e["indexed"].as_bool()), (Some("indexed"), Some(true)), "{e}");
    assert!(e["docid"].as_str().unwrap().starts_with('#'));
}

#[test]
fn a_gitignored_folder_comes_in_when_the_gitignore_is_edited_while_the_server_runs() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(
        &n,
        &[
            (".gitignore", "# drafts stay private\ndrafts/\n"),
            ("a.md", "# A\nalpha\n"),
            ("drafts/idea.md", "# Idea\nzeppelin\n"),
        ],
    );
    std::fs::create_dir(n.join(".git")).unwrap();
    s.add_collection_with(&n, "notes", true);
    assert!(indexed(&s, "svc://notes/a.md"));
    assert!(!indexed(&s, "svc://notes/drafts/idea.md"));
    let e = explain(&s, &n.join("drafts/idea.md"));
    assert_eq!(e["rule"]["kind"], "ignore_file", "{e}");
    assert_eq!(e["rule"]["source"], n.canonicalize().unwrap().join(".gitignore").to_str().unwrap());
    assert_eq!(e["rule"]["line"], 2);
    assert_eq!(e["rule"]["pattern"], "drafts/");
    assert!(e["message"].as_str().unwrap().contains(".gitignore:2:drafts/"), "{e}");

    // The ignore file edited: the folder comes in, with no sync.
    std::fs::write(n.join(".gitignore"), "# nothing ignored now\n").unwrap();
    s.wait_until(Duration::from_secs(30), |s| indexed(s, "svc://notes/drafts/idea.md"));
    // And ignored again: it leaves the index.
    std::fs::write(n.join(".svcignore"), "*.md\n!a.md\n").unwrap();
    s.wait_until(Duration::from_secs(30), |s| !indexed(s, "svc://notes/drafts/idea.md"));
    assert!(indexed(&s, "svc://notes/a.md"), "a .svcignore whitelist keeps a.md");
}

#[test]
fn explain_names_the_one_rule_for_each_kind_and_answers_bad_input_with_the_envelope() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(
        &n,
        &[
            (".ignore", "secret.md\n"),
            ("ok.md", "# Ok\nfine\n"),
            ("secret.md", "# Secret\n"),
            (".hidden/h.md", "# Hidden\n"),
            ("node_modules/pkg/readme.md", "# Pkg\n"),
            ("archive/old.md", "# Old\n"),
            ("picture.png", "not really a png"),
            ("song.mp3", "not notes"),
            ("broken.pdf", "%PDF-1.4 this is no PDF at all"),
            ("note.md~", "backup"),
        ],
    );
    let r = s.post("/api/collections", json!({"path": n, "name": "notes", "exclude": "archive/**"}));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    s.wait_job(r.json()["jobId"].as_str().unwrap());
    let big = n.join("big.md");
    std::fs::File::create(&big).unwrap().set_len(40 << 20).unwrap();
    let kind = |rel: &str| {
        let e = explain(&s, &n.join(rel));
        assert_eq!(e["verdict"], "left_out", "{rel}: {e}");
        assert_eq!(e["collection"], "notes");
        e["rule"].clone()
    };
    assert_eq!(kind("secret.md")["kind"], "ignore_file");
    assert_eq!(kind(".hidden/h.md")["kind"], "hidden");
    assert_eq!(kind("node_modules/pkg/readme.md")["source"], "node_modules");
    assert_eq!(kind("archive/old.md"), json!({"kind": "excluded", "pattern": "archive/**"}));
    assert_eq!(kind("song.mp3")["kind"], "not_included");
    // A picture is read by OCR: one that no decoder recognizes is unreadable.
    let picture = kind("picture.png");
    assert_eq!(picture["kind"], "unreadable", "{picture}");
    assert!(picture["detail"].as_str().unwrap().contains("not a readable picture"), "{picture}");
    assert_eq!(kind("note.md~")["kind"], "litter");
    assert_eq!(kind("big.md")["kind"], "too_large");
    let broken = kind("broken.pdf");
    assert_eq!(broken["kind"], "unreadable");
    assert!(!broken["detail"].as_str().unwrap().is_empty(), "{broken}");

    assert_eq!(explain(&s, &n.join("ok.md"))["verdict"], "indexed");
    assert_eq!(explain(&s, &n.join("nope.md"))["verdict"], "missing");
    let outside = explain(&s, &s.path("elsewhere.md"));
    assert_eq!(outside["verdict"], "outside");
    assert!(outside.get("collection").is_none(), "{outside}");
    let by_uri = s.get("/api/explain?path=svc://notes/secret.md").json();
    assert_eq!(by_uri["rule"]["kind"], "ignore_file", "{by_uri}");

    s.get("/api/explain").assert_error(400, "VALIDATION");
    s.get("/api/explain?path=notes/ok.md").assert_error(400, "VALIDATION");
    s.get("/api/explain?path=/tmp/a%00b").assert_error(400, "VALIDATION");
    s.get(&format!("/api/explain?path={}", urlencode(n.to_str().unwrap()))).assert_error(400, "VALIDATION");
    s.get("/api/explain?path=svc://nope/a.md").assert_error(404, "NOT_FOUND");
    s.get("/api/explain?path=svc://notes/../x.md").assert_error(400, "VALIDATION");

    // The CLI: a path relative to its folder, the rule in words, exit 1 when not indexed.
    let out = s.cmd().current_dir(&n).args(["explain", "secret.md"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(".ignore:1:secret.md") && text.contains("ignore_file"), "{text}");
    let out = s.cmd().current_dir(&n).args(["explain", "ok.md"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}
