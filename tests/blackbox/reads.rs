//! Read endpoints: status, capabilities, tags, docs, doc, links, backlinks, sections, graph.

use crate::common::*;
use serde_json::json;

fn linked_notes(s: &Server) {
    let n = s.path("n");
    write_notes(
        &n,
        &[
            ("hub.md", "---\ntags: [topic/rust, hub]\ndate: 2024-01-10\ndue_date: 2024-05-01\n---\n# Hub\nSee [[Spoke One]], [[spoke-two|the second]], [[Spoke One#Details]] and [third](sub/three.md).\nAlso [[Missing Note]].\n\n```\n[[In Code]]\n```\n"),
            ("spoke-one.md", "---\ntags: [topic/go]\ndate: 2024-02-10\n---\n# Spoke One\n## Details\nback to [[Hub]]\n## Details\nagain\n"),
            ("spoke-two.md", "# Spoke Two\n#topic/rust inline\n"),
            ("sub/three.md", "# Three\n[up](../hub.md)\n"),
            ("lonely.md", "# Lonely\nno links\n"),
        ],
    );
    s.add_collection(&n, "n");
}

fn docid(s: &Server, rel: &str) -> String {
    s.get(&format!("/api/doc?uri=svc://n/{rel}")).json()["docid"].as_str().unwrap().replace('#', "%23")
}

#[test]
fn status_capabilities_and_health() {
    let s = Server::start();
    assert_eq!(s.get("/api/health").json(), json!({ "ok": true }));
    linked_notes(&s);
    let st = s.get("/api/status").json();
    for k in ["indexName", "configPath", "dbPath", "lastUpdated", "connectorProjection", "contentTypeBoost"] {
        assert!(!st[k].is_null(), "{k} missing: {st}");
    }
    assert_eq!(st["indexName"], "default");
    assert_eq!(st["totalDocuments"], 5);
    assert_eq!(st["healthy"], true);
    // No embedder is installed: every document waits to be embedded.
    assert_eq!(st["embeddingBacklog"], 5);
    let c = &st["collections"][0];
    assert_eq!((c["name"].as_str(), c["documentCount"].as_u64()), (Some("n"), Some(5)));
    assert!(c["chunkCount"].as_u64().unwrap() >= 5 && c["embeddedCount"] == 0);
    assert_eq!(
        s.get("/api/capabilities").json(),
        json!({ "bm25": true, "vector": false, "hybrid": false, "answer": false, "egressPolicy": "local_only" })
    );
}

