//! Streaming, resumable downloads: bytes go to `<file>.part`; an existing `.part` is
//! resumed with a `Range` request, and the answer must continue exactly where the `.part`
//! ends (else the download starts over from zero). A transfer that delivers nothing for
//! [`STALL_TIMEOUT`] fails and keeps its `.part` for the next attempt. The size (and SHA-256
//! when known) is checked before the file is renamed into place.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A download that receives no byte for this long fails (its `.part` stays for a resume).
pub const STALL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("cannot reach {url}: {reason}")]
    Network { url: String, reason: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} sent no data for {after:?}; the partial download is kept and resumes on the next pull")]
    Stalled { url: String, after: Duration },
    #[error("{url} answered a range that does not fit the download (Content-Range: {range})")]
    Range { url: String, range: String },
    #[error("size mismatch: expected {expected} bytes, got {got}")]
    Size { expected: u64, got: u64 },
    #[error("checksum mismatch: expected sha256 {expected}, got {got}")]
    Checksum { expected: String, got: String },
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> DownloadError + '_ {
    move |source| DownloadError::Io { path: path.display().to_string(), source }
}

fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".part");
    dest.with_file_name(name)
}

/// The HTTP client: status codes are answers, not errors; each read may wait `stall` at most.
fn agent(stall: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(15)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .timeout_per_read(Some(stall))
        .build()
        .new_agent()
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

fn header<'h>(headers: &'h ureq::http::HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok()
}

/// The SHA-256 a hub announces for a file: `X-Linked-Etag` (large files), else an `ETag`
/// that is a SHA-256.
fn announced_sha256(headers: &ureq::http::HeaderMap) -> Option<String> {
    ["x-linked-etag", "etag"].iter().find_map(|h| {
        let v = header(headers, h)?;
        let v = v.trim().trim_start_matches("W/").trim_matches('"');
        (v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit())).then(|| v.to_ascii_lowercase())
    })
}

/// A `Content-Range` value: `bytes <first>-<last>/<total>` (`*` for an unknown total), or
/// `bytes */<total>` (the form of a 416).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ContentRange {
    /// First and last byte (inclusive) of the body.
    span: Option<(u64, u64)>,
    total: Option<u64>,
}

/// Parses a `Content-Range` header; `None` when malformed or self-contradictory.
fn parse_content_range(value: &str) -> Option<ContentRange> {
    let (unit, rest) = value.trim().split_once(' ')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    let (span, total) = rest.trim().split_once('/')?;
    let number = |s: &str| -> Option<u64> { s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse().ok()).flatten() };
    let total = match total.trim() {
        "*" => None,
        t => Some(number(t)?),
    };
    let span = match span.trim() {
        "*" => None,
        s => {
            let (first, last) = s.split_once('-')?;
            let (first, last) = (number(first.trim())?, number(last.trim())?);
            Some((first, last))
        }
    };
    let consistent = match (span, total) {
        (None, None) => false,
        (Some((first, last)), total) => first <= last && total.is_none_or(|t| last < t),
        (None, Some(_)) => true,
    };
    consistent.then_some(ContentRange { span, total })
}

/// What to do with the answer to a request for the bytes from `have` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Write the body into the `.part` from `start` (0: a fresh `.part`); the complete file
    /// has `total` bytes when known.
    Write { start: u64, total: Option<u64> },
    /// The `.part` already holds the whole file: `total` is the size the server confirmed;
    /// `None` only when a checksum is known to decide.
    Complete { total: Option<u64> },
    /// The `.part` does not fit the server's file: truncate it and start over.
    Restart,
    /// A status that carries no usable file.
    Fail,
}

/// The plan for a response: `status`, its `Content-Length` and `Content-Range`, the bytes
/// we have, and whether a checksum will verify the result.
fn plan(status: u16, have: u64, length: Option<u64>, range: Option<ContentRange>, checksum_known: bool) -> Plan {
    match status {
        200 => Plan::Write { start: 0, total: length },
        206 => match range {
            Some(ContentRange { span: Some((first, last)), total })
                if first == have
                    && length.is_none_or(|l| Some(l) == last.checked_sub(first).and_then(|d| d.checked_add(1))) =>
            {
                Plan::Write { start: have, total: total.or_else(|| length.and_then(|l| have.checked_add(l))) }
            }
            _ => Plan::Restart,
        },
        416 if have > 0 => match range.and_then(|r| r.total) {
            Some(total) if total == have => Plan::Complete { total: Some(have) },
            None if checksum_known => Plan::Complete { total: None },
            _ => Plan::Restart,
        },
        _ => Plan::Fail,
    }
}

