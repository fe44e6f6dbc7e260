//! `svc`: command-line parsing and dispatch. The work lives in the library crates.

mod ask;
mod backend;
mod changes;
mod commands;
mod context;
mod mcp;
mod mcp_backend;
mod setup;
mod skill;

use clap::{Parser, Subcommand};
use commands::{ModelsAction, SearchMode};
use gateway::connectors::McpClient;
use std::process::ExitCode;

/// The allocator of every `svc` process, the worker's above all: a first index allocates and
/// frees per token, per note and per batch on three threads, and glibc's malloc took a tenth
/// of its CPU (docs/dependencies.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e` of mimalloc 3's `mimalloc.h`
/// (`libmimalloc-sys` names the options of mimalloc 2 only).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps memory freed before it gives it back to the system (ms). Its default,
/// a second, left the worker holding 1.47x glibc's resident memory after the 2,000-note bench;
/// at once (0), each write paid for giving back its buffers (write -> searchable 1.26x); at 100
/// ms, resident memory 1.09x and 1.24x in two runs, write -> searchable 1.03x and 0.67x
/// (docs/benchmarks.md, stop 79).
const PURGE_DELAY_MS: std::os::raw::c_long = 100;

/// Memory freed goes back to the system after [`PURGE_DELAY_MS`].
fn return_freed_memory_soon() {
    // SAFETY: mi_option_set takes two integers and touches no memory of ours; it is called
    // first thing in `main`, before any other thread exists.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS)
    };
}

