//! Exports as records (issue 62 item 4): a file that holds many records is a document per
//! record, each at its own path under the file (`svc://r/studio.ics/<uid>.ics`), searchable,
//! readable and cited on its own: JSON Lines, an iCalendar file, a browser's bookmark export;
//! a transcript (WebVTT, SRT) is one document whose sections are headed by their cue times; an
//! Internet shortcut is one bookmark. All found by the default include, watched as they change.

use crate::common::*;
use serde_json::{json, Value};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(20);

const JSONL: &str = r#"{"id": "msg-101", "title": "Kiln firing schedule", "text": "Bisque the porcelain at cone 04 on Tuesday.", "created_at": "2026-11-30T08:00:00Z", "author": "Ann", "tags": ["pottery"]}
{"id": "msg-102", "title": "Glaze order", "text": "Order celadon glaze from the supplier.", "channel": "studio"}
this line is not JSON
"#;

const ICS: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//svc test//EN\r\n\
BEGIN:VEVENT\r\nUID:raku-night@studio.example\r\nDTSTAMP:20261201T080000Z\r\n\
DTSTART;TZID=Europe/Berlin:20261211T190000\r\nDTEND;TZID=Europe/Berlin:20261211T220000\r\n\
SUMMARY:Raku night\r\nLOCATION:Back yard kiln\r\nATTENDEE;CN=Bob Potter:mailto:bob@example.org\r\n\
DESCRIPTION:Bring tongs\\, gloves and sawdust for the reduction bin.\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:clay-delivery@studio.example\r\nDTSTART;VALUE=DATE:20261215\r\n\
SUMMARY:Clay delivery\r\nDESCRIPTION:Two pallets of stoneware.\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

const BOOKMARKS: &str = r#"<!DOCTYPE NETSCAPE-Bookmark-file-1>
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3>Bookmarks bar</H3>
    <DL><p>
        <DT><H3>Ceramics</H3>
        <DL><p>
            <DT><A HREF="https://glazy.example/recipes/tenmoku" ADD_DATE="1764547200" TAGS="glaze">Tenmoku recipe</A>
            <DD>An iron saturate glaze for stoneware
        </DL><p>
    </DL><p>
    <DT><A HREF="https://kilns.example/manual">Kiln manual</A>
</DL><p>
"#;

const VTT: &str = "WEBVTT\n\n00:00:02.000 --> 00:00:06.000\n<v Ann>Welcome to the wheel throwing class.\n\n\
00:00:07.000 --> 00:00:10.000\n<v Ann>Center the clay first.\n\n\
00:12:31.000 --> 00:12:36.000\n<v Bob>Trim the foot ring when leather hard.\n";

const SRT: &str = "1\r\n00:00:01,000 --> 00:00:03,000\r\nThe studio opens at nine.\r\n\r\n\
2\r\n00:05:00,000 --> 00:05:04,000\r\nSweep the wedging table with a damp sponge.\r\n";

fn hit(s: &Server, query: &str) -> Value {
    let res = s.search(json!({ "query": query }));
    assert_eq!(res["results"].as_array().map(Vec::len), Some(1), "{query}: {res}");
    res["results"][0].clone()
}

fn doc(s: &Server, uri: &str) -> Value {
    let r = s.get(&format!("/api/doc?uri={}", uri.replace('#', "%23")));
    assert_eq!(r.status, 200, "{uri}: {}", String::from_utf8_lossy(&r.body));
    r.json()
}

