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
    s.get("/no-such-page").assert_error(404, "NOT_FOUND");
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
    assert_eq!(w.status, 200, "pdf.js is embedded in the binary: {}", String::from_utf8_lossy(&w.body));
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
        "/vendor/pdfjs/SHA256SUMS",
        "/vendor/pdfjs/LICENSE",
    ] {
        let r = s.get(bad);
        assert_eq!(r.status, 404, "{bad}");
        assert_eq!(r.json()["error"]["code"], "NOT_FOUND", "{bad}");
    }
    s.request("POST", "/vendor/pdfjs/pdf.worker.min.mjs", None).assert_error(405, "METHOD_NOT_ALLOWED");
}

/// The workspace's pages and assets come from the binary, with the strict CSP; unknown or
/// traversing asset names are 404 envelopes; a page for a document that does not exist is a
/// 404 page; the server's working directory plays no part.
#[test]
fn workspace_pages_and_assets_are_embedded_and_contained() {
    let s = Server::start();
    for page in ["/", "/ask", "/graph", "/collections", "/models", "/new"] {
        let r = s.get(page);
        assert_eq!(r.status, 200, "{page}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"), "{page}");
        let csp = r.header("content-security-policy").unwrap_or_default();
        assert!(csp.contains("script-src 'self';"), "{page}: {csp}");
        let html = String::from_utf8_lossy(&r.body);
        assert!(html.contains("<script type=\"module\" src=\"/assets/"), "{page}");
        assert!(!html.contains("<script>"), "{page}: no inline script");
    }
    let js = s.get("/assets/app.js");
    assert_eq!((js.status, js.header("content-type")), (200, Some("text/javascript; charset=utf-8")));
    let etag = js.header("etag").unwrap().to_string();
    let again = raw_request(s.port, "GET", "/assets/app.js", &[("If-None-Match", &etag)], b"");
    assert_eq!(again.status, 304);
    assert_eq!(s.get("/vendor/pdfjs/pdf.min.mjs").status, 200);
    for bad in ["/assets/nope.js", "/assets/..%2Fassets%2Fapp.js", "/assets/%2e%2e", "/assets/app.js%00", "/assets/"] {
        let r = s.get(bad);
        assert_eq!(r.status, 404, "{bad}");
        assert_eq!(r.json()["error"]["code"], "NOT_FOUND", "{bad}");
    }
    assert_eq!(s.get("/doc?uri=svc%3A%2F%2Fnotes%2Fnope.md").status, 404);
    assert_eq!(s.get("/doc").status, 400);
    assert_eq!(s.get("/doc?uri=notes%2Fa.md").status, 400);
    s.request("POST", "/", None).assert_error(405, "METHOD_NOT_ALLOWED");
}
