//! `svc setup FOLDER` and `svc doctor` (issue 62 item 5), run against a real server: setup
//! returns only once keyword search finds a real note of the folder by a word taken from it
//! (and prints both), and fails with the reason when it cannot prove it; doctor checks the
//! data dir, the server, the models and each collection's folder, with what to do.

use crate::common::*;
use serde_json::Value;

fn run(s: &Server, args: &[&str]) -> (bool, String, String) {
    let out = s.cmd().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn setup_proves_a_folder_searchable_and_doctor_says_what_to_do() {
    let s = Server::start();
    let notes = s.path("pottery");
    write_notes(
        &notes,
        &[
            ("kiln.md", "# Kiln\nFire the porcelain at cone six on Tuesday.\n"),
            ("glaze.md", "# Glaze\nCeladon needs reduction.\n"),
        ],
    );
    let folder = notes.to_str().unwrap();

    let (ok, out, err) = run(&s, &["setup", folder]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("added collection pottery"), "{out}");
    let proof = out.lines().find(|l| l.starts_with("proved: `svc search \"")).unwrap_or_else(|| panic!("{out}"));
    // The word printed finds the note printed.
    let word = proof.split('"').nth(1).unwrap();
    let uri = proof.split(" finds ").nth(1).unwrap().split(' ').next().unwrap();
    let res = s.search(serde_json::json!({ "query": word, "collection": "pottery" }));
    assert!(uris(&res).iter().any(|u| u == uri), "{proof}: {res}");

    // Again: the folder is a collection already, synced and proved again.
    let (ok, out, _) = run(&s, &["setup", folder]);
    assert!(ok && out.contains("is the collection pottery already") && out.contains("proved:"), "{out}");

    // What cannot be proved fails with the reason.
    let empty = s.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("photo.raw"), b"\x00\x01").unwrap();
    let (ok, _, err) = run(&s, &["setup", empty.to_str().unwrap()]);
    assert!(!ok && err.contains("setup failed: no file of") && err.contains("svc explain"), "{err}");
    let (ok, _, err) = run(&s, &["setup", s.path("nowhere").to_str().unwrap()]);
    assert!(!ok && err.contains("not a folder"), "{err}");

    // Doctor: everything it checks, each with a state.
    let (ok, out, err) = run(&s, &["doctor"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("ok   data dir") && out.contains("ok   server     running at"), "{out}");
    assert!(out.lines().any(|l| l.contains("pottery:") && l.starts_with("ok")), "{out}");
    let (_, json, _) = run(&s, &["doctor", "--json"]);
    let checks: Value = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = checks.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    for name in ["data dir", "server", "embedder", "generator", "collection"] {
        assert!(names.contains(&name), "{name}: {json}");
    }
    // Without models here, vector search is off: a warning with what to do, not a failure.
    let embedder = checks.as_array().unwrap().iter().find(|c| c["name"] == "embedder").unwrap();
    if embedder["state"] == "warn" {
        assert!(embedder["fix"].as_str().unwrap().contains("svc models pull"), "{embedder}");
    }
    // A collection's folder gone is a failure, and says what to do.
    std::fs::rename(&notes, s.path("moved")).unwrap();
    let (ok, out, _) = run(&s, &["doctor"]);
    assert!(!ok && out.contains("FAIL collection pottery:") && out.contains("is gone"), "{out}");
}
