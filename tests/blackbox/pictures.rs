//! Text in pictures: a screenshot, a photo-like JPEG and a scanned PDF (tests/fixtures/ocr,
//! made by scripts/ocr-fixtures.py) become searchable by their words once OCR (PP-OCRv4 on
//! ONNX Runtime, prepared by `scripts/models`) has read them; hostile pictures are their own
//! file's error and the worker lives on.

use crate::common::*;
use crate::models::test_models;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ocr");

/// Links the OCR models of the test model cache into the server's cache.
fn install_ocr(s: &Server) {
    let repo = test_models().join("cache/models/SWHL/RapidOCR");
    assert!(
        repo.join("PP-OCRv4/ch_PP-OCRv4_rec_infer.onnx").is_file(),
        "the OCR models are missing under {}",
        repo.display()
    );
    let dest = s.path("cache/models/SWHL");
    std::fs::create_dir_all(&dest).unwrap();
    std::os::unix::fs::symlink(&repo, dest.join("RapidOCR")).unwrap();
}

/// A PNG of `width` × `height` RGB pixels as far as its header says, whose image data is an
/// empty zlib stream: a few dozen bytes that would take gigabytes read in full.
fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    let chunk = |out: &mut Vec<u8>, kind: &[u8], data: &[u8]| {
        out.extend((data.len() as u32).to_be_bytes());
        let body = [kind, data].concat();
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    };
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn ocr_of(s: &Server, uri: &str) -> Value {
    let doc = s.get(&format!("/api/doc?uri={}", urlencode(uri))).json();
    doc["source"]["ocr"].clone()
}

fn copy_fixtures(root: &Path) {
    std::fs::create_dir_all(root.join("scans")).unwrap();
    for (from, to) in [
        ("screenshot.png", "screenshot.png"),
        ("photo.jpg", "photos/whiteboard.jpg"),
        ("scan.pdf", "scans/invoice.pdf"),
    ] {
        std::fs::create_dir_all(root.join(to).parent().unwrap()).unwrap();
        std::fs::copy(Path::new(FIXTURES).join(from), root.join(to)).unwrap();
    }
}

#[test]
fn a_screenshot_a_photo_and_a_scanned_pdf_are_searchable_by_the_words_in_them() {
    if !crate::prepared::models("pictures::a_screenshot_a_photo_and_a_scanned_pdf_are_searchable_by_the_words_in_them")
    {
        return;
    }
    let s = Server::start();
    install_ocr(&s);
    let root = s.path("notes");
    copy_fixtures(&root);
    write_notes(&root, &[("plain.md", "# Plain\nA note about the ledger.\n")]);
    let job = s.add_collection(&root, "notes");
    assert_eq!(job["result"]["totalFilesAdded"], 4, "{job}");
    // At once, a picture is found by its name.
    assert!(
        uris(&s.search(json!({ "query": "whiteboard" }))).contains(&"svc://notes/photos/whiteboard.jpg".to_string())
    );
    // Then by its words, once OCR has read it.
    s.wait_until(Duration::from_secs(180), |s| s.get("/api/status").json()["ocrBacklog"] == 0);
    for (query, uri) in [
        ("quartermaster zephyr", "svc://notes/screenshot.png"),
        ("pelican", "svc://notes/photos/whiteboard.jpg"),
        ("lighthouse keeper", "svc://notes/scans/invoice.pdf"),
    ] {
        let res = s.search(json!({ "query": query }));
        assert_eq!(uris(&res).first().map(String::as_str), Some(uri), "{query}: {res}");
    }
    let ocr = ocr_of(&s, "svc://notes/screenshot.png");
    assert_eq!(ocr["state"], "read", "{ocr}");
    assert_eq!(ocr["engine"], "PP-OCRv4", "{ocr}");
    assert!(ocr["confidence"].as_f64().unwrap() > 0.8 && ocr["lines"].as_u64().unwrap() >= 2, "{ocr}");
    let doc = s.get(&format!("/api/doc?uri={}", urlencode("svc://notes/scans/invoice.pdf"))).json();
    assert!(doc["content"].as_str().unwrap().contains("# Page 1"), "a scan's text names its pages: {doc}");
    // A capsule's passage from the scan names its page.
    let c = s
        .post("/api/context", json!({"goal": "lighthouse keeper", "budgetTokens": 4000, "depthPolicy": "fast"}))
        .json();
    let from_scan = c["evidence"].as_array().unwrap().iter().find(|e| e["uri"] == "svc://notes/scans/invoice.pdf");
    assert_eq!(from_scan.map(|e| e["heading"].clone()), Some(json!("Page 1")), "{c}");
    assert_eq!(doc["source"]["ocr"]["state"], "read", "{doc}");
    // A note is not a picture.
    assert!(ocr_of(&s, "svc://notes/plain.md").is_null());
}

