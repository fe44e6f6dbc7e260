//! Local models: real models through the real server. The real embedder (all-MiniLM-L6-v2,
//! prepared by `scripts/models`) for retrieval and the real SmolLM2 GGUF for query expansion;
//! tiny generated ONNX models (`scripts/models tiny`) for the reranker plumbing and for pulls.
//! `scripts/test` prepares both and sets `SVC_TEST_MODELS` and `ORT_DYLIB_PATH`.

use crate::common::*;
use crate::hub::Hub;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) const EMBED: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The presets' embedder file in its repo (int8).
const EMBED_FILE: &str = "onnx/model_qint8_avx512.onnx";
const RERANK: &str = "cross-encoder/ms-marco-MiniLM-L6-v2";
/// The default preset's generator file, as the model cache lays it out.
const GEN_FILE: &str = "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

pub(crate) fn test_models() -> PathBuf {
    crate::prepared::test_models_dir().expect("the test models are not prepared: run scripts/test")
}

/// The file a preset names in `repo`: the embedder's, or `onnx/model.onnx`.
fn model_file(repo: &str) -> &'static str {
    if repo == EMBED {
        EMBED_FILE
    } else {
        "onnx/model.onnx"
    }
}

/// Links a model dir (`model.onnx` + `tokenizer.json`) into the cache layout of `repo`.
pub(crate) fn install(cache: &Path, from: &Path, repo: &str) {
    let dest = cache.join("models").join(repo);
    std::fs::create_dir_all(dest.join("onnx")).unwrap();
    std::os::unix::fs::symlink(from.join("model.onnx"), dest.join(model_file(repo))).unwrap();
    std::os::unix::fs::symlink(from.join("tokenizer.json"), dest.join("tokenizer.json")).unwrap();
}

pub(crate) fn real_embedder() -> PathBuf {
    let dir = test_models().join("cache/models").join(EMBED);
    assert!(dir.join(EMBED_FILE).is_file(), "the real embedder is missing under {}", dir.display());
    // install() wants model.onnx and tokenizer.json side by side
    let flat = test_models().join("real-embed");
    if !flat.join("model.onnx").exists() {
        std::fs::create_dir_all(&flat).unwrap();
        let _ = std::os::unix::fs::symlink(dir.join(EMBED_FILE), flat.join("model.onnx"));
        let _ = std::os::unix::fs::symlink(dir.join("tokenizer.json"), flat.join("tokenizer.json"));
    }
    flat
}

fn status(s: &Server) -> Value {
    s.get("/api/status").json()
}

pub(crate) fn wait_embedded(s: &Server) {
    s.wait_until(Duration::from_secs(120), |s| {
        let st = status(s);
        st["embeddingBacklog"] == 0
            && st["collections"].as_array().is_some_and(|c| c.iter().all(|c| c["embeddedCount"] == c["documentCount"]))
    });
}

fn notes(s: &Server) {
    write_notes(
        &s.path("notes"),
        &[
            ("sockets.md", "# Unix domain sockets\nLocal sockets let two programs on the same computer exchange messages quickly.\n"),
            ("bread.md", "# Sourdough\nMix flour, water and salt, let the dough rise overnight, then bake it in a hot oven.\n"),
            ("garden.md", "# Tomatoes\nPlant tomatoes in spring, water them often and give them plenty of sun.\n"),
            ("pipes.md", "# Named pipes\nA FIFO file connects one process writing to another process reading.\n"),
        ],
    );
}

/// A server with the real default embedder and the four notes of [`notes`] in the collection
/// `notes` (not yet embedded); `None` when the test's models are not prepared.
fn real_embedder_server(test: &str) -> Option<Server> {
    if !crate::prepared::models(test) {
        return None;
    }
    let embed = real_embedder();
    let s = Server::start();
    install(&s.path("cache"), &embed, EMBED);
    notes(&s);
    s.add_collection(&s.path("notes"), "notes");
    Some(s)
}

