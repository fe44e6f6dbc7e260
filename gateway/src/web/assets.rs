//! `/assets/{file}`: the workspace's own scripts, styles and icon (`web/assets`), embedded.
//! One path segment naming an embedded file; an `ETag` from the file's SHA-256, so a
//! browser revalidates instead of running a stale script after an upgrade.

use super::not_found;
use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::Embed)]
#[folder = "../web/assets/"]
pub(super) struct Assets;

fn content_type(name: &str) -> Option<&'static str> {
    match name.rsplit_once('.')?.1 {
        "js" => Some("text/javascript; charset=utf-8"),
        "css" => Some("text/css; charset=utf-8"),
        "svg" => Some("image/svg+xml"),
        _ => None,
    }
}

pub async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    if file.contains(['/', '\\', '\0']) || file.starts_with('.') {
        return not_found();
    }
    let (Some(mime), Some(found)) = (content_type(&file), Assets::get(&file)) else { return not_found() };
    let etag = format!("\"{}\"", hex::encode(&found.metadata.sha256_hash()[..12]));
    let fresh = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str());
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, found.data.into_owned()).into_response()
    };
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_has_a_content_type() {
        let names: Vec<_> = Assets::iter().collect();
        assert!(names.iter().any(|n| n == "app.js"), "{names:?}");
        for n in names {
            assert!(content_type(&n).is_some(), "{n} would answer 404");
        }
    }
}
