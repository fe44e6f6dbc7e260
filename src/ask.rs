//! `svc ask`: an answer with citations, its text printed as it is generated.

use crate::backend::Backend;
use anyhow::anyhow;
use gateway::bodies::{AskBody, AskOptions, QueryBody, QueryOptions, SearchBody};
use protocol::{AskCall, AskVerified, Dirs};
use std::io::Write;
use std::process::ExitCode;

pub struct AskArgs {
    pub question: String,
    pub limit: u32,
    pub collection: Option<String>,
    pub max_answer_tokens: u32,
    /// Verified mode: the answer is shown only when every claim is supported by the notes.
    pub verify: bool,
    pub json: bool,
}

pub fn ask(dirs: &Dirs, a: AskArgs) -> anyhow::Result<ExitCode> {
    // The body `/api/ask` reads, so the checks and defaults are the same.
    let search = SearchBody {
        query: Some(a.question),
        limit: Some(i64::from(a.limit)),
        collection: a.collection,
        ..Default::default()
    };
    let body = AskBody {
        query: QueryBody { search, options: QueryOptions::default() },
        options: AskOptions {
            max_answer_tokens: Some(i64::from(a.max_answer_tokens)),
            verify: Some(a.verify),
            context_budget_tokens: None,
        },
    };
    let request = body.into_request(!a.json)?;
    let mut b = Backend::open(dirs)?;
    let ask = match request.into_call() {
        AskCall::Verified(ask) => return verified(&mut b, ask, a.json),
        AskCall::Raw(ask) => ask,
    };
    let stdout = std::io::stdout();
    let mut printed = false;
    let reply = b
        .call_with(ask, &mut |text| {
            let mut out = stdout.lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            printed = true;
        })?
        .map_err(|e| anyhow!("{} ({})", e.message, e.code.as_str()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reply)?);
        return Ok(ExitCode::SUCCESS);
    }
    match &reply.answer {
        Some(_) if printed => println!(),
        Some(answer) => println!("{answer}"),
        None => println!("No note answers this question (no source shares its words)."),
    }
    if !reply.citations.is_empty() {
        println!();
        for c in &reply.citations {
            println!("[{}] {}  (lines {}-{})", c.index, c.uri, c.start_line, c.end_line);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a verified answer (or the abstention, with its reason and the claims' verdicts).
fn verified(b: &mut Backend, ask: AskVerified, json: bool) -> anyhow::Result<ExitCode> {
    let reply = b.call_ok(ask)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&reply)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", reply.answer);
    let claims = &reply.verification.claims;
    if let Some(reason) = claims.abstention_reason {
        println!("\n(abstained: {})", serde_json::to_value(reason)?.as_str().unwrap_or_default());
    }
    for c in &claims.claims {
        println!("  {:<12} {}", serde_json::to_value(c.status)?.as_str().unwrap_or_default(), c.text);
    }
    for c in &reply.citations {
        println!("[{}] {}  (lines {}-{})", c.index, c.uri, c.start_line, c.end_line);
    }
    Ok(ExitCode::SUCCESS)
}