#[test]
fn record_files_are_a_document_per_record_and_transcripts_keep_their_times() {
    let s = Server::start();
    let root = s.path("records");
    write_notes(
        &root,
        &[
            ("chat/export.jsonl", JSONL),
            ("studio.ics", ICS),
            ("bookmarks_12_4_26.html", BOOKMARKS),
            ("class.vtt", VTT),
            ("rules.srt", SRT),
            ("links/kiln shop.url", "[InternetShortcut]\r\nURL=https://kilnshop.example/cones\r\n"),
            (
                "saved/page.html",
                "<html><head><title>Saved page</title></head><body><p>Anagama firing log</p></body></html>",
            ),
        ],
    );
    // A class long enough that its later minute is a passage of its own.
    let filler: String = (0..40)
        .map(|i| {
            format!(
                "00:00:{:02}.000 --> 00:00:{:02}.500\n<v Ann>Keep the wheel wet, number {i}, and the walls even.\n\n",
                11 + i,
                11 + i
            )
        })
        .collect();
    let class = VTT.replacen("\n\n00:12:31.000", &format!("\n\n{filler}00:12:31.000"), 1);
    std::fs::write(root.join("class.vtt"), class).unwrap();
    let job = s.add_collection_with(&root, "r", false);
    // Documents: 2 records (the third line is that line's problem), 2 events, 2 bookmarks,
    // 2 transcripts, 1 shortcut, 1 page.
    assert_eq!(s.get("/api/docs?collection=r&limit=1").json()["total"], 10, "{job}");

    // JSON Lines: a record by its id, titled, dated and tagged by its own fields.
    let h = hit(&s, "porcelain");
    assert_eq!(h["uri"], "svc://r/chat/export.jsonl/msg-101.jsonl", "{h}");
    assert_eq!((h["title"].as_str(), h["contentType"].as_str()), (Some("Kiln firing schedule"), Some("record")), "{h}");
    let d = doc(&s, "svc://r/chat/export.jsonl/msg-101.jsonl");
    assert_eq!(d["author"], "Ann", "{d}");
    assert_eq!(d["documentDate"], "2026-11-30T08:00:00Z", "{d}");
    assert!(d["tags"].as_array().unwrap().iter().any(|t| t == "pottery"), "{d}");
    assert_eq!(d["source"]["partOf"], "chat/export.jsonl", "{d}");
    let glaze = doc(&s, "svc://r/chat/export.jsonl/msg-102.jsonl");
    assert!(glaze["content"].as_str().unwrap().contains("channel: studio"), "{glaze}");

    // A calendar: an event per VEVENT at its UID, with when, where and who.
    let h = hit(&s, "sawdust");
    assert_eq!(h["uri"], "svc://r/studio.ics/raku-night-studio.example.ics", "{h}");
    assert_eq!((h["title"].as_str(), h["contentType"].as_str()), (Some("Raku night"), Some("event")), "{h}");
    let d = doc(&s, "svc://r/studio.ics/raku-night-studio.example.ics");
    let text = d["content"].as_str().unwrap();
    assert!(text.contains("When: 2026-12-11 19:00 (Europe/Berlin) – 2026-12-11 22:00 (Europe/Berlin)"), "{text}");
    assert!(text.contains("Where: Back yard kiln") && text.contains("Attendees: Bob Potter"), "{text}");
    assert!(text.contains("Bring tongs, gloves and sawdust"), "{text}");
    assert_eq!(doc(&s, "svc://r/studio.ics/clay-delivery-studio.example.ics")["title"], "Clay delivery");

    // A bookmark export: a bookmark per document with its folders; a page stays a page.
    let h = hit(&s, "tenmoku");
    assert_eq!((h["title"].as_str(), h["contentType"].as_str()), (Some("Tenmoku recipe"), Some("bookmark")), "{h}");
    let uri = h["uri"].as_str().unwrap();
    assert!(uri.starts_with("svc://r/bookmarks_12_4_26.html/") && uri.ends_with(".url"), "{h}");
    let text = doc(&s, uri)["content"].as_str().unwrap().to_string();
    assert!(text.contains("Folder: Bookmarks bar / Ceramics") && text.contains("iron saturate"), "{text}");
    assert!(text.contains("<https://glazy.example/recipes/tenmoku>"), "{text}");
    assert_eq!(hit(&s, "anagama")["uri"], "svc://r/saved/page.html");
    let h = hit(&s, "kilnshop");
    assert_eq!(
        (h["uri"].as_str(), h["contentType"].as_str()),
        (Some("svc://r/links/kiln%20shop.url"), Some("bookmark"))
    );

    // Transcripts: one document, sections by time; a passage says where in the recording it is.
    let h = hit(&s, "leather");
    assert_eq!((h["uri"].as_str(), h["contentType"].as_str()), (Some("svc://r/class.vtt"), Some("transcript")), "{h}");
    let text = doc(&s, "svc://r/class.vtt")["content"].as_str().unwrap().to_string();
    assert!(
        text.contains("## 0:02\n\nAnn: Welcome to the wheel throwing class. Center the clay first. Keep the wheel wet"),
        "{text}"
    );
    assert!(text.contains("## 12:31\n\nBob: Trim the foot ring when leather hard."), "{text}");
    let c = s.post("/api/context", json!({ "goal": "trim foot ring leather hard", "budgetTokens": 4000 })).json();
    let cited = c["evidence"].as_array().unwrap().iter().find(|e| e["uri"] == "svc://r/class.vtt");
    assert_eq!(cited.map(|e| e["heading"].clone()), Some(json!("12:31")), "{c}");
    let text = doc(&s, "svc://r/rules.srt")["content"].as_str().unwrap().to_string();
    assert!(text.contains("## 5:00\n\nSweep the wedging table"), "{text}");

    // Read-only, like a mailbox's messages.
    let id = doc(&s, "svc://r/studio.ics/raku-night-studio.example.ics")["docid"].as_str().unwrap().replace('#', "%23");
    s.request("PUT", &format!("/api/docs/{id}"), Some(&json!({ "content": "x" }))).assert_error(409, "UNSUPPORTED");
}

/// A record file followed by the watcher: a record added is a new document and the others
/// keep their ids; a bookmark export saved over with a plain page takes its bookmarks out.
#[test]
fn record_files_follow_their_changes() {
    let s = Server::start();
    let root = s.path("notes");
    write_notes(&root, &[("keep.md", "# Keep\n"), ("export.jsonl", JSONL), ("marks.html", BOOKMARKS)]);
    s.add_collection_with(&root, "notes", true);
    let first = doc(&s, "svc://notes/export.jsonl/msg-101.jsonl")["docid"].clone();
    let more = format!(
        "{JSONL}{{\"id\": \"msg-103\", \"title\": \"Slip recipe\", \"text\": \"Mix terra sigillata overnight.\"}}\n"
    );
    std::fs::write(root.join("export.jsonl"), more).unwrap();
    s.wait_until(WITHIN, |s| {
        s.search(json!({ "query": "sigillata" }))["results"][0]["uri"] == "svc://notes/export.jsonl/msg-103.jsonl"
    });
    assert_eq!(doc(&s, "svc://notes/export.jsonl/msg-101.jsonl")["docid"], first);

    assert_eq!(hit(&s, "tenmoku")["contentType"], "bookmark");
    std::fs::write(root.join("marks.html"), "<html><body><p>Shino glaze notes</p></body></html>").unwrap();
    s.wait_until(WITHIN, |s| uris(&s.search(json!({ "query": "shino" }))) == ["svc://notes/marks.html"]);
    s.wait_until(WITHIN, |s| uris(&s.search(json!({ "query": "tenmoku" }))).is_empty());

    std::fs::remove_file(root.join("export.jsonl")).unwrap();
    s.wait_until(WITHIN, |s| uris(&s.search(json!({ "query": "porcelain" }))).is_empty());
}
