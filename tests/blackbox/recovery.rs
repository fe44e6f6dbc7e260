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
        // The refill is a job: a note can be searchable before it ends and its status is out.
        s.wait_until(Duration::from_secs(30), |s| {
            found(s, "betaword") == vec!["svc://notes/b.md"] && s.get("/api/status").json()["activeJobId"].is_null()
        });
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
    if !crate::prepared::models("recovery::deleted_keyword_and_vector_stores_are_rebuilt_from_the_catalog") {
        return;
    }
    let embed = real_embedder();
    let mut s = Server::start();
    install(&s.path("cache"), &embed, EMBED);
    let n = s.path("notes");
    write_notes(
        &n,
        &[
            (
                "sockets.md",
                "# Unix domain sockets\nLocal sockets let two programs on one computer exchange messages.\n",
            ),
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

/// A lost keyword index of more rows than the worker feeds before it listens: the server is
/// up at once, the rest is fed in the background while `keywordBacklog` counts down, and then
/// every note is found again.
#[test]
fn a_large_keyword_index_is_re_fed_after_the_worker_listens() {
    const NOTES: usize = 2_100;
    let mut s = Server::start();
    let n = s.path("notes");
    std::fs::create_dir_all(&n).unwrap();
    for i in 0..NOTES {
        std::fs::write(n.join(format!("n{i:04}.md")), format!("# Note {i}\n\nrefeedword{i}\n")).unwrap();
    }
    s.add_collection_with(&n, "notes", false);
    s.stop();
    std::fs::remove_dir_all(s.path("data/default/bm25")).unwrap();

    s.spawn();
    s.wait_until(Duration::from_secs(120), |s| {
        let st = s.get("/api/status").json();
        st["keywordBacklog"] == 0 && st["stores"]["keywordDocuments"] == NOTES
    });
    for i in [0, NOTES / 2, NOTES - 1] {
        assert_eq!(found(&s, &format!("refeedword{i}")), vec![format!("svc://notes/n{i:04}.md")]);
    }
    assert_eq!(repaired(&s), vec!["bm25"]);
}

/// The whole tree killed 50 times, the worker first, at random points of syncs and of the
/// embedding runs they start (the tiny embedder, so that each run is short and a kill lands in
/// one often); `svc serve` started again each time on the same dirs. Once the last start is
/// idle, the keyword index and the vector table agree with the catalog, every note's newest
/// word finds it, and a final sync changes nothing.
#[test]
fn fifty_kills_during_syncs_and_embedding_leave_the_stores_in_agreement() {
    if !crate::prepared::models("recovery::fifty_kills_during_syncs_and_embedding_leave_the_stores_in_agreement") {
        return;
    }
    const NOTES: usize = 300;
    const KILLS: usize = 50;
    let tiny = crate::models::test_models().join("tiny");
    let mut s = Server::start();
    install(&s.path("cache"), &tiny.join("embed"), EMBED);
    let n = s.path("notes");
    let body =
        |i: usize, round: usize| format!("# Note {i}\nround{round}word note{i}word and some text about topic {i}.\n");
    let files: Vec<(String, String)> = (0..NOTES).map(|i| (format!("n{i:03}.md"), body(i, 0))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    write_notes(&n, &refs);
    s.add_collection(&n, "notes");
    let mut newest = vec![0usize; NOTES];
    let mut seed: u64 = 0x5eed;
    let mut next = |m: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    for round in 1..=KILLS {
        // Work for the sync and the embedder: a tenth of the notes rewritten.
        for _ in 0..NOTES / 10 {
            let i = next(NOTES as u64) as usize;
            std::fs::write(n.join(format!("n{i:03}.md")), body(i, round)).unwrap();
            newest[i] = round;
        }
        let r = s.post("/api/sync", json!({}));
        assert!(r.status == 202 || r.status == 409, "{}", String::from_utf8_lossy(&r.body));
        std::thread::sleep(Duration::from_millis(next(400)));
        let worker = s.child_pid("worker").expect("worker pid");
        nix_kill(worker, libc::SIGKILL);
        let gateway = s.child_pid("gateway");
        if let Some(gateway) = gateway {
            nix_kill(gateway, libc::SIGKILL);
        }
        let mut supervisor = s.child.take().unwrap();
        let _ = supervisor.kill();
        let _ = supervisor.wait();
        // A killed process lets go of its files only once it is gone (a busy disk can keep it
        // in an fsync for a while): start again after that, as a user restarting would.
        let start = std::time::Instant::now();
        while (alive(worker) || gateway.is_some_and(alive)) && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        s.spawn();
    }
    let done = s.sync(json!({}));
    assert_eq!(done["status"], "completed", "{done}");
    wait_embedded(&s);
    let st = s.get("/api/status").json();
    let stores = &st["stores"];
    assert_eq!(stores["catalogDocuments"], NOTES, "{st}");
    assert_eq!(stores["keywordDocuments"], NOTES, "{st}");
    assert!(stores["recordedVectors"].as_u64().unwrap() >= NOTES as u64, "{st}");
    let agree = |s: &Server| {
        let st = s.get("/api/status").json();
        st["stores"]["vectorRows"] == st["stores"]["recordedVectors"]
    };
    let start = std::time::Instant::now();
    while !agree(&s) && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let st = s.get("/api/status").json();
    assert!(agree(&s), "the vector store and the catalog disagree after 60 s: {}\n{}", st["stores"], s.log());
    for i in (0..NOTES).step_by(7) {
        let hits = uris(&s.search(json!({ "query": format!("round{}word note{i}word", newest[i]), "limit": 1 })));
        assert_eq!(hits, vec![format!("svc://notes/n{i:03}.md")], "note {i}, round {}", newest[i]);
    }
    let again = s.sync(json!({}));
    let r = &again["result"];
    assert_eq!(
        (&r["totalFilesAdded"], &r["totalFilesUpdated"], &r["totalFilesErrored"]),
        (&json!(0), &json!(0), &json!(0)),
        "{again}"
    );
    assert_eq!(r["collections"][0]["filesDeactivated"], 0, "{again}");
}