#[derive(Parser)]
#[command(name = "svc", version, about = "A local knowledge index for folders of notes")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start the server (supervisor, gateway and worker) on 127.0.0.1.
    Serve {
        #[arg(long, default_value_t = 3000)]
        port: u16,
        /// Run in the background; returns once /api/health answers.
        #[arg(long)]
        detach: bool,
        /// Join a team: its NATS JetStream cluster's servers, comma-separated
        /// (`nats://host:4222`, `tls://host:4222`); credentials from SVC_CLUSTER_USER and
        /// SVC_CLUSTER_PASSWORD, or SVC_CLUSTER_CREDS. The same as `cluster` in index.yml.
        #[arg(long, value_name = "URL[,URL...]", requires = "team")]
        cluster: Option<String>,
        /// The team to join (with --cluster).
        #[arg(long, value_name = "NAME", requires = "cluster")]
        team: Option<String>,
    },
    /// Stop the server of this data dir.
    Stop,
    /// Show the server and index status.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Manage collections (folders of notes).
    #[command(subcommand)]
    Collection(CollectionCmd),
    /// Re-index all collections, or one.
    Update {
        #[arg(long)]
        collection: Option<String>,
        /// Run `git pull --ff-only` first in folders that are git repos.
        #[arg(long)]
        git_pull: bool,
        #[arg(long)]
        json: bool,
    },
    /// Keyword (BM25) search.
    Search(SearchArgs),
    /// Vector search (needs the embedding model and embedded documents).
    Vsearch(SearchArgs),
    /// Hybrid search: BM25 and vectors fused, reranked when a reranker is installed.
    Query {
        #[command(flatten)]
        args: SearchArgs,
        /// Generate query variants with the local generator (off by default: see
        /// docs/retrieval.md for what it costs and gains).
        #[arg(long)]
        expand: bool,
        /// Accepted for older scripts; expansion is off unless --expand.
        #[arg(long, hide = true, conflicts_with = "expand")]
        no_expand: bool,
        /// Do not rerank with the cross-encoder.
        #[arg(long)]
        no_rerank: bool,
    },
    /// Answer a question from the notes with the local generator, citing its sources.
    /// The answer is printed as it is generated; `--json` prints the whole reply at the end.
    Ask {
        question: String,
        /// Results listed with the reply (sources are chosen from the best 12).
        #[arg(long, default_value_t = 5)]
        limit: u32,
        #[arg(long)]
        collection: Option<String>,
        #[arg(long, default_value_t = 512)]
        max_answer_tokens: u32,
        /// Show the answer only when every claim is supported by the notes (else abstain).
        #[arg(long)]
        verify: bool,
        #[arg(long)]
        json: bool,
    },
    /// Embed the documents that have no vectors yet.
    Embed {
        /// Embed nothing: print the text the embedder reads for each chunk of the active
        /// documents, a JSON string a line (for benchmarks against plain ONNX Runtime).
        #[arg(long)]
        texts: bool,
    },
    /// Model presets and files.
    #[command(subcommand)]
    Models(ModelsCmd),
    /// Whether a file is indexed and, if not, the one rule that left it out (an ignore file's
    /// line, a CACHEDIR.TAG, a glob, the size limit, the format, a parse error).
    Explain {
        /// A path (relative to this folder, or absolute) or a `svc://` URI.
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Read-only findings over the index and its folders: unreadable files, links to nothing,
    /// anchors to missing headings, ambiguous note names, files whose index differs from the
    /// disk, documents without vectors, what the rules leave out. Exits 1 when a finding is
    /// an error or a warning.
    Audit {
        /// Only this collection.
        #[arg(long, short)]
        collection: Option<String>,
        /// Findings of each kind listed (1-1000).
        #[arg(long, default_value_t = protocol::Audit::DEFAULT_LIMIT)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Print a document by `svc://` URI or docid.
    Get {
        reference: String,
        #[arg(long)]
        json: bool,
    },
    /// Save a note with provenance (never overwrites a file): TEXT, or standard input when
    /// TEXT is omitted or `-`.
    Capture {
        text: Option<String>,
        /// The collection to write to (default: the only one there is).
        #[arg(long)]
        collection: Option<String>,
        #[arg(long)]
        title: Option<String>,
        /// A tag (repeatable).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Where the text comes from (recorded as `source.url`).
        #[arg(long)]
        url: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Make FOLDER a collection and prove it: its first index, then a word of one of its notes
    /// searched until keyword search finds that note (printed), then the embedding backlog.
    /// Exit code 1, with the reason, when it cannot be proved.
    Setup { folder: std::path::PathBuf },
    /// Check what svc needs, each with what to do: the data dir, the server and its port, the
    /// models and ONNX Runtime, the collections' folders and their watchers.
    Doctor {
        #[arg(long)]
        json: bool,
    },
    /// The agent skill that teaches Claude Code, Codex and OpenCode svc's commands.
    #[command(subcommand)]
    Skill(SkillCmd),
    /// Changes to documents, oldest first (`--since` an ISO date or a cursor from an earlier call).
    Changes {
        #[arg(long)]
        since: Option<String>,
        #[arg(long)]
        collection: Option<String>,
        #[arg(long, default_value_t = protocol::ChangesQuery::DEFAULT_LIMIT)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// A document's newest change (or `--change ID`): identity, hashes and structure.
    Diff {
        reference: String,
        #[arg(long)]
        change: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The notes that link to a note, directly or through others.
    Impact {
        reference: String,
        #[arg(long, default_value_t = protocol::ImpactBounds::DEFAULT.max_depth)]
        max_depth: u32,
        #[arg(long)]
        json: bool,
    },
    /// Context Capsules: build, verify, and saved capsules re-verified after changes.
    #[command(subcommand)]
    Context(ContextCmd),
    /// The MCP server on stdio for agents, and wiring it into their clients (Claude Desktop,
    /// Cursor, Codex, Claude Code, Zed, Windsurf, VS Code, OpenCode, Amp, LM Studio, LibreChat,
    /// Gemini CLI): `svc mcp install --client cursor`.
    Mcp {
        #[command(subcommand)]
        action: Option<McpCmd>,
        /// Offer the write tools (svc_capture, svc_create, svc_update).
        #[arg(long)]
        enable_write: bool,
    },
    /// Process roles started by the supervisor (not for direct use).
    #[command(subcommand, hide = true)]
    Internal(InternalCmd),
}

/// What every search command takes.
#[derive(clap::Args)]
struct SearchArgs {
    /// The query; omit with --batch.
    query: Option<String>,
    #[arg(long, default_value_t = 10)]
    limit: u32,
    #[arg(long)]
    collection: Option<String>,
    #[arg(long)]
    json: bool,
    /// Read JSON lines `{"id","query"}` on stdin; write one JSON line per query.
    #[arg(long)]
    batch: bool,
}

#[derive(Subcommand)]
enum CollectionCmd {
    /// Add a folder and index it.
    Add {
        path: std::path::PathBuf,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        pattern: Option<String>,
        #[arg(long)]
        include: Option<String>,
        #[arg(long)]
        exclude: Option<String>,
        #[arg(long)]
        git_pull: bool,
        /// Do not follow the folder's changes as they happen (a slow network mount): only
        /// `svc update` picks them up.
        #[arg(long)]
        no_watch: bool,
        /// The language the notes are written in (`de`, `fr`, `German`...), for keyword
        /// search's stems; a note's front-matter `lang` wins.
        #[arg(long)]
        lang: Option<String>,
        /// Share it with the team the running server joined (`svc serve --cluster … --team …`).
        #[arg(long)]
        shared: bool,
        #[arg(long)]
        json: bool,
    },
    /// List collections.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a collection from the index (its files are untouched).
    Remove { name: String },
}

#[derive(Subcommand)]
enum ContextCmd {
    /// Compile a capsule of exact indexed evidence for a goal.
    Build {
        goal: String,
        /// Tokens for the whole payload.
        #[arg(long)]
        budget: u64,
        /// fast (keywords), balanced (hybrid when vectors exist) or thorough.
        #[arg(long, default_value = "balanced", value_parser = depth_policy)]
        depth: protocol::DepthPolicy,
        /// The readable form (each evidence block fenced).
        #[arg(long)]
        md: bool,
        #[arg(long)]
        json: bool,
    },
    /// Verify a capsule kept in FILE (`-` for standard input).
    Verify {
        file: String,
        #[arg(long)]
        md: bool,
        #[arg(long)]
        json: bool,
    },
    /// Save a capsule (FILE or `-`): it is verified again whenever its evidence changes,
    /// and `capsule-reverified` is announced on /api/events.
    Add {
        file: String,
        #[arg(long)]
        label: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List saved capsules with their last re-verification.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Forget a saved capsule.
    Rm { id: String },
}

#[derive(Subcommand)]
enum McpCmd {
    /// Add svc to a client's MCP configuration (the rest of the file is kept).
    Install {
        /// claude-desktop, cursor, codex, claude-code, zed, windsurf, vscode, opencode, amp,
        /// lm-studio, librechat (the `librechat.yaml` of the current directory) or gemini-cli.
        #[arg(long, value_parser = mcp_client)]
        client: McpClient,
        /// Print the entry instead of writing it.
        #[arg(long)]
        print: bool,
        /// The entry starts svc with the write tools.
        #[arg(long)]
        enable_write: bool,
    },
    /// Remove svc from a client's MCP configuration.
    Uninstall {
        #[arg(long, value_parser = mcp_client)]
        client: McpClient,
    },
    /// Which clients have svc configured, and where.
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum SkillCmd {
    /// Write the skill (`svc/SKILL.md`) where each agent reads skills.
    Install {
        /// claude-code, codex, opencode or all.
        #[arg(long, value_parser = skill::targets)]
        target: skill::Targets,
        /// user (every project) or project (the current directory's).
        #[arg(long, default_value = "user", value_parser = skill_scope)]
        scope: skill::Scope,
    },
    /// Print the skill and where each agent reads it.
    Show {
        #[arg(long, default_value = "user", value_parser = skill_scope)]
        scope: skill::Scope,
    },
    /// Remove the skill.
    Uninstall {
        #[arg(long, value_parser = skill::targets)]
        target: skill::Targets,
        #[arg(long, default_value = "user", value_parser = skill_scope)]
        scope: skill::Scope,
    },
}

fn skill_scope(s: &str) -> Result<skill::Scope, String> {
    skill::Scope::parse(s).ok_or_else(|| format!("unknown scope '{s}' (user or project)"))
}

#[derive(Subcommand)]
enum ModelsCmd {
    /// List presets and their models.
    List,
    /// Make a preset active.
    Use { id: String },
    /// Download the active preset's missing files from the hub (SVC_HF_ENDPOINT).
    Pull,
    /// Print the model cache directory.
    Path,
}

#[derive(Subcommand)]
enum InternalCmd {
    Worker,
    Gateway {
        #[arg(long)]
        port: u16,
        #[arg(long, default_value_t = 3)]
        listen_fd: i32,
    },
}

/// `--depth`: a capsule's depth policy.
fn depth_policy(raw: &str) -> Result<protocol::DepthPolicy, String> {
    protocol::DepthPolicy::parse(raw).ok_or_else(|| "fast, balanced or thorough".to_string())
}

/// `--client`: an MCP client svc knows how to configure.
fn mcp_client(raw: &str) -> Result<McpClient, String> {
    McpClient::from_id(raw).ok_or_else(|| {
        let ids: Vec<&str> = McpClient::ALL.iter().map(|c| c.id()).collect();
        format!("one of {}", ids.join(", "))
    })
}

fn main() -> ExitCode {
    return_freed_memory_soon();
    let cli = Cli::parse();
    let dirs = protocol::Dirs::from_env();
    let result = match cli.command {
        Cmd::Serve { port, detach, cluster, team } => {
            supervisor::init_logging("info");
            commands::serve(dirs, port, detach, cluster.zip(team))
        }
        Cmd::Internal(InternalCmd::Worker) => {
            supervisor::init_logging("info");
            commands::run_worker(dirs)
        }
        Cmd::Internal(InternalCmd::Gateway { port, listen_fd }) => {
            supervisor::init_logging("info");
            commands::run_gateway(dirs, port, listen_fd)
        }
        Cmd::Mcp { action: None, enable_write } => {
            // stdout carries the protocol: logs go to stderr (init_logging writes there).
            supervisor::init_logging("warn");
            mcp::serve(dirs, enable_write)
        }
        other => {
            supervisor::init_logging("warn");
            dispatch(other, dirs)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cmd: Cmd, dirs: protocol::Dirs) -> anyhow::Result<ExitCode> {
    match cmd {
        Cmd::Stop => commands::stop(&dirs),
        Cmd::Status { json } => commands::status(&dirs, json),
        Cmd::Collection(CollectionCmd::Add {
            path,
            name,
            pattern,
            include,
            exclude,
            git_pull,
            no_watch,
            lang,
            shared,
            json,
        }) => {
            let req = protocol::AddCollection {
                path: String::new(),
                name,
                pattern,
                include,
                exclude,
                git_pull,
                watch: no_watch.then_some(false),
                lang,
                shared,
            };
            commands::collection_add(&dirs, path, req, json)
        }
        Cmd::Collection(CollectionCmd::List { json }) => commands::collection_list(&dirs, json),
        Cmd::Collection(CollectionCmd::Remove { name }) => commands::collection_remove(&dirs, name),
        Cmd::Update { collection, git_pull, json } => commands::update(&dirs, collection, git_pull, json),
        Cmd::Search(a) => search(&dirs, SearchMode::Bm25, a),
        Cmd::Vsearch(a) => search(&dirs, SearchMode::Vector, a),
        Cmd::Query { args, expand, no_expand: _, no_rerank } => {
            search(&dirs, SearchMode::Hybrid { expand, rerank: !no_rerank }, args)
        }
        Cmd::Ask { question, limit, collection, max_answer_tokens, verify, json } => {
            ask::ask(&dirs, ask::AskArgs { question, limit, collection, max_answer_tokens, verify, json })
        }
        Cmd::Embed { texts } => commands::embed(&dirs, texts),
        Cmd::Models(m) => commands::models(
            &dirs,
            match m {
                ModelsCmd::List => ModelsAction::List,
                ModelsCmd::Use { id } => ModelsAction::Use(id),
                ModelsCmd::Pull => ModelsAction::Pull,
                ModelsCmd::Path => ModelsAction::Path,
            },
        ),
        Cmd::Get { reference, json } => commands::get(&dirs, reference, json),
        Cmd::Capture { text, collection, title, tags, url, json } => {
            commands::capture(&dirs, commands::CaptureArgs { text, collection, title, tags, url }, json)
        }
        Cmd::Setup { folder } => setup::setup(&dirs, folder),
        Cmd::Doctor { json } => setup::doctor(&dirs, json),
        Cmd::Skill(SkillCmd::Install { target, scope }) => skill::install(&target, scope),
        Cmd::Skill(SkillCmd::Show { scope }) => skill::show(scope),
        Cmd::Skill(SkillCmd::Uninstall { target, scope }) => skill::uninstall(&target, scope),
        Cmd::Explain { path, json } => commands::explain(&dirs, &path, json),
        Cmd::Audit { collection, limit, json } => commands::audit(&dirs, collection.as_deref(), limit, json),
        Cmd::Context(ContextCmd::Build { goal, budget, depth, md, json }) => {
            context::build(&dirs, goal, budget, depth, md, json)
        }
        Cmd::Context(ContextCmd::Verify { file, md, json }) => context::verify(&dirs, &file, md, json),
        Cmd::Context(ContextCmd::Add { file, label, json }) => context::add(&dirs, &file, label, json),
        Cmd::Context(ContextCmd::List { json }) => context::list(&dirs, json),
        Cmd::Context(ContextCmd::Rm { id }) => context::remove(&dirs, id),
        Cmd::Changes { since, collection, limit, json } => changes::changes(&dirs, since, collection, limit, json),
        Cmd::Diff { reference, change, json } => changes::diff(&dirs, reference, change, json),
        Cmd::Impact { reference, max_depth, json } => changes::impact(&dirs, reference, max_depth, json),
        Cmd::Mcp { action: Some(McpCmd::Install { client, print, enable_write }), .. } => {
            mcp::install(&dirs, client, print, enable_write)
        }
        Cmd::Mcp { action: Some(McpCmd::Uninstall { client }), .. } => mcp::uninstall(client),
        Cmd::Mcp { action: Some(McpCmd::Status { json }), .. } => mcp::status(json),
        Cmd::Serve { .. } | Cmd::Internal(_) | Cmd::Mcp { action: None, .. } => unreachable!("handled in main"),
    }
}

fn search(dirs: &protocol::Dirs, mode: SearchMode, a: SearchArgs) -> anyhow::Result<ExitCode> {
    commands::search(dirs, mode, a.query, a.limit, a.collection, a.json, a.batch)
}
