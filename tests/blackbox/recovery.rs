//! Start-up repairs: a damaged catalog is set aside and filled again from the notes on disk;
//! a deleted keyword index or vector store is rebuilt from the catalog. Each is said in
//! `/api/status` (`repairs`) and the log, and the server starts either way.

use crate::common::*;
use crate::models::{install, real_embedder, wait_embedded, EMBED};
use serde_json::{json, Value};
use std::io::{Seek, SeekFrom, Write};
use std::time::Duration;

fn repaired(s: &Server) -> Vec<String> {
    let st = s.get("/api/status").json();
    st["repairs"].as_array().unwrap().iter().map(|r| r["store"].as_str().unwrap().to_string()).collect()
}

fn found(s: &Server, word: &str) -> Vec<String> {
    uris(&s.search(json!({ "query": word })))
}

#[test]
fn a_damaged_catalog_is_set_aside_and_filled_again_from_the_notes() {
    for damage_at in [0u64, 8192] {
        let mut s = Server::start();
        let n = s.path("notes");
        write_notes(&n, &[("a.md", "# A\nalphaword\n"), ("b.md", "# B\nbetaword\n")]);
        // Not watched: the rebuild must read it without a watcher's start scan.
        s.add_collection(&n, "notes");
        assert_eq!(found(&s, "alphaword"), vec!["svc://notes/a.md"]);
        s.stop();
        let catalog = s.path("data/default/catalog.sqlite");
        let mut f = std::fs::OpenOptions::new().write(true).open(&catalog).unwrap();
        f.seek(SeekFrom::Start(damage_at)).unwrap();
        f.write_all(&[0x5A; 4096]).unwrap();
        drop(f);

        s.spawn();
        s.wait_until(Duration::from_secs(30), |s| found(s, "betaword") == vec!["svc://notes/b.md"]);
        assert_eq!(found(&s, "alphaword"), vec!["svc://notes/a.md"]);
        assert_eq!(repaired(&s), vec!["catalog"], "damage at {damage_at}");
        let st: Value = s.get("/api/status").json();
        assert_eq!(st["totalDocuments"], 2, "{st}");
        let kept = std::fs::read_dir(s.path("data/default"))
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("catalog.sqlite.damaged-"));
        assert!(kept, "the damaged catalog is kept aside");
        assert!(s.log().contains("repaired"), "{}", s.log());
        // Writes work on the new catalog.
        let r = s.post("/api/docs", json!({ "collection": "notes", "relPath": "c.md", "content": "# C\ngammaword\n" }));
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(found(&s, "gammaword"), vec!["svc://notes/c.md"]);
    }
}

#[test]
fn deleted_keyword_and_vector_stores_are_rebuilt_from_the_catalog() {
    let embed = real_embedder();
    let mut s = Server::start();
    install(&s.path("cache"), &embed, EMBED);
    let n = s.path("notes");
    write_notes(
        &n,
        &[
            ("sockets.md", "# Unix domain sockets\nLocal sockets let two programs on one computer exchange messages.\n"),
            ("bread.md", "# Sourdough\nMix flour, water and salt, let the dough rise overnight, then bake it.\n"),
        ],
    );
    s.add_collection(&n, "notes");
    wait_embedded(&s);
    assert!(repaired(&s).is_empty());
    s.stop();
    std::fs::remove_dir_all(s.path("data/default/bm25")).unwrap();
    std::fs::remove_dir_all(s.path("data/default/vectors")).unwrap();

    s.spawn();
    assert_eq!(found(&s, "sourdough"), vec!["svc://notes/bread.md"]);
    s.wait_until(Duration::from_secs(60), |s| repaired(s).len() == 2);
    let mut stores = repaired(&s);
    stores.sort();
    assert_eq!(stores, vec!["bm25", "vectors"]);
    wait_embedded(&s);
    let v = s.post("/api/vsearch", json!({ "query": "how do programs on one machine talk to each other", "limit": 1 }));
    assert_eq!(v.status, 200, "{}", String::from_utf8_lossy(&v.body));
    assert_eq!(uris(&v.json()), vec!["svc://notes/sockets.md"]);
}
