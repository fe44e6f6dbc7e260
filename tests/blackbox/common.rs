//! The test harness: a server process and a minimal HTTP/1.1 client (raw sockets, so
//! tests control every header, including Host and Origin).

#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_svc");

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// Asserts the contract's error envelope with this status and code.
    pub fn assert_error(&self, status: u16, code: &str) {
        let j = self.json();
        assert_eq!(self.status, status, "body: {j}");
        assert_eq!(j["error"]["code"], code, "body: {j}");
        assert!(j["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "body: {j}");
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `n` distinct free ports: each is held until all are chosen.
pub fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    held.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

/// Sends one request and reads the whole response (`Connection: close`).
pub fn raw_request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
    parse_response(&exchange(port, method, path, headers, body).expect("connect"))
}

/// One request's bytes out and the answer's bytes back; an error only when the request's head
/// cannot be sent (nothing listens). A body the server refused to read and an answer cut
/// short are what they are: the bytes read so far.
fn exchange(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let _ = s.write_all(body);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    Ok(buf)
}

/// One GET, or `None` when nothing listens on the port or no whole head came back.
fn try_get(port: u16, path: &str) -> Option<Resp> {
    let buf = exchange(port, "GET", path, &[], &[]).ok()?;
    buf.windows(4).any(|w| w == b"\r\n\r\n").then(|| parse_response(&buf))
}

/// What a started server is waited for.
#[derive(Debug, Clone, Copy)]
enum Ready {
    /// `/api/health` answers (the gateway is up).
    Gateway,
    /// `/api/collections` answers (the worker is up too).
    Worker,
}

/// A server that exited before it answered: its exit status and the end of its log.
struct Exited(String);

fn parse_response(buf: &[u8]) -> Resp {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("no header end");
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let mut body = buf[end + 4..].to_vec();
    if headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")) {
        body = dechunk(&body);
    }
    Resp { status, headers, body }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..i]).trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + n]);
        b = &b[i + 2 + n + 2..];
    }
    out
}

pub struct Server {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub child: Option<Child>,
    envs: Vec<(String, String)>,
    /// The working directory of every `svc` it runs (the test's own when `None`).
    cwd: Option<PathBuf>,
}

impl Server {
    pub fn start() -> Server {
        Self::start_with(&[])
    }

    pub fn start_with(extra_env: &[(&str, &str)]) -> Server {
        Self::start_in(None, extra_env)
    }

    /// A server whose commands (`svc serve` included) run in `cwd`, when given.
    pub fn start_in(cwd: Option<&Path>, extra_env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let cwd = cwd.map(Path::to_path_buf);
        let mut s = Server { dir, port: free_port(), child: None, envs: Vec::new(), cwd };
        s.envs = vec![
            ("SVC_CONFIG_DIR".into(), s.path("config").display().to_string()),
            ("SVC_DATA_DIR".into(), s.path("data").display().to_string()),
            ("SVC_CACHE_DIR".into(), s.path("cache").display().to_string()),
        ];
        for (k, v) in extra_env {
            s.envs.push((k.to_string(), v.to_string()));
        }
        // `free_port` lets its port go before the server binds it, and the tests run in
        // parallel: another test's server or hub may take it in between. The server then
        // says so and exits, and this one tries again on a new port.
        let mut retries = 3;
        loop {
            match s.launch(Ready::Worker) {
                Err(Exited(log)) if retries > 0 && log.contains("already in use") => {
                    retries -= 1;
                    s.port = free_port();
                }
                r => {
                    s.started(r);
                    return s;
                }
            }
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A `svc` command with this server's environment.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        c.env_remove("SVC_API_TOKEN").env("SVC_LOG", "warn");
        if let Some(cwd) = &self.cwd {
            c.current_dir(cwd);
        }
        if let Some(ort) = crate::prepared::ort_library() {
            c.env("ORT_DYLIB_PATH", ort);
        }
        for (k, v) in &self.envs {
            c.env(k, v);
        }
        c
    }

    /// The server's log (its stderr, at `SVC_LOG`'s level: `warn` unless the test sets it).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path("stderr.log")).unwrap_or_default()
    }

    /// Starts `svc serve` again (same port) and waits for its gateway and its worker.
    pub fn spawn(&mut self) {
        let r = self.launch(Ready::Worker);
        self.started(r);
    }

