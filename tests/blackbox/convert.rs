//! PDF and DOCX ingestion: real files built by `testkit` (lopdf, zip), indexed through `include`,
//! searchable with their titles and MIME types; files that fail to convert are errored and
//! keep their previous version.

use crate::common::*;
use serde_json::{json, Value};
use std::path::Path;
use testkit::{docx, pdf};

const PDF_MIME: &str = "application/pdf";
const DOCX_MIME: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// Bytes that are no PDF or zip at all (deterministic noise).
fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 11) as u8
        })
        .collect()
}

/// Unwatched: the tests count what each sync they start finds, which a watcher that
/// reindexed a rewritten file first would have taken.
fn add_docs_collection(s: &Server, root: &Path) -> Value {
    let r = s.post(
        "/api/collections",
        json!({ "path": root, "name": "docs", "include": "**/*.pdf,**/*.docx", "watch": false }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    job
}

/// The one hit for `query`, which must be `uri`.
fn only_hit(s: &Server, query: &str, uri: &str) -> Value {
    let res = s.search(json!({ "query": query }));
    assert_eq!(uris(&res), vec![uri.to_string()], "{query}: {res}");
    res["results"][0].clone()
}

#[test]
fn pdf_and_docx_are_searchable_with_titles_and_mime_types() {
    let s = Server::start();
    let root = s.path("docs");
    std::fs::create_dir_all(root.join("papers")).unwrap();
    std::fs::write(
        root.join("papers/report.pdf"),
        pdf(Some("Quarterly Pangolin Report"), &["Revenue grew with the xylophone line", "Costs fell"]),
    )
    .unwrap();
    std::fs::write(root.join("untitled.pdf"), pdf(None, &["Opening Line Of The Scan", "about a marimba"])).unwrap();
    std::fs::write(
        root.join("memo.docx"),
        docx(Some("Planning Memo"), &[(Some("Heading1"), "Overview"), (None, "We ride the zeppelin at dawn & dusk.")]),
    )
    .unwrap();
    std::fs::write(
        root.join("heading.docx"),
        docx(None, &[(None, ""), (Some("Heading1"), "Budget Outline"), (None, "the ocelot budget")]),
    )
    .unwrap();
    write_notes(&root, &[("note.md", "# Plain Note\nmentions the xylophone too\n")]);

    let job = add_docs_collection(&s, &root);
    assert_eq!(job["result"]["totalFilesAdded"], 5, "{job}");
    assert_eq!(job["result"]["totalFilesErrored"], 0, "{job}");
    assert_eq!(job["result"]["totalFilesSkipped"], 0, "{job}");

    let hit = only_hit(&s, "revenue", "svc://docs/papers/report.pdf");
    assert_eq!(hit["title"], "Quarterly Pangolin Report");
    assert_eq!(hit["source"]["mime"], PDF_MIME);
    assert_eq!(hit["source"]["ext"], ".pdf");
    let doc = s.get("/api/doc?uri=svc://docs/papers/report.pdf").json();
    assert_eq!(doc["title"], "Quarterly Pangolin Report");
    assert_eq!(doc["source"]["mime"], PDF_MIME);
    assert!(doc["content"].as_str().unwrap().contains("xylophone line"), "{doc}");
    let mut both = uris(&s.search(json!({ "query": "xylophone" })));
    both.sort();
    assert_eq!(both, vec!["svc://docs/note.md", "svc://docs/papers/report.pdf"]);

    assert_eq!(only_hit(&s, "marimba", "svc://docs/untitled.pdf")["title"], "Opening Line Of The Scan");

    let memo = only_hit(&s, "zeppelin", "svc://docs/memo.docx");
    assert_eq!(memo["title"], "Planning Memo");
    assert_eq!(memo["source"]["mime"], DOCX_MIME);
    assert_eq!(memo["source"]["ext"], ".docx");
    let memo_doc = s.get("/api/doc?uri=svc://docs/memo.docx").json();
    assert_eq!(memo_doc["content"], "# Overview\n\nWe ride the zeppelin at dawn & dusk.\n");
    assert_eq!(memo_doc["source"]["mime"], DOCX_MIME);
    assert_eq!(only_hit(&s, "ocelot", "svc://docs/heading.docx")["title"], "Budget Outline");

    // Nothing changed: every file is skipped without converting again.
    let again = s.sync(json!({}));
    assert_eq!(again["result"]["collections"][0]["filesUnchanged"], 5, "{again}");

    // A converted document is never written as text through the API.
    let before = std::fs::read(root.join("papers/report.pdf")).unwrap();
    let id = doc["docid"].as_str().unwrap().replace('#', "%23");
    s.request("PUT", &format!("/api/docs/{id}"), Some(&json!({ "content": "overwritten" })))
        .assert_error(409, "UNSUPPORTED");
    s.request("PUT", &format!("/api/docs/{id}"), Some(&json!({ "tags": ["x"] }))).assert_error(409, "UNSUPPORTED");
    assert_eq!(std::fs::read(root.join("papers/report.pdf")).unwrap(), before);
    s.post("/api/docs", json!({ "collection": "docs", "relPath": "new.pdf", "content": "x" }))
        .assert_error(400, "VALIDATION");
    s.post("/api/capture", json!({ "collection": "docs", "relPath": "c.docx", "content": "x" }))
        .assert_error(400, "VALIDATION");
    assert!(!root.join("new.pdf").exists() && !root.join("c.docx").exists());
}

#[test]
fn files_that_fail_to_convert_are_errored_and_keep_their_previous_version() {
    let s = Server::start();
    let root = s.path("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("good.pdf"), pdf(Some("Good Paper"), &["the capybara findings"])).unwrap();
    std::fs::write(root.join("good.docx"), docx(Some("Good Memo"), &[(None, "the axolotl plan")])).unwrap();
    std::fs::write(root.join("random.pdf"), noise(4096, 1)).unwrap();
    std::fs::write(root.join("random.docx"), noise(2048, 2)).unwrap();
    let mut header_only = b"%PDF-1.7\n".to_vec();
    header_only.extend(noise(1000, 3));
    std::fs::write(root.join("header-only.pdf"), header_only).unwrap();

    let job = add_docs_collection(&s, &root);
    assert_eq!(job["result"]["totalFilesAdded"], 2, "{job}");
    assert_eq!(job["result"]["totalFilesErrored"], 3, "{job}");
    s.get("/api/doc?uri=svc://docs/random.pdf").assert_error(404, "NOT_FOUND");
    only_hit(&s, "capybara", "svc://docs/good.pdf");

    // Both good files are corrupted (a truncated PDF, a truncated zip): the sync completes,
    // counts them as errored and the indexed versions stay searchable, unchanged.
    let pdf_bytes = std::fs::read(root.join("good.pdf")).unwrap();
    std::fs::write(root.join("good.pdf"), &pdf_bytes[..pdf_bytes.len() / 3]).unwrap();
    let docx_bytes = std::fs::read(root.join("good.docx")).unwrap();
    std::fs::write(root.join("good.docx"), &docx_bytes[..docx_bytes.len() / 2]).unwrap();
    let job = s.sync(json!({}));
    assert_eq!(job["status"], "completed", "{job}");
    let c = &job["result"]["collections"][0];
    assert_eq!(c["filesErrored"], 5, "{job}");
    assert_eq!(c["filesDeactivated"], 0, "{job}");
    assert_eq!(c["filesUpdated"], 0, "{job}");
    assert_eq!(only_hit(&s, "capybara", "svc://docs/good.pdf")["title"], "Good Paper");
    assert_eq!(only_hit(&s, "axolotl", "svc://docs/good.docx")["title"], "Good Memo");
    let doc = s.get("/api/doc?uri=svc://docs/good.pdf").json();
    assert_eq!(doc["title"], "Good Paper");
    assert!(doc["content"].as_str().unwrap().contains("capybara"), "{doc}");

    // Repaired with new text: the new version replaces the old one.
    std::fs::write(root.join("good.pdf"), pdf(Some("Better Paper"), &["the okapi findings"])).unwrap();
    let job = s.sync(json!({}));
    assert_eq!(job["result"]["collections"][0]["filesUpdated"], 1, "{job}");
    assert_eq!(job["result"]["collections"][0]["filesErrored"], 4, "{job}");
    assert_eq!(only_hit(&s, "okapi", "svc://docs/good.pdf")["title"], "Better Paper");
    assert!(uris(&s.search(json!({ "query": "capybara" }))).is_empty());

    // The worker survived every bad file.
    assert_eq!(s.get("/api/status").json()["healthy"], true);
}

/// An org-mode note beside the Markdown ones (`include: **/*.org`): searchable by its words,
/// titled by `#+TITLE:`, tagged by its heading tags and `#+FILETAGS:`, its sections at the
/// org file's own lines, its text served as written, and a capsule citing its real lines.
#[test]
fn org_notes_are_read_as_notes_line_for_line() {
    let s = Server::start();
    let root = s.path("notes");
    let org = "#+TITLE: Orchard log\n#+FILETAGS: :orchard:\n\n* Pruning :winter:\nCut the quince back in February.\n\n\
** Tools\nSee [[file:shears.org][the shears]] and [[Sharpening]].\n";
    write_notes(&root, &[("orchard.org", org), ("shears.org", "* Shears\nBypass shears.\n")]);
    let r = s.post("/api/collections", json!({ "path": root, "name": "n", "include": "**/*.org", "watch": false }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(s.wait_job(r.json()["jobId"].as_str().unwrap())["status"], "completed");

    let hit = only_hit(&s, "quince", "svc://n/orchard.org");
    assert_eq!(hit["title"], "Orchard log", "{hit}");
    let tags = s.get("/api/tags").json();
    for t in ["orchard", "winter"] {
        assert!(tags.to_string().contains(&format!("\"{t}\"")), "{t} in {tags}");
    }
    let doc = s.get("/api/doc?uri=svc://n/orchard.org").json();
    assert_eq!(doc["content"], org, "the file as written");
    let sections = s.get(&format!("/api/doc/{}/sections", doc["docid"].as_str().unwrap().replace('#', "%23"))).json();
    let lines: Vec<u64> =
        sections["sections"].as_array().unwrap().iter().map(|x| x["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![1, 4, 7], "{sections}");
    // The link to the other org note joins the link graph.
    let backlinks = s.get("/api/doc?uri=svc://n/shears.org").json();
    let b = s.get(&format!("/api/doc/{}/backlinks", backlinks["docid"].as_str().unwrap().replace('#', "%23"))).json();
    assert!(b.to_string().contains("orchard.org"), "{b}");
    // A capsule cites the org file's own lines.
    let c =
        s.post("/api/context", json!({"goal": "quince pruning", "budgetTokens": 4000, "depthPolicy": "fast"})).json();
    let e = &c["evidence"][0];
    assert_eq!(e["uri"], "svc://n/orchard.org", "{c}");
    let (a, z) = (e["startLine"].as_u64().unwrap() as usize, e["endLine"].as_u64().unwrap() as usize);
    assert_eq!(e["text"].as_str().unwrap(), org.lines().collect::<Vec<_>>()[a - 1..z].join("\n"));
}

/// Spreadsheets through `include`: a workbook written by rust_xlsxwriter is one Markdown table
/// per sheet, searchable by its cells, a section per sheet, cited by a capsule; a long sheet's
/// passage carries the header row and is headed by its cell range; a file that only says it is
/// a workbook is one errored file of a sync that completes.
#[test]
fn spreadsheets_are_tables_per_sheet_and_a_broken_one_is_an_errored_file() {
    let s = Server::start();
    let root = s.path("sheets");
    std::fs::create_dir_all(&root).unwrap();
    let days: Vec<[String; 3]> = (1..=150)
        .map(|d| [format!("Day {d}"), if d == 120 { "hailstorm" } else { "drizzle" }.to_string(), format!("{}", d % 7)])
        .collect();
    let mut log: Vec<Vec<&str>> = vec![vec!["Day", "Weather", "Rain (mm)"]];
    log.extend(days.iter().map(|d| d.iter().map(String::as_str).collect()));
    let log: Vec<&[&str]> = log.iter().map(Vec::as_slice).collect();
    let book = testkit::xlsx(&[
        ("Plants", &[&["Plant", "Bed", "Water (l)"], &["Quince", "North", "12"], &["Medlar", "South", "8"]]),
        ("Costs", &[&["Item", "Cost"], &["Compost", "40"]]),
        ("Log", &log),
    ]);
    std::fs::write(root.join("garden.xlsx"), book).unwrap();
    std::fs::write(root.join("broken.xlsx"), b"this is no workbook").unwrap();
    let r = s.post("/api/collections", json!({ "path": root, "name": "s", "include": "**/*.xlsx", "watch": false }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["result"]["totalFilesErrored"], 1, "{job}");

    let hit = only_hit(&s, "medlar", "svc://s/garden.xlsx");
    assert_eq!(hit["contentType"], "spreadsheet", "{hit}");
    let doc = s.get("/api/doc?uri=svc://s/garden.xlsx").json();
    let content = doc["content"].as_str().unwrap();
    assert!(content.contains("## Plants") && content.contains("| Medlar | South | 8 |"), "{content}");
    let id = doc["docid"].as_str().unwrap().replace('#', "%23");
    let sections = s.get(&format!("/api/doc/{id}/sections")).json();
    let titles: Vec<&str> =
        sections["sections"].as_array().unwrap().iter().map(|x| x["title"].as_str().unwrap()).collect();
    assert_eq!(titles[..3], ["Plants", "Costs", "Log"], "{sections}");
    assert!(titles[3..].iter().all(|t| t.starts_with("Log!A")), "the long sheet's blocks: {sections}");
    let c = s.post("/api/context", json!({"goal": "compost cost", "budgetTokens": 8000, "depthPolicy": "fast"})).json();
    let e = &c["evidence"][0];
    assert_eq!(e["uri"], "svc://s/garden.xlsx", "{c}");
    // The small sheets and the start of the long one are one chunk, under the first sheet's heading.
    assert!(e["text"].as_str().unwrap().contains("| Compost | 40 |"), "{e}");
    assert_eq!(e["heading"], "Plants", "{e}");
    // Row 121 of the long sheet (day 120, under the header in row 1): its block's passage.
    let c = s.post("/api/context", json!({"goal": "hailstorm", "budgetTokens": 8000, "depthPolicy": "fast"})).json();
    let e = &c["evidence"][0];
    let (heading, text) = (e["heading"].as_str().unwrap(), e["text"].as_str().unwrap());
    let range = heading.strip_prefix("Log!A").and_then(|r| r.split_once(":C")).expect("a cell range heading");
    let (top, bottom): (u32, u32) = (range.0.parse().unwrap(), range.1.parse().unwrap());
    assert!(top <= 121 && 121 <= bottom && top > 2, "{e}");
    assert!(text.contains("| Day | Weather | Rain (mm) |") && text.contains("| Day 120 | hailstorm |"), "{e}");
}

/// Saved web pages through `include`: the main text as Markdown (no script, style or
/// navigation), titled by `<title>`, searchable, its links to notes in the link graph, shown
/// as Markdown in the workspace, and cited by a capsule; a page nested past the limit is one
/// file's problem of a sync that completes.
#[test]
fn web_pages_are_their_main_text_with_links_into_the_graph() {
    let s = Server::start();
    let root = s.path("web");
    let page = "<!doctype html><html><head><title>Kettle guide</title><script>var trackingword = 1;</script></head>\
<body><nav>menuword <a href=\"/\">Home</a></nav><main><h1>Descaling</h1>\
<p>Boil <em>citric acid</em> in the kettle to remove limescale. See <a href=\"tea.md\">the tea note</a>.</p>\
</main><footer>footerword</footer></body></html>";
    write_notes(&root, &[("kettle.html", page), ("tea.md", "# Tea\nSteep green tea gently.\n")]);
    std::fs::write(root.join("deep.htm"), "<div>".repeat(5_000)).unwrap();
    let r = s.post(
        "/api/collections",
        json!({ "path": root, "name": "w", "include": "**/*.html,**/*.htm", "watch": false }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    let problems = job["result"]["collections"][0]["problems"].to_string();
    assert!(problems.contains("deep.htm") && problems.contains("nested"), "{job}");

    let hit = only_hit(&s, "limescale", "svc://w/kettle.html");
    assert_eq!(hit["title"], "Kettle guide", "{hit}");
    assert_eq!(hit["contentType"], "web", "{hit}");
    for gone in ["trackingword", "menuword", "footerword"] {
        assert!(uris(&s.search(json!({ "query": gone }))).is_empty(), "{gone} is not the page's text");
    }
    let doc = s.get("/api/doc?uri=svc://w/kettle.html").json();
    let text = doc["content"].as_str().unwrap();
    assert!(text.contains("# Descaling") && text.contains("*citric acid*"), "{text}");
    let tea = s.get("/api/doc?uri=svc://w/tea.md").json();
    let b = s.get(&format!("/api/doc/{}/backlinks", tea["docid"].as_str().unwrap().replace('#', "%23"))).json();
    assert!(b.to_string().contains("kettle.html"), "{b}");
    let view = s.get("/doc?uri=svc://w/kettle.html");
    assert_eq!(view.status, 200);
    assert!(String::from_utf8_lossy(&view.body).contains("<h1"), "rendered as Markdown");
    let c =
        s.post("/api/context", json!({"goal": "kettle limescale", "budgetTokens": 4000, "depthPolicy": "fast"})).json();
    assert_eq!(c["evidence"][0]["uri"], "svc://w/kettle.html", "{c}");
}

/// Writes real decks and mail into `dir` with their formats' own libraries.
fn write_real_formats(dir: &Path) {
    write_formats(dir, &[]);
}

/// The anchors of a document's sections, in order.
fn section_anchors(s: &Server, doc: &Value) -> Vec<String> {
    let id = doc["docid"].as_str().unwrap().replace('#', "%23");
    let r = s.get(&format!("/api/doc/{id}/sections")).json();
    r["sections"].as_array().unwrap().iter().filter_map(|x| x["anchor"].as_str().map(str::to_string)).collect()
}

/// Slide decks (PPTX by python-pptx, ODP by odfpy) and mail (an .eml and an .mbox by Python's
/// email and mailbox modules): a section per slide with its title, text, table rows and
/// speaker notes; a message titled by its subject, with its sender and date; a mailbox a
/// document per message. A zip bomb of a deck and noise named `.eml` are problems of a sync
/// that completes.
#[test]
fn slide_decks_and_mail_are_sections_with_their_own_titles() {
    let s = Server::start();
    let root = s.path("formats");
    write_real_formats(&root);
    let mut bomb = testkit::zip_parts(&[("ppt/presentation.xml", "<p:presentation/>".into())]);
    testkit::declare_uncompressed_size(&mut bomb, 3_000_000_000);
    std::fs::write(root.join("bomb.pptx"), bomb).unwrap();
    std::fs::write(root.join("noise.eml"), noise(4096, 7)).unwrap();
    let r = s.post(
        "/api/collections",
        json!({ "path": root, "name": "f", "include": "**/*.pptx,**/*.odp,**/*.eml,**/*.mbox", "watch": false }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    let problems = job["result"]["collections"][0]["problems"].to_string();
    assert!(problems.contains("bomb.pptx") && problems.contains("larger than"), "{job}");
    assert!(problems.contains("noise.eml"), "{job}");
    assert_eq!(job["result"]["collections"][0]["filesErrored"], 2, "{job}");

    // PPTX: titled by its metadata, a section per slide, notes and table rows searchable.
    let hit = only_hit(&s, "loppers", "svc://f/orchard.pptx");
    assert_eq!(hit["title"], "Orchard review", "{hit}");
    assert_eq!(hit["contentType"], "slides", "{hit}");
    only_hit(&s, "mulberry", "svc://f/orchard.pptx");
    let doc = s.get("/api/doc?uri=svc://f/orchard.pptx").json();
    let text = doc["content"].as_str().unwrap();
    assert!(
        text.contains("## Slide 2: Pruning plan\n\nPrune the quince in late winter\n\nBurn the canker wood\n"),
        "{text}"
    );
    assert!(text.contains("### Speaker notes\n\nRemind everyone about the loppers"), "{text}");
    assert!(text.contains("Tree | Crates\n\nMulberry | 17"), "{text}");
    let anchors = section_anchors(&s, &doc);
    assert!(anchors.contains(&"slide-2-pruning-plan".to_string()), "{anchors:?}");

    // ODP: a page per slide, its title frame as the title.
    let hit = only_hit(&s, "loam", "svc://f/soil.odp");
    assert_eq!((hit["title"].as_str(), hit["contentType"].as_str()), (Some("Soil health"), Some("slides")), "{hit}");
    let odp = s.get("/api/doc?uri=svc://f/soil.odp").json();
    assert!(odp["content"].as_str().unwrap().contains("## Slide 2: Compost\n\nTurn the heap weekly"), "{odp}");

    // One message: subject as title, sender as author, date as the document's date.
    let hit = only_hit(&s, "varroa", "svc://f/inspection.eml");
    assert_eq!(
        (hit["title"].as_str(), hit["contentType"].as_str()),
        (Some("Beehive inspection"), Some("mail")),
        "{hit}"
    );
    let eml = s.get("/api/doc?uri=svc://f/inspection.eml").json();
    let text = eml["content"].as_str().unwrap();
    assert!(
        text.contains("From: Ann Keeper <ann@example.org>") && text.contains("Attachments: hive-four.pdf"),
        "{text}"
    );
    assert_eq!(eml["author"], "Ann Keeper <ann@example.org>", "{eml}");
    assert_eq!(eml["documentDate"], "2026-03-03T09:15:00Z", "{eml}");

    // A mailbox: a document per message, titled by its subject, each cited on its own.
    let hit = only_hit(&s, "nucleus", "svc://f/club.mbox/00001.eml");
    assert_eq!((hit["title"].as_str(), hit["contentType"].as_str()), (Some("Swarm season"), Some("mail")), "{hit}");
    let second = s.get("/api/doc?uri=svc://f/club.mbox/00002.eml").json();
    assert_eq!(second["title"], "Honey harvest", "{second}");
    assert_eq!(second["author"], "Dee <dee@example.org>", "{second}");
    assert_eq!(second["documentDate"], "2026-08-20T18:30:00Z", "{second}");
    assert_eq!(section_anchors(&s, &second), vec!["honey-harvest"], "{second}");
    let c =
        s.post("/api/context", json!({"goal": "extractor booked", "budgetTokens": 4000, "depthPolicy": "fast"})).json();
    assert_eq!(c["evidence"][0]["uri"], "svc://f/club.mbox/00002.eml", "{c}");
    let v = s.post("/api/context/verify", json!({ "capsule": c })).json();
    assert_eq!(v["contentCode"], "verified_unchanged", "{v}");
    let view = s.get("/doc?uri=svc://f/orchard.pptx");
    assert_eq!(view.status, 200);
    assert!(String::from_utf8_lossy(&view.body).contains("<h2"), "a deck shows as Markdown, slide by slide");
}

/// Code through `include`: cut at its syntax, each symbol a section titled by its path, the
/// path a keyword of the file; `contentType` `code` and the hit's `symbol`; a capsule names the symbol a passage
/// sits in; the workspace shows numbered lines with the symbols' anchors. A language without
/// a grammar is chunked as text.
#[test]
fn code_is_cut_at_its_symbols() {
    let s = Server::start();
    let root = s.path("code");
    let filler = "        let steps = steps + 1;\n".repeat(30);
    let rust = format!(
        "use std::time::Duration;\n\n/// A kettle on the stove.\npub struct Kettle {{\n    litres: f32,\n}}\n\nimpl Kettle {{\n    /// Removes limescale with citric acid.\n    pub fn descale(&self, steps: u32) -> u32 {{\n{filler}        steps\n    }}\n\n    pub fn boil(&self) -> Duration {{\n{filler}        Duration::from_secs(90)\n    }}\n}}\n"
    );
    write_notes(
        &root,
        &[
            ("src/kettle.rs", rust.as_str()),
            ("tools/brew.py", "class Brewer:\n    def steep(self, minutes):\n        \"\"\"Steep oolong leaves.\"\"\"\n        return minutes * 2\n"),
            ("db/schema.sql", "CREATE TABLE teapots (id INTEGER PRIMARY KEY, glaze TEXT);\n"),
        ],
    );
    let r = s.post(
        "/api/collections",
        json!({ "path": root, "name": "c", "include": "**/*.rs,**/*.py,**/*.sql", "watch": false }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["result"]["collections"][0]["filesAdded"], 3, "{job}");

    let hit = only_hit(&s, "limescale", "svc://c/src/kettle.rs");
    assert_eq!((hit["title"].as_str(), hit["contentType"].as_str()), (Some("kettle.rs"), Some("code")), "{hit}");
    // The chunk is the method with its doc comment, not the whole impl.
    let chunk = hit["chunk"]["text"].as_str().unwrap();
    assert!(chunk.contains("/// Removes limescale") && !chunk.contains("fn boil"), "{chunk}");
    assert_eq!(hit["symbol"], "Kettle::descale", "a code hit names its symbol: {hit}");
    // A symbol path as a query finds the file that defines it.
    assert_eq!(only_hit(&s, "Brewer.steep", "svc://c/tools/brew.py")["symbol"], "Brewer.steep");
    // SQL is read as text: no symbol.
    assert!(only_hit(&s, "glaze", "svc://c/db/schema.sql").get("symbol").is_none());
    // The language filter: code of those languages only, also for vector-free hybrid search.
    let steps = |body: Value| uris(&s.search(body));
    assert_eq!(steps(json!({ "query": "steps minutes", "language": "python" })), vec!["svc://c/tools/brew.py"]);
    assert_eq!(steps(json!({ "query": "steps minutes", "language": ["Rust"] })), vec!["svc://c/src/kettle.rs"]);
    let bad = s.post("/api/search", json!({ "query": "steps", "language": "cobol" }));
    assert_eq!(bad.status, 400, "{}", String::from_utf8_lossy(&bad.body));
    assert!(String::from_utf8_lossy(&bad.body).contains("python"), "the error lists the languages");

    let doc = s.get("/api/doc?uri=svc://c/src/kettle.rs").json();
    assert_eq!(section_anchors(&s, &doc), vec!["kettle", "kettle-2", "kettledescale", "kettleboil"], "{doc}");
    let c = s
        .post("/api/context", json!({"goal": "descale limescale citric", "budgetTokens": 40000, "depthPolicy": "fast"}))
        .json();
    assert_eq!(c["evidence"][0]["uri"], "svc://c/src/kettle.rs", "{c}");
    assert_eq!(c["evidence"][0]["heading"], "Kettle::descale", "{c}");
    let view = s.get("/doc?uri=svc://c/src/kettle.rs");
    assert_eq!(view.status, 200);
    let html = String::from_utf8_lossy(&view.body);
    assert!(html.contains("class=\"code-view\"") && html.contains("data-language=\"rust\""), "{html}");
    assert!(html.contains("id=\"h-kettledescale\""), "the outline jumps to the method: {html}");
    assert!(html.contains("<span class=\"tok-keyword\">impl</span>"), "coloured: {html}");
    assert!(html.contains("<span class=\"tok-comment\">/// Removes limescale with citric acid.</span>"), "{html}");
}
