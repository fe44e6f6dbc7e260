//! The MCP clients svc can be wired into: where each keeps its configuration on Linux and
//! macOS, how its server entry reads, and the one way to change it: the whole file
//! rewritten atomically (a temp file renamed over it) with everything but svc's entry kept.
//! Strict JSON is parsed and written back whole; TOML (Codex) is edited with toml_edit; JSON
//! with comments (`jsonc`) and YAML (`yaml`) get svc's entry spliced into their text, so the
//! user's comments and layout stay.

use super::{jsonc, yaml};
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
    Zed,
    Windsurf,
    VsCode,
    OpenCode,
    Amp,
    LmStudio,
    LibreChat,
    GeminiCli,
}

/// How a client's file is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON: parsed, and written back whole (pretty-printed).
    Json,
    /// JSON with comments and trailing commas: svc's entry is spliced into the text.
    Jsonc,
    /// TOML (Codex): edited with toml_edit, which keeps comments and layout.
    Toml,
    /// YAML (LibreChat): svc's entry is spliced into the text.
    Yaml,
}

impl Format {
    /// As error messages name it ("… is not valid JSON").
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Jsonc => "JSON (with comments)",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
        }
    }
}

/// How a client's server entry is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `{"command", "args", "env"}`: the notation of Claude Desktop and Cursor.
    Plain,
    /// The same with `"type": "stdio"`.
    Stdio,
    /// OpenCode's: `{"type": "local", "command": [command, args…], "environment", "enabled"}`.
    Local,
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
    /// `$GEMINI_CLI_HOME`: Gemini CLI reads `.gemini/` there instead of in the home directory.
    pub gemini_cli_home: Option<PathBuf>,
    /// The working directory: where a project's file (LibreChat's `librechat.yaml`) is.
    pub cwd: PathBuf,
    pub macos: bool,
}

impl HomeEnv {
    pub fn from_env() -> Result<Self, ConfigError> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Ok(HomeEnv {
            home: var("HOME").ok_or(ConfigError::NoHome)?,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            codex_home: var("CODEX_HOME"),
            gemini_cli_home: var("GEMINI_CLI_HOME"),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
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

    /// LM Studio's folder, found as its own SDK finds it: the path in `~/.lmstudio-home-pointer`
    /// (LM Studio writes it), else `~/.cache/lm-studio` where older versions kept it, else
    /// `~/.lmstudio`.
    pub fn lmstudio_home(&self) -> PathBuf {
        let pointed = std::fs::read_to_string(self.home.join(".lmstudio-home-pointer"))
            .ok()
            .map(|p| PathBuf::from(p.trim()))
            .filter(|p| p.is_absolute());
        let cached = || Some(self.home.join(".cache/lm-studio")).filter(|p| p.is_dir());
        pointed.or_else(cached).unwrap_or_else(|| self.home.join(".lmstudio"))
    }
}

impl McpClient {
    pub const ALL: [McpClient; 12] = [
        McpClient::ClaudeDesktop,
        McpClient::Cursor,
        McpClient::Codex,
        McpClient::ClaudeCode,
        McpClient::Zed,
        McpClient::Windsurf,
        McpClient::VsCode,
        McpClient::OpenCode,
        McpClient::Amp,
        McpClient::LmStudio,
        McpClient::LibreChat,
        McpClient::GeminiCli,
    ];

    /// The `--client` value.
    pub fn id(self) -> &'static str {
        match self {
            McpClient::ClaudeDesktop => "claude-desktop",
            McpClient::Cursor => "cursor",
            McpClient::Codex => "codex",
            McpClient::ClaudeCode => "claude-code",
            McpClient::Zed => "zed",
            McpClient::Windsurf => "windsurf",
            McpClient::VsCode => "vscode",
            McpClient::OpenCode => "opencode",
            McpClient::Amp => "amp",
            McpClient::LmStudio => "lm-studio",
            McpClient::LibreChat => "librechat",
            McpClient::GeminiCli => "gemini-cli",
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
            McpClient::Zed => "Zed",
            McpClient::Windsurf => "Windsurf",
            McpClient::VsCode => "VS Code",
            McpClient::OpenCode => "OpenCode",
            McpClient::Amp => "Amp",
            McpClient::LmStudio => "LM Studio",
            McpClient::LibreChat => "LibreChat",
            McpClient::GeminiCli => "Gemini CLI",
        }
    }

    /// `user`: the file is the user's, wherever svc runs; `project`: it is the current
    /// directory's (LibreChat's `librechat.yaml` sits beside its server).
    pub fn scope(self) -> &'static str {
        match self {
            McpClient::LibreChat => "project",
            _ => "user",
        }
    }

