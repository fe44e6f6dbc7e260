//! The gateway's connection to the worker: one multiplexed socket, re-established in the
//! background whenever the worker restarts. While it is down, calls fail fast with 503.

use protocol::api::{WorkerFailure, WorkerState};
use protocol::Event;
use protocol::{read_frame, write_frame, ApiError, Call, ClientFrame, JsonBody, Request, ServerFrame, Typed};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// How long one call may take before the gateway gives up on it.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
const RECONNECT_EVERY: Duration = Duration::from_millis(100);
/// How long a call waits for a worker that is starting or restarting before it answers 503:
/// a client that saw `/api/health` answer is not turned away while the worker comes up.
const WORKER_WAIT: Duration = Duration::from_secs(5);

/// A call waiting for its reply, and for a streamed call the channel of its parts.
struct Waiter {
    reply: oneshot::Sender<Result<JsonBody, ApiError>>,
    parts: Option<mpsc::UnboundedSender<String>>,
}

type Pending = Arc<Mutex<HashMap<u64, Waiter>>>;

/// The reply of a streamed call still to come. Its parts end before it is available (the
/// worker sends them first, on the same socket).
pub struct PendingReply {
    reply: oneshot::Receiver<Result<JsonBody, ApiError>>,
    conn: Arc<Connection>,
    id: u64,
    deadline: tokio::time::Instant,
}

impl PendingReply {
    /// When the whole call (its parts and its reply) must be over: [`CALL_TIMEOUT`] after it
    /// was sent.
    pub fn deadline(&self) -> tokio::time::Instant {
        self.deadline
    }

    /// The reply, or 503 when the worker went away or the call outlived its deadline.
    pub async fn get(self) -> Result<JsonBody, ApiError> {
        wait(self.reply, &self.conn, self.id, self.deadline).await
    }

    /// A guard that tells the worker this call's caller went away when it is dropped: held
    /// by the stream of a streamed reply, it stops the generation of a client that left.
    pub fn cancel_on_drop(&self) -> CancelOnDrop {
        CancelOnDrop { conn: Arc::clone(&self.conn), id: self.id }
    }
}

/// Sends [`ClientFrame::Cancel`] for its call when dropped (the worker ignores it for a call
/// that has ended).
pub struct CancelOnDrop {
    conn: Arc<Connection>,
    id: u64,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let _ = self.conn.tx.try_send(ClientFrame::Cancel { id: self.id });
    }
}

struct Connection {
    tx: mpsc::Sender<ClientFrame>,
    pending: Pending,
}

#[derive(Clone)]
pub struct WorkerClient {
    conn: Arc<Mutex<Option<Arc<Connection>>>>,
    next_id: Arc<AtomicU64>,
    /// Events pushed by the worker, for every `/api/events` stream.
    events: broadcast::Sender<Event>,
    /// Where the supervisor records a worker that keeps failing to start.
    failure_file: Arc<PathBuf>,
    /// Bumped whenever the connection comes or goes: a call waiting for the worker wakes on
    /// it instead of polling.
    changed: Arc<watch::Sender<u64>>,
}

fn unavailable() -> ApiError {
    ApiError::unavailable("The worker is starting or restarting; try again in a moment")
}

impl WorkerClient {
    /// Starts the background task that keeps a connection to the worker at `socket`;
    /// `failure_file` is the supervisor's record of a worker that fails to start.
    pub fn start(socket: PathBuf, failure_file: PathBuf) -> Self {
        let client = WorkerClient {
            conn: Arc::new(Mutex::new(None)),
            next_id: Arc::new(AtomicU64::new(1)),
            events: broadcast::channel(1024).0,
            failure_file: Arc::new(failure_file),
            changed: Arc::new(watch::channel(0).0),
        };
        let c = client.clone();
        tokio::spawn(async move { c.maintain(socket).await });
        client
    }

    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    pub fn connected(&self) -> bool {
        self.current().is_some()
    }

    /// The worker connection now, if there is one.
    fn current(&self) -> Option<Arc<Connection>> {
        self.conn.lock().ok().and_then(|c| c.clone())
    }

    /// The worker as `/api/status` shows it.
    pub fn state(&self) -> WorkerState {
        if self.connected() {
            WorkerState::Running
        } else {
            self.failure().map_or(WorkerState::Starting, WorkerFailure::state)
        }
    }

    fn failure(&self) -> Option<WorkerFailure> {
        WorkerFailure::read(&self.failure_file)
    }

    /// The 503 of a call made while there is no worker: why, when it failed to start.
    fn not_connected(&self) -> ApiError {
        match self.failure() {
            Some(f) => ApiError::unavailable(format!("The worker {f}; GET /api/status shows when it runs.")),
            None => unavailable(),
        }
    }

    async fn maintain(self, socket: PathBuf) {
        loop {
            match protocol::socket::connect(&socket).await {
                Ok((stream, pid)) => {
                    tracing::info!("connected to worker pid {pid}");
                    self.run_connection(stream).await;
                    tracing::warn!("lost the worker connection");
                }
                Err(e) => tracing::trace!("worker not reachable: {e}"),
            }
            tokio::time::sleep(RECONNECT_EVERY).await;
        }
    }

