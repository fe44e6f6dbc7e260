//! The MCP clients svc can be wired into: where each keeps its configuration on Linux and
//! macOS, how its server entry reads, and the one way to change it: the whole file
//! rewritten atomically (a temp file renamed over it) with everything but svc's entry kept.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The name of svc's entry in a client's server table.
pub const ENTRY_NAME: &str = "svc";

/// An MCP client svc installs itself into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpClient {
    ClaudeDesktop,
    Cursor,
    Codex,
    ClaudeCode,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid {format}: {detail} (left as it is)")]
    Malformed { path: PathBuf, format: &'static str, detail: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("the svc entry in {path} has no command svc can start ({detail})")]
    Unsupported { path: PathBuf, detail: &'static str },
    #[error("no home directory (HOME is not set)")]
    NoHome,
}

/// The command a client runs to start svc's MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// Where the client's files live: the environment the paths are read from.
#[derive(Debug, Clone)]
pub struct HomeEnv {
    pub home: PathBuf,
    pub xdg_config_home: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub macos: bool,
}

impl HomeEnv {
    pub fn from_env() -> Result<Self, ConfigError> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Ok(HomeEnv {
            home: var("HOME").ok_or(ConfigError::NoHome)?,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            codex_home: var("CODEX_HOME"),
            macos: cfg!(target_os = "macos"),
        })
    }
}

impl HomeEnv {
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub fn config_home(&self) -> PathBuf {
        self.xdg_config_home.clone().unwrap_or_else(|| self.home.join(".config"))
    }

    /// `$CODEX_HOME`, else `~/.codex`.
    pub fn codex_home(&self) -> PathBuf {
        self.codex_home.clone().unwrap_or_else(|| self.home.join(".codex"))
    }
}

impl McpClient {
    pub const ALL: [McpClient; 4] =
        [McpClient::ClaudeDesktop, McpClient::Cursor, McpClient::Codex, McpClient::ClaudeCode];

