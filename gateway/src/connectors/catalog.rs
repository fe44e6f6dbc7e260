//! The connector targets svc knows: the MCP clients it installs into, and the skill-file
//! targets of agents that read a `SKILL.md` (listed so a user sees them; svc does not write
//! skill files, and a skill cannot be verified at runtime).

use super::clients::{HomeEnv, McpClient};
use protocol::api::{ConnectorInfo, ConnectorMode, InstallKind};
use std::path::PathBuf;

/// The longest `connectorId` a request may carry.
pub const MAX_CONNECTOR_ID_CHARS: usize = 128;

/// A skill-file target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillTarget {
    ClaudeCode,
    Codex,
    Opencode,
    Openclaw,
    Hermes,
}

/// A connector: an MCP client's entry, or a skill file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    Mcp(McpClient),
    Skill(SkillTarget),
}

impl Connector {
    pub const ALL: [Connector; 17] = [
        Connector::Mcp(McpClient::ClaudeDesktop),
        Connector::Mcp(McpClient::Cursor),
        Connector::Mcp(McpClient::Codex),
        Connector::Mcp(McpClient::ClaudeCode),
        Connector::Mcp(McpClient::Zed),
        Connector::Mcp(McpClient::Windsurf),
        Connector::Mcp(McpClient::VsCode),
        Connector::Mcp(McpClient::OpenCode),
        Connector::Mcp(McpClient::Amp),
        Connector::Mcp(McpClient::LmStudio),
        Connector::Mcp(McpClient::LibreChat),
        Connector::Mcp(McpClient::GeminiCli),
        Connector::Skill(SkillTarget::ClaudeCode),
        Connector::Skill(SkillTarget::Codex),
        Connector::Skill(SkillTarget::Opencode),
        Connector::Skill(SkillTarget::Openclaw),
        Connector::Skill(SkillTarget::Hermes),
    ];

