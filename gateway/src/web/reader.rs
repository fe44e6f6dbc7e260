//! `/doc?uri=svc://…`: a note rendered for reading, with its front matter, tags, outline,
//! backlinks, outgoing links and similar notes; a PDF opens in the pdf.js viewer and other
//! files show their extracted text. Editing, refactors and live refresh are `reader.js`.

use super::layout::{error_page, page, HtmlPage, Nav, Script};
use super::markdown::{asset_href, doc_href, heading_id, render, LinkTargets};
use crate::error::status_of;
use crate::extract::Params;
use crate::AppState;
use axum::extract::State;
use maud::{html, Markup, PreEscaped};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use protocol::api::{CodeToken, CodeTokensResponse, DocResponse, OcrState};
use protocol::source_kind::{is_text_note, source_kind, SourceKind};
use protocol::{ApiError, Call, DocRef, SimilarQuery};

/// How a document is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum View {
    Markdown,
    Pdf,
    /// A picture beside the text OCR read in it.
    Picture,
    /// Source code: numbered lines, a symbol's line its outline target.
    Code,
    Text,
}

impl View {
    fn of(doc: &DocResponse) -> View {
        match source_kind(&doc.rel_path) {
            // A sheet's canonical text is Markdown tables; a page's, a deck's or mail's, the
            // Markdown of its text.
            Some(kind) if kind.stores_markdown() => View::Markdown,
            Some(SourceKind::Pdf) => View::Pdf,
            Some(SourceKind::Image) => View::Picture,
            Some(SourceKind::Code(_)) => View::Code,
            _ => View::Text,
        }
    }
}

/// Where a picture's text stands, in a sentence.
fn ocr_summary(doc: &DocResponse) -> String {
    match &doc.source.ocr {
        None => "No text was read from this picture.".into(),
        Some(ocr) => match ocr.state {
            OcrState::Pending => "Waiting for OCR: found by its name until its text is read.".into(),
            OcrState::Read if ocr.lines == 0 => format!("Read by {}: no text found.", ocr.engine),
            OcrState::Read => format!(
                "Read by {}: {} line{}, mean confidence {:.0}%.",
                ocr.engine,
                ocr.lines,
                if ocr.lines == 1 { "" } else { "s" },
                ocr.confidence * 100.0
            ),
            OcrState::Failed => format!("Could not be read: {}", ocr.error.as_deref().unwrap_or("unknown error")),
        },
    }
}

async fn fetch<C: Call>(s: &AppState, call: C) -> Result<C::Reply, ApiError> {
    s.worker.call(call).await?.decode()
}

