//! The security rules, applied to every request in one middleware: Host check (blocks DNS
//! rebinding), the CSRF/token rule for unsafe methods, and the response headers.

use crate::error::error_response;
use crate::AppState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use protocol::{ApiError, ErrorCode};
use subtle::ConstantTimeEq;

pub const TOKEN_HEADER: &str = "x-svc-token";

pub struct SecurityPolicy {
    hosts: [String; 3],
    origins: [String; 2],
    token: Option<String>,
}

impl SecurityPolicy {
    pub fn new(port: u16, token: Option<String>) -> Self {
        SecurityPolicy {
            hosts: [format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}")],
            origins: [format!("http://localhost:{port}"), format!("http://127.0.0.1:{port}")],
            token: token.filter(|t| !t.is_empty()),
        }
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| self.hosts.iter().any(|a| a.eq_ignore_ascii_case(h)))
    }

    fn token_matches(&self, headers: &HeaderMap) -> bool {
        match (&self.token, headers.get(TOKEN_HEADER)) {
            (Some(expected), Some(given)) => bool::from(expected.as_bytes().ct_eq(given.as_bytes())),
            _ => false,
        }
    }

    /// GET/HEAD/OPTIONS pass. Others pass with no Origin, a same-origin Origin, or the token.
    fn unsafe_allowed(&self, headers: &HeaderMap) -> bool {
        if self.token_matches(headers) {
            return true;
        }
        match headers.get(header::ORIGIN) {
            None => true,
            Some(o) => o.to_str().is_ok_and(|o| self.origins.iter().any(|a| a == o)),
        }
    }

    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
        if !self.host_allowed(headers) {
            return Err(ApiError::new(ErrorCode::CsrfViolation, "Forbidden: unexpected Host header"));
        }
        let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if !safe && !self.unsafe_allowed(headers) {
            return Err(ApiError::new(ErrorCode::CsrfViolation, "Forbidden: cross-origin request rejected"));
        }
        Ok(())
    }
}

/// The CSP of a file served from a note's folder (`/api/doc-asset`): a sandbox with nothing
/// allowed but images and styles of its own.
pub const ASSET_CSP: &str = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'";

/// The CSP of every other reply: pages run only this origin's scripts, load nothing from
/// elsewhere and submit forms nowhere else.
const PAGE_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
     font-src 'self'; worker-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

fn add_headers(headers: &mut HeaderMap) {
    // A route that set a stricter policy of its own keeps it.
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    }
    let set = [
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-resource-policy", "same-origin"),
    ];
    for (k, v) in set {
        headers.insert(k, HeaderValue::from_static(v));
    }
}

pub async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let mut resp = match state.security.check(req.method(), req.headers()) {
        Ok(()) => next.run(req).await,
        Err(e) => error_response(&e),
    };
    add_headers(resp.headers_mut());
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn host_and_origin_rules() {
        let p = SecurityPolicy::new(3000, Some("s3cret".into()));
        let ok_host = [("host", "127.0.0.1:3000")];
        assert!(p.check(&Method::GET, &headers(&ok_host)).is_ok());
        assert!(p.check(&Method::GET, &headers(&[("host", "evil.com:3000")])).is_err());
        assert!(p.check(&Method::GET, &headers(&[])).is_err());
        assert!(p.check(&Method::POST, &headers(&ok_host)).is_ok());
        let same = [("host", "localhost:3000"), ("origin", "http://localhost:3000")];
        assert!(p.check(&Method::DELETE, &headers(&same)).is_ok());
        let cross = [("host", "localhost:3000"), ("origin", "http://evil.com")];
        assert!(p.check(&Method::PUT, &headers(&cross)).is_err());
        assert!(p.check(&Method::GET, &headers(&cross)).is_ok());
        let with_token = [("host", "localhost:3000"), ("origin", "http://evil.com"), ("x-svc-token", "s3cret")];
        assert!(p.check(&Method::POST, &headers(&with_token)).is_ok());
        let bad_token = [("host", "localhost:3000"), ("origin", "http://evil.com"), ("x-svc-token", "nope")];
        assert!(p.check(&Method::PATCH, &headers(&bad_token)).is_err());
    }
}
