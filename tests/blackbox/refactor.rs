//! Reference-safe rename, move and duplicate.

use crate::common::*;
use serde_json::{json, Value};

fn corpus(s: &Server) -> std::path::PathBuf {
    let n = s.path("vault");
    write_notes(
        &n,
        &[
            ("a/target.md", "# Target Note\n## Section\nBack to [ref](../b/ref.md).\n"),
            ("a/sibling.md", "# Sibling\nSee [t](target.md) and [[target]].\n"),
            ("b/ref.md", "# Ref\nPlain [[target]], aliased [[target|the target]], heading [[target#Section]], relative [t](../a/target.md#section).\n"),
            ("b/by-title.md", "# By title\nTitle link [[Target Note]] needs nothing.\n"),
        ],
    );
    s.add_collection(&n, "vault");
    n
}

fn id(s: &Server, rel: &str) -> String {
    s.get(&format!("/api/doc?uri=svc://vault/{rel}")).json()["docid"].as_str().unwrap().replace('#', "%23")
}

fn resolved_targets(s: &Server, rel: &str) -> Vec<Value> {
    let l = s.get(&format!("/api/doc/{}/links", id(s, rel))).json();
    l["links"].as_array().unwrap().iter().map(|x| x["resolvedUri"].clone()).collect()
}

#[test]
fn rename_rewrites_every_reference_and_keeps_links_resolving() {
    let s = Server::start();
    let root = corpus(&s);
    let tid = id(&s, "a/target.md");
    let plan = s.post(
        &format!("/api/doc/{tid}/refactor-plan").replace("/api/doc/", "/api/docs/"),
        json!({ "operation": "rename", "name": "renamed" }),
    );
    assert_eq!(plan.status, 200, "{}", String::from_utf8_lossy(&plan.body));
    let p = plan.json();
    assert_eq!(p["schemaVersion"], "1.0");
    assert_eq!(p["canApply"], true, "{p}");
    assert_eq!(p["nextRelPath"], "a/renamed.md");
    let digest = p["planDigest"].as_str().unwrap().to_string();
    assert_eq!(digest.len(), 64);
    let again =
        s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "rename", "name": "renamed" })).json();
    assert_eq!(again["planDigest"], digest.as_str(), "plans are deterministic");
    let refs = p["examinedReferences"].as_array().unwrap();
    let rewrite = refs.iter().filter(|r| r["classification"] == "rewriteable").count();
    assert_eq!(rewrite, 6, "{p}");
    assert!(refs.iter().any(|r| r["targetRef"] == "Target Note" && r["classification"] == "unchanged"));

    s.post(
        &format!("/api/docs/{tid}/rename"),
        json!({ "name": "renamed", "planDigest": digest, "schemaVersion": "1.0" }),
    )
    .assert_error(400, "VALIDATION");
    s.post(
        &format!("/api/docs/{tid}/rename"),
        json!({ "name": "renamed", "planDigest": "0".repeat(64), "schemaVersion": "1.0", "confirmation": "apply" }),
    )
    .assert_error(409, "STALE_PLAN");
    let done = s.post(
        &format!("/api/docs/{tid}/rename"),
        json!({ "name": "renamed", "planDigest": digest, "schemaVersion": "1.0", "confirmation": "apply" }),
    );
    assert_eq!(done.status, 200, "{}", String::from_utf8_lossy(&done.body));
    assert_eq!(done.json()["status"], "applied");
    assert!(!root.join("a/target.md").exists());
    assert_eq!(std::fs::read_to_string(root.join("b/ref.md")).unwrap(),
        "# Ref\nPlain [[renamed]], aliased [[renamed|the target]], heading [[renamed#Section]], relative [t](../a/renamed.md#section).\n");
    let new = "svc://vault/a/renamed.md";
    for rel in ["b/ref.md", "a/sibling.md", "b/by-title.md"] {
        for t in resolved_targets(&s, rel) {
            assert_eq!(t, new, "{rel}");
        }
    }
    // the renamed file keeps its bytes, so its docid
    assert_eq!(id(&s, "a/renamed.md"), tid);
    assert_eq!(uris(&s.search(json!({ "query": "back" }))), vec![new.to_string()]);
}