    /// The `--client` value.
    pub fn id(self) -> &'static str {
        match self {
            McpClient::ClaudeDesktop => "claude-desktop",
            McpClient::Cursor => "cursor",
            McpClient::Codex => "codex",
            McpClient::ClaudeCode => "claude-code",
        }
    }

    pub fn from_id(id: &str) -> Option<McpClient> {
        McpClient::ALL.into_iter().find(|c| c.id() == id)
    }

    pub fn app_name(self) -> &'static str {
        match self {
            McpClient::ClaudeDesktop => "Claude Desktop",
            McpClient::Cursor => "Cursor",
            McpClient::Codex => "Codex",
            McpClient::ClaudeCode => "Claude Code",
        }
    }

    /// The client's documented user-level MCP configuration file.
    pub fn config_path(self, env: &HomeEnv) -> PathBuf {
        match self {
            McpClient::ClaudeDesktop if env.macos => {
                env.home.join("Library/Application Support/Claude/claude_desktop_config.json")
            }
            McpClient::ClaudeDesktop => env.config_home().join("Claude/claude_desktop_config.json"),
            McpClient::Cursor => env.home.join(".cursor/mcp.json"),
            McpClient::Codex => env.codex_home().join("config.toml"),
            McpClient::ClaudeCode => env.home.join(".claude.json"),
        }
    }

    fn is_toml(self) -> bool {
        self == McpClient::Codex
    }

    /// svc's entry in the file at `path`, if the file and the entry exist.
    pub fn read_entry(self, path: &Path) -> Result<Option<ServerEntry>, ConfigError> {
        let Some(text) = read_text(path)? else { return Ok(None) };
        if self.is_toml() {
            let doc = parse_toml(path, &text)?;
            let item = doc.get("mcp_servers").and_then(|t| t.get(ENTRY_NAME));
            item.map(|i| {
                entry_of_toml(i).ok_or(ConfigError::Unsupported { path: path.to_path_buf(), detail: "no command" })
            })
            .transpose()
        } else {
            let root = parse_json(path, &text)?;
            let value = root.get("mcpServers").and_then(|s| s.get(ENTRY_NAME));
            value
                .map(|v| {
                    entry_of_json(v).ok_or(ConfigError::Unsupported { path: path.to_path_buf(), detail: "no command" })
                })
                .transpose()
        }
    }

    /// The file's text with svc's entry set to `entry` (everything else kept).
    pub fn with_entry(self, path: &Path, existing: Option<&str>, entry: &ServerEntry) -> Result<String, ConfigError> {
        if self.is_toml() {
            let mut doc = parse_toml(path, existing.unwrap_or(""))?;
            let servers = doc.entry("mcp_servers").or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
            let Some(servers) = servers.as_table_mut() else {
                return Err(malformed(path, "TOML", "mcp_servers is not a table"));
            };
            servers.set_implicit(true);
            servers.insert(ENTRY_NAME, toml_edit::Item::Table(toml_entry(entry)));
            Ok(doc.to_string())
        } else {
            let mut root = match existing {
                Some(t) if !t.trim().is_empty() => parse_json(path, t)?,
                _ => Map::new(),
            };
            let servers = root.entry("mcpServers").or_insert_with(|| Value::Object(Map::new()));
            let Some(servers) = servers.as_object_mut() else {
                return Err(malformed(path, "JSON", "mcpServers is not an object"));
            };
            servers.insert(ENTRY_NAME.into(), self.json_entry(entry));
            Ok(pretty(&root))
        }
    }

    /// The file's text without svc's entry, or `None` when it has none.
    pub fn without_entry(self, path: &Path, existing: &str) -> Result<Option<String>, ConfigError> {
        if self.is_toml() {
            let mut doc = parse_toml(path, existing)?;
            let removed = doc.get_mut("mcp_servers").and_then(|t| t.as_table_mut()).and_then(|t| t.remove(ENTRY_NAME));
            Ok(removed.map(|_| doc.to_string()))
        } else {
            let mut root = parse_json(path, existing)?;
            let removed = root.get_mut("mcpServers").and_then(Value::as_object_mut).and_then(|s| s.remove(ENTRY_NAME));
            Ok(removed.map(|_| pretty(&root)))
        }
    }

    /// What `svc mcp install --print` shows: the entry as the client's file holds it (the
    /// text [`McpClient::with_entry`] writes into an empty file).
    pub fn snippet(self, entry: &ServerEntry) -> Result<String, ConfigError> {
        self.with_entry(Path::new(""), None, entry)
    }

    fn json_entry(self, entry: &ServerEntry) -> Value {
        let mut m = Map::new();
        if self == McpClient::ClaudeCode {
            m.insert("type".into(), Value::String("stdio".into()));
        }
        m.insert("command".into(), Value::String(entry.command.clone()));
        m.insert("args".into(), Value::Array(entry.args.iter().cloned().map(Value::String).collect()));
        let env = entry.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        m.insert("env".into(), Value::Object(env));
        Value::Object(m)
    }
}

fn malformed(path: &Path, format: &'static str, detail: impl Into<String>) -> ConfigError {
    ConfigError::Malformed { path: path.to_path_buf(), format, detail: detail.into() }
}

fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_path_buf(), source }),
    }
}

fn parse_json(path: &Path, text: &str) -> Result<Map<String, Value>, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(malformed(path, "JSON", "the top level is not an object")),
        Err(e) => Err(malformed(path, "JSON", e.to_string())),
    }
}

fn parse_toml(path: &Path, text: &str) -> Result<toml_edit::DocumentMut, ConfigError> {
    text.parse::<toml_edit::DocumentMut>().map_err(|e| malformed(path, "TOML", e.to_string()))
}

fn pretty(root: &Map<String, Value>) -> String {
    let mut s = serde_json::to_string_pretty(root).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

fn entry_of_json(v: &Value) -> Option<ServerEntry> {
    let command = v.get("command")?.as_str()?.to_string();
    let args = v
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let env = v
        .get("env")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
        .unwrap_or_default();
    Some(ServerEntry { command, args, env })
}

fn entry_of_toml(item: &toml_edit::Item) -> Option<ServerEntry> {
    let command = item.get("command")?.as_str()?.to_string();
    let args = item
        .get("args")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let env = item
        .get("env")
        .and_then(|e| e.as_table_like())
        .map(|t| t.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.to_string(), s.to_string()))).collect())
        .unwrap_or_default();
    Some(ServerEntry { command, args, env })
}

