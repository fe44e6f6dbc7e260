//! The browser workspace: pages rendered here (maud; the reader renders Markdown with
//! pulldown-cmark), the workspace's own scripts and styles, and pdf.js. All of it is embedded
//! in the binary at build time, so an installed `svc` serves the whole workspace from any
//! folder. Every page and asset passes through the same security middleware as the API.

mod assets;
mod layout;
mod markdown;
mod pages;
mod reader;
mod vendor;

use crate::error::ApiReply;
use crate::AppState;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;

/// The 404 envelope of an embedded file that does not exist (or may not be named).
fn not_found() -> Response {
    ApiReply::from(protocol::ApiError::not_found("Not found")).into_response()
}

/// The workspace routes (pages, `/assets/*`, `/vendor/pdfjs/*`).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(pages::search))
        .route("/ask", get(pages::ask))
        .route("/graph", get(pages::graph))
        .route("/collections", get(pages::collections))
        .route("/models", get(pages::models))
        .route("/new", get(pages::new_note))
        .route("/doc", get(reader::doc))
        .route("/assets/{file}", get(assets::asset))
        .route("/vendor/pdfjs/{*rest}", any(vendor::pdfjs))
}
