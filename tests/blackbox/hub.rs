//! A local model hub for the pull tests: serves files in the Hugging Face layout
//! (`/<org>/<repo>/resolve/main/<path>`) with `Range` support, the SHA-256 in
//! `X-Linked-Etag`, a throttle, and faults on demand (a cut body, a wrong checksum).

use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct State {
    files: HashMap<String, Vec<u8>>,
    /// Paths whose next response stops half-way.
    cut_once: HashSet<String>,
    /// Paths served with a wrong announced checksum.
    bad_checksum: HashSet<String>,
    /// `(path, range header)` of every request.
    log: Vec<(String, Option<String>)>,
}

pub struct Hub {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl Hub {
    /// Serves `files` (`org/repo/path` → bytes); each 16 KiB chunk waits `throttle`.
    pub fn start(files: HashMap<String, Vec<u8>>, throttle: Duration) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State { files, ..Default::default() }));
        let st = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let st = Arc::clone(&st);
                std::thread::spawn(move || serve(conn, &st, throttle));
            }
        });
        Hub { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn cut_once(&self, path: &str) {
        self.state.lock().unwrap().cut_once.insert(path.to_string());
    }

    pub fn bad_checksum(&self, path: &str) {
        self.state.lock().unwrap().bad_checksum.insert(path.to_string());
    }

    pub fn ranges_requested(&self, path: &str) -> Vec<String> {
        self.state.lock().unwrap().log.iter().filter(|(p, _)| p == path).filter_map(|(_, r)| r.clone()).collect()
    }
}

fn serve(conn: TcpStream, state: &Mutex<State>, throttle: Duration) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let target = line.split(' ').nth(1).unwrap_or("").to_string();
    let mut range = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    // /<org>/<repo>/resolve/main/<path>
    let parts: Vec<&str> = target.trim_start_matches('/').splitn(5, '/').collect();
    let key = match parts.as_slice() {
        [org, repo, "resolve", "main", path] => format!("{org}/{repo}/{path}"),
        _ => String::new(),
    };
    let (body, cut, bad) = {
        let mut s = state.lock().unwrap();
        s.log.push((key.clone(), range.clone()));
        let cut = s.cut_once.remove(&key);
        let bad = s.bad_checksum.contains(&key);
        (s.files.get(&key).cloned(), cut, bad)
    };
    let mut out = conn;
    let Some(body) = body else {
        let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let sha = if bad { "0".repeat(64) } else { hex::encode(Sha256::digest(&body)) };
    let start: usize = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if start > body.len() {
        let _ = write!(out, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", body.len());
        return;
    }
    let part = &body[start..];
    let status = if start > 0 { "206 Partial Content" } else { "200 OK" };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nX-Linked-Etag: \"{sha}\"\r\nConnection: close\r\n",
        part.len()
    );
    if start > 0 {
        head.push_str(&format!("Content-Range: bytes {start}-{}/{}\r\n", body.len() - 1, body.len()));
    }
    head.push_str("\r\n");
    if out.write_all(head.as_bytes()).is_err() {
        return;
    }
    let limit = if cut { part.len() / 2 } else { part.len() };
    for chunk in part[..limit].chunks(16 * 1024) {
        if out.write_all(chunk).is_err() {
            return;
        }
        std::thread::sleep(throttle);
    }
    let _ = out.flush();
}
