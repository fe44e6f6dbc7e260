//! Where `svc mcp`'s tool calls go. With a server running for the data dir: its worker,
//! over the socket. Without one: a worker opened in this process, until a server starts;
//! then this process hands the index over (its worker is shut down and dropped, which
//! releases the BM25 writer the server's worker needs) and goes through the socket too.

use gateway::mcp::Calls;
use gateway::WorkerClient;
use protocol::{ApiError, Dirs, JsonBody, Request};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How long `svc mcp` waits for a server's worker to accept it.
const CONNECT_WAIT: Duration = Duration::from_secs(5);
/// How often a process with its own worker looks for a server that started.
const SERVER_POLL: Duration = Duration::from_millis(500);

enum Mode {
    Local(Arc<worker::Worker>),
    Server(WorkerClient),
}

/// The backend of `svc mcp`; calls are served one at a time.
#[derive(Clone)]
pub struct McpBackend {
    mode: Arc<Mutex<Mode>>,
}

/// Waits up to [`CONNECT_WAIT`] for `client` to reach the worker (it may be restarting).
async fn wait_connected(client: &WorkerClient) -> bool {
    let deadline = tokio::time::Instant::now() + CONNECT_WAIT;
    while !client.connected() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.connected()
}

async fn connect(dirs: &Dirs) -> WorkerClient {
    let client = WorkerClient::start(dirs.worker_socket(), dirs.worker_failure_file());
    if !wait_connected(&client).await {
        tracing::warn!("the server's worker is not reachable yet; tools answer UNAVAILABLE until it is");
    }
    client
}

impl McpBackend {
    /// The running server's worker, else a worker opened here (watched for a server).
    pub async fn open(dirs: &Dirs) -> anyhow::Result<Self> {
        if supervisor::read_running(dirs).is_some() {
            return Ok(McpBackend { mode: Arc::new(Mutex::new(Mode::Server(connect(dirs).await))) });
        }
        let d = dirs.clone();
        let w = tokio::task::spawn_blocking(move || worker::Worker::open(d)).await??;
        let backend = McpBackend { mode: Arc::new(Mutex::new(Mode::Local(w))) };
        let watcher = backend.clone();
        let dirs = dirs.clone();
        tokio::spawn(async move { watcher.hand_over_when_a_server_starts(dirs).await });
        Ok(backend)
    }

    async fn hand_over_when_a_server_starts(self, dirs: Dirs) {
        loop {
            tokio::time::sleep(SERVER_POLL).await;
            let running = {
                let d = dirs.clone();
                tokio::task::spawn_blocking(move || supervisor::read_running(&d).is_some()).await.unwrap_or(false)
            };
            if !running {
                continue;
            }
            let mut mode = self.mode.lock().await;
            if let Mode::Local(w) = &*mode {
                tracing::info!("a server started for this data dir: handing the index over to it");
                let w = Arc::clone(w);
                let _ = tokio::task::spawn_blocking(move || w.shutdown()).await;
                // Dropping the last handle closes the local stores (and their locks).
                *mode = Mode::Server(connect(&dirs).await);
            }
            return;
        }
    }

    /// Waits for the jobs the local worker runs (a write tool's indexing) before the process ends.
    pub async fn finish(&self) {
        if let Mode::Local(w) = &*self.mode.lock().await {
            let w = Arc::clone(w);
            let _ = tokio::task::spawn_blocking(move || w.wait_idle()).await;
        }
    }
}

impl Calls for McpBackend {
    fn call_request(&self, request: Request) -> impl Future<Output = Result<JsonBody, ApiError>> + Send {
        let mode = Arc::clone(&self.mode);
        async move {
            let mode = mode.lock().await;
            match &*mode {
                Mode::Server(client) => {
                    // A worker that is restarting gets a moment before the call answers 503.
                    wait_connected(client).await;
                    client.call_request(request).await
                }
                Mode::Local(w) => {
                    let w = Arc::clone(w);
                    tokio::task::spawn_blocking(move || w.handle(request))
                        .await
                        .unwrap_or_else(|e| Err(ApiError::runtime(format!("the tool call failed: {e}"))))
                }
            }
        }
    }
}