pub async fn doc(State(s): State<AppState>, p: Params) -> HtmlPage {
    let uri = match p.svc_uri("uri") {
        Ok(Some(u)) => u,
        Ok(None) => return error_page(axum::http::StatusCode::BAD_REQUEST, "uri is required: /doc?uri=svc://…"),
        Err(e) => return error_page(status_of(e.code), &e.message),
    };
    let doc: DocResponse = match fetch(&s, protocol::GetDoc { doc: DocRef::Uri(uri.clone()) }).await {
        Ok(d) => d,
        Err(e) => return error_page(status_of(e.code), &e.message),
    };
    let by = || DocRef::Uri(doc.uri.clone());
    let similar_query = SimilarQuery { limit: 5, threshold: 0.5, cross_collection: false };
    let view = View::of(&doc);
    let tokens = async {
        match view {
            View::Code => fetch(&s, protocol::CodeTokens { doc: by() }).await,
            _ => Ok(CodeTokensResponse::default()),
        }
    };
    let (sections, links, backlinks, similar, tokens) = tokio::join!(
        fetch(&s, protocol::Sections { doc: by() }),
        fetch(&s, protocol::Links { doc: by(), kind: None }),
        fetch(&s, protocol::Backlinks { doc: by() }),
        fetch(&s, protocol::Similar { doc: by(), query: similar_query }),
        tokens,
    );
    let sections = sections.map(|r| r.sections).unwrap_or_default();
    let links = links.map(|r| r.links).unwrap_or_default();
    let backlinks = backlinks.map(|r| r.backlinks).unwrap_or_default();
    // Similar notes need vectors: without them the panel is left out, not an error.
    let similar = similar.map(|r| r.similar).ok();
    // Colouring is a nicety: without it the code is shown plain.
    let tokens = tokens.map(|r| r.tokens).unwrap_or_default();
    let mut targets = LinkTargets::default();
    for l in &links {
        targets.insert(&l.target_ref, l.resolved_uri.clone());
    }
    let anchors: Vec<String> = sections.iter().map(|s| s.anchor.clone()).collect();
    let rendered = (view == View::Markdown).then(|| render(&doc.content, &doc.uri, &targets, &anchors));
    let asset = asset_href(&doc.uri, None);

    let body = html! {
        div.reader-layout {
            article #reader.reader data-docid=(doc.docid) data-uri=(doc.uri) data-rel-path=(doc.rel_path)
                data-source-hash=(doc.source.source_hash) {
                header.doc-head {
                    h1 #doc-title { (doc.title) }
                    p.doc-path { span.collection { (doc.collection) } " / " (doc.rel_path) " · modified " time { (doc.source.modified_at) } }
                    @if !doc.tags.is_empty() {
                        ul.tags aria-label="Tags" { @for t in &doc.tags { li { a href=(format!("/?tag={}", utf8_percent_encode(t, NON_ALPHANUMERIC))) { "#" (t) } } } }
                    }
                    div.toolbar role="toolbar" aria-label="Note actions" {
                        // A PDF's or DOCX's text is derived: only text notes are edited.
                        @if is_text_note(&doc.rel_path) { button #edit-button type="button" { "Edit" } }
                        // A mailbox's message is read-only: its file is the mailbox.
                        @if doc.source.part_of.is_none() {
                            button #rename-button type="button" { "Rename" }
                            button #move-button type="button" { "Move" }
                        }
                        button #deactivate-button type="button" { "Deactivate" }
                        a href=(asset) download { "Original file" }
                    }
                    p #doc-status role="status" aria-live="polite" {}
                }
                @if let Some(r) = &rendered {
                    @if !r.front_matter.is_empty() {
                        table.front-matter aria-label="Front matter" {
                            tbody { @for (k, v) in &r.front_matter { tr { th scope="row" { (k) } td { (v) } } } }
                        }
                    }
                }
                @match (view, &rendered) {
                    (View::Markdown, Some(r)) => {
                        div #doc-body.markdown data-block-lines=(block_lines(&r.block_lines)) { (PreEscaped(&r.html)) }
                    },
                    (View::Code, _) => { (code_view(&doc, &sections, &tokens)) },
                    (View::Pdf, _) => {
                        div #pdf-viewer.pdf-viewer data-src=(asset) {
                            p #pdf-status role="status" { "Loading the PDF…" }
                            div #pdf-pages {}
                        }
                        @if doc.content_available {
                            details.extracted { summary { "Extracted text" } pre { (doc.content) } }
                        }
                    },
                    (View::Picture, _) => {
                        div.picture-view {
                            figure.picture { img #picture src=(asset) alt=(doc.title); }
                            section.recognized aria-label="Recognized text" {
                                h2 { "Recognized text" }
                                p #ocr-status.muted { (ocr_summary(&doc)) }
                                @if !doc.content.trim().is_empty() { pre #doc-body.extracted-text { (doc.content) } }
                            }
                        }
                    },
                    _ => {
                        @if doc.content_available { pre #doc-body.extracted-text { (doc.content) } }
                        @else { p.note { "No text could be extracted from this file." } }
                    },
                }
                (editor())
                (refactor_dialog())
            }
            aside.doc-side aria-label="About this note" {
                @if !sections.is_empty() {
                    nav.outline aria-label="Outline" {
                        h2 { "Outline" }
                        ul {
                            @for sec in sections.iter().take(SIDE_LIST_MAX) { li.(format!("level-{}", sec.level)) { a href=(format!("#{}", heading_id(&sec.anchor))) { (sec.title) } } }
                            (more(sections.len(), "headings"))
                        }
                    }
                }
                section #backlinks aria-label="Backlinks" {
                    h2 { "Backlinks " span.count { (backlinks.len()) } }
                    @if backlinks.is_empty() { p.note { "No note links here." } }
                    ul {
                        @for b in backlinks.iter().take(SIDE_LIST_MAX) { li { a href=(doc_href(&b.source_uri)) { (b.source_title) } " " span.muted { "line " (b.start_line) } } }
                        (more(backlinks.len(), "backlinks"))
                    }
                }
                section #outgoing aria-label="Outgoing links" {
                    h2 { "Links " span.count { (links.len()) } }
                    ul {
                        @for l in links.iter().take(SIDE_LIST_MAX) {
                            li {
                                @match &l.resolved_uri {
                                    Some(u) => a href=(doc_href(u)) { (l.resolved_title.as_deref().unwrap_or(&l.target_ref)) },
                                    None => span.broken title="No note matches this link" { (l.target_ref) " (broken)" },
                                }
                            }
                        }
                        (more(links.len(), "links"))
                    }
                }
                @if let Some(similar) = &similar {
                    section #similar aria-label="Similar notes" {
                        h2 { "Similar" }
                        @if similar.is_empty() { p.note { "Nothing close enough." } }
                        ul { @for d in similar { li { a href=(doc_href(&d.uri)) { (d.title) } " " span.muted { (format!("{:.2}", d.score)) } } } }
                    }
                }
            }
        }
    };
    page(&doc.title, Nav::Reader, Script::Reader, body)
}

