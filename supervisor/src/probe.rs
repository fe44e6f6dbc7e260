//! Liveness probes: a Ping over the worker socket, `GET /api/health` on the gateway.

use protocol::socket::HandshakeError;
use protocol::{read_frame, write_frame, ClientFrame, ServerFrame};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// What a heartbeat found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Alive,
    /// Nothing listens yet (the worker binds its socket once its stores are open).
    NotListening,
    /// Something listens but does not answer in time: hung.
    Unresponsive,
}

/// A Ping over the worker's socket, after the protocol's own handshake
/// ([`protocol::socket::connect`]).
pub async fn worker(socket: &Path) -> Probe {
    let mut s = match tokio::time::timeout(PROBE_TIMEOUT, protocol::socket::connect(socket)).await {
        Ok(Ok((s, _pid))) => s,
        Ok(Err(HandshakeError::Connect(_))) => return Probe::NotListening,
        // It answers, in another protocol version: alive (the gateway reports the mismatch;
        // a restart would not cure it).
        Ok(Err(HandshakeError::Version(_))) => return Probe::Alive,
        Ok(Err(_)) | Err(_) => return Probe::Unresponsive,
    };
    let ping = async {
        write_frame(&mut s, &ClientFrame::Ping { id: 0 }).await.ok()?;
        match read_frame::<_, ServerFrame>(&mut s).await.ok()? {
            Some(ServerFrame::Pong { .. }) => Some(()),
            _ => None,
        }
    };
    match tokio::time::timeout(PROBE_TIMEOUT, ping).await {
        Ok(Some(())) => Probe::Alive,
        _ => Probe::Unresponsive,
    }
}

/// Blocking `GET <path>` with `Connection: close`; the whole response, if any.
fn get(port: u16, path: &str) -> Option<Vec<u8>> {
    let mut s = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), PROBE_TIMEOUT).ok()?;
    s.set_read_timeout(Some(PROBE_TIMEOUT)).ok()?;
    s.set_write_timeout(Some(PROBE_TIMEOUT)).ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut buf = Vec::new();
    let _ = s.take(1 << 20).read_to_end(&mut buf);
    Some(buf)
}

/// `GET /api/health` answers 200.
pub fn gateway_healthy(port: u16) -> bool {
    get(port, "/api/health").is_some_and(|r| r.starts_with(b"HTTP/1.1 200"))
}

/// `/api/status` says `healthy`: the gateway serves and the worker is connected.
fn server_ready(port: u16) -> bool {
    get(port, "/api/status")
        .is_some_and(|r| r.starts_with(b"HTTP/1.1 200") && r.windows(14).any(|w| w == b"\"healthy\":true"))
}

/// The gateway's socket belongs to the supervisor, so a connection always succeeds: a
/// gateway that does not answer is counted as not (yet) listening until it first answers.
pub async fn gateway(port: u16) -> Probe {
    match tokio::task::spawn_blocking(move || gateway_healthy(port)).await {
        Ok(true) => Probe::Alive,
        _ => Probe::NotListening,
    }
}

/// Waits until the gateway serves and the worker is connected.
pub fn wait_ready(port: u16, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if server_ready(port) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-shot HTTP server answering `reply` to the first connection.
    fn answer_once(reply: &'static str) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = l.local_addr().expect("an address").port();
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = l.accept() {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let _ = s.write_all(reply.as_bytes());
            }
        });
        port
    }

    #[test]
    fn the_gateway_is_healthy_only_on_a_200() {
        assert!(gateway_healthy(answer_once("HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n{\"ok\":true}")));
        assert!(!gateway_healthy(answer_once("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")));
        let closed = TcpListener::bind("127.0.0.1:0").expect("a port").local_addr().expect("an address").port();
        assert!(!gateway_healthy(closed), "nothing listens on a dropped listener's port");
    }

    #[test]
    fn ready_means_the_worker_is_connected() {
        assert!(server_ready(answer_once("HTTP/1.1 200 OK\r\n\r\n{\"healthy\":true}")));
        assert!(!server_ready(answer_once("HTTP/1.1 200 OK\r\n\r\n{\"healthy\":false}")));
    }

    #[tokio::test]
    async fn a_worker_socket_is_missing_silent_or_alive() {
        let dir = std::env::temp_dir().join(format!("svc-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a dir");
        let path = dir.join("worker.sock");
        let _ = std::fs::remove_file(&path);
        assert_eq!(worker(&path).await, Probe::NotListening);
        // Accepts and never answers: hung.
        let listener = std::os::unix::net::UnixListener::bind(&path).expect("a socket");
        let _held = std::thread::spawn(move || {
            if let Ok((stream, _)) = listener.accept() {
                std::thread::sleep(Duration::from_secs(3));
                drop(stream);
            }
        });
        assert_eq!(worker(&path).await, Probe::Unresponsive);
        let _ = std::fs::remove_file(&path);
    }
}