/// A response with its plan and the checksum the file must have (pinned, else announced).
struct Answer {
    response: ureq::http::Response<ureq::Body>,
    status: u16,
    plan: Plan,
    range: Option<String>,
    sha256: Option<String>,
}

/// The error of a failed request or read: a read that timed out is a stall.
fn network_error(url: &str, e: &ureq::Error, stall: Duration) -> DownloadError {
    match e {
        ureq::Error::Timeout(ureq::Timeout::PerRead) => DownloadError::Stalled { url: url.to_string(), after: stall },
        _ => DownloadError::Network { url: url.to_string(), reason: e.to_string() },
    }
}

/// The error of a failed body read (ureq wraps its own errors in `io::Error`).
fn read_error(url: &str, e: &std::io::Error, stall: Duration) -> DownloadError {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<ureq::Error>()) {
        Some(inner) => network_error(url, inner, stall),
        None => DownloadError::Network { url: url.to_string(), reason: e.to_string() },
    }
}

/// Requests `url` from byte `have` on and plans what to do with the answer.
fn ask(
    agent: &ureq::Agent,
    url: &str,
    have: u64,
    pinned: Option<&str>,
    stall: Duration,
) -> Result<Answer, DownloadError> {
    let mut req = agent.get(url);
    if have > 0 {
        req = req.header("Range", &format!("bytes={have}-"));
    }
    let response = req.call().map_err(|e| network_error(url, &e, stall))?;
    let headers = response.headers();
    let status = response.status().as_u16();
    let length = header(headers, "content-length").and_then(|v| v.trim().parse().ok());
    let range = header(headers, "content-range").map(str::to_string);
    let sha256 = pinned.map(str::to_string).or_else(|| announced_sha256(headers));
    let next = plan(status, have, length, range.as_deref().and_then(parse_content_range), sha256.is_some());
    Ok(Answer { response, status, plan: next, range, sha256 })
}

/// Streams the body into the `.part` from `start` (a fresh file when 0), reporting progress.
fn receive(
    answer: &mut Answer,
    part: &Path,
    start: u64,
    total: Option<u64>,
    url: &str,
    stall: Duration,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<(), DownloadError> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(start > 0)
        .truncate(start == 0)
        .open(part)
        .map_err(io_error(part))?;
    let mut done = start;
    progress(done, total);
    let mut reader = answer.response.body_mut().as_reader();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).map_err(|e| read_error(url, &e, stall))?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n]).map_err(io_error(part))?;
        done += n as u64;
        progress(done, total);
    }
    file.sync_all().map_err(io_error(part))
}

/// Renames the `.part` to `dest` once its size (when known) and SHA-256 (when known) match;
/// a `.part` with a wrong checksum is deleted.
fn verify_and_place(part: &Path, dest: &Path, total: Option<u64>, sha256: Option<&str>) -> Result<(), DownloadError> {
    let got = std::fs::metadata(part).map_err(io_error(part))?.len();
    if let Some(expected) = total {
        if got != expected {
            return Err(DownloadError::Size { expected, got });
        }
    }
    if let Some(expected) = sha256 {
        let actual = sha256_file(part).map_err(io_error(part))?;
        if !actual.eq_ignore_ascii_case(expected) {
            let _ = std::fs::remove_file(part);
            return Err(DownloadError::Checksum { expected: expected.to_string(), got: actual });
        }
    }
    std::fs::rename(part, dest).map_err(io_error(dest))
}

