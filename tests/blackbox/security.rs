//! The security rules and the error envelope on every route.

use crate::common::*;
use serde_json::json;

#[test]
fn host_header_and_csrf_rules() {
    let s = Server::start_with(&[("SVC_API_TOKEN", "tok-123")]);
    let p = s.port;
    let host = format!("localhost:{p}");
    let same = format!("http://127.0.0.1:{p}");
    assert_eq!(raw_request(p, "GET", "/api/health", &[("Host", &host)], b"").status, 200);
    raw_request(p, "GET", "/api/health", &[("Host", "evil.example")], b"").assert_error(403, "CSRF_VIOLATION");
    raw_request(p, "GET", "/api/status", &[("Host", &format!("evil.example:{p}"))], b"")
        .assert_error(403, "CSRF_VIOLATION");
    assert_eq!(raw_request(p, "GET", "/api/health", &[("Host", &format!("[::1]:{p}"))], b"").status, 200);
    // GET never needs a token, even cross-origin
    assert_eq!(raw_request(p, "GET", "/api/collections", &[("Origin", "http://evil.example")], b"").status, 200);
    for method in ["POST", "PUT", "PATCH", "DELETE"] {
        raw_request(p, method, "/api/sync", &[("Origin", "http://evil.example")], b"{}")
            .assert_error(403, "CSRF_VIOLATION");
        raw_request(p, method, "/api/sync", &[("Origin", "http://evil.example"), ("X-SVC-Token", "wrong")], b"{}")
            .assert_error(403, "CSRF_VIOLATION");
    }
    assert_eq!(raw_request(p, "POST", "/api/sync", &[], b"{}").status, 202);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(raw_request(p, "POST", "/api/sync", &[("Origin", &same)], b"{}").status, 202);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let ok =
        raw_request(p, "POST", "/api/sync", &[("Origin", "http://evil.example"), ("X-SVC-Token", "tok-123")], b"{}");
    assert_eq!(ok.status, 202);
    // a port mismatch in the Origin is cross-origin
    raw_request(p, "POST", "/api/sync", &[("Origin", "http://localhost:1")], b"{}").assert_error(403, "CSRF_VIOLATION");
}

#[test]
fn headers_envelopes_and_body_limits() {
    let s = Server::start();
    let r = s.get("/api/health");
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("x-frame-options"), Some("DENY"));
    assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
    assert!(r.header("content-security-policy").is_some_and(|c| c.contains("default-src 'self'")));
    assert!(r.header("content-type").is_some_and(|c| c.starts_with("application/json")));
    s.get("/api/does-not-exist").assert_error(404, "NOT_FOUND");
    s.get("/").assert_error(404, "NOT_FOUND");
    let e = s.get("/api/nope");
    assert_eq!(e.header("x-frame-options"), Some("DENY"));
    s.request("DELETE", "/api/search", None).assert_error(405, "METHOD_NOT_ALLOWED");
    s.request("GET", "/api/sync", None).assert_error(405, "METHOD_NOT_ALLOWED");
    s.request("PUT", "/api/collections", None).assert_error(405, "METHOD_NOT_ALLOWED");
    let bad = raw_request(s.port, "POST", "/api/search", &[("Content-Type", "application/json")], b"{\"query\": ");
    bad.assert_error(400, "VALIDATION");
    assert_eq!(bad.json()["error"]["message"], "Invalid JSON body");
    raw_request(s.port, "POST", "/api/search", &[], b"[1,2]").assert_error(400, "VALIDATION");
    raw_request(s.port, "POST", "/api/search", &[], b"\xff\xfe").assert_error(400, "VALIDATION");
    let huge = vec![b' '; 17 * 1024 * 1024];
    raw_request(s.port, "POST", "/api/search", &[], &huge).assert_error(413, "PAYLOAD_TOO_LARGE");
    s.post("/api/search", json!({ "query": "a\u{0}b" })).assert_error(400, "VALIDATION");
    s.get("/api/docs?collection=a%00b").assert_error(400, "VALIDATION");
    // still healthy after all of that
    assert_eq!(s.get("/api/health").status, 200);
}

#[test]
fn vendor_pdfjs_allowlist_and_traversal() {
    let s = Server::start();
    let w = s.get("/vendor/pdfjs/pdf.worker.min.mjs");
    assert_eq!(w.status, 200, "pdfjs-dist must be installed (npm ci): {}", String::from_utf8_lossy(&w.body));
    assert_eq!(w.header("content-type"), Some("text/javascript"));
    assert_eq!(w.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert!(w.body.len() > 1000);
    assert_eq!(s.get("/vendor/pdfjs/cmaps/78-H.bcmap").status, 200);
    let font = s.get("/vendor/pdfjs/standard_fonts/FoxitSerif.pfb");
    assert_eq!((font.status, font.header("content-type")), (200, Some("application/octet-stream")));
    for bad in [
        "/vendor/pdfjs/pdf.mjs",
        "/vendor/pdfjs/../package.json",
        "/vendor/pdfjs/cmaps/../../package.json",
        "/vendor/pdfjs/cmaps/%2e%2e%2fpackage.json",
        "/vendor/pdfjs/cmaps%2F78-H.bcmap",
        "/vendor/pdfjs/cmaps/78-H.bcmap%00",
        "/vendor/pdfjs/standard_fonts/..%5C..%5Cpackage.json",
        "/vendor/pdfjs/cmaps/none.bcmap",
        "/vendor/pdfjs/",
    ] {
        let r = s.get(bad);
        assert_eq!(r.status, 404, "{bad}");
        assert_eq!(r.json()["error"]["code"], "NOT_FOUND", "{bad}");
    }
    s.request("POST", "/vendor/pdfjs/pdf.worker.min.mjs", None).assert_error(405, "METHOD_NOT_ALLOWED");
}
