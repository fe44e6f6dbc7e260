//! The accept loop: the router served over HTTP/1.1 by hyper, with the two bounds
//! `axum::serve` does not set. A client has [`HEADER_READ_TIMEOUT`] to send a request's
//! headers, on a new connection and on a kept-alive one after each response, or the
//! connection is closed (a slow or silent client no longer holds a socket for ever); and at
//! most [`MAX_CONNECTIONS`] connections are served at once, the next ones waiting in the
//! listen backlog until one closes.

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a client may take to send a request's headers (and how long a kept-alive
/// connection may sit idle between requests).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 512;

/// How long the open connections get to finish at shutdown.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` until `shutdown` completes, then lets the open connections end.
pub async fn serve(listener: TcpListener, app: axum::Router, shutdown: impl Future<Output = ()>) {
    serve_with(listener, app, shutdown, HEADER_READ_TIMEOUT, MAX_CONNECTIONS).await
}

async fn serve_with(
    listener: TcpListener,
    app: axum::Router,
    shutdown: impl Future<Output = ()>,
    header_timeout: Duration,
    max_connections: usize,
) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let permits = Arc::new(Semaphore::new(max_connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait, as axum::serve does.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::trace!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open {DRAIN:?} after shutdown began: closed");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Instant;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn started(header_timeout: Duration, max: usize) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(serve_with(listener, app, async move { stopped.await.unwrap_or(()) }, header_timeout, max));
        (addr, stop)
    }

    async fn get(addr: std::net::SocketAddr) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn a_client_that_never_finishes_its_headers_is_closed_and_others_are_served() {
        let (addr, stop) = started(Duration::from_millis(300), 64).await;
        let began = Instant::now();
        let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        assert!(get(addr).await.ends_with("ok"), "served beside the slow one");
        let mut buf = Vec::new();
        // The server closes the socket (a 408 or nothing, then EOF).
        let read = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut buf)).await;
        assert!(read.is_ok(), "the slow connection was closed");
        assert!(began.elapsed() >= Duration::from_millis(300));
        let _ = stop.send(());
    }

    #[tokio::test]
    async fn an_idle_kept_alive_connection_is_closed_after_the_timeout() {
        let (addr, stop) = started(Duration::from_millis(300), 64).await;
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let mut buf = vec![0u8; 1024];
        let n = s.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).contains("200 OK"));
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "the idle connection was closed");
        let _ = stop.send(());
    }

    #[tokio::test]
    async fn connections_beyond_the_bound_wait_for_one_to_close() {
        let (addr, stop) = started(Duration::from_millis(400), 2).await;
        let a = tokio::net::TcpStream::connect(addr).await.unwrap();
        let b = tokio::net::TcpStream::connect(addr).await.unwrap();
        // Both slots are held by silent clients: a third request waits until their time is up.
        let began = Instant::now();
        assert!(get(addr).await.ends_with("ok"));
        assert!(began.elapsed() >= Duration::from_millis(300), "{:?}", began.elapsed());
        drop((a, b));
        let _ = stop.send(());
    }
}
