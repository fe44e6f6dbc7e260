//! Streaming, resumable downloads: bytes go to `<file>.part`; an existing `.part` is
//! resumed with a `Range` request; the size (and SHA-256 when pinned) is checked before the
//! file is renamed into place.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("cannot reach {url}: {reason}")]
    Network { url: String, reason: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("size mismatch: expected {expected} bytes, got {got}")]
    Size { expected: u64, got: u64 },
    #[error("checksum mismatch: expected sha256 {expected}, got {got}")]
    Checksum { expected: String, got: String },
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

fn part_path(dest: &Path) -> std::path::PathBuf {
    let mut name = dest.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".part");
    dest.with_file_name(name)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(15)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
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

/// The SHA-256 a hub announces for a file: `X-Linked-Etag` (large files), else an `ETag`
/// that is a SHA-256.
fn announced_sha256(headers: &ureq::http::HeaderMap) -> Option<String> {
    ["x-linked-etag", "etag"].iter().find_map(|h| {
        let v = headers.get(*h)?.to_str().ok()?;
        let v = v.trim().trim_start_matches("W/").trim_matches('"');
        (v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit())).then(|| v.to_ascii_lowercase())
    })
}

/// Downloads `url` to `dest`. `progress(done, total)` is called as bytes arrive. The file
/// is checked against `sha256` when given, else against the hash the server announces.
pub fn download(url: &str, dest: &Path, sha256: Option<&str>, progress: &mut dyn FnMut(u64, Option<u64>)) -> Result<(), DownloadError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| DownloadError::Io { path: path.clone(), source }
    };
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let part = part_path(dest);
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let mut req = agent().get(url);
    if have > 0 {
        req = req.header("Range", &format!("bytes={have}-"));
    }
    let mut resp = req.call().map_err(|e| DownloadError::Network { url: url.to_string(), reason: e.to_string() })?;
    let status = resp.status().as_u16();
    let length: Option<u64> = resp.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let announced = announced_sha256(resp.headers());
    let sha256 = sha256.map(str::to_string).or(announced);
    let (start, total) = match status {
        206 => (have, length.map(|l| l + have)),
        200 => (0, length),
        416 if have > 0 => {
            // The part file may already be complete.
            (have, Some(have))
        }
        _ => return Err(DownloadError::Status { url: url.to_string(), status }),
    };
    if status != 416 {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(start > 0)
            .truncate(start == 0)
            .open(&part)
            .map_err(io(&part))?;
        let mut done = start;
        progress(done, total);
        let mut reader = resp.body_mut().as_reader();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = reader.read(&mut buf).map_err(|e| DownloadError::Network { url: url.to_string(), reason: e.to_string() })?;
            if n == 0 {
                break;
            }
            file.write_all(&buf[..n]).map_err(io(&part))?;
            done += n as u64;
            progress(done, total);
        }
        file.sync_all().map_err(io(&part))?;
    }
    let got = std::fs::metadata(&part).map_err(io(&part))?.len();
    if let Some(expected) = total {
        if got != expected {
            return Err(DownloadError::Size { expected, got });
        }
    }
    if let Some(expected) = sha256 {
        let actual = sha256_file(&part).map_err(io(&part))?;
        if !actual.eq_ignore_ascii_case(&expected) {
            let _ = std::fs::remove_file(&part);
            return Err(DownloadError::Checksum { expected, got: actual });
        }
    }
    std::fs::rename(&part, dest).map_err(io(dest))?;
    Ok(())
}
