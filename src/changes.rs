//! `svc changes`, `svc diff` and `svc impact`: the change reads, as text or `--json`.

use crate::backend::Backend;
use crate::commands::doc_ref;
use anyhow::{anyhow, Context};
use protocol::api::{ChangeEntry, ChangesResponse, DiffResponse, ImpactResponse};
use protocol::{ChangeCursor, ChangesQuery, ChangesSince, Dirs, ImpactBounds};
use serde::Serialize;
use std::process::ExitCode;

fn print_json<T: Serialize>(v: &T) -> anyhow::Result<ExitCode> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(ExitCode::SUCCESS)
}

fn describe(c: &ChangeEntry) -> String {
    let uri = |s: &Option<protocol::api::ChangeSnapshot>| s.as_ref().map(|s| s.uri.clone()).unwrap_or_default();
    let what = match (&c.previous, &c.current) {
        (Some(p), Some(n)) if p.uri != n.uri => format!("{} -> {}", p.uri, n.uri),
        _ => uri(&c.current).max(uri(&c.previous)),
    };
    format!("{}  {:<10}  {what}", c.observed_at, c.kind.as_str())
}

pub fn changes(
    dirs: &Dirs,
    since: Option<String>,
    collection: Option<String>,
    limit: u32,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let since = match since {
        None => ChangesSince::Start,
        Some(s) if ChangeCursor::looks_like_cursor(&s) => {
            ChangesSince::Cursor(ChangeCursor::parse(&s).ok_or_else(|| anyhow!("--since is not a change cursor"))?)
        }
        Some(s) => ChangesSince::Time(
            gateway::dates::parse_bound(&s, gateway::dates::Bound::Since, time::OffsetDateTime::now_utc())
                .map_err(|e| anyhow!("--since: {}", e.message))?,
        ),
    };
    let collection = collection.as_deref().map(gateway::bodies::collection).transpose()?;
    let q = ChangesQuery { since, collection, limit: limit.clamp(1, ChangesQuery::MAX_LIMIT) };
    let r: ChangesResponse = Backend::open(dirs)?.call_ok(q)?;
    if json {
        return print_json(&r);
    }
    for c in &r.changes {
        println!("{}", describe(c));
    }
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    match &r.page.next_cursor {
        Some(next) => println!("more: svc changes --since {next}"),
        None => println!("up to date; poll with: svc changes --since {}", r.page.latest_cursor),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn diff(dirs: &Dirs, reference: String, change: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let change = change
        .map(|c| ChangeCursor::parse(&c).ok_or_else(|| anyhow!("--change is not a change id from `svc changes`")))
        .transpose()?;
    let r: DiffResponse = Backend::open(dirs)?.call_ok(protocol::Diff { doc: doc_ref(reference)?, change })?;
    if json {
        return print_json(&r);
    }
    println!("{} ({})", r.document.uri, if r.document.active { "active" } else { "inactive" });
    match &r.change {
        Some(c) => {
            println!("{}", describe(c));
            let d = &c.structure_delta;
            for (label, set) in [("heading", &d.headings), ("link", &d.links)] {
                set.added.iter().for_each(|x| println!("  + {label} {x}"));
                set.removed.iter().for_each(|x| println!("  - {label} {x}"));
            }
            d.dates.changed.iter().for_each(|x| println!("  ~ date {x}"));
        }
        None => println!("no retained change ({:?})", r.status),
    }
    println!("history: {:?} ({}); bodies are not retained", r.history.status, r.history.reason);
    Ok(ExitCode::SUCCESS)
}

pub fn impact(dirs: &Dirs, reference: String, max_depth: u32, json: bool) -> anyhow::Result<ExitCode> {
    let bounds = ImpactBounds { max_depth: max_depth.clamp(1, ImpactBounds::MAX.max_depth), ..ImpactBounds::DEFAULT };
    let r: ImpactResponse = Backend::open(dirs)
        .context("cannot open the index")?
        .call_ok(protocol::Impact { doc: doc_ref(reference)?, bounds })?;
    if json {
        return print_json(&r);
    }
    println!("{} is linked from {} notes", r.root.uri, r.impacted.len());
    for d in &r.impacted {
        let via: Vec<&str> = d.evidence_path.iter().skip(1).map(|e| e.source.uri.as_str()).collect();
        let via = if via.is_empty() { String::new() } else { format!("  (via {})", via.join(" <- ")) };
        println!("  {}  {}{via}", d.depth, d.document.uri);
    }
    r.meta.warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    Ok(ExitCode::SUCCESS)
}