#[test]
fn vector_and_hybrid_search_with_the_real_embedder() {
    let Some(s) = real_embedder_server("models::vector_and_hybrid_search_with_the_real_embedder") else { return };
    wait_embedded(&s);
    let caps = s.get("/api/capabilities").json();
    assert_eq!(
        caps,
        json!({ "bm25": true, "vector": true, "hybrid": true, "answer": false, "egressPolicy": "local_only" })
    );

    // No keyword in common: only meaning connects the query to the note.
    let r =
        s.post("/api/vsearch", json!({ "query": "how can processes talk to each other on one machine", "limit": 2 }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    assert_eq!(v["mode"], "vector");
    assert_eq!(v["meta"]["vectorsUsed"], true);
    let top = uris(&v);
    assert!(top[0] == "svc://notes/sockets.md" || top[0] == "svc://notes/pipes.md", "{v}");
    assert!(top.len() <= 2);
    for hit in v["results"].as_array().unwrap() {
        let sc = hit["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&sc), "{hit}");
        assert!(hit["chunk"]["text"].is_string() && hit["source"]["absPath"].is_string());
    }
    let baking = s.post("/api/vsearch", json!({ "query": "how to make bread at home" })).json();
    assert_eq!(uris(&baking)[0], "svc://notes/bread.md");

    let q = s.post("/api/query", json!({ "query": "growing vegetables in the sun", "noExpand": true })).json();
    assert_eq!(q["mode"], "hybrid", "{q}");
    assert_eq!(q["queryLanguage"], "en");
    assert_eq!(q["meta"]["vectorsUsed"], true);
    assert_eq!(q["meta"]["reranked"], false, "no reranker is installed");
    assert_eq!(q["meta"]["expanded"], false);
    assert_eq!(uris(&q)[0], "svc://notes/garden.md");
    assert_eq!(s.post("/api/query", json!({ "query": "x", "limit": 0 })).status, 400);
    s.post("/api/query", json!({ "query": "\"odd" })).assert_error(400, "VALIDATION");
    s.post("/api/vsearch", json!({ "query": 7 })).assert_error(400, "VALIDATION");
    s.post("/api/vsearch", json!({ "query": "x", "collection": "nope" })).assert_error(404, "NOT_FOUND");
    let filtered = s.post("/api/vsearch", json!({ "query": "bread", "tagsAll": ["none"] })).json();
    assert_eq!(filtered["results"].as_array().unwrap().len(), 0);

    // Similar documents: never the document itself, threshold respected.
    let docid = s.get("/api/doc?uri=svc://notes/sockets.md").json()["docid"].as_str().unwrap().to_string();
    let id = docid.trim_start_matches('#');
    let sim = s.get(&format!("/api/doc/{id}/similar?threshold=0&limit=3")).json();
    let sims = sim["similar"].as_array().unwrap();
    assert_eq!(sims.len(), 3, "{sim}");
    assert!(sims.iter().all(|x| x["docid"] != docid.as_str()));
    assert_eq!(sims[0]["uri"], "svc://notes/pipes.md", "{sim}");
    assert_eq!(sim["meta"]["threshold"], 0.0);
    // Request numbers are echoed as sent, not widened from f32 (0.30000001192092896).
    let echoed = s.get(&format!("/api/doc/{id}/similar?threshold=0.3"));
    assert!(
        String::from_utf8_lossy(&echoed.body).contains("\"threshold\":0.3,"),
        "{}",
        String::from_utf8_lossy(&echoed.body)
    );
    let strict = s.get(&format!("/api/doc/{id}/similar?threshold=1")).json();
    assert_eq!(strict["similar"].as_array().unwrap().len(), 0);
    s.get("/api/doc/ffffffff/similar").assert_error(404, "NOT_FOUND");
    s.get(&format!("/api/doc/{id}/similar?limit=0")).assert_error(400, "VALIDATION");

    let g = s.get("/api/graph?includeSimilar=true&linkedOnly=false&threshold=0.5").json();
    assert_eq!(g["meta"]["similarAvailable"], true);
    assert_eq!(g["meta"]["includedSimilar"], true);
    assert!(g["links"].as_array().unwrap().iter().any(|l| l["type"] == "similar"), "{g}");

    // A deleted note never comes back from vector search; a deactivated one neither.
    std::fs::remove_file(s.path("notes/pipes.md")).unwrap();
    s.sync(json!({}));
    let r = s.post(&format!("/api/docs/{id}/deactivate"), json!({}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    for query in ["processes exchanging messages", "unix sockets", "named pipes fifo"] {
        let v = s.post("/api/vsearch", json!({ "query": query, "limit": 10 })).json();
        let got = uris(&v);
        assert!(
            !got.contains(&"svc://notes/sockets.md".to_string()) && !got.contains(&"svc://notes/pipes.md".to_string()),
            "{query}: {got:?}"
        );
        let h = s.post("/api/query", json!({ "query": query, "limit": 10, "noExpand": true })).json();
        let got = uris(&h);
        assert!(
            !got.contains(&"svc://notes/sockets.md".to_string()) && !got.contains(&"svc://notes/pipes.md".to_string()),
            "{query}: {got:?}"
        );
    }
}

#[test]
fn a_vector_search_of_one_collection_is_not_crowded_out_by_another() {
    let Some(s) = real_embedder_server("models::a_vector_search_of_one_collection_is_not_crowded_out_by_another")
    else {
        return;
    };
    // Another collection of 200 notes on baking: the 150 chunks nearest to a question on
    // baking, the first pool a filtered search reads, are all theirs.
    let baking: Vec<(String, String)> = (0..200)
        .map(|i| {
            (
                format!("loaf-{i}.md"),
                format!("# Loaf {i}\nBake bread at home: mix flour, water and salt, let the dough rise and bake loaf {i}.\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = baking.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    write_notes(&s.path("baking"), &files);
    s.add_collection(&s.path("baking"), "baking");
    wait_embedded(&s);
    for route in ["/api/vsearch", "/api/query"] {
        let v = s
            .post(
                route,
                json!({ "query": "how to make bread at home", "collection": "notes", "limit": 3, "noExpand": true }),
            )
            .json();
        let found = uris(&v);
        assert_eq!(found.len(), 3, "{route}: the notes collection's own nearest notes, not none: {v}");
        assert_eq!(found[0], "svc://notes/bread.md", "{route}: {v}");
        assert!(found.iter().all(|u| u.starts_with("svc://notes/")), "{route}: {v}");
    }
}

/// The multilingual preset's embedder (multilingual-e5-small, `scripts/models multilingual`).
const MULTILINGUAL: &str = "intfloat/multilingual-e5-small";

#[test]
fn the_multilingual_preset_finds_notes_in_other_languages_by_meaning() {
    if !crate::prepared::models("models::the_multilingual_preset_finds_notes_in_other_languages_by_meaning") {
        return;
    }
    let repo = test_models().join("cache/models").join(MULTILINGUAL);
    assert!(
        repo.join("onnx/model_qint8.onnx").is_file(),
        "the multilingual embedder is missing under {}",
        repo.display()
    );
    let s = Server::start();
    let dest = s.path("cache/models/intfloat");
    std::fs::create_dir_all(&dest).unwrap();
    std::os::unix::fs::symlink(&repo, dest.join("multilingual-e5-small")).unwrap();
    let set = s.post("/api/presets", json!({ "presetId": "multilingual" })).json();
    assert_eq!(set["activePreset"], "multilingual", "{set}");
    assert_eq!(set["embedModelChanged"], true, "another embedder: its own vectors");
    write_notes(
        &s.path("notes"),
        &[
            ("budget.md", "# 预算\n市政府明年的预算增加了百分之五，主要用于修建学校和医院。\n"),
            ("library.md", "# 図書館\n駅前の図書館は月曜日が休館で、本は二週間まで借りられます。\n"),
            ("bread.md", "# Sauerteig\nMehl, Wasser und Salz mischen, den Teig über Nacht gehen lassen und im heißen Ofen backen.\n"),
            ("garden.md", "# Tomates\nPlantez les tomates au printemps, arrosez-les souvent et donnez-leur beaucoup de soleil.\n"),
            ("weather.md", "# 天气\n明天北京有大雨，气温会降到十度左右。\n"),
            ("curry.md", "# カレー\n玉ねぎを炒めてから肉と野菜を入れ、一時間ほど煮込みます。\n"),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    wait_embedded(&s);
    // English questions, notes in Chinese, Japanese, German and French: no word in common.
    for (query, want) in [
        ("how much more money will the city spend next year", "budget.md"),
        ("when is the public library closed and how long can I keep books", "library.md"),
        ("how do I bake sourdough bread", "bread.md"),
        ("growing vegetables in the sun", "garden.md"),
    ] {
        let v = s.post("/api/vsearch", json!({ "query": query, "limit": 6 })).json();
        assert_eq!(v["meta"]["vectorsUsed"], true, "{v}");
        assert_eq!(uris(&v)[0], format!("svc://notes/{want}"), "{query}: {v}");
    }
    // And the other way: a question in German finds the Chinese note (all-MiniLM-L6-v2, the
    // default embedder, puts the German note on baking first).
    let v = s.post("/api/vsearch", json!({ "query": "Wie viel Geld gibt die Stadt nächstes Jahr aus?" })).json();
    assert_eq!(uris(&v)[0], "svc://notes/budget.md", "{v}");
}

/// A server with the tiny embedder, reranker and generator, its notes embedded.
fn tiny_models_server() -> Server {
    let tiny = test_models().join("tiny");
    let s = Server::start();
    install(&s.path("cache"), &tiny.join("embed"), EMBED);
    install(&s.path("cache"), &tiny.join("rerank"), RERANK);
    crate::ask::install_generator(&s);
    notes(&s);
    s.add_collection(&s.path("notes"), "notes");
    wait_embedded(&s);
    s
}

/// An object's keys, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().cloned().collect();
    k.sort();
    k
}

fn sorted(k: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = k.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

/// The keys of a `query-diagnose@1.0` target, found or not.
fn target_keys() -> Vec<String> {
    sorted(&[
        "ref",
        "status",
        "docid",
        "uri",
        "title",
        "contentType",
        "contentTypeSource",
        "categories",
        "graphHints",
        "contentTypeRulesFingerprint",
        "contentTypeFingerprintMatches",
        "mirrorHash",
        "chunkCount",
        "filterReasons",
    ])
}

#[test]
fn the_reranker_orders_hybrid_results_and_can_be_turned_off() {
    if !crate::prepared::models("models::the_reranker_orders_hybrid_results_and_can_be_turned_off") {
        return;
    }
    let s = tiny_models_server();
    assert_eq!(s.get("/api/capabilities").json()["answer"], true);
    // `svc embed` follows the server's background embedding (here already done) and says so;
    // not on a terminal, it prints plain lines, no progress bar.
    let out = s.cmd().arg("embed").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "embedding backlog is empty\n");
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\u{1b}'), "no terminal escapes off a terminal");
    let q = s.post("/api/query", json!({ "query": "sockets", "limit": 3 })).json();
    assert_eq!(q["meta"]["reranked"], true, "{q}");
    assert_eq!(q["meta"]["vectorsUsed"], true);
    let scores: Vec<f64> = q["results"].as_array().unwrap().iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]) && scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    let plain = s.post("/api/query", json!({ "query": "sockets", "noRerank": true, "noExpand": true })).json();
    assert_eq!(plain["meta"]["reranked"], false);
    assert_eq!(plain["meta"]["expanded"], false);
}

#[test]
fn the_generator_expands_queries_and_given_variants_are_used_as_they_are() {
    if !crate::prepared::models("models::the_generator_expands_queries_and_given_variants_are_used_as_they_are") {
        return;
    }
    let s = tiny_models_server();
    // The generator runs for expansion (whatever it says, the request answers); given
    // variants are used as they are.
    let gen = s.post("/api/query", json!({ "query": "how do programs exchange messages", "noRerank": true }));
    assert_eq!(gen.status, 200, "{}", String::from_utf8_lossy(&gen.body));
    let modes = s
        .post("/api/query", json!({ "query": "sockets", "queryModes": [{ "mode": "term", "text": "fifo" }, { "mode": "hyde", "text": "A pipe connects processes." }] }))
        .json();
    assert_eq!(modes["meta"]["expanded"], true, "{modes}");
    assert!(
        uris(&modes).contains(&"svc://notes/pipes.md".to_string()),
        "the term variant finds the FIFO note: {modes}"
    );
    s.post("/api/query", json!({ "query": "x", "queryModes": [{ "mode": "poem", "text": "y" }] }))
        .assert_error(400, "VALIDATION");
    s.post("/api/query", json!({ "query": "x", "queryModes": "term" })).assert_error(400, "VALIDATION");
}

/// The closed query-diagnose@1.0 shape: exactly these keys, nothing else.
#[test]
fn diagnose_answers_the_closed_shape_for_a_found_target() {
    if !crate::prepared::models("models::diagnose_answers_the_closed_shape_for_a_found_target") {
        return;
    }
    let s = tiny_models_server();
    let stage_keys = sorted(&["id", "status", "sourceCount", "present", "rank", "score", "survived", "dropReason"]);
    let stage_ids = |d: &Value| -> Vec<String> {
        d["stages"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
    };

    let d =
        s.post("/api/query/diagnose", json!({ "query": "unix sockets", "target": "svc://notes/sockets.md" })).json();
    assert_eq!(d["schemaVersion"], "1.0", "{d}");
    assert_eq!(keys(&d), sorted(&["schemaVersion", "query", "target", "stages", "chunk", "meta"]), "{d}");
    assert_eq!(d["query"], "unix sockets");
    let t = &d["target"];
    assert_eq!(keys(t), target_keys(), "{d}");
    assert_eq!(t["status"], "diagnosed", "{d}");
    assert_eq!(t["ref"], "svc://notes/sockets.md");
    assert_eq!(t["uri"], "svc://notes/sockets.md");
    assert!(t["docid"].as_str().is_some_and(|id| id.starts_with('#')), "{d}");
    assert_eq!(t["title"], "Unix domain sockets");
    assert_eq!(t["contentType"], "prose");
    assert_eq!(t["contentTypeSource"], "fallback");
    assert_eq!(t["categories"], json!(["prose"]), "the content type is a category");
    assert_eq!(t["graphHints"], json!([]));
    assert_eq!(t["contentTypeRulesFingerprint"], "none", "{d}");
    assert_eq!(t["contentTypeFingerprintMatches"], true, "{d}");
    assert!(t["mirrorHash"].is_string());
    assert!(t["chunkCount"].as_u64().is_some_and(|n| n >= 1), "{d}");
    assert_eq!(t["filterReasons"], json!([]));
    assert_eq!(stage_ids(&d), ["bm25", "vector", "fusion", "graph", "rerank"]);
    for st in d["stages"].as_array().unwrap() {
        let mut k = keys(st);
        k.retain(|k| k != "reason");
        assert_eq!(k, stage_keys, "{st}");
        assert!(st["status"] == "active" || st["status"] == "skipped", "{st}");
        if st["dropReason"].is_null() {
            assert!(st.get("reason").is_none(), "{st}");
        } else {
            assert!(st["reason"].as_str().is_some_and(|r| !r.is_empty()), "a dropped stage says why: {st}");
        }
    }
    assert_eq!(d["stages"][0]["status"], "active");
    assert_eq!(d["stages"][0]["present"], true);
    assert_eq!(d["stages"][0]["rank"], 1);
    assert_eq!(d["stages"][1]["status"], "active", "the embedder is installed: {d}");
    let graph = &d["stages"][3];
    assert_eq!(graph["status"], "skipped");
    assert_eq!(graph["dropReason"], "skipped");
    assert_eq!(graph["present"], false);
    assert!(graph["reason"].as_str().is_some_and(|r| r.to_lowercase().contains("graph")), "{graph}");
    assert_eq!(d["stages"][4]["status"], "active", "the reranker is installed: {d}");
    assert_eq!(keys(&d["chunk"]), sorted(&["seq", "startLine", "endLine", "language"]), "{d}");
    assert!(d["chunk"]["seq"].is_u64() && d["chunk"]["language"].is_null(), "{d}");
    let (start, end) = (d["chunk"]["startLine"].as_u64().unwrap(), d["chunk"]["endLine"].as_u64().unwrap());
    assert!(start >= 1 && end >= start, "{d}");
    assert_eq!(
        keys(&d["meta"]),
        sorted(&["mode", "vectorsUsed", "reranked", "totalResults"]),
        "no expanded, no queryModes: {d}"
    );
    assert_eq!(d["meta"]["mode"], "hybrid");
    assert_eq!(d["meta"]["vectorsUsed"], true);
    assert_eq!(d["meta"]["reranked"], true);
    assert!(d["meta"]["totalResults"].is_u64());
}

#[test]
fn diagnose_lists_the_query_modes_given() {
    if !crate::prepared::models("models::diagnose_lists_the_query_modes_given") {
        return;
    }
    let s = tiny_models_server();
    // queryModes are listed (each mode once) only when the request gives them.
    let dm = s
        .post(
            "/api/query/diagnose",
            json!({ "query": "sockets", "target": "svc://notes/sockets.md", "queryModes": [{ "mode": "term", "text": "fifo" }, { "mode": "hyde", "text": "A pipe connects processes." }, { "mode": "term", "text": "socket" }] }),
        )
        .json();
    assert_eq!(dm["meta"]["queryModes"], json!(["term", "hyde"]), "{dm}");
    assert_eq!(keys(&dm["meta"]), sorted(&["mode", "vectorsUsed", "reranked", "totalResults", "queryModes"]), "{dm}");
}

#[test]
fn diagnose_checks_every_filter_and_names_each_failing_one() {
    if !crate::prepared::models("models::diagnose_checks_every_filter_and_names_each_failing_one") {
        return;
    }
    let s = tiny_models_server();
    // Every filter is checked, not only the collection, and each failing one is named.
    let by_category = s
        .post("/api/query/diagnose", json!({ "query": "unix sockets", "target": "svc://notes/sockets.md", "collection": "notes", "category": ["recipes"] }))
        .json();
    assert_eq!(keys(&by_category["target"]), target_keys(), "{by_category}");
    assert_eq!(by_category["target"]["status"], "filtered_out", "{by_category}");
    assert_eq!(by_category["target"]["filterReasons"], json!(["categories"]), "{by_category}");
    assert_eq!(by_category["stages"][0]["present"], false, "the filter keeps it out of BM25: {by_category}");
    assert_eq!(by_category["stages"][0]["dropReason"], "not_in_candidate_set");
    assert!(by_category["chunk"].is_object(), "a filtered target still has its chunk: {by_category}");
    let by_others = s
        .post(
            "/api/query/diagnose",
            json!({ "query": "unix sockets", "target": "svc://notes/sockets.md", "until": "2000-01-01", "author": "nobody", "exclude": ["sockets"], "tagsAny": ["cooking"] }),
        )
        .json();
    assert_eq!(by_others["target"]["status"], "filtered_out", "{by_others}");
    assert_eq!(by_others["target"]["filterReasons"], json!(["until", "author", "tagsAny", "exclude"]), "{by_others}");
    let passing = s
        .post("/api/query/diagnose", json!({ "query": "unix sockets", "target": "svc://notes/sockets.md", "since": "2000-01-01", "exclude": ["bread"] }))
        .json();
    assert_eq!(passing["target"]["status"], "diagnosed", "{passing}");
    assert_eq!(passing["target"]["filterReasons"], json!([]));
}

#[test]
fn diagnose_of_a_missing_target_has_every_key_and_no_stages() {
    if !crate::prepared::models("models::diagnose_of_a_missing_target_has_every_key_and_no_stages") {
        return;
    }
    let s = tiny_models_server();
    // A missing target still carries every target key (null or empty), no stages, no chunk.
    let missing = s.post("/api/query/diagnose", json!({ "query": "x", "target": "#00000000" })).json();
    assert_eq!(keys(&missing), sorted(&["schemaVersion", "query", "target", "stages", "chunk", "meta"]), "{missing}");
    assert_eq!(keys(&missing["target"]), target_keys(), "{missing}");
    assert_eq!(missing["target"]["status"], "not_found");
    assert_eq!(missing["target"]["ref"], "#00000000");
    for k in [
        "docid",
        "uri",
        "title",
        "contentType",
        "contentTypeSource",
        "contentTypeRulesFingerprint",
        "contentTypeFingerprintMatches",
        "mirrorHash",
        "chunkCount",
    ] {
        assert!(missing["target"][k].is_null(), "{k}: {missing}");
    }
    for k in ["categories", "graphHints", "filterReasons"] {
        assert_eq!(missing["target"][k], json!([]), "{k}: {missing}");
    }
    assert_eq!(missing["stages"], json!([]));
    assert!(missing["chunk"].is_null());
    assert!(missing["meta"].get("expanded").is_none(), "{missing}");
    s.post("/api/query/diagnose", json!({ "query": "x" })).assert_error(400, "VALIDATION");
}

#[test]
fn without_models_vector_routes_answer_503_and_hybrid_falls_back() {
    let s = Server::start();
    notes(&s);
    s.add_collection(&s.path("notes"), "notes");
    assert_eq!(
        s.get("/api/capabilities").json(),
        json!({ "bm25": true, "vector": false, "hybrid": false, "answer": false, "egressPolicy": "local_only" })
    );
    s.post("/api/vsearch", json!({ "query": "sockets" })).assert_error(503, "UNAVAILABLE");
    let q = s.post("/api/query", json!({ "query": "sockets" })).json();
    assert_eq!(q["meta"]["vectorsUsed"], false);
    assert_eq!(uris(&q)[0], "svc://notes/sockets.md");
    let id = s.get("/api/doc?uri=svc://notes/sockets.md").json()["docid"]
        .as_str()
        .unwrap()
        .trim_start_matches('#')
        .to_string();
    s.get(&format!("/api/doc/{id}/similar")).assert_error(503, "UNAVAILABLE");
    let g = s.get("/api/graph?includeSimilar=true").json();
    assert_eq!(g["meta"]["similarAvailable"], false);
    assert_eq!(status(&s)["embeddingBacklog"], 4);
    let out = s.cmd().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("vectors: 4 documents waiting to be embedded"), "{text}");

    let p = s.get("/api/presets").json();
    assert_eq!(p["activePreset"], "default");
    let presets = p["presets"].as_array().unwrap();
    assert!(presets
        .iter()
        .any(|x| x["id"] == "default" && x["active"] == true && x["embed"].as_str().unwrap().starts_with("hf:")));
    s.post("/api/presets", json!({})).assert_error(400, "VALIDATION");
    s.post("/api/presets", json!({ "presetId": 3 })).assert_error(400, "VALIDATION");
    s.post("/api/presets", json!({ "presetId": "nope" })).assert_error(404, "NOT_FOUND");
    let set = s.post("/api/presets", json!({ "presetId": "small" })).json();
    assert_eq!(set["success"], true);
    assert_eq!(set["activePreset"], "small");
    assert_eq!(set["embedModelChanged"], false, "every preset shares the embedder: the vectors stay");
    assert_eq!(s.get("/api/presets").json()["activePreset"], "small");
    assert!(std::fs::read_to_string(s.path("config/index.yml")).unwrap().contains("preset: small"));
    // `quality`, the 1.5B generator's id before it became the default, names the default.
    let set = s.post("/api/presets", json!({ "presetId": "quality" })).json();
    assert_eq!(set["activePreset"], "default");
    assert!(std::fs::read_to_string(s.path("config/index.yml")).unwrap().contains("preset: default"));
}

fn tiny_files(tiny: &Path) -> HashMap<String, Vec<u8>> {
    let mut files = HashMap::new();
    for (role, repo) in [("embed", EMBED), ("rerank", RERANK)] {
        files
            .insert(format!("{repo}/{}", model_file(repo)), std::fs::read(tiny.join(role).join("model.onnx")).unwrap());
        files.insert(format!("{repo}/tokenizer.json"), std::fs::read(tiny.join(role).join("tokenizer.json")).unwrap());
    }
    // The generator's file fails its checksum in the test that pulls it, whatever it holds.
    files.insert(GEN_FILE.to_string(), b"GGUF and not a model".repeat(4096));
    files
}

fn pull_status(s: &Server) -> Value {
    let r = s.get("/api/models/status");
    assert_eq!(r.status, 200);
    r.json()
}

fn wait_pull(s: &Server) -> Value {
    s.wait_until(Duration::from_secs(60), |s| pull_status(s)["active"] == false);
    pull_status(s)
}

#[test]
fn model_pull_from_a_local_hub_progresses_resumes_and_verifies() {
    if !crate::prepared::models("models::model_pull_from_a_local_hub_progresses_resumes_and_verifies") {
        return;
    }
    let tiny = test_models().join("tiny");
    let hub = Hub::start(tiny_files(&tiny), Duration::from_millis(15));
    let embed_path = format!("{EMBED}/{EMBED_FILE}");
    hub.cut_once(&embed_path);
    hub.bad_checksum(GEN_FILE);
    let s = Server::start_with(&[("SVC_HF_ENDPOINT", &hub.url())]);
    let idle = pull_status(&s);
    assert_eq!(idle["active"], false);

    let r = s.post("/api/models/pull", json!({}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["started"], true);
    s.post("/api/models/pull", json!({})).assert_error(409, "CONFLICT");
    // Progress advances while the throttled hub sends.
    let mut seen: Vec<u64> = Vec::new();
    s.wait_until(Duration::from_secs(60), |s| {
        let st = pull_status(s);
        if let Some(n) = st["progress"]["downloadedBytes"].as_u64() {
            if seen.last() != Some(&n) {
                seen.push(n);
            }
        }
        st["active"] == false
    });
    assert!(seen.len() >= 3, "progress should advance in steps: {seen:?}");
    let first = pull_status(&s);
    let failed = first["failed"].as_array().unwrap();
    // The cut embedder download and the generator with a wrong checksum fail; the reranker lands.
    assert!(failed.iter().any(|f| f["type"] == "embed"), "{first}");
    let gen = failed.iter().find(|f| f["type"] == "gen").expect("gen fails its checksum");
    assert!(gen["error"].as_str().unwrap().contains("checksum"), "{gen}");
    assert!(first["completed"].as_array().unwrap().contains(&json!("rerank")));
    let part = s.path(&format!("cache/models/{EMBED}/{EMBED_FILE}.part"));
    assert!(part.is_file(), "the cut download keeps its .part file");
    assert!(!s.path(&format!("cache/models/{GEN_FILE}")).exists(), "a bad checksum never lands");

    // A second pull resumes the cut file with a Range request.
    assert_eq!(s.post("/api/models/pull", json!({})).status, 200);
    let second = wait_pull(&s);
    assert!(second["completed"].as_array().unwrap().contains(&json!("embed")), "{second}");
    assert!(
        hub.ranges_requested(&embed_path).iter().any(|r| r.starts_with("bytes=") && r != "bytes=0-"),
        "resumed with a range"
    );
    assert!(!part.exists());
    let local = std::fs::read(s.path(&format!("cache/models/{EMBED}/{EMBED_FILE}"))).unwrap();
    assert_eq!(local, std::fs::read(tiny.join("embed/model.onnx")).unwrap(), "the resumed file is byte-identical");
    // The pulled embedder loads: vector search becomes available.
    s.wait_until(Duration::from_secs(30), |s| s.get("/api/capabilities").json()["vector"] == true);
}

#[test]
fn offline_and_unreachable_pulls_fail_clearly() {
    let s = Server::start_with(&[("SVC_OFFLINE", "1")]);
    assert_eq!(s.post("/api/models/pull", json!({})).status, 200);
    let st = wait_pull(&s);
    let failed = st["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 3, "{st}");
    assert!(failed.iter().all(|f| f["error"].as_str().unwrap().contains("offline")), "{st}");

    let port = free_port(); // nothing listens there
    let s = Server::start_with(&[("SVC_HF_ENDPOINT", &format!("http://127.0.0.1:{port}"))]);
    assert_eq!(s.post("/api/models/pull", json!({})).status, 200);
    let st = wait_pull(&s);
    let failed = st["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 3, "{st}");
    assert!(failed[0]["error"].as_str().unwrap().contains("cannot reach"), "{st}");
}

/// The notes of the kill -9 test with a topic of their own, spread over its backlog (so some
/// are embedded before the kill and most after it): `(index, body, query that finds it)`.
const RESUME_PROBES: [(usize, &str, &str); 6] = [
    (
        3,
        "# Sourdough\nMix flour, water and salt, let the dough rise overnight, then bake it in a hot oven.\n",
        "how to bake bread at home",
    ),
    (
        250,
        "# Unix domain sockets\nLocal sockets let two programs on the same computer exchange messages quickly.\n",
        "how can processes talk to each other on one machine",
    ),
    (
        500,
        "# Tomatoes\nPlant tomatoes in spring, water them often and give them plenty of sun.\n",
        "growing vegetables in the garden",
    ),
    (
        750,
        "# Chess openings\nThe Sicilian Defence answers the king's pawn opening with a pawn to c5.\n",
        "chess opening moves",
    ),
    (
        1000,
        "# Violin practice\nPlay slow scales on the violin every morning to train your intonation.\n",
        "practising a string instrument",
    ),
    (
        1190,
        "# Volcanoes\nMagma rises through the crust and erupts from the volcano as lava.\n",
        "lava erupting from a mountain",
    ),
];

/// `n` one-chunk notes `n0000.md`...: fillers that differ only by numbers, and the [`RESUME_PROBES`].
fn resume_corpus(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let body = match RESUME_PROBES.iter().find(|p| p.0 == i) {
                Some(p) => p.1.to_string(),
                None => {
                    format!("# Note {i}\nThis note talks about topic number {i} and the weather on day {}.\n", i % 31)
                }
            };
            (format!("n{i:04}.md"), body)
        })
        .collect()
}

/// `(embeddedCount of the only collection, embeddingBacklog)`, zeros where status has none.
fn embedding_progress(s: &Server) -> (u64, u64) {
    let st = status(s);
    (st["collections"][0]["embeddedCount"].as_u64().unwrap_or(0), st["embeddingBacklog"].as_u64().unwrap_or(0))
}

/// Follows a restarted worker until all `total` contents are embedded; returns whether it was
/// seen resuming a backlog. Its first status (published at open, before its embedder loaded)
/// counts nothing as embedded; a later one with contents embedded and a backlog left is the
/// new worker at work on what the killed one left. The killed worker's last status (embedded
/// > 0) comes before that first status, so it is never taken for it.
fn follow_resume(s: &Server, total: u64) -> bool {
    let (mut restarted, mut resumed) = (false, false);
    s.wait_until(Duration::from_secs(300), |s| {
        let (embedded, backlog) = embedding_progress(s);
        if embedded == 0 {
            restarted = true;
        } else if restarted && backlog > 0 {
            resumed = true;
        }
        embedded == total && backlog == 0
    });
    resumed
}

/// What this proves: a worker killed (-9) in the middle of the embedding backlog resumes it
/// once the supervisor restarted it (the new worker is seen with contents embedded and a
/// backlog left, so the kill did land mid-backlog), and ends with every content embedded
/// exactly once: all notes count as embedded, notes embedded before and after the kill are
/// found by meaning, and the vector table holds no duplicate rows (see the last check).
#[test]
fn kill_during_embedding_resumes_the_backlog() {
    if !crate::prepared::models("models::kill_during_embedding_resumes_the_backlog") {
        return;
    }
    const NOTES: usize = 1200;
    let embed = real_embedder();
    let mut s = Server::start();
    // Indexed before the embedder is there, so that the whole backlog waits for it (else the
    // embedding races the sync and may be nearly done when the sync completes).
    let files = resume_corpus(NOTES);
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    write_notes(&s.path("many"), &refs);
    s.add_collection(&s.path("many"), "many");
    s.wait_until(Duration::from_secs(30), |s| {
        status(s)["totalChunks"] == NOTES && embedding_progress(s) == (0, NOTES as u64)
    });
    s.stop();
    install(&s.path("cache"), &embed, EMBED);
    s.spawn();

    // Status is published after every round of 128 contents: kill at the first one seen, with
    // about a thousand contents (several rounds) left.
    let mut at_kill = (0, 0);
    s.wait_until(Duration::from_secs(120), |s| {
        at_kill = embedding_progress(s);
        at_kill.0 > 0 && at_kill.1 > 0
    });
    let worker = s.child_pid("worker").expect("worker pid");
    nix_kill(worker, libc::SIGKILL);
    s.wait_until(Duration::from_secs(30), |s| s.child_pid("worker").is_some_and(|p| p != worker));
    let resumed = follow_resume(&s, NOTES as u64);
    assert!(
        resumed,
        "the restarted worker was never seen with a backlog left; (embedded, backlog) at the kill: {at_kill:?}"
    );
    let st = status(&s);
    assert_eq!(st["collections"][0]["embeddedCount"], NOTES, "{st}");
    assert_eq!(st["embeddingBacklog"], 0, "{st}");

    for (i, _, query) in RESUME_PROBES {
        let v = s.post("/api/vsearch", json!({ "query": query, "limit": 3 })).json();
        assert_eq!(uris(&v).first().cloned(), Some(format!("svc://many/n{i:04}.md")), "{query}: {v}");
    }
    // No duplicate rows. With a collection filter and candidateLimit 100, vsearch reads the
    // 1200 nearest rows (chunk_pool(100, filtered) in worker/src/vsearch.rs), as many as there
    // are chunks (one per note, checked above): without duplicates they are 1200 distinct
    // notes; a content with two sets of rows takes two places and pushes a note out.
    let v = s
        .post(
            "/api/vsearch",
            json!({ "query": "the weather on a day", "limit": 50, "candidateLimit": 100, "collection": "many" }),
        )
        .json();
    assert_eq!(v["meta"]["totalResults"], NOTES, "{}", v["meta"]);
}
