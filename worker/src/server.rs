//! The worker's socket server: a handshake, then concurrent calls on each connection.

use crate::app::{Worker, WorkerError};
use crate::index::keyword_refeed::Refeed;
use crate::models::generator::Flow;
use interprocess::local_socket::traits::tokio::Listener as _;
use protocol::api::{EventKind, EventsDroppedEvent};
use protocol::{read_frame, write_frame, ApiError, ClientFrame, Dirs, Event, JsonBody, ServerFrame, PROTOCOL_VERSION};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::AsyncRead;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

/// Opens the stores, listens on the worker socket and answers until SIGTERM/SIGINT; then
/// lets a running job stop at a batch boundary and returns.
pub async fn serve(dirs: Dirs) -> Result<(), WorkerError> {
    let d = dirs.clone();
    let opened = tokio::task::spawn_blocking(move || Worker::open_with(d, Refeed::Background))
        .await
        .map_err(|e| WorkerError::from(std::io::Error::other(format!("worker start panicked: {e}"))))
        .and_then(|opened| opened);
    let worker = match opened {
        Ok(w) => w,
        Err(e) => {
            // The supervisor shows this reason if starts keep failing.
            let _ = protocol::write_atomic(&dirs.worker_start_error_file(), e.to_string().as_bytes());
            return Err(e);
        }
    };
    let _ = std::fs::remove_file(dirs.worker_start_error_file());
    worker.start_status_pacing();
    worker.start_catalog_check();
    worker.start_keyword_refeed();
    worker.start_background_embedding();
    worker.start_watching();
    worker.start_team();
    let socket = dirs.worker_socket();
    let listener = protocol::socket::bind(&socket)?;
    tracing::info!("worker listening on {}", socket.display());
    // Started: a failed state the supervisor recorded for earlier starts is over.
    let _ = std::fs::remove_file(dirs.worker_failure_file());
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    loop {
        tokio::select! {
            conn = listener.accept() => match conn {
                Ok(stream) => { tokio::spawn(handle_conn(stream, Arc::clone(&worker))); }
                Err(e) => tracing::warn!("accept failed: {e}"),
            },
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    tracing::info!("worker stopping");
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    let w = Arc::clone(&worker);
    let _ = tokio::task::spawn_blocking(move || w.shutdown()).await;
    Ok(())
}

async fn handle_conn(stream: protocol::socket::SocketStream, worker: Arc<Worker>) {
    let (mut rd, mut wr) = tokio::io::split(stream);
    let (tx, mut rx) = mpsc::channel::<ServerFrame>(64);
    let writer = tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            if write_frame(&mut wr, &frame).await.is_err() {
                break;
            }
        }
    });
    if handshake(&mut rd, &tx).await {
        read_calls(&mut rd, &tx, &worker).await;
    }
    drop(tx);
    let _ = writer.await;
}

async fn handshake<R: AsyncRead + Unpin>(rd: &mut R, tx: &mpsc::Sender<ServerFrame>) -> bool {
    match read_frame::<_, ClientFrame>(rd).await {
        Ok(Some(ClientFrame::Hello { version })) if version == PROTOCOL_VERSION => {
            tx.send(ServerFrame::HelloAck { version: PROTOCOL_VERSION, pid: std::process::id() }).await.is_ok()
        }
        Ok(Some(ClientFrame::Hello { version })) => {
            let reason = format!("protocol {version} is not supported; this worker speaks {PROTOCOL_VERSION}");
            let _ = tx.send(ServerFrame::Rejected { reason }).await;
            false
        }
        _ => false,
    }
}

/// The calls of one connection that run, each with the flag that stops its generation.
type Running = Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>>;

async fn read_calls<R: AsyncRead + Unpin>(rd: &mut R, tx: &mpsc::Sender<ServerFrame>, worker: &Arc<Worker>) {
    let running: Running = Arc::default();
    loop {
        match read_frame::<_, ClientFrame>(rd).await {
            Ok(Some(ClientFrame::Call { id, request })) => {
                let tx = tx.clone();
                let w = Arc::clone(worker);
                let cancelled = Arc::new(AtomicBool::new(false));
                lock(&running).insert(id, Arc::clone(&cancelled));
                let running = Arc::clone(&running);
                tokio::spawn(async move {
                    let name = request.name();
                    let partial_tx = tx.clone();
                    let result = tokio::task::spawn_blocking(move || {
                        // Parts of a streamed reply go out as they come; the reply follows them
                        // on the same ordered channel.
                        w.handle_with(request, &mut |text: &str| {
                            let _ = partial_tx.blocking_send(ServerFrame::Partial { id, text: text.to_string() });
                            if cancelled.load(Ordering::Relaxed) {
                                Flow::Stop
                            } else {
                                Flow::Continue
                            }
                        })
                    })
                    .await
                    .unwrap_or_else(|e| {
                        let id = crate::errors::error_id();
                        tracing::error!(error_id = %id, "request {name} panicked: {e}");
                        Err(ApiError::internal(&id))
                    });
                    lock(&running).remove(&id);
                    let _ = tx.send(ServerFrame::Reply { id, result }).await;
                });
            }
            Ok(Some(ClientFrame::Cancel { id })) => {
                if let Some(flag) = lock(&running).get(&id) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            Ok(Some(ClientFrame::Subscribe)) => {
                let mut events = worker.subscribe();
                let tx = tx.clone();
                tokio::spawn(async move {
                    loop {
                        match events.recv().await {
                            Ok(ev) => {
                                if tx.send(ServerFrame::Event(ev)).await.is_err() {
                                    return;
                                }
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                                tracing::warn!("event subscriber lagged; {n} events dropped, it is told so");
                                let Ok(data) = JsonBody::of(&EventsDroppedEvent::new(n)) else { continue };
                                let told = ServerFrame::Event(Event { kind: EventKind::EventsDropped, id: None, data });
                                if tx.send(told).await.is_err() {
                                    return;
                                }
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        }
                    }
                });
            }
            Ok(Some(ClientFrame::Ping { id })) => {
                if tx.send(ServerFrame::Pong { id }).await.is_err() {
                    return;
                }
            }
            Ok(Some(ClientFrame::Hello { .. })) | Ok(None) => return,
            Err(e) => {
                tracing::debug!("connection closed: {e}");
                return;
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
