//! `svc setup FOLDER`: a folder made a collection and proved searchable. It adds the folder
//! (or syncs it when it is one already), waits for its first index, then takes a word from a
//! real note of the folder and searches for it: the setup is done only when keyword search
//! finds that note by that word (the query and the hit are printed). Then the embedding
//! backlog, followed with its progress bar on a terminal. Any step that fails ends it with
//! exit code 1 and the reason.

use crate::backend::Backend;
use crate::commands::{add_and_index, print_job, search_request, vectors_pending, SearchMode};
use anyhow::{anyhow, Context};
use protocol::api::{CollectionInfo, DocResponse, JobStatus, SearchResponse, SyncStarted};
use protocol::{AddCollection, Dirs, DocRef, DocsQuery};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;

/// Notes a word is looked for in, and words tried per note.
const NOTES_TRIED: u32 = 5;
const WORDS_TRIED: usize = 5;
/// A word shorter than this is too common to prove anything.
const MIN_WORD_CHARS: usize = 5;

pub fn setup(dirs: &Dirs, folder: PathBuf) -> anyhow::Result<ExitCode> {
    let abs = folder.canonicalize().with_context(|| format!("{} is not a folder svc can read", folder.display()))?;
    if !abs.is_dir() {
        return fail(format!("{} is not a folder", abs.display()));
    }
    let path = abs.to_str().ok_or_else(|| anyhow!("the path is not valid UTF-8"))?.to_string();
    let mut b = Backend::open(dirs)?;

    // 1. The collection, and its first index (a sync when the folder is one already).
    let known: Vec<CollectionInfo> = b.call_ok(protocol::ListCollections)?;
    let (name, job) = match known.iter().find(|c| c.path == path) {
        Some(c) => {
            println!("{} is the collection {} already: syncing it", path, c.name);
            let collection = Some(gateway::bodies::collection(&c.name)?);
            let r: SyncStarted = b.call_ok(protocol::SyncCollections { collection, git_pull: None })?;
            (c.name.clone(), b.wait_job(&r.job_id)?)
        }
        None => {
            let req = AddCollection {
                path: path.clone(),
                name: None,
                pattern: None,
                include: None,
                exclude: None,
                git_pull: false,
                watch: None,
                lang: None,
                shared: false,
            };
            add_and_index(&mut b, req, false)?
        }
    };
    print_job(&job, false)?;
    if job.status != JobStatus::Completed {
        return fail(format!(
            "the first index did not complete: {}",
            job.error.as_deref().unwrap_or("no reason given")
        ));
    }

    // 2. Proof: a word of a real note finds that note.
    let collection = gateway::bodies::collection(&name)?;
    let docs = b.call_ok(DocsQuery {
        collection: Some(collection),
        limit: NOTES_TRIED,
        offset: 0,
        tags_all: vec![],
        tags_any: vec![],
        sort_field: Default::default(),
        sort_order: Default::default(),
    })?;
    if docs.documents.is_empty() {
        return fail(format!(
            "no file of {path} was indexed: svc reads notes, documents, mail, pages and code by their extension \
             (`svc explain PATH` names the rule that left a file out)"
        ));
    }
    let mut tried = Vec::new();
    for summary in &docs.documents {
        let doc: DocResponse = b.call_ok(protocol::GetDoc { doc: DocRef::parse(&summary.uri)? })?;
        for word in candidate_words(&doc.content) {
            let request = search_request(SearchMode::Bm25, word.clone(), 10, Some(&name))?;
            let found: SearchResponse = b.call_ok(request)?;
            if let Some(hit) = found.results.iter().find(|r| r.uri == summary.uri) {
                println!("proved: `svc search \"{word}\" --collection {name}` finds {} (\"{}\"), the note the word was taken from", hit.uri, hit.title);
                vectors_pending(dirs);
                return Ok(ExitCode::SUCCESS);
            }
            tried.push(format!("'{word}' in {}", summary.uri));
        }
    }
    fail(format!("keyword search did not find a note by a word taken from it (tried {})", tried.join(", ")))
}

fn fail(reason: String) -> anyhow::Result<ExitCode> {
    eprintln!("setup failed: {reason}");
    Ok(ExitCode::FAILURE)
}

/// The words of a note most likely to find it: the longest ones of letters, each once, outside
/// front matter and markup.
fn candidate_words(content: &str) -> Vec<String> {
    let body =
        content.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---\n")).map_or(content, |(_, body)| body);
    let mut seen = HashSet::new();
    let mut words: Vec<String> = body
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= MIN_WORD_CHARS)
        .map(str::to_lowercase)
        .filter(|w| seen.insert(w.clone()))
        .collect();
    // Longest first (rarer), then by their order in the note.
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.truncate(WORDS_TRIED);
    words
}

/// One check of `svc doctor`.
#[derive(serde::Serialize)]
struct Check {
    name: &'static str,
    state: CheckState,
    detail: String,
    /// What to do about it (empty when nothing).
    #[serde(skip_serializing_if = "String::is_empty")]
    fix: String,
}

#[derive(serde::Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum CheckState {
    Ok,
    Warn,
    Fail,
}