/// A code file as numbered lines: each line a block (so `#L<n>` marks it), a symbol's first
/// line carrying its outline anchor, the worker's tokens coloured, the language named.
fn code_view(doc: &DocResponse, sections: &[protocol::api::DocSection], tokens: &[CodeToken]) -> Markup {
    let language = match source_kind(&doc.rel_path) {
        Some(SourceKind::Code(lang)) => lang.as_str(),
        _ => "text",
    };
    let lines: Vec<&str> = doc.content.lines().collect();
    let numbers: Vec<u32> = (1..=u32::try_from(lines.len()).unwrap_or(u32::MAX)).collect();
    // A symbol's first line carries its anchor (the first symbol on a line wins).
    let mut anchors: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    for s in sections.iter().rev() {
        anchors.insert(s.line, heading_id(&s.anchor));
    }
    let mut tokens = tokens.iter().peekable();
    html! {
        div #doc-body.code-view data-language=(language) data-block-lines=(block_lines(&numbers)) {
            @for (line, n) in lines.iter().zip(&numbers) {
                @let mine = std::iter::from_fn(|| tokens.next_if(|t| t.line <= *n)).filter(|t| t.line == *n);
                code.code-line id=[anchors.get(n)] data-line=(n) { (coloured(line, mine)) }
            }
        }
    }
}

/// One line of code with its tokens as `span.tok-<class>`. A token that does not fit the line
/// (the text changed under it, or it is out of order) is left plain.
fn coloured<'a>(line: &str, tokens: impl Iterator<Item = &'a CodeToken>) -> Markup {
    let mut pieces: Vec<(&str, Option<&'static str>)> = Vec::new();
    let mut at = 0usize;
    for t in tokens {
        let (start, end) = (t.start as usize, (t.end as usize).min(line.len()));
        let (Some(before), Some(token)) = (line.get(at..start), line.get(start..end)) else {
            continue;
        };
        pieces.push((before, None));
        pieces.push((token, Some(t.class.as_str())));
        at = end;
    }
    pieces.push((line.get(at..).unwrap_or(""), None));
    html! {
        @for (text, class) in pieces.into_iter().filter(|(text, _)| !text.is_empty()) {
            @if let Some(class) = class { span class=(format!("tok-{class}")) { (text) } } @else { (text) }
        }
    }
}

/// `1,4,9`: the first line of each top-level element of the rendered note.
fn block_lines(lines: &[u32]) -> String {
    lines.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Side lists stop here: a note with thousands of headings or links stays quick to open
/// (the API has them all).
const SIDE_LIST_MAX: usize = 200;

/// "… and N more" after a capped side list.
fn more(total: usize, what: &str) -> Markup {
    html! {
        @if total > SIDE_LIST_MAX { li.muted { "… and " (total - SIDE_LIST_MAX) " more " (what) } }
    }
}

/// The raw-text editor and the conflict view (filled by `reader.js`).
fn editor() -> Markup {
    html! {
        section #editor hidden aria-label="Editor" {
            label for="editor-text" { "Markdown" }
            textarea #editor-text spellcheck="true" rows="24" {}
            div.row {
                button #save-button type="button" { "Save" }
                button #cancel-button type="button" { "Cancel" }
                span.muted { "Ctrl S saves" }
            }
            section #conflict hidden aria-label="Conflict" {
                h2 { "The file changed on disk" }
                p { "Your text was not saved. Compare, then keep yours (overwrites the disk version) or take the disk version." }
                div.conflict-grid {
                    div { h3 { "Yours" } pre #conflict-mine {} }
                    div { h3 { "On disk" } pre #conflict-theirs {} }
                }
                div.row {
                    button #keep-mine type="button" { "Keep mine" }
                    button #take-theirs type="button" { "Take the disk version" }
                }
            }
        }
    }
}

/// Rename and move: the plan first, then apply.
fn refactor_dialog() -> Markup {
    html! {
        dialog #refactor-dialog aria-labelledby="refactor-title" {
            form #refactor-form method="dialog" {
                h2 #refactor-title { "Rename" }
                label #refactor-name-label { "New file name " input #refactor-name type="text"; }
                label #refactor-folder-label hidden { "Folder " input #refactor-folder type="text"; }
                div.row {
                    button #plan-button type="button" { "Show the plan" }
                    button #apply-button type="button" disabled { "Apply" }
                    button #close-refactor type="button" { "Close" }
                }
                div #plan-output aria-live="polite" {}
            }
        }
    }
}
