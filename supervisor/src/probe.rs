//! Liveness probes: a Ping over the worker socket, `GET /api/health` on the gateway.

use protocol::{read_frame, write_frame, ClientFrame, ServerFrame};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

pub async fn worker_alive(socket: &Path) -> bool {
    let probe = async {
        let (mut s, _) = protocol::socket::connect(socket).await.ok()?;
        write_frame(&mut s, &ClientFrame::Ping { id: 0 }).await.ok()?;
        match read_frame::<_, ServerFrame>(&mut s).await.ok()? {
            Some(ServerFrame::Pong { .. }) => Some(()),
            _ => None,
        }
    };
    matches!(tokio::time::timeout(PROBE_TIMEOUT, probe).await, Ok(Some(())))
}

/// Blocking `GET /api/health`; true on a 200.
pub fn gateway_healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), PROBE_TIMEOUT) else { return false };
    let _ = s.set_read_timeout(Some(PROBE_TIMEOUT));
    let _ = s.set_write_timeout(Some(PROBE_TIMEOUT));
    let req = format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut buf = [0u8; 16];
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    buf[..got].starts_with(b"HTTP/1.1 200")
}

pub async fn gateway_alive(port: u16) -> bool {
    tokio::task::spawn_blocking(move || gateway_healthy(port)).await.unwrap_or(false)
}

pub fn wait_healthy(port: u16, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if gateway_healthy(port) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}
