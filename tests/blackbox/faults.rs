//! Hostile files in a notes folder: each is one file's problem, named with its reason in the
//! sync's result, while the rest of the sync completes and stays searchable.

use crate::common::*;
use serde_json::{json, Value};

fn problems(job: &Value) -> Vec<(String, String)> {
    job["result"]["collections"][0]["problems"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| (p["relPath"].as_str().unwrap().to_string(), p["reason"].as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn hostile_files_are_problems_of_their_own_and_the_sync_completes() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(&n, &[("good.md", "# Good\ngoodword stays searchable\n")]);
    // Saved by an old editor in Windows-1252: read with that fallback.
    std::fs::write(n.join("latin.md"), b"# Caf\xe9\nlatinword cr\xe8me br\xfbl\xe9e\n").unwrap();
    // UTF-16 with its byte-order mark.
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("# Wide\nwideword\n".encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
    std::fs::write(n.join("wide.md"), utf16).unwrap();
    // Binary bytes behind a text extension.
    std::fs::write(n.join("binary.md"), [0x7F, b'E', b'L', b'F', 0, 0, 1, 2, 3, 0, 0xFF].repeat(100)).unwrap();
    // 200 MB (sparse: no disk needed), over the 32 MB limit.
    std::fs::File::create(n.join("huge.md")).unwrap().set_len(200 << 20).unwrap();
    // A folder link to its own parent: a loop the walk must not follow forever.
    std::os::unix::fs::symlink(&n, n.join("loop")).unwrap();
    // Not a DOCX at all.
    std::fs::write(n.join("broken.docx"), b"PK\x03\x04 not really a zip").unwrap();

    let added = s.post("/api/collections", json!({ "path": n, "name": "notes", "include": "**/*.docx" }));
    assert_eq!(added.status, 202, "{}", String::from_utf8_lossy(&added.body));
    let job = s.wait_job(added.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    let listed = problems(&job);
    let reason = |rel: &str| listed.iter().find(|(r, _)| r == rel).map(|(_, why)| why.clone());
    assert!(reason("binary.md").is_some_and(|r| r.contains("binary")), "{job}");
    assert!(reason("huge.md").is_some_and(|r| r.contains("200 MB") && r.contains("limit")), "{job}");
    assert!(reason("broken.docx").is_some(), "{job}");
    assert_eq!(listed.len(), 3, "{job}");
    let r = &job["result"]["collections"][0];
    assert_eq!(r["filesErrored"], 2, "{job}");

    assert_eq!(uris(&s.search(json!({ "query": "goodword" }))), vec!["svc://notes/good.md"]);
    assert_eq!(uris(&s.search(json!({ "query": "latinword" }))), vec!["svc://notes/latin.md"]);
    assert_eq!(uris(&s.search(json!({ "query": "wideword" }))), vec!["svc://notes/wide.md"]);
    let latin = s.get("/api/doc?uri=svc://notes/latin.md").json();
    assert!(latin["content"].as_str().unwrap().contains("crème brûlée"), "{latin}");
    assert_eq!(latin["title"], "Café");
    // The loop was not walked into: no note appears twice under another path.
    let st = s.get("/api/status").json();
    assert_eq!(st["totalDocuments"], 3, "{st}");
    // A later sync lists the same problems and changes nothing else.
    let again = s.sync(json!({}));
    assert_eq!(again["status"], "completed");
    assert_eq!(problems(&again).len(), 3, "{again}");
    assert_eq!(again["result"]["totalFilesAdded"], 0, "{again}");
}