/// Downloads `url` to `dest`. `progress(done, total)` is called as bytes arrive. The file
/// is checked against `sha256` when given, else against the hash the server announces.
pub fn download(
    url: &str,
    dest: &Path,
    sha256: Option<&str>,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<(), DownloadError> {
    download_with_stall(url, dest, sha256, progress, STALL_TIMEOUT)
}

/// [`download`] with the stall timeout as a parameter (tests use a short one).
fn download_with_stall(
    url: &str,
    dest: &Path,
    sha256: Option<&str>,
    progress: &mut dyn FnMut(u64, Option<u64>),
    stall: Duration,
) -> Result<(), DownloadError> {
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    }
    let part = part_path(dest);
    let client = agent(stall);
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let mut answer = ask(&client, url, have, sha256, stall)?;
    if answer.plan == Plan::Restart && have > 0 {
        tracing::info!("{} does not continue at byte {have} of {url}: downloading it again", part.display());
        std::fs::File::create(&part).map_err(io_error(&part))?;
        answer = ask(&client, url, 0, sha256, stall)?;
    }
    let total = match answer.plan {
        Plan::Write { start, total } => {
            receive(&mut answer, &part, start, total, url, stall, progress)?;
            total
        }
        Plan::Complete { total } => total,
        Plan::Restart => {
            return Err(DownloadError::Range {
                url: url.to_string(),
                range: answer.range.unwrap_or_else(|| "none".into()),
            })
        }
        Plan::Fail => return Err(DownloadError::Status { url: url.to_string(), status: answer.status }),
    };
    verify_and_place(&part, dest, total, answer.sha256.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::sync::mpsc;
    use std::time::Instant;

    fn cr(span: Option<(u64, u64)>, total: Option<u64>) -> Option<ContentRange> {
        Some(ContentRange { span, total })
    }

    #[test]
    fn content_range_parses_spans_and_totals() {
        assert_eq!(parse_content_range("bytes 6-10/11"), cr(Some((6, 10)), Some(11)));
        assert_eq!(parse_content_range(" Bytes 0-0/*"), cr(Some((0, 0)), None));
        assert_eq!(parse_content_range("bytes */11"), cr(None, Some(11)));
        for bad in [
            "",
            "bytes",
            "bytes */*",
            "items 0-1/2",
            "bytes 5-4/11",
            "bytes 0-11/11",
            "bytes 0-x/11",
            "bytes -1-3/11",
            "bytes +1-3/11",
            "bytes 0-3",
        ] {
            assert_eq!(parse_content_range(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn plans_follow_the_status_and_the_range() {
        // Fresh answers and exact continuations are written.
        assert_eq!(plan(200, 7, Some(11), None, false), Plan::Write { start: 0, total: Some(11) });
        assert_eq!(
            plan(206, 6, Some(5), cr(Some((6, 10)), Some(11)), false),
            Plan::Write { start: 6, total: Some(11) }
        );
        assert_eq!(plan(206, 6, Some(5), cr(Some((6, 10)), None), false), Plan::Write { start: 6, total: Some(11) });
        // A 206 that does not continue the .part (or says nothing) starts over.
        assert_eq!(plan(206, 7, Some(11), cr(Some((0, 10)), Some(11)), false), Plan::Restart);
        assert_eq!(
            plan(206, 6, Some(9), cr(Some((6, 10)), Some(11)), false),
            Plan::Restart,
            "length disagrees with the span"
        );
        assert_eq!(plan(206, 6, Some(5), None, false), Plan::Restart);
        // A 416 confirms a complete .part only by its size, else only a checksum may.
        assert_eq!(plan(416, 11, Some(0), cr(None, Some(11)), false), Plan::Complete { total: Some(11) });
        assert_eq!(plan(416, 13, Some(0), cr(None, Some(11)), true), Plan::Restart);
        assert_eq!(plan(416, 11, None, None, true), Plan::Complete { total: None });
        assert_eq!(plan(416, 11, None, None, false), Plan::Restart);
        assert_eq!(plan(416, 0, None, cr(None, Some(11)), true), Plan::Fail, "a 416 without a range asked");
        assert_eq!(plan(404, 0, None, None, true), Plan::Fail);
    }

    /// Reads a request head (up to the blank line).
    fn read_head(stream: &mut TcpStream) -> String {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => break,
            }
        }
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    }

    /// A local server answering one connection per canned response; with `hold` it then keeps
    /// the connection open and silent until the client leaves (at most 2 s). Sends each
    /// request head (lowercased) on the channel.
    fn serve(canned: Vec<(String, bool)>) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/org/repo/resolve/main/model.onnx", listener.local_addr().expect("addr"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for (response, hold) in canned {
                let Ok((mut stream, _)) = listener.accept() else { return };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = tx.send(read_head(&mut stream));
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.flush();
                if hold {
                    let _ = stream.read(&mut [0u8; 1]);
                }
            }
        });
        (url, rx)
    }

    fn reply(status: &str, headers: &[&str], body: &str) -> (String, bool) {
        let mut r = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
        for h in headers {
            r.push_str(h);
            r.push_str("\r\n");
        }
        r.push_str("\r\n");
        r.push_str(body);
        (r, false)
    }

    fn sha(s: &str) -> String {
        hex::encode(Sha256::digest(s.as_bytes()))
    }

    struct Setup {
        _dir: tempfile::TempDir,
        dest: PathBuf,
        part: PathBuf,
    }

    fn setup(part_content: Option<&str>) -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        let dest = dir.path().join("m").join("model.onnx");
        let part = part_path(&dest);
        if let Some(c) = part_content {
            std::fs::create_dir_all(dir.path().join("m")).expect("mkdir");
            std::fs::write(&part, c).expect("write part");
        }
        Setup { _dir: dir, dest, part }
    }

    fn fetch(url: &str, s: &Setup, sha256: Option<&str>) -> Result<(), DownloadError> {
        download_with_stall(url, &s.dest, sha256, &mut |_: u64, _: Option<u64>| {}, Duration::from_millis(300))
    }

    #[test]
    fn a_stalled_transfer_fails_quickly_and_keeps_its_part() {
        let s = setup(None);
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789".to_string();
        let (url, _heads) = serve(vec![(head, true)]);
        let started = Instant::now();
        let mut seen = 0;
        let r = download_with_stall(
            &url,
            &s.dest,
            None,
            &mut |done: u64, _: Option<u64>| seen = done,
            Duration::from_millis(300),
        );
        assert!(matches!(r, Err(DownloadError::Stalled { .. })), "{r:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        assert!(r.map_err(|e| e.to_string()).unwrap_err().contains("sent no data"));
        assert_eq!(seen, 10);
        assert_eq!(std::fs::read(&s.part).expect("part kept"), b"0123456789");
        assert!(!s.dest.exists());
    }

    #[test]
    fn a_matching_206_resumes_the_part() {
        let s = setup(Some("hello "));
        let (url, heads) = serve(vec![reply("206 Partial Content", &["Content-Range: bytes 6-10/11"], "world")]);
        fetch(&url, &s, Some(sha("hello world").as_str())).expect("resumed");
        assert!(heads.recv().expect("request").contains("range: bytes=6-"));
        assert_eq!(std::fs::read_to_string(&s.dest).expect("dest"), "hello world");
        assert!(!s.part.exists());
    }

    #[test]
    fn a_206_at_the_wrong_offset_restarts_from_zero() {
        let s = setup(Some("garbage"));
        let (url, heads) = serve(vec![
            reply("206 Partial Content", &["Content-Range: bytes 0-10/11"], "hello world"),
            reply("200 OK", &[], "hello world"),
        ]);
        fetch(&url, &s, None).expect("restarted");
        assert!(heads.recv().expect("first").contains("range: bytes=7-"));
        assert!(!heads.recv().expect("second").contains("range:"), "the restart asks for the whole file");
        assert_eq!(std::fs::read_to_string(&s.dest).expect("dest"), "hello world");
    }

    #[test]
    fn a_416_for_a_different_size_restarts_and_an_unverified_part_never_lands() {
        let s = setup(Some("hello world!!"));
        let (url, _heads) = serve(vec![
            reply("416 Range Not Satisfiable", &["Content-Range: bytes */11"], ""),
            reply("200 OK", &[], "hello world"),
        ]);
        fetch(&url, &s, None).expect("restarted");
        assert_eq!(std::fs::read_to_string(&s.dest).expect("dest"), "hello world");

        // The right size but the wrong bytes: the checksum refuses it and drops the .part.
        let s = setup(Some("hello wxrld"));
        let (url, _heads) = serve(vec![reply("416 Range Not Satisfiable", &["Content-Range: bytes */11"], "")]);
        let r = fetch(&url, &s, Some(sha("hello world").as_str()));
        assert!(matches!(r, Err(DownloadError::Checksum { .. })), "{r:?}");
        assert!(!s.dest.exists() && !s.part.exists());

        // No total and no checksum: the .part cannot be confirmed, so it is fetched again.
        let s = setup(Some("hello world"));
        let (url, heads) =
            serve(vec![reply("416 Range Not Satisfiable", &[], ""), reply("200 OK", &[], "hello world")]);
        fetch(&url, &s, None).expect("fetched again");
        assert!(heads.recv().expect("first").contains("range: bytes=11-"));
        assert!(!heads.recv().expect("second").contains("range:"));
        assert_eq!(std::fs::read_to_string(&s.dest).expect("dest"), "hello world");
    }
}