fn toml_entry(entry: &ServerEntry) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    t.insert("command", toml_edit::value(entry.command.as_str()));
    let mut args = toml_edit::Array::new();
    for a in &entry.args {
        args.push(a.as_str());
    }
    t.insert("args", toml_edit::value(args));
    let mut env = toml_edit::InlineTable::new();
    for (k, v) in &entry.env {
        env.insert(k, v.as_str().into());
    }
    t.insert("env", toml_edit::value(env));
    t
}

/// Replaces `path` with `text` through the one atomic write (`protocol::write_file`),
/// keeping the old file's permissions. A symlinked file (dotfile managers) is written where
/// the link points, and stays a link.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), ConfigError> {
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    protocol::write_atomic_keeping_permissions(path, text.as_bytes())
        .map_err(|source| ConfigError::Write { path: path.to_path_buf(), source })
}

/// Installs `entry` into `client`'s file at `path` (creating it when missing).
pub fn install(client: McpClient, path: &Path, entry: &ServerEntry) -> Result<(), ConfigError> {
    let existing = read_text(path)?;
    let text = client.with_entry(path, existing.as_deref(), entry)?;
    write_atomically(path, &text)
}

/// Removes svc's entry from `client`'s file; false when there was none.
pub fn uninstall(client: McpClient, path: &Path) -> Result<bool, ConfigError> {
    let Some(existing) = read_text(path)? else { return Ok(false) };
    match client.without_entry(path, &existing)? {
        Some(text) => write_atomically(path, &text).map(|()| true),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ServerEntry {
        ServerEntry {
            command: "/opt/svc/bin/svc".into(),
            args: vec!["mcp".into()],
            env: BTreeMap::from([("SVC_DATA_DIR".to_string(), "/data".to_string())]),
        }
    }

    #[test]
    fn json_clients_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, r#"{"theme":"dark","mcpServers":{"other":{"command":"x"}}}"#).unwrap();
        install(McpClient::Cursor, &path, &entry()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(McpClient::Cursor.read_entry(&path).unwrap(), Some(entry()));
        assert!(uninstall(McpClient::Cursor, &path).unwrap());
        assert!(!uninstall(McpClient::Cursor, &path).unwrap());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert!(v["mcpServers"].get("svc").is_none());
    }

    #[test]
    fn codex_toml_keeps_comments_and_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n").unwrap();
        install(McpClient::Codex, &path, &entry()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\nmodel = \"o3\""), "{text}");
        assert!(text.contains("[mcp_servers.other]") && text.contains("[mcp_servers.svc]"), "{text}");
        assert_eq!(McpClient::Codex.read_entry(&path).unwrap(), Some(entry()));
        assert!(uninstall(McpClient::Codex, &path).unwrap());
        assert!(!std::fs::read_to_string(&path).unwrap().contains("svc"));
    }

    #[test]
    fn a_symlinked_file_stays_a_link_and_an_entry_without_command_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "{}").unwrap();
        let link = dir.path().join("mcp.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        install(McpClient::Cursor, &link, &entry()).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(McpClient::Cursor.read_entry(&real).unwrap(), Some(entry()));
        std::fs::write(&real, r#"{"mcpServers":{"svc":{"url":"http://127.0.0.1:3000/mcp"}}}"#).unwrap();
        assert!(matches!(McpClient::Cursor.read_entry(&link), Err(ConfigError::Unsupported { .. })));
    }

    #[test]
    fn a_malformed_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, "{not json").unwrap();
        assert!(matches!(install(McpClient::ClaudeDesktop, &path, &entry()), Err(ConfigError::Malformed { .. })));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn paths_follow_each_clients_documented_location() {
        let linux = HomeEnv { home: "/h".into(), xdg_config_home: None, codex_home: None, macos: false };
        assert_eq!(
            McpClient::ClaudeDesktop.config_path(&linux),
            PathBuf::from("/h/.config/Claude/claude_desktop_config.json")
        );
        let mac = HomeEnv { macos: true, ..linux.clone() };
        assert_eq!(
            McpClient::ClaudeDesktop.config_path(&mac),
            PathBuf::from("/h/Library/Application Support/Claude/claude_desktop_config.json")
        );
        assert_eq!(McpClient::Cursor.config_path(&linux), PathBuf::from("/h/.cursor/mcp.json"));
        assert_eq!(McpClient::Codex.config_path(&linux), PathBuf::from("/h/.codex/config.toml"));
        assert_eq!(McpClient::ClaudeCode.config_path(&linux), PathBuf::from("/h/.claude.json"));
    }
}
