//! A vault as Obsidian reads it: pictures named like notes, notes of one name in several
//! folders, embeds of notes, headings, blocks and pictures, links to the note's own
//! headings and blocks, anchors that are missing; the links, backlinks, graph, reader and a
//! rename over them.

use crate::common::*;
use serde_json::{json, Value};

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0xF8, 0xFF, 0xFF, 0x3F, 0x00, 0x05, 0xFE, 0x02, 0xFE, 0xDC, 0xCC, 0x59, 0xE7,
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

const HOME: &str = "# Home\n## Start\n\
See [[Search]] and ![[Search]] and ![[Search#Options]] and ![[Search#^opt1]] and ![[Search.png|300]].\n\
Back to [[#Start]], a missing [[#Nowhere]], a block [[#^here]], a missing heading [[Search#No Such]].\n\n\
![a picture](Attachments/Search.png)\n\nHere ^here\n";

fn vault(s: &Server) -> std::path::PathBuf {
    let v = s.path("vault");
    write_notes(
        &v,
        &[
            ("Home.md", HOME),
            ("Plugins/Search.md", "# Search\n## Options\n\nAn option line ^opt1\n"),
            ("Archive/Old/Search.md", "# Old search\n"),
        ],
    );
    std::fs::create_dir_all(v.join("Attachments")).unwrap();
    std::fs::write(v.join("Attachments/Search.png"), PNG).unwrap();
    s.add_collection(&v, "v");
    v
}

fn id(s: &Server, rel: &str) -> String {
    s.get(&format!("/api/doc?uri=svc://v/{rel}")).json()["docid"].as_str().unwrap().replace('#', "%23")
}

/// Each link as (target as written, anchor, resolved uri, embed, anchor missing).
fn links_of(s: &Server, rel: &str) -> Vec<(String, String, String, bool, bool)> {
    let l = s.get(&format!("/api/doc/{}/links", id(s, rel))).json();
    let str_of = |v: &Value| v.as_str().unwrap_or("").to_string();
    l["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                str_of(&x["targetRef"]),
                str_of(&x["targetAnchor"]),
                str_of(&x["resolvedUri"]),
                x["embed"] == true,
                x["targetAnchorMissing"] == true,
            )
        })
        .collect()
}

#[test]
fn embeds_same_note_links_and_anchors_are_links_as_obsidian_reads_them() {
    let s = Server::start();
    vault(&s);
    let (home, search, png) = ("svc://v/Home.md", "svc://v/Plugins/Search.md", "svc://v/Attachments/Search.png");
    let l = |t: &str, a: &str, to: &str, embed: bool, missing: bool| {
        (t.to_string(), a.to_string(), to.to_string(), embed, missing)
    };
    assert_eq!(
        links_of(&s, "Home.md"),
        vec![
            l("Search", "", search, false, false),
            l("Search", "", search, true, false),
            l("Search", "Options", search, true, false),
            l("Search", "^opt1", search, true, false),
            l("Search.png", "", png, true, false),
            l("", "Start", home, false, false),
            l("", "Nowhere", "", false, false),
            l("", "^here", home, false, false),
            l("Search", "No Such", search, false, true),
            l("Attachments/Search.png", "", png, true, false),
        ]
    );
    let all = s.get(&format!("/api/doc/{}/links", id(&s, "Home.md"))).json();
    assert_eq!(all["meta"]["totalLinks"], 10);
    assert_eq!(all["meta"]["resolvedCount"], 9, "the missing heading of the note itself does not resolve");
    assert_eq!(all["links"][4].get("linkText"), None, "a picture's size is not link text");
    assert_eq!(all["links"][9]["linkText"], "a picture");
    assert_eq!(all["links"][1]["startCol"], 20, "an embed starts at its '!'");

    let back = s.get(&format!("/api/doc/{}/backlinks", id(&s, "Plugins/Search.md"))).json();
    let embeds: Vec<bool> = back["backlinks"].as_array().unwrap().iter().map(|b| b["embed"] == true).collect();
    assert_eq!(embeds, vec![false, true, true, true, false], "{back}");
    let back = s.get(&format!("/api/doc/{}/backlinks", id(&s, "Attachments/Search.png"))).json();
    assert_eq!(back["meta"]["totalBacklinks"], 2, "the picture is reached by its embeds: {back}");
    let home_back = s.get(&format!("/api/doc/{}/backlinks", id(&s, "Home.md"))).json();
    assert_eq!(home_back["meta"]["totalBacklinks"], 0, "links to the note's own headings are not backlinks");

    let g = s.get("/api/graph").json();
    let node = |uri: &str| g["nodes"].as_array().unwrap().iter().find(|n| n["uri"] == uri).unwrap()["id"].clone();
    let edges = g["links"].as_array().unwrap();
    let edge = |to: &str, kind: &str| {
        edges.iter().find(|e| e["source"] == node(home) && e["target"] == node(to) && e["type"] == kind).cloned()
    };
    let to_note = edge(search, "wiki").unwrap();
    assert_eq!((to_note["weight"].as_u64(), to_note["embeds"].as_u64()), (Some(5), Some(3)), "{g}");
    assert_eq!(edge(png, "markdown").unwrap()["embeds"], 1);
    assert!(edges.iter().all(|e| e["source"] != e["target"]), "no edge from a note to itself");

    // The reader shows an embedded picture wherever the vault keeps it, links an embedded
    // note, and gives a block the id its links land on.
    let page = s.get(&format!("/doc?uri={}", urlencode(home)));
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains("/api/doc-asset?uri=svc%3A%2F%2Fv%2FAttachments%2FSearch%2Epng\""), "{html}");
    assert!(html.contains("class=\"internal embed\""), "{html}");
    assert!(html.contains("id=\"b-here\"") && html.contains("href=\"#b-here\""), "{html}");
    assert!(html.contains("Plugins%2FSearch%2Emd#b-opt1\""), "{html}");
}

#[test]
fn a_rename_rewrites_the_embeds_of_the_note_too() {
    let s = Server::start();
    let root = vault(&s);
    let sid = id(&s, "Plugins/Search.md");
    let plan =
        s.post(&format!("/api/docs/{sid}/refactor-plan"), json!({ "operation": "rename", "name": "Find" })).json();
    assert_eq!(plan["canApply"], true, "{plan}");
    let done = s.post(
        &format!("/api/docs/{sid}/rename"),
        json!({ "name": "Find", "planDigest": plan["planDigest"], "schemaVersion": "1.0", "confirmation": "apply" }),
    );
    assert_eq!(done.status, 200, "{}", String::from_utf8_lossy(&done.body));
    let text = std::fs::read_to_string(root.join("Home.md")).unwrap();
    assert!(
        text.contains("See [[Find]] and ![[Find]] and ![[Find#Options]] and ![[Find#^opt1]] and ![[Search.png|300]]."),
        "{text}"
    );
    assert!(text.contains("[[#Start]]") && text.contains("[[Find#No Such]]"), "{text}");
    let found = "svc://v/Plugins/Find.md";
    let to_find = links_of(&s, "Home.md").into_iter().filter(|l| l.2 == found).count();
    assert_eq!(to_find, 5);
}
