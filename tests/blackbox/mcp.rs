//! The MCP server as agents reach it: `svc mcp` spawned over stdio (newline-delimited
//! JSON-RPC, as every MCP client speaks it), `/mcp` over HTTP, and `svc mcp install`.

use crate::common::{raw_request, write_notes, Server};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A spawned `svc mcp` and the JSON-RPC session with it.
struct McpSession {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl McpSession {
    fn start(s: &Server, args: &[&str]) -> McpSession {
        let mut cmd = s.cmd();
        cmd.arg("mcp").args(args);
        Self::spawn(cmd)
    }

    /// Spawns `cmd` and opens the session (`initialize`, then `notifications/initialized`).
    fn spawn(mut cmd: Command) -> McpSession {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut m = McpSession { child, stdin, lines, next: 1 };
        let init = m.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "blackbox", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "svc", "{init}");
        assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
        m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// One request; its response (every line on stdout must be a JSON-RPC message).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(60)).expect("a response from svc mcp");
            let msg: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line}"));
            assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        r["result"].clone()
    }

    /// A successful call's structured content.
    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args);
        assert_eq!(r["isError"], false, "{tool}: {r}");
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, r["structuredContent"], "the text is the structured content");
        r["structuredContent"].clone()
    }

    /// A failed call: the API's error code in a tool error result.
    fn fails(&mut self, tool: &str, args: Value, code: &str) {
        let r = self.call(tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
        assert_eq!(r["structuredContent"]["error"]["code"], code, "{r}");
        assert!(r["content"][0]["text"].as_str().unwrap().starts_with(&format!("{code}: ")), "{r}");
    }

    fn tool_names(&mut self) -> Vec<String> {
        let r = self.request("tools/list", json!({}));
        let tools = r["result"]["tools"].as_array().unwrap().clone();
        for t in &tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            assert!(!t["inputSchema"].to_string().contains("$ref"), "{t}");
        }
        tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    }

    /// Closing stdin ends the server cleanly.
    fn close(mut self) {
        drop(self.stdin);
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "svc mcp exited with {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("svc mcp did not exit when stdin closed");
    }
}

const READ_TOOLS: [&str; 13] = [
    "svc_search",
    "svc_vsearch",
    "svc_query",
    "svc_ask",
    "svc_get",
    "svc_multi_get",
    "svc_status",
    "svc_context",
    "svc_links",
    "svc_backlinks",
    "svc_similar",
    "svc_changes",
    "svc_impact",
];

fn notes(s: &Server) {
    let root = s.path("notes");
    write_notes(
        &root,
        &[
            ("bridge.md", "# Old Bridge\n\nThe old bridge is 300 meters long.\nIt crosses the river.\n"),
            ("town.md", "# Town\n\nThe town grew around the [[bridge]].\n"),
            ("C# tips 100%.md", "# C sharp\n\nUse records.\n"),
        ],
    );
    s.add_collection(&root, "notes");
}