    /// The client's documented MCP configuration file (the user's; LibreChat's in the current
    /// directory). docs/clients.md names the documentation each one follows.
    pub fn config_path(self, env: &HomeEnv) -> PathBuf {
        match self {
            McpClient::ClaudeDesktop if env.macos => {
                env.home.join("Library/Application Support/Claude/claude_desktop_config.json")
            }
            McpClient::ClaudeDesktop => env.config_home().join("Claude/claude_desktop_config.json"),
            McpClient::Cursor => env.home.join(".cursor/mcp.json"),
            McpClient::Codex => env.codex_home().join("config.toml"),
            McpClient::ClaudeCode => env.home.join(".claude.json"),
            // Zed keeps `~/.config/zed` on macOS too; on Linux it follows XDG.
            McpClient::Zed if env.macos => env.home.join(".config/zed/settings.json"),
            McpClient::Zed => env.config_home().join("zed/settings.json"),
            McpClient::Windsurf => env.home.join(".codeium/windsurf/mcp_config.json"),
            McpClient::VsCode if env.macos => env.home.join("Library/Application Support/Code/User/mcp.json"),
            McpClient::VsCode => env.config_home().join("Code/User/mcp.json"),
            McpClient::OpenCode => {
                // OpenCode reads either name; a user who keeps `opencode.jsonc` gets it edited.
                let dir = env.config_home().join("opencode");
                let (json, jsonc) = (dir.join("opencode.json"), dir.join("opencode.jsonc"));
                if !json.exists() && jsonc.exists() {
                    jsonc
                } else {
                    json
                }
            }
            McpClient::Amp => env.home.join(".config/amp/settings.json"),
            McpClient::LmStudio => env.lmstudio_home().join("mcp.json"),
            McpClient::LibreChat => env.cwd.join("librechat.yaml"),
            McpClient::GeminiCli => env.gemini_cli_home.as_deref().unwrap_or(&env.home).join(".gemini/settings.json"),
        }
    }

    /// How the client's file is written.
    pub fn format(self) -> Format {
        match self {
            McpClient::Codex => Format::Toml,
            McpClient::LibreChat => Format::Yaml,
            McpClient::Zed | McpClient::VsCode | McpClient::OpenCode | McpClient::Amp | McpClient::GeminiCli => {
                Format::Jsonc
            }
            McpClient::ClaudeDesktop
            | McpClient::Cursor
            | McpClient::ClaudeCode
            | McpClient::Windsurf
            | McpClient::LmStudio => Format::Json,
        }
    }

