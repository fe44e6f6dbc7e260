//! `svc ask`: an answer with citations, its text printed as it is generated.

use crate::backend::Backend;
use anyhow::anyhow;
use gateway::bodies::{AskBody, AskOptions, QueryBody, QueryOptions, SearchBody};
use protocol::api::{AskResponse, CitationVia};
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
    let mut streamed = String::new();
    let reply = b
        .call_with(ask, &mut |text| {
            let mut out = stdout.lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            streamed.push_str(text);
        })?
        .map_err(|e| anyhow!("{} ({})", e.message, e.code.as_str()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reply)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", final_answer(&streamed, reply.answer.as_deref()));
    print!("{}", sources(&reply));
    Ok(ExitCode::SUCCESS)
}

/// What follows the streamed text: the end of its line when it was the answer; else the
/// answer, said to replace the draft when one was streamed.
fn final_answer(streamed: &str, answer: Option<&str>) -> String {
    let answer = answer.unwrap_or_default().trim();
    match streamed.trim() {
        "" => format!("{answer}\n"),
        draft if draft == answer => "\n".to_string(),
        _ => format!("\n\nThe draft above was withheld; the answer is:\n{answer}\n"),
    }
}

/// The numbered sources the answer's `[n]` markers point to, with their lines; the closest
/// notes instead when the draft was withheld (no answer rests on them).
fn sources(reply: &AskResponse) -> String {
    let (heading, listed): (&str, Vec<String>) = if reply.meta.declined.is_none() {
        let selected = reply.meta.answer_context.selected.iter().enumerate();
        ("Sources", selected.map(|(i, s)| source_line(i + 1, &s.uri, s.start_line, s.end_line)).collect())
    } else {
        let closest = reply.citations.iter().filter(|c| c.via == CitationVia::Closest);
        (
            "Closest notes (the answer does not rest on them)",
            closest.map(|c| source_line(c.index as usize, &c.uri, c.start_line, c.end_line)).collect(),
        )
    };
    if listed.is_empty() {
        return String::new();
    }
    format!("\n{heading}:\n{}", listed.concat())
}

/// One numbered source as the CLI lists it: `[n] uri  (lines a-b)` and a line break.
fn source_line(n: usize, uri: &str, start_line: u32, end_line: u32) -> String {
    format!("[{n}] {uri}  (lines {start_line}-{end_line})\n")
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
        print!("{}", source_line(c.index as usize, &c.uri, c.start_line, c.end_line));
    }
    Ok(ExitCode::SUCCESS)
}