#[test]
fn mcp_over_stdio_reaches_the_running_server() {
    let s = Server::start();
    notes(&s);
    let mut m = McpSession::start(&s, &[]);
    let names = m.tool_names();
    assert_eq!(names, READ_TOOLS, "read-only tools only, without --enable-write");
    let list = m.request("tools/list", json!({}));
    for t in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
    }

    let hits = m.ok("svc_search", json!({"query": "bridge meters", "collection": "notes"}));
    let top = &hits["results"][0];
    assert_eq!(top["uri"], "svc://notes/bridge.md", "{hits}");
    let docid = top["docid"].as_str().unwrap().to_string();

    let got = m.ok("svc_get", json!({"ref": docid, "fromLine": 3, "lineCount": 1}));
    assert_eq!(got["content"], "The old bridge is 300 meters long.\n", "{got}");
    assert_eq!((got["totalLines"].as_u64(), got["truncated"].as_bool()), (Some(4), Some(true)));
    let by_path = m.ok("svc_get", json!({"ref": "notes/bridge.md:4"}));
    assert_eq!(by_path["content"], "It crosses the river.\n", "{by_path}");

    let odd = m.ok("svc_get", json!({"ref": "notes/C# tips 100%.md"}));
    assert_eq!(odd["title"], "C sharp", "a path is encoded into its URI: {odd}");
    let back = m.ok("svc_backlinks", json!({"ref": "svc://notes/bridge.md"}));
    assert_eq!(back["backlinks"][0]["sourceUri"], "svc://notes/town.md", "{back}");
    let many = m.ok("svc_multi_get", json!({"glob": "notes/*.md"}));
    assert_eq!(many["documents"].as_array().unwrap().len(), 3, "{many}");
    let some =
        m.ok("svc_multi_get", json!({"refs": ["notes/town.md", "notes/../x.md", "#abcdef123456"], "maxBytes": 10}));
    assert_eq!(some["documents"][0]["content"], "# Town\n\nTh", "cut at the byte cap: {some}");
    let reasons: Vec<&str> =
        some["skipped"].as_array().unwrap().iter().map(|k| k["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["invalid_ref", "byte_cap"], "{some}");
    let status = m.ok("svc_status", json!({}));
    assert_eq!(status["collections"][0]["name"], "notes", "{status}");
    let capsule =
        m.ok("svc_context", json!({"goal": "how long is the old bridge", "budgetTokens": 8000, "depthPolicy": "fast"}));
    assert!(capsule["capsuleId"].as_str().is_some_and(|id| !id.is_empty()), "{capsule}");
    let md = m.call(
        "svc_context",
        json!({"goal": "how long is the old bridge", "budgetTokens": 8000, "depthPolicy": "fast", "format": "md"}),
    );
    assert!(md["content"][0]["text"].as_str().unwrap().contains("300 meters"), "{md}");

    // Bad input is a tool error with the API's code, and the server goes on.
    m.fails("svc_search", json!({"query": "x", "limit": "ten"}), "VALIDATION");
    m.fails("svc_search", json!({"query": "x", "limit": 0}), "VALIDATION");
    m.fails("svc_get", json!({"ref": "../../etc/passwd"}), "VALIDATION");
    m.fails("svc_get", json!({"ref": "notes/../bridge.md"}), "VALIDATION");
    m.fails("svc_get", json!({"ref": "svc://notes/%2e%2e/bridge.md"}), "VALIDATION");
    m.fails("svc_get", json!({"ref": "#abcdef123456"}), "NOT_FOUND");
    m.fails("svc_get", json!({"ref": "notes/bridge.md", "extra": 1}), "VALIDATION");
    m.fails("svc_search", json!({"query": "x", "collection": "nope"}), "NOT_FOUND");
    m.fails("svc_status", json!({"x": 1}), "VALIDATION");
    m.fails("svc_get", json!({"ref": "notes/a\u{0}.md"}), "VALIDATION");
    let unknown = m.request("tools/call", json!({"name": "svc_capture", "arguments": {"collection": "notes"}}));
    assert_eq!(unknown["error"]["code"], -32602, "write tools are not offered: {unknown}");
    let again = m.ok("svc_search", json!({"query": "river"}));
    assert_eq!(again["results"][0]["uri"], "svc://notes/bridge.md");
    m.close();
}

#[test]
fn mcp_over_stdio_opens_the_index_in_process_and_writes_with_enable_write() {
    let s = Server::start();
    notes(&s);
    let mut s = s;
    s.stop();
    let mut m = McpSession::start(&s, &["--enable-write"]);
    let names = m.tool_names();
    for w in ["svc_capture", "svc_create", "svc_update"] {
        assert!(names.contains(&w.to_string()), "{names:?}");
    }
    let created = m.ok(
        "svc_create",
        json!({"collection": "notes", "relPath": "ideas/kite.md", "content": "# Kite\n\nA red kite over the quay.\n"}),
    );
    assert_eq!(created["docUri"], "svc://notes/ideas/kite.md", "{created}");
    let mut found = Value::Null;
    for _ in 0..200 {
        found = m.ok("svc_search", json!({"query": "kite quay"}));
        if found["results"][0]["uri"] == "svc://notes/ideas/kite.md" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(found["results"][0]["uri"], "svc://notes/ideas/kite.md", "{found}");
    let updated = m.ok("svc_update", json!({"ref": "notes/ideas/kite.md", "content": "# Kite\n\nA blue kite.\n"}));
    assert!(updated.is_object(), "{updated}");
    assert_eq!(std::fs::read_to_string(s.path("notes/ideas/kite.md")).unwrap(), "# Kite\n\nA blue kite.\n");
    m.fails("svc_update", json!({"content": "x"}), "VALIDATION");
    m.fails("svc_create", json!({"collection": "notes", "relPath": "/etc/x.md", "content": "x"}), "VALIDATION");
    m.close();
}

/// An MCP request over HTTP: streamable HTTP wants both JSON and SSE accepted.
fn mcp_post(port: u16, body: &Value, extra: &[(&str, &str)]) -> crate::common::Resp {
    let mut headers = vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    headers.extend_from_slice(extra);
    raw_request(port, "POST", "/mcp", &headers, body.to_string().as_bytes())
}

/// The JSON-RPC message in a streamable-HTTP reply (SSE `data:` lines, or a JSON body).
fn rpc_message(body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("jsonrpc").is_some())
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message in: {text}"))
}

#[test]
fn mcp_over_http_follows_the_gateway_security_rules() {
    let s = Server::start();
    notes(&s);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "blackbox", "version": "1"}}});

    let foreign = mcp_post(s.port, &init, &[("Origin", "http://evil.example")]);
    foreign.assert_error(403, "CSRF_VIOLATION");
    let rebinding = mcp_post(s.port, &init, &[("Host", "evil.example:80")]);
    rebinding.assert_error(403, "CSRF_VIOLATION");

    let same_origin = format!("http://127.0.0.1:{}", s.port);
    let r = mcp_post(s.port, &init, &[("Origin", &same_origin)]);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(rpc_message(&r.body)["result"]["serverInfo"]["name"], "svc");
    let session = r.header("mcp-session-id").expect("a session id").to_string();
    let sid = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
    let note = mcp_post(s.port, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), &sid);
    assert!(note.status < 300, "{}", note.status);

    let list = mcp_post(s.port, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), &sid);
    let names: Vec<String> = rpc_message(&list.body)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, READ_TOOLS);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "svc_query", "arguments": {"query": "how long is the bridge", "collection": "notes"}}});
    let hit = rpc_message(&mcp_post(s.port, &call, &sid).body);
    assert_eq!(hit["result"]["structuredContent"]["results"][0]["uri"], "svc://notes/bridge.md", "{hit}");

    // A foreign page cannot reuse the session either.
    let mut with_origin = sid.to_vec();
    with_origin.push(("Origin", "http://evil.example"));
    mcp_post(s.port, &call, &with_origin).assert_error(403, "CSRF_VIOLATION");
}

