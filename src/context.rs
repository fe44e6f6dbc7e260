//! `svc context`: build a Context Capsule, verify a kept one, and manage saved capsules
//! (re-verified by the worker after every change to their evidence).

use crate::backend::Backend;
use anyhow::Context;
use gateway::bodies::ContextBody;
use protocol::api::{
    capsule_markdown, receipt_markdown, Capsule, CapsuleReceipt, CapsuleRegistration, CapsuleRegistrations,
};
use protocol::{DepthPolicy, Dirs};
use std::io::Read;
use std::process::ExitCode;

/// Reads a file, or standard input for `-`.
pub fn read_input(file: &str) -> anyhow::Result<String> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("cannot read standard input")?;
        return Ok(s);
    }
    std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))
}

pub fn build(
    dirs: &Dirs,
    goal: String,
    budget: u64,
    depth: DepthPolicy,
    md: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    // The body `/api/context` reads, so the checks and defaults are the same.
    let body = ContextBody {
        goal: Some(goal),
        budget_tokens: Some(budget.into()),
        depth_policy: Some(depth.as_str().to_string()),
        ..Default::default()
    };
    let (req, _) = body.into_request()?;
    let capsule: Capsule = Backend::open(dirs)?.call_ok(protocol::CompileContext(req))?;
    if md {
        print!("{}", capsule_markdown(&capsule));
    } else if json {
        // The canonical JSON (the struct's field order is canonical).
        println!("{}", serde_json::to_string(&capsule)?);
    } else {
        println!("capsule {} ({} of {} tokens)", capsule.capsule_id, capsule.budget.used_tokens, budget);
        for e in &capsule.evidence {
            println!("  [{}] {} lines {}-{}", e.selection_rank, e.uri, e.start_line, e.end_line);
        }
        for g in &capsule.coverage.gaps {
            println!("  gap: {} ({})", g.facet, g.code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn verify(dirs: &Dirs, file: &str, md: bool, json: bool) -> anyhow::Result<ExitCode> {
    let raw = read_input(file)?;
    let receipt: CapsuleReceipt = Backend::open(dirs)?.call_ok(protocol::VerifyContext { capsule: raw.clone() })?;
    if md {
        let capsule: Capsule = serde_json::from_str(&raw).context("the file is not a capsule")?;
        print!("{}", receipt_markdown(&receipt, &capsule));
    } else if json {
        println!("{}", serde_json::to_string_pretty(&receipt)?);
    } else {
        println!(
            "capsule {}: content {}, ranking {}, fingerprints {}",
            receipt.capsule_id, receipt.content_status, receipt.ranking_status, receipt.fingerprint_status
        );
        for e in &receipt.evidence {
            println!("  {} {} ({})", e.content_status, e.uri, e.content_code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn add(dirs: &Dirs, file: &str, label: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let raw = read_input(file)?;
    let r: CapsuleRegistration = Backend::open(dirs)?.call_ok(protocol::RegisterCapsule { capsule: raw, label })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("saved capsule {} as {}", r.capsule_id, r.registration_id);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn list(dirs: &Dirs, json: bool) -> anyhow::Result<ExitCode> {
    let r: CapsuleRegistrations = Backend::open(dirs)?.call_ok(protocol::ListCapsules)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    for c in &r.registrations {
        println!(
            "{}  {}  {}  {}",
            c.registration_id,
            c.label.as_deref().unwrap_or("-"),
            c.content_status.map_or_else(|| "not re-verified yet".to_string(), |s| s.to_string()),
            c.last_verified_at.as_deref().unwrap_or(""),
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn remove(dirs: &Dirs, id: String) -> anyhow::Result<ExitCode> {
    let r: CapsuleRegistration = Backend::open(dirs)?.call_ok(protocol::RemoveCapsule { id })?;
    println!("removed saved capsule {}", r.registration_id);
    Ok(ExitCode::SUCCESS)
}
