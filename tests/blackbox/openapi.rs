//! The served OpenAPI document against the running server: every documented operation,
//! called with an empty body and placeholder ids, answers one of its documented statuses
//! with the content type the document names, and never a 5xx (the worker is up: the request
//! is what is wrong).

use crate::common::*;
use serde_json::{json, Value};

#[test]
fn every_documented_operation_answers_a_documented_status() {
    let s = Server::start();
    write_notes(&s.path("notes"), &[("a.md", "# A\nAlpha.\n")]);
    s.add_collection(&s.path("notes"), "notes");
    let doc = s.get("/api/openapi.json").json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 33, "{} paths", paths.len());
    let mut called = 0;
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            // An event stream never ends; a pull would reach for the model hubs.
            if path == "/api/events" || path == "/api/models/pull" {
                continue;
            }
            let concrete = path.replace("{id}", "%23abcdef12").replace("{name}", "nope");
            let body = op.get("requestBody").map(|_| json!({}));
            let r = s.request(&method.to_uppercase(), &concrete, body.as_ref());
            let documented: &Value = &op["responses"][r.status.to_string()];
            assert!(documented.is_object(), "{method} {path} answered {} which it does not document", r.status);
            // Every route lists 500 and 503 for its own failures; an empty body and unknown ids
            // are the client's error (or nothing to do), never the server's.
            assert!(r.status < 500, "{method} {path} answered {} to an empty request", r.status);
            if let Some(content) = documented["content"].as_object() {
                let ct = r.header("content-type").unwrap_or("").split(';').next().unwrap_or("").trim().to_string();
                assert!(
                    content.keys().any(|k| k == "*/*" || *k == ct),
                    "{method} {path}: content type {ct} is not among {:?}",
                    content.keys().collect::<Vec<_>>()
                );
            }
            called += 1;
        }
    }
    assert!(called >= 33, "{called} operations called");
}