#[test]
fn mcp_install_writes_each_clients_entry_and_keeps_the_rest() {
    let s = Server::start();
    let home = s.path("home");
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::write(home.join(".cursor/mcp.json"), r#"{"mcpServers":{"other":{"command":"other-mcp"}},"x":1}"#).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/config.toml"), "# my settings\nmodel = \"o3\"\n").unwrap();
    let run = |args: &[&str]| {
        let out = s
            .cmd()
            .env("HOME", &home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };

    for client in ["claude-desktop", "cursor", "claude-code"] {
        let printed: Value = serde_json::from_str(&run(&["mcp", "install", "--client", client, "--print"])).unwrap();
        let entry = &printed["mcpServers"]["svc"];
        assert_eq!(entry["command"], crate::common::BIN, "{printed}");
        assert_eq!(entry["args"], json!(["mcp"]));
        assert_eq!(entry["env"]["SVC_DATA_DIR"], s.path("data").display().to_string());
    }
    let toml = run(&["mcp", "install", "--client", "codex", "--print", "--enable-write"]);
    assert!(toml.contains("[mcp_servers.svc]") && toml.contains("\"--enable-write\""), "{toml}");
    assert!(!home.join(".claude.json").exists(), "--print writes nothing");

    run(&["mcp", "install", "--client", "cursor"]);
    run(&["mcp", "install", "--client", "codex"]);
    run(&["mcp", "install", "--client", "claude-desktop"]);
    let cursor: Value = serde_json::from_str(&std::fs::read_to_string(home.join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(cursor["x"], 1);
    assert_eq!(cursor["mcpServers"]["other"]["command"], "other-mcp");
    assert_eq!(cursor["mcpServers"]["svc"]["command"], crate::common::BIN);
    let codex = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert!(codex.starts_with("# my settings\nmodel = \"o3\"\n"), "{codex}");
    assert!(home.join(".config/Claude/claude_desktop_config.json").is_file());

    let status: Value = serde_json::from_str(&run(&["mcp", "status", "--json"])).unwrap();
    let installed: Vec<&str> = status
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["installed"] == true)
        .map(|c| c["client"].as_str().unwrap())
        .collect();
    assert_eq!(installed, ["claude-desktop", "cursor", "codex"]);

    run(&["mcp", "uninstall", "--client", "cursor"]);
    let cursor: Value = serde_json::from_str(&std::fs::read_to_string(home.join(".cursor/mcp.json")).unwrap()).unwrap();
    assert!(cursor["mcpServers"].get("svc").is_none() && cursor["mcpServers"]["other"].is_object(), "{cursor}");

    // A file svc cannot parse is left alone, and the command says so.
    std::fs::write(home.join(".claude.json"), "{broken").unwrap();
    let out = s.cmd().env("HOME", &home).args(["mcp", "install", "--client", "claude-code"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(home.join(".claude.json")).unwrap(), "{broken");
}

/// An MCP server that is not svc: it answers the handshake and offers one `echo` tool.
const FOREIGN_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "other", "version": "1"}}
    elif msg["method"] == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// A server whose connectors live under a fresh HOME (kept alive by the returned dir).
fn connector_server() -> (tempfile::TempDir, Server) {
    let home = tempfile::tempdir().unwrap();
    let home_str = home.path().display().to_string();
    let s = Server::start_with(&[("HOME", &home_str), ("SVC_CONNECTOR_TIMEOUT_MS", "8000")]);
    notes(&s);
    (home, s)
}

fn verify_connector(s: &Server, id: &str, collection: &str) -> crate::common::Resp {
    s.post("/api/connectors/verify", json!({"connectorId": id, "collection": collection}))
}

/// A verification's connector stage: its status, its code and the whole reply.
fn connector_stage(r: &crate::common::Resp) -> (String, Value, Value) {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let j = r.json();
    (
        j["verification"]["stages"]["connector"]["status"].as_str().unwrap().to_string(),
        j["verification"]["stages"]["connector"]["code"].clone(),
        j,
    )
}

#[test]
fn a_connector_is_listed_and_passes_once_mcp_install_configures_it() {
    let (home, s) = connector_server();
    let home_str = home.path().display().to_string();
    let list = s.get("/api/connectors");
    assert_eq!(list.status, 200);
    let list = list.json();
    assert_eq!(list["collections"], json!(["notes"]));
    let cursor = list["connectors"].as_array().unwrap().iter().find(|c| c["id"] == "cursor-mcp").unwrap().clone();
    assert_eq!((cursor["installed"].as_bool(), cursor["installKind"].as_str()), (Some(false), Some("mcp")), "{cursor}");
    assert_eq!(cursor["path"], format!("{home_str}/.cursor/mcp.json"));

    // Not configured, then configured by `svc mcp install`: the probe starts svc and passes.
    let (status, code, _) = connector_stage(&verify_connector(&s, "cursor-mcp", "notes"));
    assert_eq!((status.as_str(), code), ("failed", json!("connector_not_configured")));
    let out = s.cmd().env("HOME", home.path()).args(["mcp", "install", "--client", "cursor"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, code, j) = connector_stage(&verify_connector(&s, "cursor-mcp", "notes"));
    assert_eq!(status, "passed", "{j}");
    assert!(code.is_null() && j["remediation"].is_null(), "{j}");
    assert_eq!(
        (j["verification"]["connectorReady"].as_bool(), j["verification"]["lexicalReady"].as_bool()),
        (Some(true), Some(true))
    );
    let listed = s.get("/api/connectors").json();
    let cursor = listed["connectors"].as_array().unwrap().iter().find(|c| c["id"] == "cursor-mcp").unwrap().clone();
    assert_eq!(
        (cursor["installed"].as_bool(), cursor["mode"]["label"].as_str()),
        (Some(true), Some("read-only")),
        "{cursor}"
    );
}

/// Each way a connector fails has its code, within the time bound, and `/api/status` lists the
/// saved results newest first.
#[test]
fn connector_failures_have_their_codes_and_the_status_lists_them() {
    let (home, s) = connector_server();
    // A command that never answers is killed at the bound.
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(
        home.path().join(".codex/config.toml"),
        "[mcp_servers.svc]\ncommand = \"sleep\"\nargs = [\"600\"]\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (status, code, j) = connector_stage(&verify_connector(&s, "codex-mcp", "notes"));
    assert_eq!((status.as_str(), code), ("failed", json!("connector_timeout")), "{j}");
    assert!(started.elapsed() < Duration::from_secs(15), "took {:?}", started.elapsed());
    assert!(j["remediation"].as_str().is_some_and(|r| !r.is_empty()));

    // A server without svc's tools, and a command that does not exist.
    let script = s.path("other_mcp.py");
    std::fs::write(&script, FOREIGN_SERVER).unwrap();
    let desktop = home.path().join(".config/Claude");
    std::fs::create_dir_all(&desktop).unwrap();
    let entry = json!({"mcpServers": {"svc": {"command": "python3", "args": [script.display().to_string()]}}});
    std::fs::write(desktop.join("claude_desktop_config.json"), entry.to_string()).unwrap();
    let (status, code, j) = connector_stage(&verify_connector(&s, "claude-desktop-mcp", "notes"));
    assert_eq!((status.as_str(), code), ("failed", json!("connector_missing_tools")), "{j}");
    let gone = json!({"mcpServers": {"svc": {"command": s.path("no-such-binary").display().to_string()}}});
    std::fs::write(home.path().join(".claude.json"), gone.to_string()).unwrap();
    let (status, code, j) = connector_stage(&verify_connector(&s, "claude-code-mcp", "notes"));
    assert_eq!((status.as_str(), code), ("failed", json!("connector_start_failed")), "{j}");

    // Skill targets cannot be verified at runtime.
    let (status, code, _) = connector_stage(&verify_connector(&s, "claude-code-skill", "notes"));
    assert_eq!((status.as_str(), code), ("skipped", json!("target_runtime_unverifiable")));

    // The saved results, newest first, in /api/status.
    let projection = s.get("/api/status").json()["connectorProjection"].clone();
    let pairs: Vec<(String, String)> = projection["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["connectorId"].as_str().unwrap().to_string(), t["status"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("claude-code-skill".to_string(), "skipped".to_string()),
            ("claude-code-mcp".into(), "failed".into()),
            ("claude-desktop-mcp".into(), "failed".into()),
            ("codex-mcp".into(), "failed".into()),
        ]
    );
    assert_eq!(projection["truncated"], false);
}

/// How a client's file is written, as these tests read it back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fmt {
    Json,
    /// JSON with comments (in these fixtures, on lines of their own).
    Jsonc,
    Yaml,
}

/// A client added beside the first four: its file (under HOME; LibreChat's in the working
/// directory, which these tests make HOME too), the key of its server table, a file of its
/// format as a user has it (another server, comments), and text of it that must stay.
struct NewClient {
    id: &'static str,
    file: &'static str,
    key: &'static str,
    fmt: Fmt,
    fixture: &'static str,
    kept: &'static [&'static str],
}

const NEW_CLIENTS: [NewClient; 8] = [
    NewClient {
        id: "zed",
        file: ".config/zed/settings.json",
        key: "context_servers",
        fmt: Fmt::Jsonc,
        fixture: concat!(
            "// Zed settings\n{\n  \"theme\": \"One Dark\",\n",
            "  \"context_servers\": {\n    \"other\": {\"command\": \"other-mcp\", \"args\": []}\n  }\n}\n",
        ),
        kept: &["// Zed settings", "\"theme\": \"One Dark\""],
    },
    NewClient {
        id: "windsurf",
        file: ".codeium/windsurf/mcp_config.json",
        key: "mcpServers",
        fmt: Fmt::Json,
        fixture: r#"{"mcpServers":{"other":{"command":"other-mcp"}},"x":1}"#,
        kept: &[],
    },
    NewClient {
        id: "vscode",
        file: ".config/Code/User/mcp.json",
        key: "servers",
        fmt: Fmt::Jsonc,
        fixture: concat!(
            "{\n  // my servers\n  \"servers\": {\n",
            "    \"other\": {\"type\": \"stdio\", \"command\": \"other-mcp\"}\n  },\n  \"inputs\": []\n}\n",
        ),
        kept: &["// my servers", "\"inputs\": []"],
    },
    NewClient {
        id: "opencode",
        file: ".config/opencode/opencode.json",
        key: "mcp",
        fmt: Fmt::Jsonc,
        fixture: concat!(
            "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // tools\n",
            "  \"mcp\": {\n    \"other\": {\"type\": \"local\", \"command\": [\"other-mcp\"]}\n  }\n}\n",
        ),
        kept: &["// tools", "\"$schema\": \"https://opencode.ai/config.json\""],
    },
    NewClient {
        id: "amp",
        file: ".config/amp/settings.json",
        key: "amp.mcpServers",
        fmt: Fmt::Jsonc,
        fixture: concat!(
            "{\n  // mine\n  \"amp.notifications.enabled\": false,\n",
            "  \"amp.mcpServers\": {\n    \"other\": {\"command\": \"other-mcp\"}\n  }\n}\n",
        ),
        kept: &["// mine", "\"amp.notifications.enabled\": false"],
    },
    NewClient {
        id: "lm-studio",
        file: ".lmstudio/mcp.json",
        key: "mcpServers",
        fmt: Fmt::Json,
        fixture: r#"{"mcpServers":{"other":{"command":"other-mcp"}}}"#,
        kept: &[],
    },
    NewClient {
        id: "librechat",
        file: "librechat.yaml",
        key: "mcpServers",
        fmt: Fmt::Yaml,
        fixture: "# LibreChat\nversion: 1.2.8\nmcpServers:\n  # mine\n  other:\n    command: other-mcp\ncache: true\n",
        kept: &["# LibreChat\nversion: 1.2.8\n", "  # mine\n", "cache: true"],
    },
    NewClient {
        id: "gemini-cli",
        file: ".gemini/settings.json",
        key: "mcpServers",
        fmt: Fmt::Jsonc,
        fixture: concat!(
            "{\n  // the look\n  \"theme\": \"GitHub\",\n",
            "  \"mcpServers\": {\n    \"other\": {\"command\": \"other-mcp\"}\n  }\n}\n",
        ),
        kept: &["// the look", "\"theme\": \"GitHub\""],
    },
];

/// A client's file as JSON (JSONC without its comment lines, YAML converted).
fn read_config(fmt: Fmt, text: &str) -> Value {
    match fmt {
        Fmt::Yaml => serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}): {text}")),
        Fmt::Json | Fmt::Jsonc => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            serde_json::from_str(&lines.join("\n")).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
        }
    }
}

