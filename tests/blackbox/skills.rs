//! `svc skill` (issue 62 item 2): the skill folder written where Claude Code, Codex and
//! OpenCode read skills, its front matter as the Agent Skills format they share requires, and
//! every command it teaches run as an agent would run it (through a shell, placeholders
//! filled), against a real index.

use crate::common::*;
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// Where each agent reads a user's skills, under `$HOME` (no `XDG_CONFIG_HOME`).
const USER_FILES: &[(&str, &str)] = &[
    ("claude-code", ".claude/skills/svc/SKILL.md"),
    ("codex", ".agents/skills/svc/SKILL.md"),
    ("opencode", ".config/opencode/skills/svc/SKILL.md"),
];

/// What an agent fills the skill's placeholders with.
const FILLED: &[(&str, &str)] = &[
    ("<words>", "porcelain cone"),
    ("<question>", "When is the porcelain fired?"),
    ("<goal>", "porcelain firing schedule"),
    ("<uri>", "svc://notes/kiln.md"),
    ("<collection>", "notes"),
    ("<title>", "Glaze test"),
    ("<text>", "The celadon test tile came out sea green."),
];

fn skill(s: &Server, home: &Path, cwd: &Path, args: &[&str]) -> String {
    let out = s.cmd().env("HOME", home).env_remove("XDG_CONFIG_HOME").current_dir(cwd).arg("skill").args(args).output();
    let out = out.unwrap();
    assert!(out.status.success(), "svc skill {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The front matter's `name` and `description`, checked as the agents check them.
fn front_matter(text: &str, folder: &str) {
    let rest = text.strip_prefix("---\n").expect("SKILL.md starts with front matter");
    let (yaml, body) = rest.split_once("\n---\n").expect("front matter closed");
    let fm: serde_json::Value = serde_norway::from_str(yaml).expect("front matter is YAML");
    let name = fm["name"].as_str().expect("name");
    assert_eq!(name, folder, "name is the folder's name");
    assert!(
        (1..=64).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.starts_with('-')
            && !name.ends_with('-')
            && !name.contains("--"),
        "{name}"
    );
    let description = fm["description"].as_str().expect("description");
    assert!((1..=1024).contains(&description.chars().count()), "{description}");
    assert!(!body.trim().is_empty());
}

/// The commands in the skill's `bash` blocks, in order.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_bash = false;
    for line in text.lines() {
        match line.trim() {
            "```bash" => in_bash = true,
            "```" => in_bash = false,
            l if in_bash && l.starts_with("svc ") => out.push(l.to_string()),
            _ => {}
        }
    }
    out
}

#[test]
fn skills_install_where_each_agent_reads_them_and_every_command_in_them_runs() {
    let s = Server::start();
    write_notes(&s.path("notes"), &[("kiln.md", "# Kiln\nFire the porcelain at cone 6 on Tuesday.\n")]);
    s.add_collection(&s.path("notes"), "notes");
    let (home, project) = (s.path("home"), s.path("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();

    let printed = skill(&s, &home, &project, &["install", "--target", "all"]);
    let mut text = String::new();
    for (target, rel) in USER_FILES {
        assert!(
            printed.contains(&format!("{target}: skill 'svc' written to {}", home.join(rel).display())),
            "{printed}"
        );
        let t = std::fs::read_to_string(home.join(rel)).unwrap();
        front_matter(&t, "svc");
        text = t;
    }
    skill(&s, &home, &project, &["install", "--target", "claude-code", "--scope", "project"]);
    front_matter(&std::fs::read_to_string(project.join(".claude/skills/svc/SKILL.md")).unwrap(), "svc");
    let shown = skill(&s, &home, &project, &["show"]);
    assert!(shown.starts_with(&text), "show prints the skill");
    assert!(shown.contains(&format!("# codex: {} (installed)", home.join(USER_FILES[1].1).display())), "{shown}");
    let bad = s.cmd().env("HOME", &home).args(["skill", "install", "--target", "cursor"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("unknown target 'cursor'"));

    // Every command the skill teaches, as an agent runs it: a shell in a working folder.
    let taught = commands(&text);
    for verb in ["search", "query", "ask", "context build", "context verify", "get", "capture"] {
        assert!(taught.iter().any(|c| c.starts_with(&format!("svc {verb} "))), "the skill teaches svc {verb}");
    }
    let with_models = crate::prepared::models("skills::every command (svc ask --verify)");
    if with_models {
        crate::ask::install_generator(&s);
    }
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    for line in &taught {
        let mut filled = line.clone();
        for (placeholder, value) in FILLED {
            filled = filled.replace(placeholder, value);
        }
        assert!(!filled.contains('<'), "a placeholder left unfilled: {filled}");
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(&filled).current_dir(&project).env("PATH", &path);
        for (k, v) in s.cmd().get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        let out = sh.output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if filled.starts_with("svc ask") && !with_models {
            // No generator here: it says so, in a line, not a crash.
            assert!(!out.status.success() && stderr.contains("generat"), "{filled}: {stderr}");
            continue;
        }
        assert!(out.status.success(), "{filled}: {stdout}\n{stderr}");
        if filled.starts_with("svc search") || filled.starts_with("svc get") {
            assert!(stdout.contains("kiln.md") || stdout.contains("cone 6"), "{filled}: {stdout}");
        }
        if filled.starts_with("svc context verify") {
            assert!(stdout.contains("verified") || stdout.contains("unchanged"), "{filled}: {stdout}");
        }
    }
    let res = s.search(json!({ "query": "celadon" }));
    assert_eq!(res["results"][0]["title"], "Glaze test", "the captured note: {res}");

    let removed = skill(&s, &home, &project, &["uninstall", "--target", "all"]);
    for (target, rel) in USER_FILES {
        assert!(!home.join(rel).exists(), "{target}: {removed}");
        assert!(!home.join(rel).parent().unwrap().exists(), "the empty folder goes too");
    }
    let again = skill(&s, &home, &project, &["uninstall", "--target", "codex"]);
    assert!(again.contains("was not installed"), "{again}");
}
