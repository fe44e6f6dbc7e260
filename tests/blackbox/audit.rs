//! `GET /api/audit` and `svc audit`: a vault with a link to nothing, anchors that are missing,
//! two notes of one name named by a bare link, a file that cannot be read, files left out,
//! and (its folder not watched) a note edited, one deleted and one added behind the index's
//! back; each found, counted, listed in order and bounded; bad input answered with the envelope.

use crate::common::*;
use crate::models::{install, test_models, wait_embedded, EMBED};
use serde_json::Value;

const HOME: &str = "# Home\n## Start\n\
See [[Search]], a [[Missing Note]], a missing heading [[Plugins/Search#No Such]] and [[#Nowhere]].\n\
Back to [[#Start]] and [the guide](Guide.md).\n";

fn vault(s: &Server) -> std::path::PathBuf {
    let v = s.path("vault");
    write_notes(
        &v,
        &[
            ("Home.md", HOME),
            ("Guide.md", "# Guide\nRead me first.\n"),
            ("Old.md", "# Old\nSoon deleted.\n"),
            ("Plugins/Search.md", "# Search\n## Options\n"),
            ("Archive/Search.md", "# Old search\n"),
            ("broken.pdf", "%PDF-1.4 this is no PDF at all"),
            ("song.mp3", "not notes"),
            (".obsidian/app.json", "{}"),
        ],
    );
    s.add_collection_with(&v, "v", false);
    v
}

fn audit(s: &Server, query: &str) -> Value {
    let r = s.get(&format!("/api/audit{query}"));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

fn of_kind<'a>(a: &'a Value, kind: &str) -> Vec<&'a Value> {
    a["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

fn count(a: &Value, kind: &str) -> u64 {
    a["counts"].as_array().unwrap().iter().find(|c| c["kind"] == kind).unwrap()["count"].as_u64().unwrap()
}

#[test]
fn audit_finds_each_kind_in_a_stable_bounded_order() {
    let s = Server::start();
    let v = vault(&s);
    let a = audit(&s, "");
    assert_eq!(a["collections"], serde_json::json!(["v"]));
    assert_eq!(a["clean"], false);
    assert_eq!(a["vectorsChecked"], false, "no embedding model is loaded");

    let broken = of_kind(&a, "broken_link");
    assert_eq!(broken.len(), 1, "{a}");
    assert_eq!(broken[0]["path"], "Home.md");
    assert_eq!(broken[0]["uri"], "svc://v/Home.md");
    assert_eq!(broken[0]["target"], "Missing Note");
    assert_eq!(broken[0]["line"], 3);
    assert_eq!(broken[0]["severity"], "warning");

    let anchors = of_kind(&a, "missing_anchor");
    let named: Vec<&str> = anchors.iter().map(|f| f["anchor"].as_str().unwrap()).collect();
    assert_eq!(named, ["No Such", "Nowhere"], "in column order: {a}");
    assert!(anchors[1]["message"].as_str().unwrap().contains("this note"), "{a}");

    let ambiguous = of_kind(&a, "ambiguous_name");
    assert_eq!(ambiguous.len(), 1, "{a}");
    assert_eq!(ambiguous[0]["target"], "Search");
    assert_eq!(ambiguous[0]["candidates"], serde_json::json!(["Archive/Search.md", "Plugins/Search.md"]));

    let unreadable = of_kind(&a, "unreadable");
    assert_eq!(unreadable.len(), 1, "{a}");
    assert_eq!(unreadable[0]["path"], "broken.pdf");
    assert_eq!(unreadable[0]["severity"], "error");

    let left: Vec<(&str, &str)> = of_kind(&a, "left_out")
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["rule"]["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(left, [(".obsidian/", "never_notes"), ("song.mp3", "not_included")], "{a}");
    for kind in ["changed_on_disk", "gone_from_disk", "not_indexed", "no_vectors"] {
        assert_eq!(count(&a, kind), 0, "{kind}: {a}");
    }

    // Behind the index's back (the folder is not watched): an edit, a deletion, a new note.
    std::fs::write(v.join("Guide.md"), "# Guide\nRead me first, and then again.\n").unwrap();
    std::fs::remove_file(v.join("Old.md")).unwrap();
    std::fs::write(v.join("New.md"), "# New\n").unwrap();
    let a = audit(&s, "?collection=v");
    let paths = |kind: &str| -> Vec<String> {
        of_kind(&a, kind).iter().map(|f| f["path"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(paths("changed_on_disk"), ["Guide.md"], "{a}");
    assert_eq!(paths("gone_from_disk"), ["Old.md"], "{a}");
    assert_eq!(paths("not_indexed"), ["New.md"], "{a}");
    // The same audit twice lists the same findings in the same order.
    let again = audit(&s, "?collection=v");
    assert_eq!(a["findings"], again["findings"]);
    let kinds: Vec<&str> = a["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect();
    let order: Vec<&str> = a["counts"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    let rank = |k: &str| order.iter().position(|o| *o == k).unwrap();
    assert!(kinds.windows(2).all(|w| rank(w[0]) <= rank(w[1])), "grouped by kind in order: {kinds:?}");

    // A sync mends what drifted.
    s.sync(serde_json::json!({"collection": "v"}));
    let a = audit(&s, "");
    for kind in ["changed_on_disk", "gone_from_disk", "not_indexed"] {
        assert_eq!(count(&a, kind), 0, "{kind}: {a}");
    }

    // Bounded: every kind counted, one of each listed.
    let one = audit(&s, "?limit=1");
    assert_eq!(one["limitPerKind"], 1);
    assert_eq!(count(&one, "missing_anchor"), 2);
    assert_eq!(of_kind(&one, "missing_anchor").len(), 1);
    let c = one["counts"].as_array().unwrap().iter().find(|c| c["kind"] == "missing_anchor").unwrap().clone();
    assert_eq!(c["listed"], 1);

    s.get("/api/audit?limit=0").assert_error(400, "VALIDATION");
    s.get("/api/audit?limit=many").assert_error(400, "VALIDATION");
    s.get("/api/audit?collection=nope").assert_error(404, "NOT_FOUND");
    s.get("/api/audit?collection=a%00b").assert_error(400, "VALIDATION");

    // The CLI: the counts and a line per finding; exit 1 while there are warnings.
    let out = s.cmd().args(["audit", "--collection", "v"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("broken_link") && text.contains("v/Home.md:3"), "{text}");
    let out = s.cmd().args(["audit", "--json", "--limit", "5"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["limitPerKind"], 5);
    let out = s.cmd().args(["audit", "--limit", "0"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
}

#[test]
fn a_clean_collection_audits_clean_and_its_vectors_are_checked() {
    if !crate::prepared::models("audit::a_clean_collection_audits_clean_and_its_vectors_are_checked") {
        return;
    }
    let s = Server::start();
    install(&s.path("cache"), &test_models().join("tiny/embed"), EMBED);
    let n = s.path("notes");
    write_notes(&n, &[("a.md", "# A\nSee [[b]].\n"), ("b.md", "# B\nBack to [[a#A]].\n")]);
    s.add_collection(&n, "notes");
    wait_embedded(&s);
    let a = audit(&s, "");
    assert_eq!(a["vectorsChecked"], true, "{a}");
    assert_eq!(a["clean"], true, "{a}");
    assert!(a["findings"].as_array().unwrap().is_empty(), "{a}");
    let out = s.cmd().arg("audit").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no findings"));
}