    /// Starts `svc serve` and waits for the gateway alone (for a worker that cannot start).
    pub fn spawn_gateway_only(&mut self) {
        let r = self.launch(Ready::Gateway);
        self.started(r);
    }

    /// The server's log, its last 40 lines.
    fn log_tail(&self) -> String {
        let log = self.log();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    fn started(&self, r: Result<(), Exited>) {
        if let Err(Exited(log)) = r {
            panic!("svc exited before it answered; the server log ends:\n{log}");
        }
    }

    /// Spawns `svc serve` and waits up to 30 s for `ready`. A server that exits meanwhile
    /// is an error with its log; a connection refused is retried only while this server
    /// lives (a server that answered and then exited is not mistaken for a slow start).
    fn launch(&mut self, ready: Ready) -> Result<(), Exited> {
        let log_from = self.log().len();
        let stderr = std::fs::OpenOptions::new().create(true).append(true).open(self.path("stderr.log")).unwrap();
        let child = self
            .cmd()
            .args(["serve", "--port", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn svc");
        self.child = Some(child);
        // The line the supervisor prints once it holds the port: an answer before it could
        // come from another test's server on a port both were given.
        let bound = format!("svc serving http://127.0.0.1:{} ", self.port);
        let mut ours = false;
        let (path, within) = match ready {
            Ready::Gateway => ("/api/health", Duration::from_secs(30)),
            Ready::Worker => ("/api/collections", Duration::from_secs(60)),
        };
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    self.child = None;
                    return Err(Exited(format!("({status})\n{}", self.log_tail())));
                }
            }
            ours = ours || self.log().get(log_from..).is_some_and(|l| l.contains(&bound));
            if ours && try_get(self.port, path).is_some_and(|r| r.status == 200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("svc did not answer {path} within {within:?}; the server log ends:\n{}", self.log_tail());
    }

    pub fn wait_until(&self, within: Duration, mut f: impl FnMut(&Server) -> bool) {
        let start = Instant::now();
        while start.elapsed() < within {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))).unwrap_or(false);
            if ok {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("condition not met within {within:?}; the server log ends:\n{}", self.log_tail());
    }

    pub fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Resp {
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let headers: &[(&str, &str)] = if body.is_some() { &[("Content-Type", "application/json")] } else { &[] };
        let r = raw_request(self.port, method, path, headers, &bytes);
        crate::typed::check(method, path, r.status, &r.body);
        r
    }
    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, None)
    }
    pub fn post(&self, path: &str, body: Value) -> Resp {
        self.request("POST", path, Some(&body))
    }
    pub fn delete(&self, path: &str) -> Resp {
        self.request("DELETE", path, None)
    }

    pub fn wait_job(&self, id: &str) -> Value {
        self.wait_job_within(id, Duration::from_secs(120))
    }

    pub fn wait_job_within(&self, id: &str, within: Duration) -> Value {
        let start = Instant::now();
        loop {
            let r = self.get(&format!("/api/jobs/{id}"));
            if r.status == 200 {
                let j = r.json();
                if j["status"] != "running" {
                    return j;
                }
            }
            assert!(start.elapsed() < within, "job {id} did not finish within {within:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Adds a collection and waits for its job; returns the finished job. Its folder is not
    /// watched: the tests that use this check what syncs and writes do, which a watcher racing
    /// them would blur (tests/blackbox/watch.rs adds watched collections).
    pub fn add_collection(&self, path: &Path, name: &str) -> Value {
        self.add_collection_with(path, name, false)
    }

    /// [`Self::add_collection`], its folder watched or not.
    pub fn add_collection_with(&self, path: &Path, name: &str, watch: bool) -> Value {
        let r = self.post("/api/collections", serde_json::json!({ "path": path, "name": name, "watch": watch }));
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        let job = self.wait_job(r.json()["jobId"].as_str().unwrap());
        assert_eq!(job["status"], "completed", "{job}");
        job
    }

    pub fn sync(&self, body: Value) -> Value {
        let r = self.post("/api/sync", body);
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        self.wait_job(r.json()["jobId"].as_str().unwrap())
    }

    pub fn search(&self, body: Value) -> Value {
        let r = self.post("/api/search", body);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// The pid of the supervisor's child running `internal <role>`.
    pub fn child_pid(&self, role: &str) -> Option<u32> {
        child_pids(self.pid()).into_iter().find(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(&format!("internal {role}")))
                .unwrap_or(false)
        })
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = nix_kill(c.id(), libc::SIGTERM);
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(15) {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        // A test that detached a server stops it too, even when it failed half-way.
        if self.path("data/default/svc.pid").exists() {
            let _ = self.cmd().arg("stop").stdout(Stdio::null()).stderr(Stdio::null()).status();
        }
    }
}

#[allow(unsafe_code)] // see the SAFETY comment inside
pub fn nix_kill(pid: u32, sig: i32) -> i32 {
    // SAFETY: plain kill(2) on a pid this test started.
    unsafe { libc::kill(pid as i32, sig) }
}

pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

pub fn child_pids(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                let after = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
                let ppid: u32 = after.split(' ').nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
                if ppid == parent {
                    out.push(pid);
                }
            }
        }
    }
    out
}

