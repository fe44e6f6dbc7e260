//! `GET|HEAD /api/doc-asset?uri=&path=`: the bytes of a note or of a file next to it, with
//! a single byte `Range`. The worker resolves and contains the path; the gateway streams.

use crate::error::ApiReply;
use crate::extract::Params;
use crate::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use protocol::api::AssetLocation;
use protocol::{ApiError, ErrorCode, ErrorEnvelope};
use std::num::NonZeroUsize;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

fn unsatisfiable(size: u64) -> Response {
    let mut r = crate::error::error_response(&ApiError::new(ErrorCode::Validation, "Requested range not satisfiable"));
    *r.status_mut() = StatusCode::RANGE_NOT_SATISFIABLE;
    if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
        r.headers_mut().insert(header::CONTENT_RANGE, v);
    }
    r
}

/// The bytes of a file of a collection: the file a `svc://` URI names, or `path` relative to
/// that note's folder. One byte range is honored (206).
#[utoipa::path(get, path = "/api/doc-asset", tag = "documents",
    params(("uri" = String, Query, pattern = "^svc://.+", description = "A svc:// URI"),
           ("path" = Option<String>, Query, description = "A file relative to the note's folder"),
           ("Range" = Option<String>, Header, description = "One byte range")),
    responses((status = 200, description = "The file", content_type = "*/*"),
              (status = 206, description = "The requested range", content_type = "*/*"),
              (status = 404, description = "No such file", body = ErrorEnvelope),
              (status = 416, description = "Range not satisfiable", body = ErrorEnvelope)))]
pub async fn doc_asset(State(s): State<AppState>, method: Method, headers: HeaderMap, p: Params) -> Response {
    let uri = match p.svc_uri("uri") {
        Ok(Some(uri)) => uri,
        Ok(None) => return ApiReply::from(ApiError::validation("uri is required")).into_response(),
        Err(e) => return ApiReply::from(e).into_response(),
    };
    let resolved = s.worker.call(protocol::ResolveAsset { uri, path: p.str_opt("path") }).await;
    let AssetLocation { abs_path: path, mime, name, .. } = match resolved.and_then(|r| r.decode()) {
        Ok(location) => location,
        Err(e) => return ApiReply::from(e).into_response(),
    };
    let (path, mime, name) = (path.as_str(), mime.as_str(), name.as_str());
    let Ok(mut file) = tokio::fs::File::open(path).await else {
        return ApiReply::from(ApiError::not_found("Asset not found")).into_response();
    };
    let size = match file.metadata().await {
        Ok(m) => m.len(),
        Err(_) => return ApiReply::from(ApiError::not_found("Asset not found")).into_response(),
    };
    let range = match headers.get(header::RANGE).map(|v| v.to_str()) {
        None => None,
        Some(Err(_)) => return unsatisfiable(size),
        Some(Ok(v)) => {
            let one = NonZeroUsize::MIN;
            match http_range_header::parse_range_header_with_max_ranges(v, one).and_then(|r| r.validate(size)) {
                Ok(ranges) if ranges.len() == 1 => Some(ranges[0].clone()),
                _ => return unsatisfiable(size),
            }
        }
    };
    let (status, start, len) = match &range {
        Some(r) => (StatusCode::PARTIAL_CONTENT, *r.start(), r.end() - r.start() + 1),
        None => (StatusCode::OK, 0, size),
    };
    let mut bytes = Vec::new();
    if method != Method::HEAD {
        if file.seek(std::io::SeekFrom::Start(start)).await.is_err() {
            return ApiReply::from(ApiError::runtime("Asset could not be read")).into_response();
        }
        bytes = Vec::with_capacity(len as usize);
        if (&mut file).take(len).read_to_end(&mut bytes).await.is_err() {
            return ApiReply::from(ApiError::runtime("Asset could not be read")).into_response();
        }
    }
    let mut resp = (status, Body::from(bytes)).into_response();
    let h = resp.headers_mut();
    let mut set = |k: header::HeaderName, v: String| {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    };
    set(header::CONTENT_TYPE, mime.to_string());
    set(header::CONTENT_LENGTH, len.to_string());
    set(header::ACCEPT_RANGES, "bytes".into());
    set(header::CACHE_CONTROL, "no-store".into());
    set(
        header::CONTENT_DISPOSITION,
        format!("inline; filename*=UTF-8''{}", utf8_percent_encode(name, NON_ALPHANUMERIC)),
    );
    if let Some(r) = range {
        set(header::CONTENT_RANGE, format!("bytes {}-{}/{size}", r.start(), r.end()));
    }
    // A file of a note's folder is data, never a page of this origin: opened directly, an
    // HTML or SVG file runs no script and reaches nothing (an `<img>` or pdf.js fetch of it is
    // unaffected).
    set(header::CONTENT_SECURITY_POLICY, crate::security::ASSET_CSP.into());
    resp
}
