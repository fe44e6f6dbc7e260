//! In-process tests of the router: extraction, the error table, the security rules and the
//! OpenAPI document, through `app()` and `oneshot`, with no worker behind the socket (so a
//! request that passes validation answers 503 `UNAVAILABLE`).

use crate::error::status_of;
use crate::{app, security::SecurityPolicy, AppState, WorkerClient};
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use protocol::{Dirs, ErrorCode};
use serde_json::{json, Value};
use std::sync::Arc;
use tower::ServiceExt;

const PORT: u16 = 3999;

fn state(dir: &std::path::Path) -> AppState {
    let dirs = Dirs {
        config_dir: dir.join("config"),
        data_dir: dir.join("data"),
        cache_dir: dir.join("cache"),
        index_name: "index".into(),
    };
    AppState {
        worker: WorkerClient::start(dirs.worker_socket(), dirs.worker_failure_file()),
        dirs: Arc::new(dirs),
        security: Arc::new(SecurityPolicy::new(PORT, None)),
        mcp_writes: false,
        shutdown: Default::default(),
    }
}

struct Reply {
    status: StatusCode,
    body: Value,
}

async fn send(req: Request<Body>) -> Reply {
    let dir = std::env::temp_dir().join(format!("svc-gateway-test-{}", std::process::id()));
    let resp = app(state(&dir)).oneshot(req).await.expect("the router answers");
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.expect("a body");
    Reply { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

fn request(method: Method, path: &str, body: impl Into<Body>) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, format!("127.0.0.1:{PORT}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.into())
        .expect("a request")
}

async fn post(path: &str, body: Value) -> Reply {
    send(request(Method::POST, path, body.to_string())).await
}

fn assert_error(r: &Reply, status: u16, code: &str) {
    assert_eq!(r.status.as_u16(), status, "{}", r.body);
    assert_eq!(r.body["error"]["code"], code, "{}", r.body);
}

#[tokio::test]
async fn bodies_are_typed_and_errors_name_the_field() {
    let r = post("/api/search", json!({ "query": "x", "limit": "10" })).await;
    assert_error(&r, 400, "VALIDATION");
    assert!(r.body["error"]["message"].as_str().unwrap_or("").starts_with("limit:"), "{}", r.body);
    let r = post("/api/search", json!({ "query": "x", "limit": 2.5 })).await;
    assert_error(&r, 400, "VALIDATION");
    let r = post("/api/search", json!({ "query": "x", "tagsAll": [1] })).await;
    assert!(r.body["error"]["message"].as_str().unwrap_or("").starts_with("tagsAll"), "{}", r.body);
    assert_error(&post("/api/search", json!({ "limit": 5 })).await, 400, "VALIDATION");
    assert_error(&post("/api/search", json!({ "query": "x", "minScore": -1 })).await, 400, "VALIDATION");
    assert_error(&post("/api/search", json!({ "query": "a\u{0}b" })).await, 400, "VALIDATION");
    assert_error(
        &post("/api/query", json!({ "query": "x", "queryModes": [{ "mode": "poem", "text": "y" }] })).await,
        400,
        "VALIDATION",
    );
    let r = post("/api/docs", json!({ "collection": "notes", "title": "t", "collisionPolicy": "replace" })).await;
    assert!(r.body["error"]["message"].as_str().unwrap_or("").starts_with("collisionPolicy"), "{}", r.body);
    let r = post("/api/capture", json!({ "collection": "notes", "source": { "kind": "web", "color": "red" } })).await;
    assert_error(&r, 400, "VALIDATION");
    assert_error(&post("/api/capture", json!({ "collection": "notes", "overwrite": false })).await, 400, "VALIDATION");
    // A collection name that cannot exist is a 404 at the edge, like an unknown one.
    assert_error(&post("/api/search", json!({ "query": "x", "collection": "no such" })).await, 404, "NOT_FOUND");
    // Valid bodies reach the (absent) worker.
    assert_error(
        &post("/api/search", json!({ "query": "x", "limit": 500, "tagsAny": "a,b" })).await,
        503,
        "UNAVAILABLE",
    );
    assert_error(&post("/api/query/diagnose", json!({ "query": "x", "target": "#abcdef" })).await, 503, "UNAVAILABLE");
}

#[tokio::test]
async fn malformed_and_huge_bodies_answer_the_envelope() {
    assert_error(&send(request(Method::POST, "/api/search", "{")).await, 400, "VALIDATION");
    assert_error(&send(request(Method::POST, "/api/search", "[1]")).await, 400, "VALIDATION");
    // An empty body is an empty object: here the query is missing.
    assert_error(&send(request(Method::POST, "/api/search", "")).await, 400, "VALIDATION");
    // Whitespace alone is not JSON (nor an empty body), whatever the route would accept.
    let blank = send(request(Method::POST, "/api/sync", "\n")).await;
    assert_error(&blank, 400, "VALIDATION");
    assert_eq!(blank.body["error"]["message"], "Invalid JSON body");
    let mut big = request(Method::POST, "/api/search", "{}");
    big.headers_mut().insert(header::CONTENT_LENGTH, (64 * 1024 * 1024).to_string().parse().expect("a header"));
    assert_error(&send(big).await, 413, "PAYLOAD_TOO_LARGE");
    let huge = format!("{{\"query\":\"{}\"}}", "x".repeat(17 * 1024 * 1024));
    assert_error(&send(request(Method::POST, "/api/search", huge)).await, 413, "PAYLOAD_TOO_LARGE");
}

#[tokio::test]
async fn security_and_routing_errors_use_the_envelope() {
    let mut foreign = request(Method::GET, "/api/health", Body::empty());
    foreign.headers_mut().insert(header::HOST, "evil.example:3999".parse().expect("a header"));
    assert_error(&send(foreign).await, 403, "CSRF_VIOLATION");
    let mut cross = request(Method::POST, "/api/search", json!({ "query": "x" }).to_string());
    cross.headers_mut().insert(header::ORIGIN, "http://evil.example".parse().expect("a header"));
    assert_error(&send(cross).await, 403, "CSRF_VIOLATION");
    assert_error(&send(request(Method::GET, "/api/nothing", Body::empty())).await, 404, "NOT_FOUND");
    assert_error(&send(request(Method::DELETE, "/api/search", Body::empty())).await, 405, "METHOD_NOT_ALLOWED");
    let health = send(request(Method::GET, "/api/health", Body::empty())).await;
    assert_eq!((health.status, health.body), (StatusCode::OK, json!({ "ok": true })));
}

#[test]
fn every_error_code_has_its_status() {
    let table = [
        (ErrorCode::Validation, 400),
        (ErrorCode::PathNotFound, 400),
        (ErrorCode::HasReferences, 400),
        (ErrorCode::CsrfViolation, 403),
        (ErrorCode::NotFound, 404),
        (ErrorCode::FileNotFound, 404),
        (ErrorCode::Duplicate, 409),
        (ErrorCode::Conflict, 409),
        (ErrorCode::StalePlan, 409),
        (ErrorCode::Unsupported, 409),
        (ErrorCode::PayloadTooLarge, 413),
        (ErrorCode::MethodNotAllowed, 405),
        (ErrorCode::Runtime, 500),
        (ErrorCode::Unavailable, 503),
        (ErrorCode::InvalidInput, 400),
        (ErrorCode::InvalidGoal, 400),
        (ErrorCode::InvalidBudget, 400),
        (ErrorCode::InvalidFilter, 400),
        (ErrorCode::InvalidUri, 400),
        (ErrorCode::IdentityMismatch, 400),
        (ErrorCode::NoEvidence, 404),
        (ErrorCode::IndexChangedDuringCompile, 409),
        (ErrorCode::IndexSnapshotMismatch, 409),
        (ErrorCode::TokenizerUnavailable, 503),
        (ErrorCode::RetrievalFailed, 500),
        (ErrorCode::ContentLoadFailed, 500),
        (ErrorCode::RuntimeError, 500),
        (ErrorCode::ConnectorVerificationFailed, 500),
    ];
    for (code, status) in table {
        assert_eq!(status_of(code).as_u16(), status, "{code:?}");
    }
    assert!(ErrorCode::ALL.iter().all(|c| table.iter().any(|(t, _)| t == c)), "a code without its row");
}

#[tokio::test]
async fn the_openapi_document_covers_every_route() {
    let r = send(request(Method::GET, "/api/openapi.json", Body::empty())).await;
    assert_eq!(r.status, StatusCode::OK);
    let doc = r.body;
    assert!(doc["openapi"].as_str().unwrap_or("").starts_with("3.1"), "{}", doc["openapi"]);
    let paths = doc["paths"].as_object().expect("paths");
    let expected = [
        "/api/health",
        "/api/status",
        "/api/capabilities",
        "/api/collections",
        "/api/collections/{name}",
        "/api/sync",
        "/api/jobs/{id}",
        "/api/search",
        "/api/vsearch",
        "/api/query",
        "/api/query/diagnose",
        "/api/ask",
        "/api/presets",
        "/api/models/pull",
        "/api/models/status",
        "/api/tags",
        "/api/docs",
        "/api/docs/{id}",
        "/api/docs/{id}/deactivate",
        "/api/docs/{id}/refactor-plan",
        "/api/docs/{id}/rename",
        "/api/docs/{id}/move",
        "/api/docs/{id}/duplicate",
        "/api/folders",
        "/api/note-presets",
        "/api/capture",
        "/api/doc-asset",
        "/api/events",
        "/api/doc",
        "/api/doc/{id}/links",
        "/api/doc/{id}/backlinks",
        "/api/doc/{id}/sections",
        "/api/doc/{id}/similar",
        "/api/graph",
        "/api/changes",
        "/api/diff",
        "/api/impact",
        "/api/context",
        "/api/context/verify",
        "/api/jobs/active",
        "/api/explain",
        "/api/audit",
        "/api/docs/autocomplete",
        "/api/connectors",
        "/api/connectors/verify",
    ];
    for path in expected {
        assert!(paths.contains_key(path), "{path} is not documented");
    }
    assert_eq!(paths.len(), expected.len(), "a route without its test entry: {:?}", paths.keys().collect::<Vec<_>>());
    // Every operation has an id of its own (generators name a client's methods by them).
    let mut ids = std::collections::HashSet::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("a path item") {
            let id = op["operationId"].as_str().unwrap_or("");
            assert!(!id.is_empty() && ids.insert(id.to_string()), "{method} {path}: operationId {id:?} is not unique");
            let responses = &op["responses"];
            for status in ["400", "403", "500", "503"] {
                assert!(responses[status].is_object(), "{method} {path} lacks {status}");
            }
            if op.get("requestBody").is_some() {
                assert!(responses["413"].is_object(), "{method} {path} lacks 413");
            }
        }
    }
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for name in [
        "SearchBody",
        "QueryOptions",
        "SearchResponse",
        "ErrorEnvelope",
        "StringList",
        "CaptureSource",
        "Job",
        "AnswerToken",
    ] {
        assert!(schemas.contains_key(name), "{name} is not in the components");
    }
    // Every field of a sync body is optional, so the body is too.
    assert_ne!(doc["paths"]["/api/sync"]["post"]["requestBody"]["required"], true);
    assert_eq!(doc["paths"]["/api/search"]["post"]["requestBody"]["required"], true);
    let search = &doc["paths"]["/api/search"]["post"];
    assert_eq!(
        search["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/SearchBody"
    );
    assert_eq!(
        search["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/SearchResponse"
    );
}