    /// `<client>-mcp` for an MCP client (its `--client` value), `<agent>-skill` for a skill file.
    pub fn id(self) -> &'static str {
        match self {
            Connector::Mcp(McpClient::ClaudeDesktop) => "claude-desktop-mcp",
            Connector::Mcp(McpClient::Cursor) => "cursor-mcp",
            Connector::Mcp(McpClient::Codex) => "codex-mcp",
            Connector::Mcp(McpClient::ClaudeCode) => "claude-code-mcp",
            Connector::Mcp(McpClient::Zed) => "zed-mcp",
            Connector::Mcp(McpClient::Windsurf) => "windsurf-mcp",
            Connector::Mcp(McpClient::VsCode) => "vscode-mcp",
            Connector::Mcp(McpClient::OpenCode) => "opencode-mcp",
            Connector::Mcp(McpClient::Amp) => "amp-mcp",
            Connector::Mcp(McpClient::LmStudio) => "lm-studio-mcp",
            Connector::Mcp(McpClient::LibreChat) => "librechat-mcp",
            Connector::Mcp(McpClient::GeminiCli) => "gemini-cli-mcp",
            Connector::Skill(SkillTarget::ClaudeCode) => "claude-code-skill",
            Connector::Skill(SkillTarget::Codex) => "codex-skill",
            Connector::Skill(SkillTarget::Opencode) => "opencode-skill",
            Connector::Skill(SkillTarget::Openclaw) => "openclaw-skill",
            Connector::Skill(SkillTarget::Hermes) => "hermes-skill",
        }
    }

    pub fn from_id(id: &str) -> Option<Connector> {
        Connector::ALL.into_iter().find(|c| c.id() == id)
    }

    fn target(self) -> &'static str {
        match self {
            Connector::Mcp(c) => c.id(),
            Connector::Skill(SkillTarget::ClaudeCode) => "claude-code",
            Connector::Skill(SkillTarget::Codex) => "codex",
            Connector::Skill(SkillTarget::Opencode) => "opencode",
            Connector::Skill(SkillTarget::Openclaw) => "openclaw",
            Connector::Skill(SkillTarget::Hermes) => "hermes",
        }
    }

    fn app_name(self) -> &'static str {
        match self {
            Connector::Mcp(c) => c.app_name(),
            Connector::Skill(SkillTarget::ClaudeCode) => "Claude Code",
            Connector::Skill(SkillTarget::Codex) => "Codex",
            Connector::Skill(SkillTarget::Opencode) => "OpenCode",
            Connector::Skill(SkillTarget::Openclaw) => "OpenClaw",
            Connector::Skill(SkillTarget::Hermes) => "Hermes",
        }
    }

    /// The file the client reads: its MCP configuration, or the skill file.
    pub fn path(self, env: &HomeEnv) -> PathBuf {
        let skill = |dir: PathBuf| dir.join("skills/svc/SKILL.md");
        match self {
            Connector::Mcp(c) => c.config_path(env),
            Connector::Skill(SkillTarget::ClaudeCode) => skill(env.home.join(".claude")),
            Connector::Skill(SkillTarget::Codex) => skill(env.codex_home()),
            Connector::Skill(SkillTarget::Opencode) => skill(env.config_home().join("opencode")),
            Connector::Skill(SkillTarget::Openclaw) => skill(env.home.join(".openclaw")),
            Connector::Skill(SkillTarget::Hermes) => skill(env.home.join(".hermes")),
        }
    }

    /// The connector as `GET /api/connectors` lists it (reads the client's file, never writes).
    pub fn info(self, env: &HomeEnv) -> ConnectorInfo {
        let path = self.path(env);
        let (install_kind, installed, writes, error) = match self {
            Connector::Mcp(c) => match c.read_entry(&path) {
                Ok(Some(e)) => (InstallKind::Mcp, true, e.args.iter().any(|a| a == "--enable-write"), None),
                Ok(None) => (InstallKind::Mcp, false, false, None),
                Err(e) => (InstallKind::Mcp, false, false, Some(e.to_string())),
            },
            Connector::Skill(_) => (InstallKind::Skill, path.is_file(), false, None),
        };
        let (summary, next_action) = match (self, installed) {
            (Connector::Mcp(c), true) => (
                format!("svc is configured as an MCP server in {}.", c.app_name()),
                format!("Verify it: POST /api/connectors/verify {{\"connectorId\": \"{}\", …}}", self.id()),
            ),
            (Connector::Mcp(c), false) => {
                // A project's file is the one in the folder the command runs in.
                let place =
                    if c.scope() == "project" { format!(" in {}'s folder", c.app_name()) } else { String::new() };
                (
                    format!("{} has no svc MCP entry.", c.app_name()),
                    format!("Run `svc mcp install --client {}`{place}, then restart {}.", c.id(), c.app_name()),
                )
            }
            (Connector::Skill(_), true) => (
                format!("A svc skill file is in place for {}.", self.app_name()),
                "Skill files are read by the agent when it runs; ask the agent to use svc.".to_string(),
            ),
            (Connector::Skill(_), false) => (
                format!("No svc skill file for {}.", self.app_name()),
                "Use the MCP connector of this agent instead, where it has one.".to_string(),
            ),
        };
        let mode = match (install_kind, writes) {
            (InstallKind::Mcp, true) => ConnectorMode {
                label: "read-write".into(),
                detail: "Search, read and the write tools (svc_capture, svc_create, svc_update).".into(),
            },
            (InstallKind::Mcp, false) => ConnectorMode {
                label: "read-only".into(),
                detail: "Search and read tools; the write tools need --enable-write.".into(),
            },
            (InstallKind::Skill, _) => ConnectorMode {
                label: "skill".into(),
                detail: "Instructions the agent reads; svc cannot start or check it.".into(),
            },
        };
        ConnectorInfo {
            id: self.id().into(),
            app_name: self.app_name().into(),
            install_kind,
            target: self.target().into(),
            scope: match self {
                Connector::Mcp(c) => c.scope(),
                Connector::Skill(_) => "user",
            }
            .into(),
            installed,
            path: path.display().to_string(),
            summary,
            next_action,
            mode,
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_short() {
        for c in Connector::ALL {
            assert_eq!(Connector::from_id(c.id()), Some(c));
            assert!(c.id().len() <= MAX_CONNECTOR_ID_CHARS);
        }
        assert_eq!(Connector::from_id("claude-desktop-mcp"), Some(Connector::Mcp(McpClient::ClaudeDesktop)));
        assert_eq!(Connector::from_id("nope"), None);
        // Every MCP client of `svc mcp install` is a connector, named after its `--client`.
        for c in McpClient::ALL {
            assert_eq!(Connector::from_id(&format!("{}-mcp", c.id())), Some(Connector::Mcp(c)));
        }
    }
}
