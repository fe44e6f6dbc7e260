//! Content types: `contentTypes` rules of index.yml type the notes (front matter, prefix,
//! path), nudge rankings by at most ±0.05, filter by `category`, and show in status and
//! diagnose only as ids, boosts and a fingerprint.

use crate::common::{write_notes, Server};
use serde_json::{json, Value};

fn uris_of(v: &Value) -> Vec<String> {
    v["results"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap().to_string()).collect()
}

fn with_rules(s: &mut Server, rules: &str) {
    s.stop();
    let path = s.path("config/index.yml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    if let Some(i) = text.find("contentTypes:") {
        text.truncate(i);
    }
    text.push_str(rules);
    std::fs::write(&path, text).unwrap();
    s.spawn();
}

#[test]
fn content_type_rules_type_notes_nudge_rankings_and_filter() {
    let mut s = Server::start();
    let root = s.path("notes");
    // The essay and the meeting note say the same; the meeting note is one word longer, so
    // BM25 ranks it a hair lower. A long note that names the bridge once anchors the bottom
    // of the min-max range.
    let shared = "The budget review of the bridge went long. We read every line of the budget, \
                  compared it with last year, and agreed on the review of the bridge costs.";
    let filler = "Words about the weather and the river and the town. ".repeat(30);
    write_notes(
        &root,
        &[
            ("essays/budget.md", &format!("# Thoughts\n\n{shared}\n")),
            ("meetings/weekly.md", &format!("# Weekly\n\n{shared} Done.\n")),
            ("misc/other.md", &format!("# Other\n\n{filler} A bridge.\n")),
            ("misc/typed.md", "---\ntype: essay\n---\n# Typed\n\nA typed note about a budget.\n"),
        ],
    );
    s.add_collection(&root, "notes");
    let query = json!({"query": "budget review bridge", "collection": "notes"});
    let before = s.search(query.clone());
    assert_eq!(uris_of(&before)[..2], ["svc://notes/essays/budget.md", "svc://notes/meetings/weekly.md"], "{before}");
    let types: Vec<&str> =
        before["results"].as_array().unwrap().iter().map(|r| r["contentType"].as_str().unwrap()).collect();
    assert_eq!(types[..2], ["prose", "meeting"], "path heuristics without rules: {before}");
    let status = s.get("/api/status").json();
    assert_eq!(status["contentTypeBoost"], json!({"rules": [], "rulesFingerprint": "none"}));

    // Rules: the meetings prefix boosts, essays (by prefix or front matter) are held back.
    with_rules(
        &mut s,
        "contentTypes:\n- id: minutes\n  prefixes: [meetings/]\n  searchBoost: 2\n- id: essay\n  prefixes: [essays/]\n  searchBoost: 0.5\n",
    );
    let after = s.search(query.clone());
    assert_eq!(uris_of(&after)[..2], ["svc://notes/meetings/weekly.md", "svc://notes/essays/budget.md"], "{after}");
    assert_eq!(after["results"][0]["contentType"], "minutes");
    // Exactly ±0.05 on the normalized scores: the essay had 1.0.
    let score = |v: &Value, i: usize| v["results"][i]["score"].as_f64().unwrap();
    assert!((score(&after, 1) - 0.95).abs() < 1e-6, "{after}");
    assert!((score(&after, 0) - (score(&before, 1) + 0.05).min(1.0)).abs() < 1e-6, "{after}");
    // The same two notes in the first two places: the boost reorders, it adds nothing.
    let two = |v: &Value| {
        let mut u = uris_of(v)[..2].to_vec();
        u.sort();
        u
    };
    assert_eq!(two(&before), two(&after));

    let status = s.get("/api/status").json();
    let boost = &status["contentTypeBoost"];
    assert_eq!(boost["rules"], json!([{"id": "minutes", "searchBoost": 2.0}, {"id": "essay", "searchBoost": 0.5}]));
    let fingerprint = boost["rulesFingerprint"].as_str().unwrap().to_string();
    assert!(fingerprint.starts_with("ctr1:"), "{boost}");
    assert!(!status.to_string().contains("meetings/"), "prefixes are never exposed");

    // `category` filters by content type too, and the boost never bypasses a filter.
    let minutes = s.search(json!({"query": "budget", "category": "minutes"}));
    assert_eq!(uris_of(&minutes), ["svc://notes/meetings/weekly.md"], "{minutes}");
    let essays = s.search(json!({"query": "budget", "category": "essay"}));
    let mut got = uris_of(&essays);
    got.sort();
    assert_eq!(got, ["svc://notes/essays/budget.md", "svc://notes/misc/typed.md"], "front matter type: {essays}");

    let d =
        s.post("/api/query/diagnose", json!({"query": "typed budget", "target": "svc://notes/misc/typed.md"})).json();
    let t = &d["target"];
    assert_eq!(
        (t["contentType"].as_str(), t["contentTypeSource"].as_str()),
        (Some("essay"), Some("frontmatter-type")),
        "{d}"
    );
    assert_eq!(t["contentTypeRulesFingerprint"], fingerprint.as_str());
    assert_eq!(t["contentTypeFingerprintMatches"], true);
    assert!((t["contentTypeBoost"].as_f64().unwrap() + 0.05).abs() < 1e-9, "{d}");
    let m =
        s.post("/api/query/diagnose", json!({"query": "budget", "target": "svc://notes/meetings/weekly.md"})).json();
    assert_eq!(m["target"]["contentTypeSource"], "prefix");

    // Another boost is another fingerprint.
    with_rules(
        &mut s,
        "contentTypes:\n- id: minutes\n  prefixes: [meetings/]\n  searchBoost: 1.5\n- id: essay\n  prefixes: [essays/]\n  searchBoost: 0.5\n",
    );
    let changed = s.get("/api/status").json()["contentTypeBoost"]["rulesFingerprint"].as_str().unwrap().to_string();
    assert_ne!(changed, fingerprint);
    assert!(changed.starts_with("ctr1:"));
}
