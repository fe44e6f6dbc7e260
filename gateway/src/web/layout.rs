//! The page frame every workspace page shares: head, the top bar, the quick switcher, and
//! the one module script of the page. No inline script or style: the CSP forbids both.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};

/// The top bar's entries.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Search,
    Ask,
    Graph,
    Collections,
    Models,
    New,
    /// A page outside the bar (a note).
    Reader,
}

const NAV: [(Nav, &str, &str); 6] = [
    (Nav::Search, "/", "Search"),
    (Nav::Ask, "/ask", "Ask"),
    (Nav::Graph, "/graph", "Graph"),
    (Nav::Collections, "/collections", "Collections"),
    (Nav::Models, "/models", "Models"),
    (Nav::New, "/new", "New note"),
];

/// The module script of a page, under `/assets/`.
#[derive(Clone, Copy)]
pub enum Script {
    /// Only the frame's own script (the switcher and the keys): error pages.
    Frame,
    Search,
    Reader,
    Ask,
    Graph,
    Collections,
    Models,
    New,
}

impl Script {
    fn src(self) -> &'static str {
        match self {
            Script::Frame => "/assets/app.js",
            Script::Search => "/assets/search.js",
            Script::Reader => "/assets/reader.js",
            Script::Ask => "/assets/ask.js",
            Script::Graph => "/assets/graph.js",
            Script::Collections => "/assets/collections.js",
            Script::Models => "/assets/models.js",
            Script::New => "/assets/new.js",
        }
    }
}

/// An HTML page with its status.
pub struct HtmlPage {
    pub status: StatusCode,
    pub markup: Markup,
}

impl IntoResponse for HtmlPage {
    fn into_response(self) -> Response {
        let mut resp = (self.status, self.markup.into_string()).into_response();
        let h = resp.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        resp
    }
}

/// A whole page: `body` inside the frame.
pub fn page(title: &str, nav: Nav, script: Script, body: Markup) -> HtmlPage {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · svc" }
                link rel="stylesheet" href="/assets/app.css";
                link rel="icon" href="/assets/icon.svg" type="image/svg+xml";
                script type="module" src=(script.src()) {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.topbar {
                    a.brand href="/" aria-label="svc home" { "svc" }
                    nav aria-label="Workspace" {
                        ul {
                            @for (n, href, label) in NAV {
                                li { a href=(href) aria-current=[(n == nav).then_some("page")] { (label) } }
                            }
                        }
                    }
                    button #open-switcher type="button" aria-keyshortcuts="Control+K Meta+K" {
                        "Go to… " kbd { "Ctrl K" }
                    }
                }
                main #main tabindex="-1" { (body) }
                dialog #switcher aria-label="Quick switcher" {
                    input #switcher-input type="search" placeholder="Go to a note by title…" autocomplete="off"
                        aria-controls="switcher-list" aria-label="Note title";
                    ul #switcher-list role="listbox" {}
                }
            }
        }
    };
    HtmlPage { status: StatusCode::OK, markup }
}

/// An error shown as a page (a browser route answers HTML, with the API's status).
pub fn error_page(status: StatusCode, message: &str) -> HtmlPage {
    let mut p = page(
        "Error",
        Nav::Reader,
        Script::Frame,
        html! {
            section.error-page {
                h1 { (status.as_u16()) " " (status.canonical_reason().unwrap_or("Error")) }
                p.error { (message) }
                p { a href="/" { "Back to search" } }
            }
        },
    );
    p.status = status;
    p
}
