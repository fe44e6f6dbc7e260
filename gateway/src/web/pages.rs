//! The pages whose content the browser fills from the API: search, ask, graph, collections,
//! models and new note. Each is a fixed frame with room reserved for what arrives, so
//! nothing shifts when results come in.

use super::layout::{page, HtmlPage, Nav, Script};
use maud::html;

/// `/`: one search box, the mode, filters, tag facets and the results.
pub async fn search() -> HtmlPage {
    page(
        "Search",
        Nav::Search,
        Script::Search,
        html! {
            form #search-form role="search" {
                div.searchbar {
                    label.sr-only for="q" { "Search notes" }
                    input #q name="q" type="search" placeholder="Search notes  ( / )" autocomplete="off" aria-keyshortcuts="/";
                    label.sr-only for="mode" { "Mode" }
                    select #mode name="mode" {
                        option value="bm25" { "Keyword" }
                        option value="hybrid" { "Hybrid" }
                        option value="vector" { "Vector" }
                    }
                    button type="submit" { "Search" }
                }
                details.filters {
                    summary { "Filters" }
                    div.filter-grid {
                        label { "Collection " select #collection name="collection" { option value="" { "All" } } }
                        label { "Modified since " input #since name="since" type="date"; }
                        label { "until " input #until name="until" type="date"; }
                        label { "Category " input #category name="category" type="text" placeholder="e.g. meeting"; }
                    }
                }
            }
            div.search-layout {
                aside #facets aria-label="Tags" { h2 { "Tags" } ul #tag-list {} }
                section aria-label="Results" {
                    p #search-status role="status" aria-live="polite" { "Type to search your notes." }
                    ol #results.results {}
                }
            }
        },
    )
}

/// `/ask`: a question, the streamed answer with citations, verification when asked.
pub async fn ask() -> HtmlPage {
    page(
        "Ask",
        Nav::Ask,
        Script::Ask,
        html! {
            h1 { "Ask your notes" }
            form #ask-form {
                label for="question" { "Question" }
                textarea #question name="question" rows="3" required placeholder="What did we decide about…?" {}
                div.row {
                    label { input #verify type="checkbox" name="verify"; " Verified answer (every claim checked against the notes; abstains otherwise)" }
                    button type="submit" { "Ask" }
                }
            }
            section #answer-panel {
                p #ask-status role="status" {}
                div #answer.answer {}
                ol #citations.citations {}
                section #verification hidden {
                    h2 { "Verification" }
                    p #verdict-summary {}
                    ol #claims.claims {}
                }
            }
        },
    )
}

/// `/graph`: the link graph on a canvas.
pub async fn graph() -> HtmlPage {
    page(
        "Graph",
        Nav::Graph,
        Script::Graph,
        html! {
            div.graph-bar {
                h1 { "Link graph" }
                label { "Collection " select #graph-collection { option value="" { "All" } } }
                label { input #graph-similar type="checkbox"; " Similar edges" }
                span #graph-status role="status" {}
            }
            canvas #graph-canvas tabindex="0" aria-label="Link graph: drag to pan, wheel to zoom, click a node to open it" {}
            ul #graph-list.sr-only aria-label="Nodes" {}
        },
    )
}

/// `/collections`: add a folder, sync with progress, remove; how each folder is followed.
pub async fn collections() -> HtmlPage {
    page(
        "Collections",
        Nav::Collections,
        Script::Collections,
        html! {
            h1 { "Collections" }
            form #add-collection {
                label { "Folder path " input #col-path name="path" type="text" required placeholder="/home/me/notes"; }
                label { "Name (optional) " input #col-name name="name" type="text"; }
                button type="submit" { "Add and index" }
            }
            p #col-status role="status" aria-live="polite" {}
            progress #col-progress max="100" value="0" hidden {}
            ul #col-problems {}
            table #col-table {
                thead { tr { th { "Name" } th { "Folder" } th { "Notes" } th { "With vectors" } th { "Changes on disk" } th { "Actions" } } }
                tbody {}
            }
            p #col-vectors role="status" aria-live="polite" {}
            p #col-team role="status" aria-live="polite" {}
            h2 { "Why is a file not indexed?" }
            form #explain-form {
                label { "File path " input #explain-path name="path" type="text" required placeholder="/home/me/notes/target/plan.md"; }
                button type="submit" { "Explain" }
            }
            p #explain-result role="status" aria-live="polite" {}
        },
    )
}

/// `/models`: presets, switching, pulling with progress.
pub async fn models() -> HtmlPage {
    page(
        "Models",
        Nav::Models,
        Script::Models,
        html! {
            h1 { "Models" }
            p #models-status role="status" aria-live="polite" {}
            progress #pull-progress max="100" value="0" hidden {}
            ul #preset-list.presets {}
            button #pull-models type="button" { "Download the active preset's models" }
        },
    )
}

/// `/new`: create a note (with a note preset) or capture a quick one.
pub async fn new_note() -> HtmlPage {
    page(
        "New note",
        Nav::New,
        Script::New,
        html! {
            h1 { "New note" }
            form #create-form {
                label { "Collection " select #new-collection name="collection" required {} }
                label { "Path " input #new-path name="path" type="text" placeholder="folder/my-note.md (empty: from the title)"; }
                label { "Title " input #new-title name="title" type="text"; }
                label { "Preset " select #new-preset name="presetId" { option value="" { "None" } } }
                label { "Content " textarea #new-content name="content" rows="12" {} }
                button type="submit" { "Create" }
            }
            h2 { "Quick capture" }
            form #capture-form {
                label { "Text " textarea #capture-text name="content" rows="4" required {} }
                button type="submit" { "Capture" }
            }
            p #new-status role="status" aria-live="polite" {}
        },
    )
}
