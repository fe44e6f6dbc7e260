//! What a sync puts in the index: metadata, changes, errors, deactivation.

use crate::common::*;
use serde_json::json;

#[test]
fn metadata_titles_tags_and_change_tracking() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(
        &n,
        &[
            ("fm.md", "---\ntitle: From Front Matter\ntags: [Project/Alpha, ideas]\nauthor: Ann Lee\ncategory: Meeting\ndate: 2024-03-01\n---\n# Heading Title\nBody with #inline-tag and `#code-tag`.\n\n```\n#fenced-tag [[NotALink]]\n```\n"),
            ("h1.md", "Intro line\n# The H1 Title\ntext\n"),
            ("plain-name.md", "no heading at all, just a wombat\n"),
            ("crlf.md", "\u{feff}# Crlf\r\nline one   \r\n\r\n\r\n\r\nline two\r\n"),
            ("bad.md", ""),
        ],
    );
    std::fs::write(n.join("bad.md"), [0xff, 0xfe, 0x00, 0x80, 0x41]).unwrap();
    let job = s.add_collection(&n, "notes");
    assert_eq!(job["result"]["totalFilesErrored"], 1, "{job}");
    assert_eq!(job["result"]["totalFilesAdded"], 4);

    let doc = s.get("/api/doc?uri=svc://notes/fm.md").json();
    assert_eq!(doc["title"], "From Front Matter");
    assert_eq!(doc["tags"], json!(["ideas", "inline-tag", "project/alpha"]));
    assert_eq!(doc["author"], "Ann Lee");
    assert!(doc["categories"].as_array().unwrap().contains(&json!("meeting")));
    assert_eq!(doc["documentDate"], "2024-03-01T00:00:00Z");
    assert_eq!(s.get("/api/doc?uri=svc://notes/h1.md").json()["title"], "The H1 Title");
    assert_eq!(s.get("/api/doc?uri=svc://notes/plain-name.md").json()["title"], "plain-name");
    let crlf = s.get("/api/doc?uri=svc://notes/crlf.md").json();
    assert_eq!(crlf["content"], "# Crlf\nline one\n\nline two\n");
    s.get("/api/doc?uri=svc://notes/bad.md").assert_error(404, "NOT_FOUND");

    // unchanged files are skipped; a modified one is updated and its old words are gone
    let again = s.sync(json!({}));
    assert_eq!(again["result"]["collections"][0]["filesUnchanged"], 4, "{again}");
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(n.join("h1.md"), "# The H1 Title\nnow about zebras\n").unwrap();
    let upd = s.sync(json!({}));
    assert_eq!(upd["result"]["totalFilesUpdated"], 1, "{upd}");
    assert_eq!(uris(&s.search(json!({ "query": "zebras" }))), vec!["svc://notes/h1.md"]);
    let stale = s.search(json!({ "query": "text" }));
    assert!(stale["results"].as_array().unwrap().is_empty(), "{stale}");

    // a vanished file leaves search; it comes back when restored
    std::fs::rename(n.join("plain-name.md"), s.path("moved-away.md")).unwrap();
    s.sync(json!({}));
    assert!(s.search(json!({ "query": "wombat" }))["results"].as_array().unwrap().is_empty());
    s.get("/api/doc?uri=svc://notes/plain-name.md").assert_error(404, "NOT_FOUND");
    std::fs::rename(s.path("moved-away.md"), n.join("plain-name.md")).unwrap();
    s.sync(json!({}));
    assert_eq!(s.search(json!({ "query": "wombat" }))["results"].as_array().unwrap().len(), 1);
}

#[test]
fn patterns_include_exclude_and_always_excluded_folders() {
    let s = Server::start();
    let n = s.path("n");
    write_notes(
        &n,
        &[
            ("keep.md", "# K\nquokka\n"),
            ("notes.txt", "quokka in plain text\n"),
            ("drafts/d.md", "# D\nquokka draft\n"),
            (".git/x.md", "# G\nquokka git\n"),
            ("node_modules/m.md", "# M\nquokka module\n"),
            ("paper.pdf", "%PDF-1.4 quokka"),
        ],
    );
    let r = s.post(
        "/api/collections",
        json!({ "path": n, "name": "n", "include": "**/*.txt,**/*.pdf", "exclude": "drafts/**" }),
    );
    assert_eq!(r.status, 202);
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["result"]["totalFilesErrored"], 1, "the fake pdf fails to convert: {job}");
    let mut got = uris(&s.search(json!({ "query": "quokka" })));
    got.sort();
    assert_eq!(got, vec!["svc://n/keep.md", "svc://n/notes.txt"]);
    let txt = s.get("/api/doc?uri=svc://n/notes.txt").json();
    assert_eq!(txt["source"]["mime"], "text/plain");
}

#[test]
fn long_notes_are_chunked_and_snippets_skip_front_matter() {
    let s = Server::start();
    let n = s.path("n");
    let mut long = String::from("---\ntitle: Long\ntags: [secretfm]\n---\n# Part one\n");
    for i in 0..40 {
        long.push_str(&format!("Paragraph {i} talks about ordinary things at some length to fill the note.\n\n"));
    }
    long.push_str("## Part two\nThe pangolin appears only here.\n\n```rust\nfn main() {\n\n    println!(\"pangolin in code\");\n\n}\n```\n");
    write_notes(&n, &[("long.md", &long)]);
    s.add_collection(&n, "n");
    let st = s.get("/api/status").json();
    assert!(st["totalChunks"].as_u64().unwrap() >= 2, "{st}");
    let hit = &s.search(json!({ "query": "pangolin" }))["results"][0];
    assert!(hit["chunk"]["index"].as_u64().unwrap() >= 1, "{hit}");
    let text = hit["chunk"]["text"].as_str().unwrap();
    assert!(
        text.contains("pangolin appears") && text.contains("```rust") && text.contains("println"),
        "fence kept whole: {text}"
    );
    assert!(!hit["snippet"].as_str().unwrap().contains("secretfm"));
    assert!(hit["line"].as_u64().unwrap() > 40);
    let first = &s.search(json!({ "query": "paragraph" }))["results"][0];
    assert!(!first["chunk"]["text"].as_str().unwrap().contains("title: Long"));
}

/// `svc embed --texts` prints what the embedder reads for each chunk, a JSON string a line: a
/// note's chunk under its title, a code chunk under its file's title and its symbol's path.
/// It reads the index itself, so it refuses while a server holds it.
#[test]
fn embed_texts_prints_what_the_embedder_reads() {
    let mut s = Server::start();
    let root = s.path("notes");
    write_notes(
        &root,
        &[
            ("kettle.md", "# Kettle\n\nBoil the water.\n"),
            ("k.rs", "pub struct Kettle;\nimpl Kettle {\n    pub fn descale(&self) {}\n}\n"),
        ],
    );
    let r = s.post("/api/collections", json!({ "path": root, "name": "n", "watch": false }));
    assert_eq!(s.wait_job(r.json()["jobId"].as_str().unwrap())["status"], "completed");
    let busy = s.cmd().args(["embed", "--texts"]).output().unwrap();
    assert!(!busy.status.success());
    assert!(String::from_utf8_lossy(&busy.stderr).contains("stop the server first"));
    s.stop();
    let out = s.cmd().args(["embed", "--texts"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let texts: Vec<String> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(texts.contains(&"# Kettle\n\nBoil the water.".to_string()), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("k.rs\nKettle::descale\n")), "{texts:?}");
}
