//! Verifying an MCP connector: start the command the client's entry names, exactly as the
//! client would (its args and env), speak MCP to it, require `svc_status` and `svc_search`,
//! run status and a search scoped to the collection. The whole probe is bounded in time;
//! a command past the bound is killed. The client's configuration is only read.

use super::clients::ServerEntry;
use protocol::api::{ConnectorCode, ConnectorStageStatus};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// The default bound of one probe (`SVC_CONNECTOR_TIMEOUT_MS` overrides it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a passed probe waits for the server to exit once its stdin is closed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// The variables of the server's environment a probed command gets (besides its entry's).
const PASSED_ENV: [&str; 14] = [
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
    "CODEX_HOME",
];
/// The tools a connector's server must offer.
pub const REQUIRED_TOOLS: [&str; 2] = ["svc_status", "svc_search"];

/// What a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub status: ConnectorStageStatus,
    pub code: Option<ConnectorCode>,
}

impl Outcome {
    pub fn passed() -> Self {
        Outcome { status: ConnectorStageStatus::Passed, code: None }
    }
    pub fn failed(code: ConnectorCode) -> Self {
        Outcome { status: ConnectorStageStatus::Failed, code: Some(code) }
    }
}

/// The bound from `SVC_CONNECTOR_TIMEOUT_MS`, else [`DEFAULT_TIMEOUT`].
pub fn timeout_from_env() -> Duration {
    std::env::var("SVC_CONNECTOR_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
}

/// Runs the probe of `entry` against `collection` within `bound`.
/// `expected_db` is this server's catalog: the probed server must report the same one (it
/// is then serving this index, not another with a same-named collection).
pub async fn probe(entry: &ServerEntry, collection: &str, expected_db: &Path, bound: Duration) -> Outcome {
    if entry.command.trim().is_empty() {
        return Outcome::failed(ConnectorCode::ConnectorUnsupportedConfig);
    }
    let mut cmd = tokio::process::Command::new(&entry.command);
    // What a client would give it: a plain user environment and the entry's own variables,
    // never the server's (its API token included). Its own process group, so that whatever
    // it starts (`sh -c`, `npx`) ends with it.
    cmd.env_clear();
    for key in PASSED_ENV {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.args(&entry.args).envs(&entry.env).process_group(0).kill_on_drop(true);
    let transport = match TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn() {
        Ok((t, _)) => t,
        Err(_) => return Outcome::failed(ConnectorCode::ConnectorStartFailed),
    };
    let group = transport.id().and_then(|pid| i32::try_from(pid).ok()).map(nix::unistd::Pid::from_raw);
    let session = async {
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("svc-connector-verify", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let client = match config.serve(transport).await {
            Ok(c) => c,
            Err(_) => return Outcome::failed(ConnectorCode::ConnectorStartFailed),
        };
        let outcome = exercise(&client, collection, expected_db).await;
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, client.cancel()).await;
        outcome
    };
    // Past the bound the session is dropped, and with it the child (kill on drop); the rest
    // of its process group goes either way.
    let outcome =
        tokio::time::timeout(bound, session).await.unwrap_or(Outcome::failed(ConnectorCode::ConnectorTimeout));
    if let Some(group) = group {
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    }
    outcome
}

async fn exercise<S>(client: &S, collection: &str, expected_db: &Path) -> Outcome
where
    S: std::ops::Deref<Target = rmcp::Peer<rmcp::RoleClient>>,
{
    let tools = match client.list_all_tools().await {
        Ok(t) => t,
        Err(_) => return Outcome::failed(ConnectorCode::ConnectorStartFailed),
    };
    if !REQUIRED_TOOLS.iter().all(|name| tools.iter().any(|t| t.name == *name)) {
        return Outcome::failed(ConnectorCode::ConnectorMissingTools);
    }
    let status = match client.call_tool(CallToolRequestParams::new("svc_status")).await {
        Ok(r) if r.is_error != Some(true) => r,
        _ => return Outcome::failed(ConnectorCode::ConnectorStatusFailed),
    };
    let db = status.structured_content.as_ref().and_then(|v| v.get("dbPath")).and_then(Value::as_str);
    if !db.is_some_and(|db| same_file(Path::new(db), expected_db)) {
        return Outcome::failed(ConnectorCode::ConnectorResultMismatch);
    }
    let args = json!({"query": "note", "collection": collection, "limit": 5});
    let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    let search = match client.call_tool(CallToolRequestParams::new("svc_search").with_arguments(args)).await {
        Ok(r) if r.is_error != Some(true) => r,
        _ => return Outcome::failed(ConnectorCode::ConnectorSearchFailed),
    };
    let results = search.structured_content.as_ref().and_then(|v| v.get("results")).and_then(Value::as_array);
    match results {
        None => Outcome::failed(ConnectorCode::ConnectorResultMismatch),
        Some(rs) if rs.iter().any(|r| r.get("collection").and_then(Value::as_str) != Some(collection)) => {
            Outcome::failed(ConnectorCode::ConnectorResultMismatch)
        }
        Some(_) => Outcome::passed(),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What to do about a failed or skipped stage.
pub fn remediation(code: ConnectorCode, client_id: &str) -> String {
    match code {
        ConnectorCode::ConnectorNotConfigured => format!("Run `svc mcp install --client {client_id}`."),
        ConnectorCode::ConnectorUnsupportedConfig => {
            "The client's configuration cannot be read, or its svc entry has no command; fix the file or reinstall with `svc mcp install`.".into()
        }
        ConnectorCode::ConnectorStartFailed => {
            "The configured command did not start as an MCP server; check that its path still exists (reinstall with `svc mcp install`).".into()
        }
        ConnectorCode::ConnectorTimeout => {
            "The configured command did not answer in time; it was stopped. Check that it is svc's MCP server (`svc mcp`).".into()
        }
        ConnectorCode::ConnectorMissingTools => {
            "The configured server does not offer svc_status and svc_search; point the entry at `svc mcp`.".into()
        }
        ConnectorCode::ConnectorStatusFailed | ConnectorCode::ConnectorSearchFailed => {
            "The server started but its tools failed; check that the entry's data dir holds this index (`svc mcp status`).".into()
        }
        ConnectorCode::ConnectorResultMismatch => {
            "The server answered for another index; reinstall the entry from this data dir with `svc mcp install`.".into()
        }
        ConnectorCode::ConnectorProbeUnavailable => "The probe cannot run on this machine (no home directory).".into(),
        ConnectorCode::TargetRuntimeUnverifiable => {
            "A skill file is read by the agent when it runs; nothing here can start it. Ask the agent to use svc.".into()
        }
    }
}
