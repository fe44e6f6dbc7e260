//! `svc skill`: the agent skill that teaches an agent svc's CLI (search, query, ask --verify,
//! context build/verify, get, capture), a `svc/SKILL.md` folder written where each agent CLI
//! reads skills. The file follows the Agent Skills format the three agents share: YAML front
//! matter with `name` (the folder's name: lowercase letters, digits and hyphens, at most 64)
//! and `description` (at most 1,024 characters), then Markdown instructions.

use anyhow::Context;
use gateway::connectors::HomeEnv;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The skill's file, as installed.
pub const SKILL_MD: &str = include_str!("skill/SKILL.md");
/// The skill's name: its folder's name and its front matter's `name`.
pub const NAME: &str = "svc";

/// An agent CLI that reads skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    ClaudeCode,
    Codex,
    OpenCode,
}

impl Target {
    pub const ALL: [Target; 3] = [Target::ClaudeCode, Target::Codex, Target::OpenCode];

    pub fn id(self) -> &'static str {
        match self {
            Target::ClaudeCode => "claude-code",
            Target::Codex => "codex",
            Target::OpenCode => "opencode",
        }
    }

    pub fn parse(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.id() == s)
    }

    /// The folder the agent reads skills from, by scope. Claude Code: `~/.claude/skills`,
    /// `.claude/skills`. Codex: `~/.agents/skills`, `.agents/skills` (the Agent Skills
    /// folders Codex scans). OpenCode: `$XDG_CONFIG_HOME/opencode/skills` (else
    /// `~/.config/opencode/skills`), `.opencode/skills`.
    pub fn skills_dir(self, scope: Scope, env: &HomeEnv) -> PathBuf {
        match (self, scope) {
            (Target::ClaudeCode, Scope::User) => env.home.join(".claude/skills"),
            (Target::ClaudeCode, Scope::Project) => env.cwd.join(".claude/skills"),
            (Target::Codex, Scope::User) => env.home.join(".agents/skills"),
            (Target::Codex, Scope::Project) => env.cwd.join(".agents/skills"),
            (Target::OpenCode, Scope::User) => env.config_home().join("opencode/skills"),
            (Target::OpenCode, Scope::Project) => env.cwd.join(".opencode/skills"),
        }
    }

    /// The skill's file for this agent and scope.
    pub fn skill_file(self, scope: Scope, env: &HomeEnv) -> PathBuf {
        self.skills_dir(scope, env).join(NAME).join("SKILL.md")
    }
}

/// Where a skill is installed: for the user (every project) or for the project of the
/// current directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "user" => Some(Scope::User),
            "project" => Some(Scope::Project),
            _ => None,
        }
    }
}

/// The agents a command is for: `--target`'s one agent, or all.
#[derive(Debug, Clone)]
pub struct Targets(pub Vec<Target>);

/// `--target`: one agent, or `all`.
pub fn targets(s: &str) -> Result<Targets, String> {
    if s == "all" {
        return Ok(Targets(Target::ALL.to_vec()));
    }
    Target::parse(s).map(|t| Targets(vec![t])).ok_or_else(|| {
        let ids: Vec<&str> = Target::ALL.iter().map(|t| t.id()).collect();
        format!("unknown target '{s}' (one of {}, or all)", ids.join(", "))
    })
}

/// Writes `text` to `path` through a temporary file in its folder and a rename: the agent
/// never reads half a file.
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().context("the skill's file has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(".SKILL.md.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// `svc skill install`: the skill's folder for each target.
pub fn install(targets: &Targets, scope: Scope) -> anyhow::Result<ExitCode> {
    let env = HomeEnv::from_env()?;
    for t in &targets.0 {
        let path = t.skill_file(scope, &env);
        write_atomic(&path, SKILL_MD)?;
        println!("{}: skill '{NAME}' written to {}", t.id(), path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `svc skill uninstall`: removes the skill's folder (its `SKILL.md`, and the folder when
/// nothing else is in it) for each target.
pub fn uninstall(targets: &Targets, scope: Scope) -> anyhow::Result<ExitCode> {
    let env = HomeEnv::from_env()?;
    for t in &targets.0 {
        let path = t.skill_file(scope, &env);
        match std::fs::remove_file(&path) {
            Ok(()) => {
                if let Some(dir) = path.parent() {
                    // Only when empty: files the user put beside it stay.
                    let _ = std::fs::remove_dir(dir);
                }
                println!("{}: skill '{NAME}' removed from {}", t.id(), path.display());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("{}: skill '{NAME}' was not installed at {}", t.id(), path.display());
            }
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `svc skill show`: the skill's text, and where each target reads it from and whether it is
/// there (and current).
pub fn show(scope: Scope) -> anyhow::Result<ExitCode> {
    let env = HomeEnv::from_env()?;
    print!("{SKILL_MD}");
    println!();
    for t in Target::ALL {
        let path = t.skill_file(scope, &env);
        let state = match std::fs::read_to_string(&path) {
            Ok(text) if text == SKILL_MD => "installed",
            Ok(_) => "installed, an older or edited version (install again to update)",
            Err(_) => "not installed",
        };
        println!("# {}: {} ({state})", t.id(), path.display());
    }
    Ok(ExitCode::SUCCESS)
}
