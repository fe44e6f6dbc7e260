//! One function per CLI command.

use crate::backend::Backend;
use anyhow::{anyhow, bail, Context};
use gateway::bodies::{CaptureBody, CaptureSource, QueryBody, QueryOptions, SearchBody, StringList};
use protocol::api::{
    AuditResponse, CollectionAdded, CollectionInfo, CollectionRemoved, DocResponse, ExplainResponse, Job, JobStatus,
    ModelRole, PresetChanged, PresetsResponse, PullStarted, PullStatus, SearchResponse, SearchResult, StatusSnapshot,
    SyncStarted, WorkerFailure,
};
use protocol::{AddCollection, ApiError, Call, Dirs, DocRef, Request};
use serde::Serialize;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::process::ExitCode;

/// The CLI's own ceiling for `--limit` (the HTTP API caps search at 50).
const CLI_MAX_LIMIT: u32 = 1000;

/// `svc serve`: becomes `svc-server serve` when that binary is installed beside this one, so
/// the supervisor and the gateway run without the index code in memory; else this binary
/// plays every role.
pub fn serve(dirs: Dirs, port: u16, detach: bool, team: Option<(String, String)>) -> anyhow::Result<ExitCode> {
    // The worker joins the team the environment names (as `cluster` in index.yml would):
    // every process of the tree inherits it.
    if let Some((cluster, team)) = team {
        std::env::set_var("SVC_CLUSTER", cluster);
        std::env::set_var("SVC_TEAM", team);
    }
    let exe = std::env::current_exe().context("cannot locate the svc binary")?;
    let server = exe.with_file_name(supervisor::SERVER_BIN);
    if server.is_file() && speaks_our_protocol(&server) {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new(&server);
        cmd.arg("serve").arg("--port").arg(port.to_string()).arg("--worker-exe").arg(&exe);
        if detach {
            cmd.arg("--detach");
        }
        let err = cmd.exec();
        return Err(anyhow!(err).context(format!("cannot start {}", server.display())));
    }
    supervisor::serve(supervisor::ServeOptions { port, detach, dirs, gateway_exe: exe.clone(), worker_exe: exe })?;
    Ok(ExitCode::SUCCESS)
}