/// Writes `files` (relative path, content) under `root`.
pub fn write_notes(root: &Path, files: &[(&str, &str)]) {
    for (rel, content) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

pub fn uris(v: &Value) -> Vec<String> {
    v["results"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap().to_string()).collect()
}

/// `document-changed` events of `/api/events` as `(id, data)`, read until `count` came or
/// `within` passed; `last_event_id` is sent as `Last-Event-ID`.
pub fn read_changed_events(
    port: u16,
    last_event_id: Option<&str>,
    count: usize,
    within: Duration,
) -> Vec<(String, Value)> {
    read_changed_events_then(port, last_event_id, count, within, || {})
}

/// [`read_changed_events`] on a thread of its own, started once the stream is open (its
/// `connected` comment came: the gateway listens to the worker's events from then on), so that
/// what the caller does next is seen. No sleep that a loaded machine can outlast.
pub fn subscribe_to_changes(
    port: u16,
    count: usize,
    within: Duration,
) -> std::thread::JoinHandle<Vec<(String, Value)>> {
    let (open, opened) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        read_changed_events_then(port, None, count, within, move || {
            let _ = open.send(());
        })
    });
    opened.recv_timeout(within).expect("the event stream opened");
    reader
}

fn read_changed_events_then(
    port: u16,
    last_event_id: Option<&str>,
    count: usize,
    within: Duration,
    opened: impl FnOnce(),
) -> Vec<(String, Value)> {
    let mut opened = Some(opened);
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(within)).unwrap();
    let resume = last_event_id.map(|id| format!("Last-Event-ID: {id}\r\n")).unwrap_or_default();
    write!(stream, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n{resume}\r\n")
        .unwrap();
    let mut reader = BufReader::new(stream);
    let start = std::time::Instant::now();
    let (mut events, mut kind, mut id, mut data, mut line) =
        (Vec::new(), String::new(), String::new(), String::new(), String::new());
    // An event's fields come in any order; a blank line ends it.
    while start.elapsed() < within && events.len() < count {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let l = line.trim_end();
        if l.starts_with(':') && l.contains("connected") {
            if let Some(opened) = opened.take() {
                opened();
            }
        }
        if let Some(k) = l.strip_prefix("event:") {
            kind = k.trim().to_string();
        } else if let Some(i) = l.strip_prefix("id:") {
            id = i.trim().to_string();
        } else if let Some(d) = l.strip_prefix("data:") {
            data = d.trim().to_string();
        } else if l.is_empty() {
            if kind == "document-changed" {
                events.push((id.clone(), serde_json::from_str(&data).unwrap()));
            }
            kind.clear();
            id.clear();
            data.clear();
        }
    }
    events
}

/// `s` percent-encoded for a query string (unreserved characters and `/` kept).
pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs `tests/tools/write_formats.py DIR ARGS…` in the repository's .venv (which
/// `scripts/test` prepares): real files written by their formats' own libraries.
pub fn write_formats(dir: &Path, args: &[&Path]) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = repo.join(".venv/bin/python");
    let out = std::process::Command::new(&python)
        .arg(repo.join("tests/tools/write_formats.py"))
        .arg(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{} cannot run ({e}): run scripts/browser-env first", python.display()));
    assert!(out.status.success(), "write_formats.py failed: {}", String::from_utf8_lossy(&out.stderr));
}
