//! One function per CLI command.

use crate::backend::Backend;
use anyhow::{anyhow, bail, Context};
use protocol::{AddCollection, DocRef, Dirs, QueryRequest, Request, SearchFilters, SearchRequest};
use serde_json::Value;
use std::io::BufRead;
use std::process::ExitCode;

/// The CLI's own ceiling for `--limit` (the HTTP API caps search at 50).
const CLI_MAX_LIMIT: u32 = 1000;

pub fn serve(dirs: Dirs, port: u16, detach: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("cannot locate the svc binary")?;
    supervisor::serve(supervisor::ServeOptions { port, detach, dirs, exe })?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_worker(dirs: Dirs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(worker::serve(dirs))?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_gateway(dirs: Dirs, port: u16, listen_fd: i32) -> anyhow::Result<ExitCode> {
    use std::os::fd::FromRawFd;
    // SAFETY: the supervisor placed a listening TCP socket at this fd before exec; this
    // process owns it from here on.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(listen_fd) };
    let token = std::env::var("SVC_API_TOKEN").ok();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let pdfjs_dir = pdfjs_dir();
    if pdfjs_dir.is_none() {
        tracing::warn!("pdfjs-dist not found (set SVC_PDFJS_DIR or run `npm ci`); /vendor/pdfjs/* answers 404");
    }
    rt.block_on(gateway::run(gateway::GatewayOptions { listener, port, dirs, token, pdfjs_dir }))?;
    Ok(ExitCode::SUCCESS)
}

/// The `pdfjs-dist` package: `SVC_PDFJS_DIR`, else `node_modules/pdfjs-dist` next to the
/// repository the binary was built in (`target/<profile>/svc`), else in the working dir.
fn pdfjs_dir() -> Option<std::path::PathBuf> {
    let mut candidates: Vec<std::path::PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("SVC_PDFJS_DIR") {
        candidates.push(d.into());
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(repo) = exe.parent().and_then(|p| p.parent()).and_then(|p| p.parent()) {
            candidates.push(repo.join("node_modules/pdfjs-dist"));
        }
    }
    candidates.push("node_modules/pdfjs-dist".into());
    candidates.into_iter().find(|c| c.join("build/pdf.worker.min.mjs").is_file())
}

pub fn stop(dirs: &Dirs) -> anyhow::Result<ExitCode> {
    let Some(info) = supervisor::read_running(dirs) else {
        println!("svc is not running (data dir {})", dirs.data_dir.display());
        return Ok(ExitCode::SUCCESS);
    };
    let pid = nix::unistd::Pid::from_raw(info.pid as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).map_err(|e| anyhow!("cannot signal pid {}: {e}", info.pid))?;
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(15) {
        if supervisor::read_running(dirs).is_none() {
            println!("svc stopped (pid {})", info.pid);
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    bail!("svc (pid {}) did not stop within 15 s", info.pid)
}

pub fn status(dirs: &Dirs, json: bool) -> anyhow::Result<ExitCode> {
    let running = supervisor::read_running(dirs);
    let snapshot: Value = std::fs::read(dirs.status_file()).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
    if json {
        let out = serde_json::json!({ "running": running.is_some(), "url": running.as_ref().map(|r| r.url.clone()), "pid": running.as_ref().map(|r| r.pid), "status": snapshot });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        match &running {
            Some(r) => println!("svc is running at {} (pid {})", r.url, r.pid),
            None => println!("svc is not running"),
        }
        println!("data: {}", dirs.index_dir().display());
        if let Some(cols) = snapshot["collections"].as_array() {
            println!("documents: {}  chunks: {}", snapshot["totalDocuments"], snapshot["totalChunks"]);
            for c in cols {
                println!("  {:<20} {:>7} docs  {}", c["name"].as_str().unwrap_or(""), c["documentCount"], c["path"].as_str().unwrap_or(""));
            }
        }
    }
    Ok(if running.is_some() { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

fn print_job(job: &Value, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(job)?);
    } else if job["status"] == "completed" {
        let r = &job["result"];
        println!(
            "indexed: {} files ({} added, {} updated, {} errored, {} skipped) in {} ms",
            r["totalFilesProcessed"], r["totalFilesAdded"], r["totalFilesUpdated"], r["totalFilesErrored"], r["totalFilesSkipped"], r["totalDurationMs"]
        );
    } else {
        println!("job {}: {}", job["status"], job["error"].as_str().unwrap_or(""));
    }
    Ok(if job["status"] == "completed" { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[allow(clippy::too_many_arguments)]
pub fn collection_add(
    dirs: &Dirs,
    path: std::path::PathBuf,
    name: Option<String>,
    pattern: Option<String>,
    include: Option<String>,
    exclude: Option<String>,
    git_pull: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let abs = std::path::absolute(&path).with_context(|| format!("bad path {}", path.display()))?;
    let mut b = Backend::open(dirs)?;
    let path = abs.to_str().ok_or_else(|| anyhow!("the path is not valid UTF-8"))?.to_string();
    let reply = b.call_ok(Request::AddCollection(AddCollection { path, name, pattern, include, exclude, git_pull }))?;
    let job_id = reply["jobId"].as_str().ok_or_else(|| anyhow!("no job id in the reply"))?.to_string();
    if !json {
        println!("added collection {} ({})", reply["collection"]["name"].as_str().unwrap_or(""), reply["collection"]["path"].as_str().unwrap_or(""));
    }
    let job = b.wait_job(&job_id)?;
    print_job(&job, json)
}

pub fn collection_list(dirs: &Dirs, json: bool) -> anyhow::Result<ExitCode> {
    let list = Backend::open(dirs)?.call_ok(Request::ListCollections)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for c in list.as_array().into_iter().flatten() {
            println!("{:<20} {}", c["name"].as_str().unwrap_or(""), c["path"].as_str().unwrap_or(""));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn collection_remove(dirs: &Dirs, name: String) -> anyhow::Result<ExitCode> {
    let r = Backend::open(dirs)?.call_ok(Request::RemoveCollection { name })?;
    println!("removed {}", r["collection"].as_str().unwrap_or(""));
    Ok(ExitCode::SUCCESS)
}

pub fn update(dirs: &Dirs, collection: Option<String>, git_pull: bool, json: bool) -> anyhow::Result<ExitCode> {
    let mut b = Backend::open(dirs)?;
    let r = b.call_ok(Request::Sync { collection, git_pull: git_pull.then_some(true) })?;
    let id = r["jobId"].as_str().ok_or_else(|| anyhow!("no job id in the reply"))?.to_string();
    let job = b.wait_job(&id)?;
    print_job(&job, json)
}

/// Which retrieval a search command runs.
#[derive(Debug, Clone, Copy)]
pub enum SearchMode {
    Bm25,
    Vector,
    /// Hybrid; `expand` and `rerank` allow the generator and the cross-encoder.
    Hybrid { expand: bool, rerank: bool },
}

fn search_request(mode: SearchMode, query: String, limit: u32, collection: Option<&str>) -> Request {
    let search = SearchRequest {
        query,
        limit: limit.clamp(1, CLI_MAX_LIMIT),
        filters: SearchFilters { collection: collection.map(str::to_lowercase), ..Default::default() },
        ..Default::default()
    };
    match mode {
        SearchMode::Bm25 => Request::Search(search),
        SearchMode::Vector => Request::VectorSearch(search),
        SearchMode::Hybrid { expand, rerank } => {
            Request::Query(QueryRequest { search, no_expand: !expand, no_rerank: !rerank, ..Default::default() })
        }
    }
}

/// Embeds the backlog: in this process without a server, else waits for the server's
/// background embedding to drain it.
pub fn embed(dirs: &Dirs) -> anyhow::Result<ExitCode> {
    match Backend::open(dirs)? {
        Backend::Local(w) => {
            let n = w.embed_now().map_err(|e| anyhow!("embedding failed: {e}"))?;
            println!("embedded {n} documents' chunks");
        }
        Backend::Server { .. } => loop {
            let snap: Value = std::fs::read(dirs.status_file()).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
            let backlog = snap["embeddingBacklog"].as_u64().unwrap_or(0);
            if backlog == 0 {
                println!("embedding backlog is empty");
                break;
            }
            eprintln!("waiting for the server to embed {backlog} documents...");
            std::thread::sleep(std::time::Duration::from_secs(2));
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// `svc models list|use|pull|path`.
pub fn models(dirs: &Dirs, action: ModelsAction) -> anyhow::Result<ExitCode> {
    let mut b = Backend::open(dirs)?;
    match action {
        ModelsAction::List => {
            let r = b.call_ok(Request::ListPresets)?;
            for p in r["presets"].as_array().into_iter().flatten() {
                let mark = if p["active"] == true { "*" } else { " " };
                println!("{mark} {:<10} {}", p["id"].as_str().unwrap_or(""), p["name"].as_str().unwrap_or(""));
                for role in ["embed", "rerank", "gen"] {
                    println!("    {role:<7} {}", p[role].as_str().unwrap_or("-"));
                }
            }
        }
        ModelsAction::Use(id) => {
            let r = b.call_ok(Request::SetPreset { id })?;
            println!("active preset: {}", r["activePreset"].as_str().unwrap_or(""));
        }
        ModelsAction::Pull => {
            b.call_ok(Request::PullModels)?;
            loop {
                let s = b.call_ok(Request::ModelStatus)?;
                if s["active"] != true {
                    println!("completed: {}  failed: {}", s["completed"], s["failed"]);
                    break;
                }
                if let Some(p) = s["progress"].as_object() {
                    eprint!("\r{} {:>5.1}%", s["currentType"].as_str().unwrap_or(""), p.get("percent").and_then(Value::as_f64).unwrap_or(0.0));
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        }
        ModelsAction::Path => println!("{}", dirs.models_dir().display()),
    }
    Ok(ExitCode::SUCCESS)
}

pub enum ModelsAction {
    List,
    Use(String),
    Pull,
    Path,
}

pub fn search(dirs: &Dirs, mode: SearchMode, query: Option<String>, limit: u32, collection: Option<String>, json: bool, batch: bool) -> anyhow::Result<ExitCode> {
    let mut b = Backend::open(dirs)?;
    if batch {
        use std::io::Write;
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        for line in std::io::stdin().lock().lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let item: Value = serde_json::from_str(&line).context("each stdin line must be JSON {\"id\", \"query\"}")?;
            let q = item["query"].as_str().ok_or_else(|| anyhow!("missing query in {line}"))?.to_string();
            let results = match b.call(search_request(mode, q, limit, collection.as_deref()))? {
                Ok(v) => v["results"].clone(),
                Err(_) => Value::Array(Vec::new()),
            };
            writeln!(out, "{}", serde_json::json!({ "id": item["id"], "results": results }))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let q = query.ok_or_else(|| anyhow!("a query is required (or --batch)"))?;
    let r = b.call_ok(search_request(mode, q, limit, collection.as_deref()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        for (i, hit) in r["results"].as_array().into_iter().flatten().enumerate() {
            println!("{:>2}. {}  [{:.3}]", i + 1, hit["title"].as_str().unwrap_or(""), hit["score"].as_f64().unwrap_or(0.0));
            println!("    {}", hit["uri"].as_str().unwrap_or(""));
            let snip: String = hit["snippet"].as_str().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ");
            println!("    {}", snip.chars().take(160).collect::<String>());
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn get(dirs: &Dirs, reference: String, json: bool) -> anyhow::Result<ExitCode> {
    let r = if reference.starts_with("svc://") {
        DocRef { uri: Some(reference), docid: None }
    } else {
        DocRef { docid: Some(if reference.starts_with('#') { reference } else { format!("#{reference}") }), uri: None }
    };
    let doc = Backend::open(dirs)?.call_ok(Request::GetDoc(r))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", doc["content"].as_str().unwrap_or(""));
    }
    Ok(ExitCode::SUCCESS)
}