#[test]
fn a_hostile_picture_is_that_files_error_and_the_worker_lives_on() {
    if !crate::prepared::models("pictures::a_hostile_picture_is_that_files_error_and_the_worker_lives_on") {
        return;
    }
    let s = Server::start();
    install_ocr(&s);
    let root = s.path("notes");
    copy_fixtures(&root);
    std::fs::write(root.join("huge.png"), png_header_only(20_000, 20_000)).unwrap();
    std::fs::write(root.join("bomb.png"), png_header_only(6_000, 6_000)).unwrap();
    std::fs::write(root.join("corrupt.jpg"), b"\xff\xd8\xff\xe0 not a jpeg at all").unwrap();
    std::fs::write(root.join("empty.gif"), b"").unwrap();
    let worker = s.child_pid("worker");
    let job = s.add_collection(&root, "notes");
    // The 20,000 × 20,000 picture, the corrupt JPEG and the empty GIF are refused from their
    // headers; the 6,000 × 6,000 one passes that check and fails when it is decoded.
    assert_eq!(job["result"]["totalFilesErrored"], 3, "{job}");
    s.wait_until(Duration::from_secs(180), |s| s.get("/api/status").json()["ocrBacklog"] == 0);
    let bomb = ocr_of(&s, "svc://notes/bomb.png");
    assert_eq!(bomb["state"], "failed", "{bomb}");
    assert!(bomb["error"].as_str().unwrap().contains("picture"), "{bomb}");
    let res = s.search(json!({ "query": "quartermaster" }));
    assert_eq!(uris(&res), vec!["svc://notes/screenshot.png".to_string()], "{res}");
    assert_eq!(s.child_pid("worker"), worker, "the worker was not restarted");
    let explain = s.get(&format!("/api/explain?path={}", urlencode("svc://notes/huge.png"))).json();
    assert!(explain.to_string().contains("20000 × 20000"), "{explain}");
}

/// Without a server, `svc collection add` reads the pictures itself before it returns: their
/// words are found by the next `svc search`.
#[test]
fn the_cli_without_a_server_reads_pictures_before_it_returns() {
    if !crate::prepared::models("pictures::the_cli_without_a_server_reads_pictures_before_it_returns") {
        return;
    }
    let mut s = Server::start();
    install_ocr(&s);
    s.stop();
    let root = s.path("notes");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::copy(Path::new(FIXTURES).join("screenshot.png"), root.join("screenshot.png")).unwrap();
    let add = s.cmd().args(["collection", "add", root.to_str().unwrap(), "--name", "notes"]).output().unwrap();
    assert!(add.status.success(), "{}", String::from_utf8_lossy(&add.stderr));
    let found = s.cmd().args(["search", "quartermaster zephyr", "--json"]).output().unwrap();
    let out = String::from_utf8_lossy(&found.stdout);
    assert!(out.contains("svc://notes/screenshot.png"), "{out}");
}

/// Writes a DOCX that shows the screenshot and a deck whose second slide shows the photo, with
/// python-docx and python-pptx.
fn write_documents_with_pictures(dir: &Path) {
    let (screenshot, photo) = (Path::new(FIXTURES).join("screenshot.png"), Path::new(FIXTURES).join("photo.jpg"));
    write_formats(dir, &[Path::new("pictures"), &screenshot, &photo]);
}

/// The pictures a DOCX and a slide deck show are read too: each document is found by its own
/// words at once and by its pictures' words once OCR has read them, their text after its own
/// under a heading that names the picture (and its slide).
#[test]
fn pictures_in_a_docx_and_a_deck_are_searchable_by_the_words_in_them() {
    if !crate::prepared::models("pictures::pictures_in_a_docx_and_a_deck_are_searchable_by_the_words_in_them") {
        return;
    }
    let s = Server::start();
    install_ocr(&s);
    let root = s.path("docs");
    write_documents_with_pictures(&root);
    let r = s.post("/api/collections", json!({ "path": root, "name": "d", "include": "**/*.docx,**/*.pptx" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["result"]["totalFilesAdded"], 2, "{job}");
    assert_eq!(
        uris(&s.search(json!({ "query": "harbour master" }))).first().map(String::as_str),
        Some("svc://d/report.docx")
    );
    s.wait_until(Duration::from_secs(180), |s| s.get("/api/status").json()["ocrBacklog"] == 0);
    for (query, uri) in [("quartermaster zephyr", "svc://d/report.docx"), ("pelican", "svc://d/trip.pptx")] {
        let res = s.search(json!({ "query": query }));
        assert_eq!(uris(&res).first().map(String::as_str), Some(uri), "{query}: {res}");
    }
    let report = s.get(&format!("/api/doc?uri={}", urlencode("svc://d/report.docx"))).json();
    let text = report["content"].as_str().unwrap();
    let (own, pictures) = text.split_once("## Picture 1").expect("a section for the picture");
    assert!(own.contains("harbour master") && own.contains("Nothing else was logged"), "{text}");
    assert!(pictures.to_lowercase().contains("quartermaster"), "{text}");
    assert_eq!(report["source"]["ocr"]["state"], "read", "{report}");
    assert!(report["source"]["ocr"]["lines"].as_u64().unwrap() >= 2, "{report}");
    let deck = s.get(&format!("/api/doc?uri={}", urlencode("svc://d/trip.pptx"))).json();
    assert!(deck["content"].as_str().unwrap().contains("## Picture 1 (slide 2)"), "{deck}");
    // A capsule's passage holds the picture's text under the heading that names it.
    let c = s.post("/api/context", json!({"goal": "pelican", "budgetTokens": 4000, "depthPolicy": "fast"})).json();
    let from_deck = c["evidence"].as_array().unwrap().iter().find(|e| e["uri"] == "svc://d/trip.pptx");
    let passage = from_deck.and_then(|e| e["text"].as_str()).unwrap_or_default();
    let (_, under) = passage.split_once("## Picture 1 (slide 2)").unwrap_or_default();
    assert!(under.to_lowercase().contains("pelican"), "{c}");
}