#[test]
fn tags_with_prefix_and_collection() {
    let s = Server::start();
    linked_notes(&s);
    let t = s.get("/api/tags").json();
    assert_eq!(t["meta"]["total"], 3);
    assert_eq!(t["tags"][0], json!({ "tag": "topic/rust", "count": 2 }));
    let p = s.get("/api/tags?prefix=topic&collection=n").json();
    let names: Vec<&str> = p["tags"].as_array().unwrap().iter().map(|t| t["tag"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["topic/rust", "topic/go"]);
    assert_eq!(p["meta"]["prefix"], "topic");
    assert_eq!(p["meta"]["collection"], "n");
    assert_eq!(s.get("/api/tags?prefix=top").json()["tags"], json!([]));
}

#[test]
fn docs_paging_sorting_and_filters() {
    let s = Server::start();
    linked_notes(&s);
    let all = s.get("/api/docs").json();
    assert_eq!(all["total"], 5);
    assert_eq!((all["limit"].as_u64(), all["offset"].as_u64()), (Some(20), Some(0)));
    assert_eq!((all["sortField"].as_str(), all["sortOrder"].as_str()), (Some("modified"), Some("desc")));
    let mut fields: Vec<String> = serde_json::from_value(all["availableDateFields"].clone()).unwrap();
    fields.sort();
    assert_eq!(fields, vec!["date", "due_date"]);
    let d = &all["documents"][0];
    for k in ["docid", "uri", "title", "collection", "relPath", "sourceExt", "sourceMime", "updatedAt"] {
        assert!(d[k].is_string(), "{k}: {d}");
    }
    let page = s.get("/api/docs?limit=2&offset=4").json();
    assert_eq!(page["documents"].as_array().unwrap().len(), 1);
    let by_date = s.get("/api/docs?sortField=date&sortOrder=asc").json();
    let titles: Vec<&str> =
        by_date["documents"].as_array().unwrap().iter().map(|d| d["title"].as_str().unwrap()).collect();
    assert_eq!(&titles[..2], &["Hub", "Spoke One"]);
    assert_eq!(s.get("/api/docs?tagsAll=topic/rust,hub").json()["total"], 1);
    // Oldest first is newest first reversed, ties included.
    let order = |q: &str| -> Vec<String> {
        let page = s.get(&format!("/api/docs?{q}")).json();
        page["documents"].as_array().unwrap().iter().map(|d| d["relPath"].as_str().unwrap().to_string()).collect()
    };
    let mut newest_first = order("sortOrder=desc");
    newest_first.reverse();
    assert_eq!(order("sortOrder=asc"), newest_first);
    assert_eq!(order("collection=n&sortOrder=asc&limit=2"), newest_first[..2]);
    // The date keys of the documents listed, and of none that changed since.
    assert_eq!(s.get("/api/docs?tagsAll=topic/go").json()["availableDateFields"], json!(["date"]));
    assert_eq!(s.get("/api/docs?tagsAll=lonely-tag").json()["availableDateFields"], json!([]));
    let hub = s.get("/api/doc?uri=svc://n/hub.md").json();
    let put = s.request(
        "PUT",
        &format!("/api/docs/{}", docid(&s, "hub.md")),
        Some(&json!({
            "uri": "svc://n/hub.md",
            "content": "---\ntags: [topic/rust, hub]\ndate: 2024-01-10\n---\n# Hub\n",
            "expectedSourceHash": hub["source"]["sourceHash"],
        })),
    );
    assert_eq!(put.status, 200, "{}", String::from_utf8_lossy(&put.body));
    assert_eq!(s.get("/api/docs").json()["availableDateFields"], json!(["date"]));
    assert_eq!(s.get("/api/docs?tagsAny=topic/go,hub").json()["total"], 2);
    assert_eq!(s.get("/api/docs?limit=1000").json()["limit"], 100);
    s.get("/api/docs?limit=0").assert_error(400, "VALIDATION");
    s.get("/api/docs?limit=abc").assert_error(400, "VALIDATION");
    s.get("/api/docs?sortOrder=sideways").assert_error(400, "VALIDATION");
    s.get("/api/docs?sortField=x;drop").assert_error(400, "VALIDATION");
    s.get("/api/docs?tagsAll=Bad%20Tag!").assert_error(400, "VALIDATION");
}

#[test]
fn doc_by_uri_and_errors() {
    let s = Server::start();
    linked_notes(&s);
    let d = s.get("/api/doc?uri=svc%3A%2F%2Fn%2Fsub%2Fthree.md").json();
    assert_eq!(d["title"], "Three");
    assert_eq!(d["relPath"], "sub/three.md");
    assert_eq!(d["contentAvailable"], true);
    assert_eq!(d["content"], "# Three\n[up](../hub.md)\n");
    assert_eq!(d["source"]["mime"], "text/markdown");
    assert_eq!(d["source"]["ext"], ".md");
    assert_eq!(d["source"]["sizeBytes"], 24);
    assert!(d["source"]["modifiedAt"].as_str().unwrap().ends_with('Z'));
    assert!(d["docid"].as_str().unwrap().starts_with('#'));
    s.get("/api/doc").assert_error(400, "VALIDATION");
    s.get("/api/doc?uri=svc://n/none.md").assert_error(404, "NOT_FOUND");
    s.get("/api/doc?uri=svc://n/../etc/passwd").assert_error(400, "VALIDATION");
    s.get("/api/doc?uri=file:///etc/passwd").assert_error(400, "VALIDATION");
}

#[test]
fn links_backlinks_and_sections() {
    let s = Server::start();
    linked_notes(&s);
    let hub = docid(&s, "hub.md");
    let l = s.get(&format!("/api/doc/{hub}/links")).json();
    let links = l["links"].as_array().unwrap();
    assert_eq!(links.len(), 5, "{l}");
    assert_eq!(l["meta"]["totalLinks"], 5);
    assert_eq!(l["meta"]["resolvedCount"], 4);
    assert_eq!(l["meta"]["resolutionAvailable"], true);
    let first = &links[0];
    assert_eq!((first["targetRef"].as_str(), first["linkType"].as_str()), (Some("Spoke One"), Some("wiki")));
    assert_eq!((first["startLine"].as_u64(), first["startCol"].as_u64()), (Some(7), Some(5)));
    assert_eq!(first["resolvedUri"], "svc://n/spoke-one.md");
    assert_eq!(links[1]["linkText"], "the second");
    assert_eq!(links[1]["resolvedTitle"], "Spoke Two");
    assert_eq!(links[2]["targetAnchor"], "Details");
    assert_eq!(links[3]["linkType"], "markdown");
    assert_eq!(links[3]["resolvedUri"], "svc://n/sub/three.md");
    assert_eq!(links[4]["resolved"], false);
    assert!(links[4].get("resolvedDocid").is_none());
    let wiki = s.get(&format!("/api/doc/{hub}/links?type=wiki")).json();
    assert_eq!(wiki["meta"]["typeFilter"], "wiki");
    assert_eq!(wiki["links"].as_array().unwrap().len(), 4);
    s.get(&format!("/api/doc/{hub}/links?type=image")).assert_error(400, "VALIDATION");

    let b = s.get(&format!("/api/doc/{hub}/backlinks")).json();
    let mut from: Vec<&str> =
        b["backlinks"].as_array().unwrap().iter().map(|x| x["sourceUri"].as_str().unwrap()).collect();
    from.sort();
    assert_eq!(from, vec!["svc://n/spoke-one.md", "svc://n/sub/three.md"]);
    assert_eq!(b["meta"]["totalBacklinks"], 2);
    assert!(b["backlinks"][0]["startLine"].is_u64());

    let one = docid(&s, "spoke-one.md");
    let sec = s.get(&format!("/api/doc/{one}/sections")).json();
    let anchors: Vec<&str> =
        sec["sections"].as_array().unwrap().iter().map(|x| x["anchor"].as_str().unwrap()).collect();
    assert_eq!(anchors, vec!["spoke-one", "details", "details-2"]);
    assert_eq!(sec["sections"][1]["level"], 2);
    assert_eq!(sec["sections"][1]["line"], 6);

    // the uri query wins over the id
    let via_uri = s.get(&format!("/api/doc/{hub}/sections?uri=svc://n/spoke-one.md")).json();
    assert_eq!(via_uri["sections"], sec["sections"]);
    // `?uri=` names a document or is refused: empty or not svc:// is a 400, never ignored.
    for bad in ["", "notes/x.md", "svc://"] {
        s.get(&format!("/api/doc/{hub}/sections?uri={bad}")).assert_error(400, "VALIDATION");
        s.request("PUT", &format!("/api/docs/{hub}?uri={bad}"), Some(&json!({ "content": "x" })))
            .assert_error(400, "VALIDATION");
    }
    s.get("/api/doc?uri=").assert_error(400, "VALIDATION");
    s.get("/api/doc-asset?uri=").assert_error(400, "VALIDATION");
    s.get("/api/doc/%23abcdef12/links").assert_error(404, "NOT_FOUND");
    s.get("/api/doc/not-hex/backlinks").assert_error(400, "VALIDATION");
    s.get(&format!("/api/doc/{hub}/similar")).assert_error(503, "UNAVAILABLE");
    s.get("/api/doc/%23abcdef12/similar").assert_error(404, "NOT_FOUND");
    s.get(&format!("/api/doc/{hub}/similar?limit=0")).assert_error(400, "VALIDATION");
}

#[test]
fn graph_edges_limits_and_similar_flag() {
    let s = Server::start();
    linked_notes(&s);
    let g = s.get("/api/graph").json();
    let nodes = g["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4, "lonely is excluded by linkedOnly: {g}");
    let hub = nodes.iter().find(|n| n["title"] == "Hub").unwrap();
    assert_eq!(hub["degree"], 5);
    assert_eq!(hub["relPath"], "hub.md");
    let m = &g["meta"];
    assert_eq!(m["totalEdgesUnresolved"], 1);
    assert_eq!(m["collection"], serde_json::Value::Null);
    assert_eq!(
        (m["linkedOnly"].as_bool(), m["similarAvailable"].as_bool(), m["truncated"].as_bool()),
        (Some(true), Some(false), Some(false))
    );
    let wiki_edge = g["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "wiki" && e["source"] == hub["id"] && e["weight"] == 2);
    assert!(wiki_edge.is_some(), "two wiki links hub -> spoke one: {g}");
    let all = s.get("/api/graph?linkedOnly=false").json();
    assert_eq!(all["nodes"].as_array().unwrap().len(), 5);
    let cut = s.get("/api/graph?limit=2&edgeLimit=1").json();
    assert_eq!(cut["nodes"].as_array().unwrap().len(), 2);
    assert!(cut["links"].as_array().unwrap().len() <= 1);
    assert_eq!(cut["meta"]["truncated"], true);
    let sim = s.get("/api/graph?includeSimilar=true").json();
    assert_eq!(sim["meta"]["similarAvailable"], false);
    assert_eq!(sim["meta"]["includedSimilar"], false);
    assert!(!sim["meta"]["warnings"].as_array().unwrap().is_empty());
    assert_eq!(s.get("/api/graph?limit=999999").json()["meta"]["nodeLimit"], 5000);
    s.get("/api/graph?limit=0").assert_error(400, "VALIDATION");
    s.get("/api/graph?threshold=-1").assert_error(400, "VALIDATION");
    s.get("/api/graph?linkedOnly=maybe").assert_error(400, "VALIDATION");
}

#[test]
fn autocomplete_matches_title_prefixes_then_words() {
    let s = Server::start();
    write_notes(
        &s.path("n"),
        &[
            ("a.md", "# Rust ownership\n"),
            ("b.md", "# Learning Rust\n"),
            ("c.md", "# Trust issues\n"),
            ("d.md", "# rusty tools\n"),
            ("e.md", "# 100% done_x\n"),
        ],
    );
    s.add_collection(&s.path("n"), "n");
    let titles = |q: &str| -> Vec<String> {
        let r = s.get(&format!("/api/docs/autocomplete?{q}")).json();
        r["docs"].as_array().unwrap().iter().map(|d| d["title"].as_str().unwrap().to_string()).collect()
    };
    // Prefix matches first (by title), then word matches; "Trust" has no word starting with rust.
    assert_eq!(titles("query=RUST"), vec!["Rust ownership", "rusty tools", "Learning Rust"]);
    assert_eq!(titles("query=rust&limit=1"), vec!["Rust ownership"]);
    assert_eq!(titles("query=own"), vec!["Rust ownership"]);
    // LIKE wildcards are plain characters.
    assert_eq!(titles("query=100%25"), vec!["100% done_x"]);
    assert_eq!(titles("query=%25"), Vec::<String>::new());
    assert_eq!(titles("query=_"), Vec::<String>::new());
    let d = &s.get("/api/docs/autocomplete?query=learn").json()["docs"][0];
    assert_eq!(d["uri"], "svc://n/b.md");
    assert_eq!(d["collection"], "n");
    assert!(d["docid"].as_str().unwrap().starts_with('#'));
    s.get("/api/docs/autocomplete").assert_error(400, "VALIDATION");
    s.get("/api/docs/autocomplete?query=%20").assert_error(400, "VALIDATION");
    s.get("/api/docs/autocomplete?query=a&limit=0").assert_error(400, "VALIDATION");
    s.get("/api/docs/autocomplete?query=a&collection=nope").assert_error(404, "NOT_FOUND");
    assert_eq!(s.get("/api/docs/autocomplete?query=rust&limit=500").status, 200);
}