impl Check {
    fn new(name: &'static str, state: CheckState, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, state, detail: detail.into(), fix: fix.into() }
    }
}

/// The port `svc serve` listens on unless told otherwise.
const DEFAULT_PORT: u16 = 3000;

/// `svc doctor`: what svc needs, each with what to do; exit code 1 when something fails.
pub fn doctor(dirs: &Dirs, json: bool) -> anyhow::Result<ExitCode> {
    use CheckState::{Fail, Ok as Fine, Warn};
    let mut checks = Vec::new();

    // The data dir: there and writable.
    let probe = dirs.data_dir.join(format!(".svc-doctor-{}", std::process::id()));
    let writable = std::fs::create_dir_all(&dirs.data_dir).and_then(|()| std::fs::write(&probe, b"x"));
    let _ = std::fs::remove_file(&probe);
    checks.push(match writable {
        Ok(()) => Check::new("data dir", Fine, format!("{} is writable", dirs.data_dir.display()), ""),
        Err(e) => Check::new(
            "data dir",
            Fail,
            format!("{} cannot be written: {e}", dirs.data_dir.display()),
            "set SVC_DATA_DIR to a folder you can write, or fix its permissions",
        ),
    });

    // The server, or the port it would take.
    let running = supervisor::read_running(dirs);
    match &running {
        Some(r) => checks.push(Check::new("server", Fine, format!("running at {} (pid {})", r.url, r.pid), "")),
        None => {
            let free = std::net::TcpListener::bind(("127.0.0.1", DEFAULT_PORT)).is_ok();
            checks.push(if free {
                Check::new(
                    "server",
                    Warn,
                    format!("not running; port {DEFAULT_PORT} is free"),
                    "start it with `svc serve`",
                )
            } else {
                Check::new(
                    "server",
                    Warn,
                    format!("not running, and port {DEFAULT_PORT} is taken by another program"),
                    format!("start it on another port: `svc serve --port {}`", DEFAULT_PORT + 1),
                )
            });
        }
    }
    if let Some(f) = running.as_ref().and_then(|_| protocol::api::WorkerFailure::read(&dirs.worker_failure_file())) {
        checks.push(Check::new(
            "worker",
            Fail,
            f.to_string(),
            "see the log under the data dir's logs/ and restart: `svc stop && svc serve`",
        ));
    }

    // Models and ONNX Runtime, as the worker found them (its published status).
    match crate::commands::read_snapshot(dirs) {
        None => checks.push(Check::new(
            "models",
            Warn,
            "no status published yet: the worker has not run with this data dir",
            "run `svc serve` (or any command) once",
        )),
        Some(s) => {
            checks.push(if s.capabilities.vector {
                Check::new("embedder", Fine, "vector and hybrid search available (ONNX Runtime and the embedding model load)", "")
            } else {
                Check::new(
                    "embedder",
                    Warn,
                    "vector search is off: the embedding model or ONNX Runtime is missing",
                    "`svc models pull` fetches the active preset's models; set ORT_DYLIB_PATH to ONNX Runtime's library (libonnxruntime.so)",
                )
            });
            checks.push(if s.capabilities.answer {
                Check::new("generator", Fine, "answers available (the generator loads)", "")
            } else {
                Check::new(
                    "generator",
                    Warn,
                    "answers are off: no generator model",
                    "`svc models pull` fetches the active preset's generator",
                )
            });
            // The collections' folders and how they are followed.
            for c in &s.collections {
                let there = std::path::Path::new(&c.path).is_dir();
                let (state, detail, fix) = match (&c.watch, there) {
                    (_, false) => (
                        Fail,
                        format!("{}: {} is gone", c.name, c.path),
                        "mount or restore the folder, or `svc collection remove` it".to_string(),
                    ),
                    (protocol::api::FolderWatch::Polling { reason, .. }, true) => (
                        Warn,
                        format!("{}: {} is polled, not watched: {reason}", c.name, c.path),
                        "raise fs.inotify.max_user_watches (sysctl), or leave it polled".to_string(),
                    ),
                    (protocol::api::FolderWatch::Off, true) => (
                        Fine,
                        format!(
                            "{}: {} ({} documents; not watched: `svc update` picks up changes)",
                            c.name, c.path, c.document_count
                        ),
                        String::new(),
                    ),
                    (protocol::api::FolderWatch::Watching, true) => (
                        Fine,
                        format!("{}: {} ({} documents, watched)", c.name, c.path, c.document_count),
                        String::new(),
                    ),
                };
                checks.push(Check::new("collection", state, detail, fix));
            }
            if s.collections.is_empty() {
                checks.push(Check::new(
                    "collection",
                    Warn,
                    "no collection yet",
                    "`svc setup FOLDER` adds a folder and proves it searchable",
                ));
            }
        }
    }

    let failed = checks.iter().any(|c| c.state == Fail);
    if json {
        println!("{}", serde_json::to_string_pretty(&checks)?);
    } else {
        for c in &checks {
            let mark = match c.state {
                Fine => "ok  ",
                Warn => "warn",
                Fail => "FAIL",
            };
            println!("{mark} {:<10} {}", c.name, c.detail);
            if !c.fix.is_empty() {
                println!("     {:<10} -> {}", "", c.fix);
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