/// Whether `svc-server` was built with this binary's protocol (a stale one beside a fresh
/// `svc` would serve a gateway that cannot talk to the worker).
fn speaks_our_protocol(server: &std::path::Path) -> bool {
    let theirs = std::process::Command::new(server)
        .arg("protocol-version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.trim().parse::<u32>().ok());
    if theirs != Some(protocol::PROTOCOL_VERSION) {
        tracing::warn!(
            "{} speaks protocol {theirs:?}, svc speaks {}: running every role from svc (rebuild both binaries)",
            server.display(),
            protocol::PROTOCOL_VERSION
        );
        return false;
    }
    true
}

pub fn run_worker(dirs: Dirs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(worker::serve(dirs))?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_gateway(dirs: Dirs, port: u16, listen_fd: i32) -> anyhow::Result<ExitCode> {
    gateway::role::run_inherited(dirs, port, listen_fd)?;
    Ok(ExitCode::SUCCESS)
}

pub fn stop(dirs: &Dirs) -> anyhow::Result<ExitCode> {
    let Some(info) = supervisor::read_running(dirs) else {
        println!("svc is not running (data dir {})", dirs.data_dir.display());
        return Ok(ExitCode::SUCCESS);
    };
    let Some(pid) = info.process() else {
        bail!(
            "the pidfile of {} names pid {}, which is no server's process: nothing was signalled",
            dirs.data_dir.display(),
            info.pid
        )
    };
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM)
        .map_err(|e| anyhow!("cannot signal pid {}: {e}", info.pid))?;
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

/// The published status snapshot, if there is one.
pub(crate) fn read_snapshot(dirs: &Dirs) -> Option<StatusSnapshot> {
    std::fs::read(dirs.status_file()).ok().and_then(|b| serde_json::from_slice(&b).ok())
}

/// `svc status --json`
#[derive(Serialize)]
struct StatusOutput {
    running: bool,
    url: Option<String>,
    pid: Option<u32>,
    /// `null` before the worker published a snapshot.
    status: Option<StatusSnapshot>,
}

/// How a collection's folder is followed, for `svc status`.
fn watch_text(w: &protocol::api::FolderWatch) -> String {
    use protocol::api::FolderWatch;
    match w {
        FolderWatch::Watching => "watching".to_string(),
        FolderWatch::Polling { interval_ms, reason } => format!("polling every {} s: {reason}", interval_ms / 1000),
        FolderWatch::Off => "not watched".to_string(),
    }
}

pub fn status(dirs: &Dirs, json: bool) -> anyhow::Result<ExitCode> {
    let running = supervisor::read_running(dirs);
    let mut snapshot = read_snapshot(dirs);
    // A worker that keeps failing to start, recorded by the running supervisor.
    let failure = running.as_ref().and_then(|_| WorkerFailure::read(&dirs.worker_failure_file()));
    if let (Some(s), Some(f)) = (snapshot.as_mut(), failure.clone()) {
        s.worker = f.state();
        s.healthy = false;
    }
    if json {
        let out = StatusOutput {
            running: running.is_some(),
            url: running.as_ref().map(|r| r.url.clone()),
            pid: running.as_ref().map(|r| r.pid),
            status: snapshot,
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        match &running {
            Some(r) => println!("svc is running at {} (pid {})", r.url, r.pid),
            None => println!("svc is not running"),
        }
        println!("data: {}", dirs.index_dir().display());
        if let Some(f) = &failure {
            println!("worker: {f}");
        }
        if let Some(s) = &snapshot {
            println!("documents: {}  chunks: {}", s.total_documents, s.total_chunks);
            if let Some(c) = &s.cluster {
                println!(
                    "team: {} as {} ({}): stream at {}, applied {}, lag {}; servers {}",
                    c.team,
                    c.member,
                    if c.connected { "connected" } else { "not connected" },
                    c.stream_seq,
                    c.applied_seq,
                    c.lag,
                    c.servers.join(", ")
                );
                if let Some(e) = &c.error {
                    println!("team: {e}");
                }
                if c.vectors_sent + c.vectors_received > 0 {
                    println!(
                        "team: vectors sent for {} documents, taken from the team for {} (not embedded here)",
                        c.vectors_sent, c.vectors_received
                    );
                }
                for m in &c.members {
                    println!("  member {} last seen {}", m.name, m.last_seen);
                }
            }
            // Long work made visible: vectors are computed in the background after a sync,
            // and until then answers and hybrid search rest on keywords for those documents.
            match s.embedding_backlog {
                0 => {}
                n => println!(
                    "vectors: {n} document{} waiting to be embedded{}",
                    if n == 1 { "" } else { "s" },
                    s.embedding_rate.map(|rate| embedding_pace(n, rate)).unwrap_or_default()
                ),
            }
            match s.ocr_backlog {
                0 => {}
                n => println!("pictures: {n} waiting for their text to be read (OCR)"),
            }
            match s.keyword_backlog {
                0 => {}
                n => println!(
                    "keywords: {n} document{} still to be re-indexed (searches find the others meanwhile)",
                    if n == 1 { "" } else { "s" }
                ),
            }
            for c in &s.collections {
                // The last worker's word on its folders holds only while it runs.
                let watch = if running.is_some() { format!("  [{}]", watch_text(&c.watch)) } else { String::new() };
                println!("  {:<20} {} docs  {}{watch}", c.name, c.document_count, c.path);
            }
        }
    }
    Ok(if running.is_some() { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

/// " (12.5 a second, about 3 min left)": the embedding run's pace and what it leaves.
fn embedding_pace(backlog: u64, per_second: f64) -> String {
    if per_second <= 0.0 {
        return String::new();
    }
    let secs = (backlog as f64 / per_second).ceil() as u64;
    let left = match secs {
        0..=59 => format!("{secs} s"),
        60..=5_399 => format!("{} min", secs.div_ceil(60)),
        _ => format!("{:.1} h", secs as f64 / 3600.0),
    };
    format!(" ({per_second:.1} a second, about {left} left)")
}

pub(crate) fn print_job(job: &Job, json: bool) -> anyhow::Result<ExitCode> {
    let completed = job.status == JobStatus::Completed;
    if json {
        println!("{}", serde_json::to_string_pretty(job)?);
    } else if completed {
        let r = job.result.clone().unwrap_or_default();
        println!(
            "indexed: {} files ({} added, {} updated, {} errored, {} skipped) in {} ms",
            r.total_files_processed,
            r.total_files_added,
            r.total_files_updated,
            r.total_files_errored,
            r.total_files_skipped,
            r.total_duration_ms
        );
    } else {
        println!("job \"{}\": {}", job.status.as_str(), job.error.as_deref().unwrap_or(""));
    }
    Ok(if completed { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[allow(clippy::too_many_arguments)]
/// Adds the folder `path` as a collection as `req` says (its `path` is set from `path`).
pub fn collection_add(
    dirs: &Dirs,
    path: std::path::PathBuf,
    req: AddCollection,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let abs = std::path::absolute(&path).with_context(|| format!("bad path {}", path.display()))?;
    let mut b = Backend::open(dirs)?;
    let path = abs.to_str().ok_or_else(|| anyhow!("the path is not valid UTF-8"))?.to_string();
    let (_, job) = add_and_index(&mut b, AddCollection { path, ..req }, json)?;
    let code = print_job(&job, json)?;
    if !json {
        vectors_pending(dirs);
    }
    Ok(code)
}

/// Adds a collection and waits for its first index (saying so unless `json`): its name, and
/// the job as it ended.
pub(crate) fn add_and_index(b: &mut Backend, req: AddCollection, json: bool) -> anyhow::Result<(String, Job)> {
    let reply: CollectionAdded = b.call_ok(req)?;
    if !json {
        println!("added collection {} ({})", reply.collection.name, reply.collection.path);
    }
    let job = b.wait_job(&reply.job_id)?;
    Ok((reply.collection.name, job))
}

pub fn collection_list(dirs: &Dirs, json: bool) -> anyhow::Result<ExitCode> {
    let list: Vec<CollectionInfo> = Backend::open(dirs)?.call_ok(protocol::ListCollections)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for c in &list {
            println!("{:<20} {}", c.name, c.path);
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn collection_remove(dirs: &Dirs, name: String) -> anyhow::Result<ExitCode> {
    let name = gateway::bodies::collection(&name)?;
    let r: CollectionRemoved = Backend::open(dirs)?.call_ok(protocol::RemoveCollection { name })?;
    println!("removed {}", r.collection);
    Ok(ExitCode::SUCCESS)
}

pub fn update(dirs: &Dirs, collection: Option<String>, git_pull: bool, json: bool) -> anyhow::Result<ExitCode> {
    let collection = collection.as_deref().map(gateway::bodies::collection).transpose()?;
    let mut b = Backend::open(dirs)?;
    let r: SyncStarted = b.call_ok(protocol::SyncCollections { collection, git_pull: git_pull.then_some(true) })?;
    let job = b.wait_job(&r.job_id)?;
    let code = print_job(&job, json)?;
    if !json {
        vectors_pending(dirs);
    }
    Ok(code)
}

/// Which retrieval a search command runs.
#[derive(Debug, Clone, Copy)]
pub enum SearchMode {
    Bm25,
    Vector,
    /// Hybrid; `expand` and `rerank` allow the generator and the cross-encoder.
    Hybrid {
        expand: bool,
        rerank: bool,
    },
}

/// The worker's request for a search from the command line, through the same body types (and
/// so the same checks and defaults) as `/api/search`, `/api/vsearch` and `/api/query`; only the
/// largest `limit` is the CLI's own.
pub(crate) fn search_request(
    mode: SearchMode,
    query: String,
    limit: u32,
    collection: Option<&str>,
) -> Result<AnySearch, ApiError> {
    let search = SearchBody {
        query: Some(query),
        limit: Some(i64::from(limit)),
        collection: collection.map(str::to_string),
        ..Default::default()
    };
    Ok(match mode {
        SearchMode::Bm25 => AnySearch(Request::Search(search.into_request(SearchBody::DEFAULT_LIMIT, CLI_MAX_LIMIT)?)),
        SearchMode::Vector => AnySearch(Request::VectorSearch(protocol::VectorSearch(
            search.into_request(SearchBody::DEFAULT_LIMIT, CLI_MAX_LIMIT)?,
        ))),
        SearchMode::Hybrid { expand, rerank } => {
            let options = QueryOptions { no_expand: Some(!expand), no_rerank: Some(!rerank), ..Default::default() };
            AnySearch(Request::Query(
                QueryBody { search, options }.into_request_within(QueryBody::DEFAULT_LIMIT, CLI_MAX_LIMIT)?,
            ))
        }
    })
}

/// A keyword, vector or hybrid search: the three are answered by a [`SearchResponse`]. Only
/// [`search_request`] makes one, from one of those three requests.
pub(crate) struct AnySearch(Request);

impl From<AnySearch> for Request {
    fn from(s: AnySearch) -> Self {
        s.0
    }
}

impl Call for AnySearch {
    type Reply = SearchResponse;
}

/// Embeds the backlog: in this process without a server, else waits for the server's
/// background embedding to drain it.
pub fn embed(dirs: &Dirs, texts: bool) -> anyhow::Result<ExitCode> {
    match Backend::open(dirs)? {
        Backend::Local(w) if texts => {
            let mut out = std::io::stdout().lock();
            for text in w.embedding_texts().map_err(|e| anyhow!("reading the chunks failed: {e}"))? {
                writeln!(out, "{}", serde_json::to_string(&text)?)?;
            }
        }
        Backend::Server { .. } if texts => bail!("svc embed --texts reads the index itself: stop the server first"),
        Backend::Local(w) => {
            let n = w.embed_now().map_err(|e| anyhow!("embedding failed: {e}"))?;
            println!("embedded {n} documents' chunks");
        }
        Backend::Server { .. } => follow_embedding(dirs)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Follows the server's background embedding until its backlog is empty: a progress bar with
/// counts, rate and ETA on a terminal, a plain line every two seconds otherwise. Ctrl-C ends
/// the wait, not the work (the server goes on).
fn follow_embedding(dirs: &Dirs) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let backlog = || read_snapshot(dirs).map_or(0, |s| s.embedding_backlog);
    let mut total = backlog();
    let bar = (total > 0 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} documents embedded, {per_sec}, ETA {eta}")
        {
            bar.set_style(style);
        }
        bar
    });
    loop {
        let left = backlog();
        // Documents synced meanwhile join the backlog: the total grows with them.
        total = total.max(left);
        match &bar {
            Some(bar) => {
                bar.set_length(total);
                bar.set_position(total - left);
            }
            None if left > 0 => eprintln!("waiting for the server to embed {left} documents..."),
            None => {}
        }
        if left == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(if bar.is_some() { 1 } else { 2 }));
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    println!("embedding backlog is empty");
    Ok(())
}

/// After an indexing job: the documents whose vectors the server still computes, so a user
/// knows answers and hybrid search are not yet at full strength for them. On a terminal the
/// command follows them with a progress bar until they are done (Ctrl-C ends the wait, not
/// the work); a script gets the count in one line and the command returns.
pub(crate) fn vectors_pending(dirs: &Dirs) {
    use std::io::IsTerminal;
    if let Some(s) = read_snapshot(dirs).filter(|s| s.capabilities.vector && s.embedding_backlog > 0) {
        if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() && follow_embedding(dirs).is_ok() {
            return;
        }
        println!(
            "vectors: {} documents are being embedded in the background (`svc embed` follows them)",
            s.embedding_backlog
        );
    }
}

/// `svc models list|use|pull|path`.
pub fn models(dirs: &Dirs, action: ModelsAction) -> anyhow::Result<ExitCode> {
    let mut b = Backend::open(dirs)?;
    match action {
        ModelsAction::List => {
            let r: PresetsResponse = b.call_ok(protocol::ListPresets)?;
            for p in &r.presets {
                let mark = if p.active { "*" } else { " " };
                println!("{mark} {:<10} {}", p.id, p.name);
                for role in ModelRole::ALL {
                    println!("    {:<7} {}", role.as_str(), p.model(role).unwrap_or("-"));
                }
            }
        }
        ModelsAction::Use(id) => {
            let r: PresetChanged = b.call_ok(protocol::SetPreset { id })?;
            println!("active preset: {}", r.active_preset);
        }
        ModelsAction::Pull => {
            let _: PullStarted = b.call_ok(protocol::PullModels)?;
            loop {
                let s: PullStatus = b.call_ok(protocol::GetModelStatus)?;
                if !s.active {
                    println!(
                        "completed: {}  failed: {}",
                        serde_json::to_string(&s.completed)?,
                        serde_json::to_string(&s.failed)?
                    );
                    break;
                }
                if let Some(p) = &s.progress {
                    eprint!("\r{} {:>5.1}%", s.current_type.map_or("", ModelRole::as_str), p.percent);
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

/// One line of `svc search --batch`: the input line's `id` and its results, or the error
/// envelope's body of a query that failed (then `results` is empty).
#[derive(Serialize)]
struct BatchLine {
    id: Value,
    results: Vec<SearchResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<protocol::ErrorBody>,
}

pub fn search(
    dirs: &Dirs,
    mode: SearchMode,
    query: Option<String>,
    limit: u32,
    collection: Option<String>,
    json: bool,
    batch: bool,
) -> anyhow::Result<ExitCode> {
    let collection = collection.as_deref().map(gateway::bodies::collection).transpose()?;
    let mut b = Backend::open(dirs)?;
    if batch {
        use std::io::Write;
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let mut failed = 0usize;
        for line in std::io::stdin().lock().lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let item: Value =
                serde_json::from_str(&line).context("each stdin line must be JSON {\"id\", \"query\"}")?;
            let q = item["query"].as_str().ok_or_else(|| anyhow!("missing query in {line}"))?.to_string();
            // A query the body refuses is that line's error, like one the worker refuses.
            let reply = match search_request(mode, q, limit, collection.as_deref()) {
                Ok(request) => b.call(request)?,
                Err(e) => Err(e),
            };
            let (results, error) = match reply {
                Ok(r) => (r.results, None),
                Err(e) => {
                    failed += 1;
                    (Vec::new(), Some(e.to_envelope().error))
                }
            };
            writeln!(out, "{}", serde_json::to_string(&BatchLine { id: item["id"].clone(), results, error })?)?;
        }
        if failed > 0 {
            eprintln!(
                "svc search --batch: {failed} quer{} failed (see each line's error)",
                if failed == 1 { "y" } else { "ies" }
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let q = query.ok_or_else(|| anyhow!("a query is required (or --batch)"))?;
    let r: SearchResponse = b.call_ok(search_request(mode, q, limit, collection.as_deref())?)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        for (i, hit) in r.results.iter().enumerate() {
            println!("{:>2}. {}  [{:.3}]", i + 1, hit.title, f64::from(hit.score));
            match &hit.symbol {
                Some(symbol) => println!("    {}  ({symbol})", hit.uri),
                None => println!("    {}", hit.uri),
            }
            let snip: String = hit.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
            println!("    {}", snip.chars().take(160).collect::<String>());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A document named on the command line: a `svc://` URI, or a docid with or without `#`.
pub fn doc_ref(reference: String) -> anyhow::Result<DocRef> {
    Ok(DocRef::parse(&reference)?)
}

pub fn get(dirs: &Dirs, reference: String, json: bool) -> anyhow::Result<ExitCode> {
    let doc: DocResponse = Backend::open(dirs)?.call_ok(protocol::GetDoc { doc: doc_ref(reference)? })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", doc.content);
    }
    Ok(ExitCode::SUCCESS)
}

/// What `svc capture` was given.
pub struct CaptureArgs {
    pub text: Option<String>,
    pub collection: Option<String>,
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub url: Option<String>,
}

/// `svc capture`: a note with provenance through the same body (so the same checks and
/// defaults) as `POST /api/capture`; prints its URI (or the reply with `--json`) once it is
/// searchable.
pub fn capture(dirs: &Dirs, args: CaptureArgs, json: bool) -> anyhow::Result<ExitCode> {
    let content = match args.text.as_deref() {
        None | Some("-") => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).context("cannot read standard input")?;
            text
        }
        Some(text) => text.to_string(),
    };
    let mut backend = Backend::open(dirs)?;
    let collection = match args.collection {
        Some(c) => c,
        None => {
            let list: Vec<CollectionInfo> = backend.call_ok(protocol::ListCollections)?;
            match list.as_slice() {
                [only] => only.name.clone(),
                [] => bail!("no collection to capture into: add a folder first (svc collection add PATH)"),
                many => {
                    let names: Vec<&str> = many.iter().map(|c| c.name.as_str()).collect();
                    bail!("which collection? --collection one of {}", names.join(", "))
                }
            }
        }
    };
    let body = CaptureBody {
        collection: Some(collection),
        content: Some(content),
        title: args.title,
        tags: (!args.tags.is_empty()).then_some(StringList(args.tags)),
        source: args.url.map(|url| CaptureSource { url: Some(url), ..Default::default() }),
        ..Default::default()
    };
    let reply = backend.call_ok(body.into_request()?)?;
    if let Some(job) = reply.sync.job_id.as_deref() {
        backend.wait_job(job)?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&reply)?);
    } else {
        let how = if reply.opened_existing { "already there" } else { "captured" };
        println!("{} ({how}: {})", reply.uri, reply.abs_path);
    }
    Ok(ExitCode::SUCCESS)
}

/// `svc explain PATH`: the verdict in a sentence (and the rule's fields), or the reply as JSON.
/// Exits 0 when the file is indexed, 1 otherwise.
pub fn explain(dirs: &Dirs, path: &str, json: bool) -> anyhow::Result<ExitCode> {
    let target = if path.starts_with("svc://") {
        protocol::Explain::Uri(path.to_string())
    } else {
        let abs = std::path::absolute(path).with_context(|| format!("{path} cannot be made absolute"))?;
        let abs = abs.to_str().ok_or_else(|| anyhow!("{} is not valid UTF-8", abs.display()))?;
        protocol::Explain::Path(abs.to_string())
    };
    let r: ExplainResponse = Backend::open(dirs)?.call_ok(target)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("{}", r.message);
        if let Some(uri) = &r.uri {
            println!("  uri      {uri}");
        }
        if let Some(rule) = &r.rule {
            println!("  rule     {}", serde_json::to_value(rule.kind)?.as_str().unwrap_or(""));
            for (name, value) in [("source", &rule.source), ("pattern", &rule.pattern), ("detail", &rule.detail)] {
                if let Some(v) = value {
                    println!("  {name:<8} {v}");
                }
            }
            if let Some(line) = rule.line {
                println!("  line     {line}");
            }
        }
    }
    Ok(if r.indexed { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `svc audit`: the counts of each kind, then the findings listed, a line each (or the reply
/// as JSON). Exits 1 when a finding is an error or a warning.
pub fn audit(dirs: &Dirs, collection: Option<&str>, limit: u32, json: bool) -> anyhow::Result<ExitCode> {
    if !(1..=protocol::Audit::MAX_LIMIT).contains(&limit) {
        bail!("--limit must be between 1 and {}", protocol::Audit::MAX_LIMIT);
    }
    let collection = collection.map(protocol::CollectionName::parse).transpose()?;
    let r: AuditResponse = Backend::open(dirs)?.call_ok(protocol::Audit { collection, limit })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        for c in r.counts.iter().filter(|c| c.count > 0) {
            let more = if c.listed < c.count { format!(" ({} listed)", c.listed) } else { String::new() };
            println!("{:<16} {:>6}{more}", c.kind.name(), c.count);
        }
        if r.counts.iter().all(|c| c.count == 0) {
            println!("no findings");
        }
        for f in &r.findings {
            let at = f.line.map(|l| format!(":{l}")).unwrap_or_default();
            println!("{:<16} {}/{}{at}  {}", f.kind.name(), f.collection, f.path, f.message);
        }
        if !r.vectors_checked {
            println!("(vectors not checked: no embedding model is loaded)");
        }
        if r.walk_truncated {
            println!("(the walk for left-out files stopped at its bound)");
        }
    }
    Ok(if r.clean { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[cfg(test)]
mod tests {
    use super::embedding_pace;

    #[test]
    fn the_embedding_pace_says_what_is_left() {
        assert_eq!(embedding_pace(1000, 12.5), " (12.5 a second, about 2 min left)");
        assert_eq!(embedding_pace(30, 100.0), " (100.0 a second, about 1 s left)");
        assert_eq!(embedding_pace(100_000, 10.0), " (10.0 a second, about 2.8 h left)");
        assert_eq!(embedding_pace(10, 0.0), "");
    }
}