/// The command, arguments and environment of a server entry: `command` a string with `args`
/// and `env`, or OpenCode's `command` array with `environment`.
fn entry_command(entry: &Value) -> (String, Vec<String>, BTreeMap<String, String>) {
    let strings = |v: &Value| -> Vec<String> {
        let items = v.as_array().unwrap_or_else(|| panic!("no array: {entry}"));
        items.iter().map(|x| x.as_str().unwrap().to_string()).collect()
    };
    let (command, args) = match &entry["command"] {
        Value::Array(_) => {
            let mut all = strings(&entry["command"]);
            let command = all.remove(0);
            (command, all)
        }
        c => (c.as_str().unwrap_or_else(|| panic!("no command: {entry}")).to_string(), strings(&entry["args"])),
    };
    let env = entry.get("env").or_else(|| entry.get("environment")).and_then(Value::as_object);
    let env = env.unwrap_or_else(|| panic!("no env: {entry}"));
    (command, args, env.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect())
}

/// Two paths name the same file.
fn same_file(a: &str, b: &Path) -> bool {
    std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
}

/// The clients added beside the first four, each in its own file and format: `--print` shows
/// the entry and writes nothing, install splices it in keeping the rest of the file, `status`
/// and `/api/connectors` find it, the entry as written starts svc's stdio server (run here,
/// and by `/api/connectors/verify`), and uninstall gives the user's file back.
#[test]
fn mcp_install_edits_each_new_clients_own_format_and_the_entry_serves() {
    let home = tempfile::tempdir().unwrap();
    let home_str = home.path().display().to_string();
    let config = home.path().join(".config").display().to_string();
    // The server and every command run in HOME (LibreChat's file is the working directory's),
    // with the variables that move the clients' files pinned there.
    let s = Server::start_in(
        Some(home.path()),
        &[
            ("HOME", &home_str),
            ("XDG_CONFIG_HOME", &config),
            ("GEMINI_CLI_HOME", &home_str),
            ("SVC_CONNECTOR_TIMEOUT_MS", "8000"),
        ],
    );
    notes(&s);
    let run = |args: &[&str]| {
        let out = s.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let data_dir = s.path("data").display().to_string();

    for c in NEW_CLIENTS {
        let id = c.id;
        let connector = format!("{id}-mcp");
        let path = home.path().join(c.file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, c.fixture).unwrap();
        let other = read_config(c.fmt, c.fixture)[c.key]["other"].clone();
        assert!(other.is_object(), "{id}");

        let printed = read_config(c.fmt, &run(&["mcp", "install", "--client", id, "--print"]));
        let (command, args, env) = entry_command(&printed[c.key]["svc"]);
        assert_eq!((command.as_str(), args.as_slice()), (crate::common::BIN, &["mcp".to_string()][..]), "{id}");
        assert_eq!(env.get("SVC_DATA_DIR"), Some(&data_dir), "{id}: {printed}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), c.fixture, "{id}: --print writes nothing");
        let (status, code, _) = connector_stage(&verify_connector(&s, &connector, "notes"));
        assert_eq!((status.as_str(), code), ("failed", json!("connector_not_configured")), "{id}");

        run(&["mcp", "install", "--client", id]);
        let text = std::fs::read_to_string(&path).unwrap();
        for kept in c.kept {
            assert!(text.contains(kept), "{id}: {kept:?} is gone: {text}");
        }
        let written = read_config(c.fmt, &text);
        assert_eq!(written[c.key]["other"], other, "{id}: {text}");
        let (command, args, env) = entry_command(&written[c.key]["svc"]);
        assert_eq!((command.as_str(), args.as_slice()), (crate::common::BIN, &["mcp".to_string()][..]), "{id}");

        // The entry as written starts svc's stdio server, which serves this index...
        let mut cmd = Command::new(&command);
        cmd.args(&args).envs(&env).env_remove("SVC_API_TOKEN");
        let mut m = McpSession::spawn(cmd);
        let st = m.ok("svc_status", json!({}));
        assert_eq!(st["collections"][0]["name"], "notes", "{id}: {st}");
        m.close();
        // ...and the server's own probe of it passes.
        let (status, code, j) = connector_stage(&verify_connector(&s, &connector, "notes"));
        assert_eq!((status.as_str(), code), ("passed", Value::Null), "{id}: {j}");

        let listed: Value = serde_json::from_str(&run(&["mcp", "status", "--json"])).unwrap();
        let row = listed.as_array().unwrap().iter().find(|r| r["client"] == id).unwrap().clone();
        assert!(row["installed"] == true && same_file(row["path"].as_str().unwrap(), &path), "{row}");
        let connectors = s.get("/api/connectors").json();
        let info = connectors["connectors"].as_array().unwrap().iter().find(|i| i["id"] == connector).unwrap().clone();
        assert!(info["installed"] == true && same_file(info["path"].as_str().unwrap(), &path), "{info}");
        let scope = if id == "librechat" { "project" } else { "user" };
        assert_eq!((info["scope"].as_str(), row["scope"].as_str()), (Some(scope), Some(scope)), "{info}");

        run(&["mcp", "uninstall", "--client", id]);
        let text = std::fs::read_to_string(&path).unwrap();
        let left = read_config(c.fmt, &text);
        assert!(left[c.key].get("svc").is_none() && left[c.key]["other"] == other, "{id}: {text}");
        if c.fmt != Fmt::Json {
            assert_eq!(text, c.fixture, "{id}: spliced in and out, the file is the user's again");
        }
    }
}

#[test]
fn the_connector_verify_body_is_closed() {
    let (_home, s) = connector_server();
    // The closed body and what it may name.
    verify_connector(&s, "nope-mcp", "notes").assert_error(400, "VALIDATION");
    verify_connector(&s, "cursor-mcp", "nope").assert_error(400, "VALIDATION");
    verify_connector(&s, &"x".repeat(200), "notes").assert_error(400, "VALIDATION");
    s.post("/api/connectors/verify", json!({"connectorId": "cursor-mcp", "collection": "notes", "extra": 1}))
        .assert_error(400, "VALIDATION");
    s.post("/api/connectors/verify", json!({"connectorId": "cursor-mcp"})).assert_error(400, "VALIDATION");
}

#[test]
fn mcp_in_process_hands_the_index_over_to_a_server_that_starts() {
    let mut s = Server::start();
    notes(&s);
    s.stop();
    let mut m = McpSession::start(&s, &[]);
    let before = m.ok("svc_search", json!({"query": "river"}));
    assert_eq!(before["results"][0]["uri"], "svc://notes/bridge.md", "{before}");
    // The server's worker needs the index this process holds: `svc mcp` lets go of it and
    // goes through the server from then on (spawn waits until the worker answers).
    s.spawn();
    s.wait_until(Duration::from_secs(20), |s| s.get("/api/status").json()["healthy"] == true);
    let after = m.ok("svc_search", json!({"query": "river"}));
    assert_eq!(after["results"][0]["uri"], "svc://notes/bridge.md", "{after}");
    let status = m.ok("svc_status", json!({}));
    assert_eq!(status["collections"][0]["name"], "notes");
    m.close();
}