    /// The top-level key of the client's server table.
    pub fn servers_key(self) -> &'static str {
        match self {
            McpClient::Codex => "mcp_servers",
            McpClient::Zed => "context_servers",
            McpClient::VsCode => "servers",
            McpClient::OpenCode => "mcp",
            McpClient::Amp => "amp.mcpServers",
            McpClient::ClaudeDesktop
            | McpClient::Cursor
            | McpClient::ClaudeCode
            | McpClient::Windsurf
            | McpClient::LmStudio
            | McpClient::LibreChat
            | McpClient::GeminiCli => "mcpServers",
        }
    }

    fn shape(self) -> Shape {
        match self {
            McpClient::ClaudeCode | McpClient::VsCode | McpClient::LibreChat => Shape::Stdio,
            McpClient::OpenCode => Shape::Local,
            _ => Shape::Plain,
        }
    }

    /// svc's entry in the file at `path`, if the file and the entry exist.
    pub fn read_entry(self, path: &Path) -> Result<Option<ServerEntry>, ConfigError> {
        let Some(text) = read_text(path)? else { return Ok(None) };
        let unsupported = || ConfigError::Unsupported { path: path.to_path_buf(), detail: "no command" };
        let key = self.servers_key();
        match self.format() {
            Format::Toml => {
                let doc = parse_toml(path, &text)?;
                let item = doc.get(key).and_then(|t| t.get(ENTRY_NAME));
                item.map(|i| entry_of_toml(i).ok_or_else(unsupported)).transpose()
            }
            Format::Json | Format::Jsonc => {
                let root = self.parse_json(path, &text)?;
                let value = root.get(key).and_then(|s| s.get(ENTRY_NAME));
                value.map(|v| entry_of_json(v).ok_or_else(unsupported)).transpose()
            }
            Format::Yaml => {
                let root = yaml::parse(&text).map_err(|d| malformed(path, Format::Yaml, d))?;
                let value = yaml::entry(&root, key, ENTRY_NAME);
                value.map(|v| v.as_ref().and_then(entry_of_json).ok_or_else(unsupported)).transpose()
            }
        }
    }

    /// The file's text with svc's entry set to `entry` (everything else kept).
    pub fn with_entry(self, path: &Path, existing: Option<&str>, entry: &ServerEntry) -> Result<String, ConfigError> {
        let key = self.servers_key();
        match self.format() {
            Format::Toml => {
                let mut doc = parse_toml(path, existing.unwrap_or(""))?;
                let servers = doc.entry(key).or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
                let Some(servers) = servers.as_table_mut() else {
                    return Err(malformed(path, Format::Toml, format!("{key} is not a table")));
                };
                servers.set_implicit(true);
                servers.insert(ENTRY_NAME, toml_edit::Item::Table(toml_entry(entry)));
                Ok(doc.to_string())
            }
            Format::Json => {
                let mut root = self.parse_json(path, existing.unwrap_or(""))?;
                let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
                let Some(servers) = servers.as_object_mut() else {
                    return Err(malformed(path, Format::Json, format!("{key} is not an object")));
                };
                servers.insert(ENTRY_NAME.into(), self.json_entry(entry));
                Ok(pretty(&root))
            }
            Format::Jsonc => jsonc::set(existing.unwrap_or(""), key, ENTRY_NAME, &self.json_entry(entry))
                .map_err(|d| malformed(path, Format::Jsonc, d)),
            Format::Yaml => yaml::set(existing.unwrap_or(""), key, ENTRY_NAME, &self.json_entry(entry))
                .map_err(|d| malformed(path, Format::Yaml, d)),
        }
    }

    /// The file's text without svc's entry, or `None` when it has none.
    pub fn without_entry(self, path: &Path, existing: &str) -> Result<Option<String>, ConfigError> {
        let key = self.servers_key();
        match self.format() {
            Format::Toml => {
                let mut doc = parse_toml(path, existing)?;
                let removed = doc.get_mut(key).and_then(|t| t.as_table_mut()).and_then(|t| t.remove(ENTRY_NAME));
                Ok(removed.map(|_| doc.to_string()))
            }
            Format::Json => {
                let mut root = self.parse_json(path, existing)?;
                let removed = root.get_mut(key).and_then(Value::as_object_mut).and_then(|s| s.remove(ENTRY_NAME));
                Ok(removed.map(|_| pretty(&root)))
            }
            Format::Jsonc => jsonc::remove(existing, key, ENTRY_NAME).map_err(|d| malformed(path, Format::Jsonc, d)),
            Format::Yaml => yaml::remove(existing, key, ENTRY_NAME).map_err(|d| malformed(path, Format::Yaml, d)),
        }
    }

    /// What `svc mcp install --print` shows: the entry as the client's file holds it (the
    /// text [`McpClient::with_entry`] writes into an empty file).
    pub fn snippet(self, entry: &ServerEntry) -> Result<String, ConfigError> {
        self.with_entry(Path::new(""), None, entry)
    }

    /// The top-level object of a JSON or JSONC file (an empty file is an empty object).
    fn parse_json(self, path: &Path, text: &str) -> Result<Map<String, Value>, ConfigError> {
        match self.format() {
            Format::Jsonc => jsonc::parse(text).map_err(|d| malformed(path, Format::Jsonc, d)),
            _ => parse_json(path, text),
        }
    }

    fn json_entry(self, entry: &ServerEntry) -> Value {
        let env: Map<String, Value> = entry.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let mut m = Map::new();
        match self.shape() {
            Shape::Local => {
                let command = std::iter::once(&entry.command).chain(&entry.args).cloned().map(Value::String);
                m.insert("type".into(), Value::String("local".into()));
                m.insert("command".into(), Value::Array(command.collect()));
                m.insert("environment".into(), Value::Object(env));
                m.insert("enabled".into(), Value::Bool(true));
            }
            Shape::Plain | Shape::Stdio => {
                if self.shape() == Shape::Stdio {
                    m.insert("type".into(), Value::String("stdio".into()));
                }
                m.insert("command".into(), Value::String(entry.command.clone()));
                m.insert("args".into(), Value::Array(entry.args.iter().cloned().map(Value::String).collect()));
                m.insert("env".into(), Value::Object(env));
            }
        }
        Value::Object(m)
    }
}