#[test]
fn move_rewrites_relative_links_both_ways() {
    let s = Server::start();
    let root = corpus(&s);
    let tid = id(&s, "a/target.md");
    // a plain move without a plan is refused when references need rewriting
    s.post(&format!("/api/docs/{tid}/move"), json!({ "folderPath": "c" })).assert_error(409, "CONFLICT");
    let p =
        s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "move", "folderPath": "c/d" })).json();
    assert_eq!(p["canApply"], true, "{p}");
    let r = s.post(
        &format!("/api/docs/{tid}/move"),
        json!({ "folderPath": "c/d", "planDigest": p["planDigest"], "schemaVersion": "1.0", "confirmation": "apply" }),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        std::fs::read_to_string(root.join("c/d/target.md")).unwrap(),
        "# Target Note\n## Section\nBack to [ref](../../b/ref.md).\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a/sibling.md")).unwrap(),
        "# Sibling\nSee [t](../c/d/target.md) and [[target]].\n"
    );
    for rel in ["b/ref.md", "a/sibling.md"] {
        for t in resolved_targets(&s, rel) {
            assert_eq!(t, "svc://vault/c/d/target.md", "{rel}");
        }
    }
    assert_eq!(resolved_targets(&s, "c/d/target.md"), vec![json!("svc://vault/b/ref.md")]);
    // a note without references moves plainly
    let lone = id(&s, "b/by-title.md");
    let plain = s.post(&format!("/api/docs/{lone}/move"), json!({ "folderPath": "e" }));
    assert_eq!(plain.status, 200, "{}", String::from_utf8_lossy(&plain.body));
    assert!(root.join("e/by-title.md").exists());
}

#[test]
fn stale_occupied_unsafe_and_cross_collection_plans_fail_closed() {
    let s = Server::start();
    let root = corpus(&s);
    let tid = id(&s, "a/target.md");
    let p =
        s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "rename", "name": "renamed" })).json();
    // a referencing note changes after planning: the old digest is stale
    std::fs::write(root.join("b/ref.md"), "# Ref\nOnly [[target]] now.\n").unwrap();
    s.sync(json!({}));
    s.post(
        &format!("/api/docs/{tid}/rename"),
        json!({ "name": "renamed", "planDigest": p["planDigest"], "schemaVersion": "1.0", "confirmation": "apply" }),
    )
    .assert_error(409, "STALE_PLAN");
    assert!(root.join("a/target.md").exists());

    // occupied target
    let occ =
        s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "rename", "name": "sibling" })).json();
    assert_eq!(occ["canApply"], false);
    s.post(
        &format!("/api/docs/{tid}/rename"),
        json!({ "name": "sibling", "planDigest": occ["planDigest"], "schemaVersion": "1.0", "confirmation": "apply" }),
    )
    .assert_error(409, "CONFLICT");

    // a referencing file that is not in canonical form cannot be edited safely
    std::fs::write(root.join("b/crlf.md"), "# Crlf\r\nsee [[target]]\r\n").unwrap();
    s.sync(json!({}));
    let unsafe_plan =
        s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "rename", "name": "other" })).json();
    assert_eq!(unsafe_plan["canApply"], false, "{unsafe_plan}");
    s.post(&format!("/api/docs/{tid}/rename"), json!({ "name": "other", "planDigest": unsafe_plan["planDigest"], "schemaVersion": "1.0", "confirmation": "apply" }))
        .assert_error(409, "UNSUPPORTED");
    assert_eq!(std::fs::read_to_string(root.join("b/crlf.md")).unwrap(), "# Crlf\r\nsee [[target]]\r\n");
    assert!(root.join("a/target.md").exists() && !root.join("a/other.md").exists());

    // bad requests
    s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "explode" }))
        .assert_error(400, "VALIDATION");
    s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "rename" })).assert_error(400, "VALIDATION");
    s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "rename", "name": "../x" }))
        .assert_error(400, "VALIDATION");
    s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "move", "folderPath": "../../out" }))
        .assert_error(400, "VALIDATION");
    s.post(&format!("/api/docs/{tid}/refactor-plan"), json!({ "operation": "move", "folderPath": "/srv/archive" }))
        .assert_error(400, "VALIDATION");
    s.post(&format!("/api/docs/{tid}/duplicate"), json!({ "folderPath": "/tmp" })).assert_error(400, "VALIDATION");
    assert!(!root.join("srv").exists() && !root.join("tmp").exists());
    s.post("/api/docs/%23abcdef99/refactor-plan", json!({ "operation": "rename", "name": "x" }))
        .assert_error(404, "NOT_FOUND");
}

#[test]
fn duplicate_copies_and_leaves_links_alone() {
    let s = Server::start();
    let root = corpus(&s);
    let tid = id(&s, "a/target.md");
    let r = s.post(&format!("/api/docs/{tid}/duplicate"), json!({}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["relPath"], "a/target copy.md");
    assert_eq!(std::fs::read(root.join("a/target copy.md")).unwrap(), std::fs::read(root.join("a/target.md")).unwrap());
    assert!(r.json()["refactorWarnings"]["warnings"].as_array().unwrap().len() == 1);
    assert_eq!(s.get("/api/docs?limit=1").json()["total"], 5);
    let named = s.post(&format!("/api/docs/{tid}/duplicate"), json!({ "folderPath": "z", "name": "copy2" }));
    assert_eq!(named.json()["relPath"], "z/copy2.md");
    s.post(&format!("/api/docs/{tid}/duplicate"), json!({ "folderPath": "z", "name": "copy2" }))
        .assert_error(409, "CONFLICT");
}
