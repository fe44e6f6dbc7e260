//! `/vendor/pdfjs/*`: the PDF viewer's library, worker, character maps and standard fonts
//! from the `pdfjs-dist` package, embedded in the binary (`web/vendor/pdfjs`, checked against
//! its `SHA256SUMS`) and served same-origin. A fixed allowlist of files, one path segment
//! below each folder, no traversal (raw or percent-encoded); only embedded files exist.

use super::not_found;
use crate::error::ApiReply;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;
use protocol::{ApiError, ErrorCode};

const PREFIX: &str = "/vendor/pdfjs/";

/// Where an allowed request path lives in the package, and its content type.
fn allowed(rest: &str) -> Option<(String, &'static str)> {
    let bad = |s: &str| s.is_empty() || s.contains(['/', '\\', '\0']) || s.starts_with('.') || s.contains("..");
    if rest == "pdf.worker.min.mjs" || rest == "pdf.min.mjs" {
        return Some((rest.into(), "text/javascript"));
    }
    if let Some(file) = rest.strip_prefix("cmaps/") {
        if !bad(file) && file.ends_with(".bcmap") {
            return Some((format!("cmaps/{file}"), "application/octet-stream"));
        }
    }
    if let Some(file) = rest.strip_prefix("standard_fonts/") {
        if !bad(file) {
            if file.ends_with(".ttf") {
                return Some((format!("standard_fonts/{file}"), "font/ttf"));
            }
            if file.ends_with(".pfb") {
                return Some((format!("standard_fonts/{file}"), "application/octet-stream"));
            }
        }
    }
    None
}

#[derive(rust_embed::Embed)]
#[folder = "../web/vendor/pdfjs/"]
struct PdfJs;

pub async fn pdfjs(req: Request) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return ApiReply::from(ApiError::new(ErrorCode::MethodNotAllowed, "Method not allowed")).into_response();
    }
    let raw = req.uri().path();
    let Some(rest_raw) = raw.strip_prefix(PREFIX) else { return not_found() };
    let Ok(rest) = percent_decode_str(rest_raw).decode_utf8() else { return not_found() };
    // Percent-encoding may not smuggle in separators, dots or NULs.
    let special = |s: &str| s.chars().filter(|c| matches!(c, '/' | '\\' | '.' | '\0')).count();
    if special(&rest) != special(rest_raw) {
        return not_found();
    }
    let Some((rel, mime)) = allowed(&rest) else { return not_found() };
    let Some(file) = PdfJs::get(&rel) else { return not_found() };
    let len = file.data.len();
    let body = if req.method() == Method::HEAD { Vec::new() } else { file.data.into_owned() };
    let mut resp = (StatusCode::OK, body).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    if let Ok(v) = HeaderValue::from_str(&len.to_string()) {
        h.insert(header::CONTENT_LENGTH, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::{allowed, PdfJs};
    use sha2::{Digest, Sha256};

    /// Every embedded file is the one `SHA256SUMS` names, and every named file is embedded.
    #[test]
    fn embedded_files_match_their_checksums() {
        let sums = include_str!("../../../web/vendor/pdfjs/SHA256SUMS");
        let mut named = 0;
        for line in sums.lines() {
            let (hash, path) = line.split_once("  ").expect("sha256sum line");
            let file = PdfJs::get(path).unwrap_or_else(|| panic!("{path} is not embedded"));
            assert_eq!(hex::encode(Sha256::digest(&file.data)), hash, "{path}");
            named += 1;
        }
        assert_eq!(
            PdfJs::iter().filter(|f| f != "SHA256SUMS").count(),
            named,
            "an embedded file is missing from SHA256SUMS"
        );
    }

    #[test]
    fn allowlist() {
        assert_eq!(allowed("pdf.worker.min.mjs").unwrap().1, "text/javascript");
        assert_eq!(allowed("pdf.min.mjs").unwrap().0, "pdf.min.mjs");
        assert_eq!(allowed("cmaps/78-H.bcmap").unwrap().0, "cmaps/78-H.bcmap");
        assert_eq!(allowed("standard_fonts/FoxitSerif.pfb").unwrap().1, "application/octet-stream");
        assert_eq!(allowed("standard_fonts/LiberationSans-Regular.ttf").unwrap().1, "font/ttf");
        for bad in [
            "pdf.mjs",
            "LICENSE",
            "SHA256SUMS",
            "cmaps/../package.json",
            "cmaps/a/b.bcmap",
            "cmaps/x.txt",
            "standard_fonts/..ttf",
            "cmaps/.bcmap",
            "../build/pdf.worker.min.mjs",
            "cmaps/a\\b.bcmap",
        ] {
            assert!(allowed(bad).is_none(), "{bad}");
        }
    }
}