fn malformed(path: &Path, format: Format, detail: impl Into<String>) -> ConfigError {
    ConfigError::Malformed { path: path.to_path_buf(), format: format.name(), detail: detail.into() }
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
        Ok(_) => Err(malformed(path, Format::Json, "the top level is not an object")),
        Err(e) => Err(malformed(path, Format::Json, e.to_string())),
    }
}

fn parse_toml(path: &Path, text: &str) -> Result<toml_edit::DocumentMut, ConfigError> {
    text.parse::<toml_edit::DocumentMut>().map_err(|e| malformed(path, Format::Toml, e.to_string()))
}

fn pretty(root: &Map<String, Value>) -> String {
    let mut s = serde_json::to_string_pretty(root).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// A server entry in any of the JSON shapes svc writes or clients document: `command` a
/// string with `args` and `env`; OpenCode's `command` array with `environment`; Zed's older
/// `command` object (`{"path", "args", "env"}`).
fn entry_of_json(v: &Value) -> Option<ServerEntry> {
    let strings = |a: Option<&Value>| -> Vec<String> {
        a.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    let vars = |e: Option<&Value>| -> BTreeMap<String, String> {
        e.and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
            .unwrap_or_default()
    };
    match v.get("command")? {
        Value::String(command) => {
            Some(ServerEntry { command: command.clone(), args: strings(v.get("args")), env: vars(v.get("env")) })
        }
        Value::Array(parts) => {
            let mut parts = parts.iter().filter_map(Value::as_str).map(String::from);
            let command = parts.next()?;
            let env = vars(v.get("environment").or_else(|| v.get("env")));
            Some(ServerEntry { command, args: parts.collect(), env })
        }
        Value::Object(c) => {
            let command = c.get("path")?.as_str()?.to_string();
            Some(ServerEntry { command, args: strings(c.get("args")), env: vars(c.get("env")) })
        }
        _ => None,
    }
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
        let linux = HomeEnv {
            home: "/h".into(),
            xdg_config_home: None,
            codex_home: None,
            gemini_cli_home: None,
            cwd: "/p".into(),
            macos: false,
        };
        let mac = HomeEnv { macos: true, ..linux.clone() };
        let xdg = HomeEnv { xdg_config_home: Some("/x".into()), gemini_cli_home: Some("/g".into()), ..linux.clone() };
        let cases: [(McpClient, &HomeEnv, &str); 19] = [
            (McpClient::ClaudeDesktop, &linux, "/h/.config/Claude/claude_desktop_config.json"),
            (McpClient::ClaudeDesktop, &mac, "/h/Library/Application Support/Claude/claude_desktop_config.json"),
            (McpClient::Cursor, &linux, "/h/.cursor/mcp.json"),
            (McpClient::Codex, &linux, "/h/.codex/config.toml"),
            (McpClient::ClaudeCode, &linux, "/h/.claude.json"),
            (McpClient::Zed, &linux, "/h/.config/zed/settings.json"),
            (McpClient::Zed, &xdg, "/x/zed/settings.json"),
            (McpClient::Zed, &mac, "/h/.config/zed/settings.json"),
            (McpClient::Windsurf, &linux, "/h/.codeium/windsurf/mcp_config.json"),
            (McpClient::VsCode, &linux, "/h/.config/Code/User/mcp.json"),
            (McpClient::VsCode, &xdg, "/x/Code/User/mcp.json"),
            (McpClient::VsCode, &mac, "/h/Library/Application Support/Code/User/mcp.json"),
            (McpClient::OpenCode, &linux, "/h/.config/opencode/opencode.json"),
            (McpClient::OpenCode, &xdg, "/x/opencode/opencode.json"),
            (McpClient::Amp, &linux, "/h/.config/amp/settings.json"),
            (McpClient::LmStudio, &linux, "/h/.lmstudio/mcp.json"),
            (McpClient::LibreChat, &linux, "/p/librechat.yaml"),
            (McpClient::GeminiCli, &linux, "/h/.gemini/settings.json"),
            (McpClient::GeminiCli, &xdg, "/g/.gemini/settings.json"),
        ];
        for (client, env, path) in cases {
            assert_eq!(client.config_path(env), PathBuf::from(path), "{client:?}");
        }
        assert_eq!(McpClient::LibreChat.scope(), "project");
        assert!(McpClient::ALL.iter().filter(|c| **c != McpClient::LibreChat).all(|c| c.scope() == "user"));
    }

    #[test]
    fn lm_studio_follows_its_home_pointer_and_opencode_its_jsonc_file() {
        let dir = tempfile::tempdir().unwrap();
        let env = HomeEnv {
            home: dir.path().to_path_buf(),
            xdg_config_home: None,
            codex_home: None,
            gemini_cli_home: None,
            cwd: dir.path().to_path_buf(),
            macos: false,
        };
        std::fs::write(dir.path().join(".lmstudio-home-pointer"), "/srv/lmstudio\n").unwrap();
        assert_eq!(McpClient::LmStudio.config_path(&env), PathBuf::from("/srv/lmstudio/mcp.json"));
        let opencode = dir.path().join(".config/opencode");
        std::fs::create_dir_all(&opencode).unwrap();
        std::fs::write(opencode.join("opencode.jsonc"), "{}").unwrap();
        assert_eq!(McpClient::OpenCode.config_path(&env), opencode.join("opencode.jsonc"));
        std::fs::write(opencode.join("opencode.json"), "{}").unwrap();
        assert_eq!(McpClient::OpenCode.config_path(&env), opencode.join("opencode.json"));
    }

    /// A file of each new client's format with other content in it, as a user has it.
    const FIXTURES: [(McpClient, &str); 8] = [
        (
            McpClient::Zed,
            concat!(
                "// Zed settings\n{\n",
                "  \"theme\": \"One Dark\", // mine\n",
                "  \"context_servers\": {\n",
                "    \"other\": {\"command\": \"x\", \"args\": []},\n",
                "  },\n}\n",
            ),
        ),
        (McpClient::Windsurf, r#"{"mcpServers":{"other":{"command":"x"}},"x":1}"#),
        (
            McpClient::VsCode,
            concat!(
                "{\n\t// user servers\n",
                "\t\"servers\": {\n",
                "\t\t\"other\": {\"type\": \"stdio\", \"command\": \"x\"}\n",
                "\t},\n\t\"inputs\": []\n}\n",
            ),
        ),
        (
            McpClient::OpenCode,
            concat!(
                "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n",
                "  // tools\n",
                "  \"mcp\": {\n",
                "    \"other\": {\"type\": \"local\", \"command\": [\"x\"]},\n",
                "  },\n}\n",
            ),
        ),
        (
            McpClient::Amp,
            concat!(
                "{\n  \"amp.notifications.enabled\": false,\n",
                "  \"amp.mcpServers\": {\n",
                "    \"other\": {\"command\": \"x\"}\n",
                "  }\n}\n",
            ),
        ),
        (McpClient::LmStudio, "{\"mcpServers\": {\"other\": {\"url\": \"https://huggingface.co/mcp\"}}}\n"),
        (
            McpClient::LibreChat,
            "# LibreChat\nversion: 1.2.8\nmcpServers:\n  # mine\n  other:\n    command: x\nendpoints: {}\n",
        ),
        (
            McpClient::GeminiCli,
            concat!(
                "{\n  // the look\n",
                "  \"theme\": \"GitHub\",\n",
                "  \"mcpServers\": {\n",
                "    \"other\": {\"command\": \"x\"}\n",
                "  }\n}\n",
            ),
        ),
    ];

    /// The client's server named `other` in `text`, as JSON.
    fn other_server(client: McpClient, text: &str) -> Option<Value> {
        match client.format() {
            Format::Yaml => yaml::entry(&yaml::parse(text).unwrap(), client.servers_key(), "other").flatten(),
            _ => jsonc::parse(text).unwrap().get(client.servers_key()).and_then(|s| s.get("other")).cloned(),
        }
    }

    #[test]
    fn every_format_takes_the_entry_and_gives_it_back_keeping_the_rest() {
        for (client, fixture) in FIXTURES {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("config");
            std::fs::write(&path, fixture).unwrap();
            let other = other_server(client, fixture);
            assert!(other.is_some(), "{client:?}");
            install(client, &path, &entry()).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(client.read_entry(&path).unwrap(), Some(entry()), "{client:?}: {text}");
            assert_eq!(other_server(client, &text), other, "{client:?}: {text}");
            // Installing again replaces the entry, it does not add a second one.
            install(client, &path, &entry()).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap().matches("/opt/svc/bin/svc").count(), 1, "{client:?}");
            assert!(uninstall(client, &path).unwrap(), "{client:?}");
            assert!(!uninstall(client, &path).unwrap(), "{client:?}");
            let after = std::fs::read_to_string(&path).unwrap();
            assert_eq!(client.read_entry(&path).unwrap(), None, "{client:?}");
            match client.format() {
                // Spliced in and out: the user's file comes back byte for byte.
                Format::Jsonc | Format::Yaml => assert_eq!(after, fixture, "{client:?}"),
                Format::Json | Format::Toml => assert_eq!(other_server(client, &after), other, "{client:?}"),
            }
        }
    }

    #[test]
    fn each_client_writes_its_own_entry_shape() {
        let snippet = |c: McpClient| jsonc::parse(&c.snippet(&entry()).unwrap()).unwrap();
        let plain =
            serde_json::json!({"command": "/opt/svc/bin/svc", "args": ["mcp"], "env": {"SVC_DATA_DIR": "/data"}});
        for c in [McpClient::Zed, McpClient::Windsurf, McpClient::Amp, McpClient::LmStudio, McpClient::GeminiCli] {
            assert_eq!(snippet(c)[c.servers_key()]["svc"], plain, "{c:?}");
        }
        assert_eq!(snippet(McpClient::VsCode)["servers"]["svc"]["type"], "stdio");
        assert_eq!(
            snippet(McpClient::OpenCode)["mcp"]["svc"],
            serde_json::json!({"type": "local", "command": ["/opt/svc/bin/svc", "mcp"],
                "environment": {"SVC_DATA_DIR": "/data"}, "enabled": true})
        );
        let yaml = McpClient::LibreChat.snippet(&entry()).unwrap();
        assert!(yaml.starts_with("mcpServers:\n  svc:\n") && yaml.contains("type: stdio"), "{yaml}");
        // Zed's older entry, its command an object, still reads.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let old = r#"{"context_servers": {"svc": {"source": "custom", "settings": {},
            "command": {"path": "/opt/svc/bin/svc", "args": ["mcp"], "env": {"SVC_DATA_DIR": "/data"}}}}}"#;
        std::fs::write(&path, old).unwrap();
        assert_eq!(McpClient::Zed.read_entry(&path).unwrap(), Some(entry()));
        // A strict-JSON client's file with a comment is refused, not rewritten without it.
        std::fs::write(&path, "// mine\n{}").unwrap();
        assert!(matches!(install(McpClient::Windsurf, &path, &entry()), Err(ConfigError::Malformed { .. })));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "// mine\n{}");
    }
}