    /// Serves one connection until it breaks; then fails every pending call with 503.
    async fn run_connection(&self, stream: protocol::socket::SocketStream) {
        let (mut rd, mut wr) = tokio::io::split(stream);
        let (tx, mut rx) = mpsc::channel::<ClientFrame>(256);
        let _ = tx.send(ClientFrame::Subscribe).await;
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        if let Ok(mut c) = self.conn.lock() {
            *c = Some(Arc::new(Connection { tx, pending: Arc::clone(&pending) }));
        }
        self.changed.send_modify(|n| *n += 1);
        let writer = async {
            while let Some(frame) = rx.recv().await {
                if write_frame(&mut wr, &frame).await.is_err() {
                    break;
                }
            }
        };
        let reader = async {
            while let Ok(Some(frame)) = read_frame::<_, ServerFrame>(&mut rd).await {
                match frame {
                    ServerFrame::Reply { id, result } => {
                        let waiter = pending.lock().ok().and_then(|mut p| p.remove(&id));
                        if let Some(w) = waiter {
                            let _ = w.reply.send(result);
                        }
                    }
                    ServerFrame::Partial { id, text } => {
                        if let Ok(p) = pending.lock() {
                            if let Some(parts) = p.get(&id).and_then(|w| w.parts.as_ref()) {
                                let _ = parts.send(text);
                            }
                        }
                    }
                    ServerFrame::Event(ev) => {
                        let _ = self.events.send(ev);
                    }
                    _ => {}
                }
            }
        };
        tokio::select! {
            _ = writer => {},
            _ = reader => {},
        }
        if let Ok(mut c) = self.conn.lock() {
            *c = None;
        }
        self.changed.send_modify(|n| *n += 1);
        let waiters: Vec<_> = match pending.lock() {
            Ok(mut p) => p.drain().map(|(_, w)| w).collect(),
            Err(_) => Vec::new(),
        };
        for w in waiters {
            let _ = w.reply.send(Err(unavailable()));
        }
    }

    /// Sends one request and waits for its reply.
    pub async fn call<C: Call>(&self, call: C) -> Result<Typed<C::Reply>, ApiError> {
        self.call_request(call.into()).await.map(Typed::arrived)
    }

    /// [`WorkerClient::call`] for a request whose reply type the caller does not read.
    pub async fn call_request(&self, request: Request) -> Result<JsonBody, ApiError> {
        let deadline = tokio::time::Instant::now() + CALL_TIMEOUT;
        let (conn, id, reply) = self.send(request, None).await?;
        wait(reply, &conn, id, deadline).await
    }

    /// Sends an ask whose answer is streamed: its parts as they come (none for a verified
    /// ask, whose draft is only shown once verified), and the reply.
    pub async fn call_streamed(
        &self,
        ask: protocol::AskCall,
    ) -> Result<(mpsc::UnboundedReceiver<String>, PendingReply), ApiError> {
        let deadline = tokio::time::Instant::now() + CALL_TIMEOUT;
        let (tx, parts) = mpsc::unbounded_channel();
        let (conn, id, reply) = self.send(ask.into(), Some(tx)).await?;
        Ok((parts, PendingReply { reply, conn, id, deadline }))
    }

    /// The worker connection, waiting up to `limit` for one while there is none (woken when
    /// the connection comes, not by polling).
    async fn connection_within(&self, limit: Duration) -> Option<Arc<Connection>> {
        let mut changes = self.changed.subscribe();
        let wait = async {
            loop {
                // Subscribed before looking: a connection that comes in between is a change.
                if let Some(conn) = self.current() {
                    return Some(conn);
                }
                if changes.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.ok().flatten()
    }

    async fn send(
        &self,
        request: Request,
        parts: Option<mpsc::UnboundedSender<String>>,
    ) -> Result<(Arc<Connection>, u64, oneshot::Receiver<Result<JsonBody, ApiError>>), ApiError> {
        let conn = match self.current() {
            Some(conn) => conn,
            None => {
                // Only without a worker is the supervisor's record read: a worker that failed
                // to start will not come up within the wait, so say so at once.
                let wait = if self.failure().is_some() { Duration::ZERO } else { WORKER_WAIT };
                self.connection_within(wait).await.ok_or_else(|| self.not_connected())?
            }
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = conn.pending.lock() {
            p.insert(id, Waiter { reply: tx, parts });
        }
        if conn.tx.send(ClientFrame::Call { id, request }).await.is_err() {
            forget(&conn, id);
            return Err(unavailable());
        }
        Ok((conn, id, rx))
    }
}

fn forget(conn: &Connection, id: u64) {
    if let Ok(mut p) = conn.pending.lock() {
        p.remove(&id);
    }
}

/// The reply of call `id`, by `deadline`. Past it the call is forgotten (which also ends the
/// parts of a streamed call).
async fn wait(
    reply: oneshot::Receiver<Result<JsonBody, ApiError>>,
    conn: &Connection,
    id: u64,
    deadline: tokio::time::Instant,
) -> Result<JsonBody, ApiError> {
    match tokio::time::timeout_at(deadline, reply).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(unavailable()),
        Err(_) => {
            forget(conn, id);
            Err(ApiError::unavailable("The worker did not answer in time"))
        }
    }
}
