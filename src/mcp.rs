//! `svc mcp`: the MCP server on stdio, and wiring it into agents' MCP clients.

use crate::mcp_backend::McpBackend;
use anyhow::Context;
use gateway::connectors::{clients, HomeEnv, McpClient, ServerEntry};
use protocol::Dirs;
use std::collections::BTreeMap;
use std::process::ExitCode;

/// `svc mcp`: serves MCP on stdio through the running server's worker, or through a worker
/// opened here when none runs (handed over to a server that starts meanwhile).
pub fn serve(dirs: Dirs, writes: bool) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async {
        let backend = McpBackend::open(&dirs).await.context("cannot open the index")?;
        let served = gateway::mcp::serve_stdio(backend.clone(), writes, &dirs).await;
        // An indexing job a write tool queued finishes before the process ends.
        backend.finish().await;
        served
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The entry a client runs: this binary, `mcp`, and the data dir pinned in its environment.
fn entry(dirs: &Dirs, writes: bool) -> anyhow::Result<ServerEntry> {
    let exe = std::env::current_exe().context("cannot locate the svc binary")?;
    let abs = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut env = BTreeMap::new();
    env.insert("SVC_CONFIG_DIR".to_string(), abs(&dirs.config_dir).display().to_string());
    env.insert("SVC_DATA_DIR".to_string(), abs(&dirs.data_dir).display().to_string());
    env.insert("SVC_CACHE_DIR".to_string(), abs(&dirs.cache_dir).display().to_string());
    env.insert("SVC_INDEX".to_string(), dirs.index_name.clone());
    if let Some(ort) = std::env::var_os("ORT_DYLIB_PATH") {
        env.insert("ORT_DYLIB_PATH".to_string(), ort.to_string_lossy().into_owned());
    }
    let mut args = vec!["mcp".to_string()];
    if writes {
        args.push("--enable-write".into());
    }
    Ok(ServerEntry { command: exe.display().to_string(), args, env })
}

/// `svc mcp install`: writes (or with `print`, prints) svc's entry in the client's file.
pub fn install(dirs: &Dirs, c: McpClient, print: bool, writes: bool) -> anyhow::Result<ExitCode> {
    let e = entry(dirs, writes)?;
    if print {
        print!("{}", c.snippet(&e)?);
        return Ok(ExitCode::SUCCESS);
    }
    let path = c.config_path(&HomeEnv::from_env()?);
    clients::install(c, &path, &e)?;
    println!("{}: svc added to {} (restart {} to load it)", c.app_name(), path.display(), c.app_name());
    Ok(ExitCode::SUCCESS)
}

/// `svc mcp uninstall`: removes svc's entry, leaving the rest of the file.
pub fn uninstall(c: McpClient) -> anyhow::Result<ExitCode> {
    let path = c.config_path(&HomeEnv::from_env()?);
    if clients::uninstall(c, &path)? {
        println!("{}: svc removed from {}", c.app_name(), path.display());
    } else {
        println!("{}: svc was not configured in {}", c.app_name(), path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `svc mcp status`: each client, its file, and whether svc is in it.
pub fn status(json: bool) -> anyhow::Result<ExitCode> {
    let env = HomeEnv::from_env()?;
    let mut rows = Vec::new();
    for c in McpClient::ALL {
        let path = c.config_path(&env);
        let (installed, command, error) = match c.read_entry(&path) {
            Ok(Some(e)) => (true, Some(e.command), None),
            Ok(None) => (false, None, None),
            Err(e) => (false, None, Some(e.to_string())),
        };
        let path = path.display().to_string();
        rows.push(ClientStatus { client: c.id(), scope: c.scope(), path, installed, command, error });
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for r in &rows {
            let state = match (&r.error, r.installed) {
                (Some(e), _) => format!("unreadable: {e}"),
                (None, true) => format!("installed ({})", r.command.as_deref().unwrap_or("")),
                (None, false) => "not installed".into(),
            };
            println!("{:<15} {state}\n{:<15} {}", r.client, "", r.path);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct ClientStatus {
    client: &'static str,
    /// `user`, or `project` for a file in the current directory (LibreChat's).
    scope: &'static str,
    path: String,
    installed: bool,
    command: Option<String>,
    error: Option<String>,
}
