//! The gateway: the HTTP face of svc. It owns no index: it applies the security rules,
//! validates requests, forwards work to the worker over the local socket and maps every
//! error to the contract's envelope.

/// The request bodies: parsed, bounded and turned into the worker's requests, for HTTP, MCP
/// and the CLI alike.
pub mod bodies;
mod client;
pub mod connectors;
pub mod dates;
mod error;
mod extract;
pub mod mcp;
mod openapi;
pub mod role;
mod routes;
mod security;
mod serve;
#[cfg(test)]
mod tests;
mod web;

pub use client::WorkerClient;
pub use error::ApiReply;

use protocol::Dirs;
use std::sync::Arc;

/// What the gateway needs to run.
pub struct GatewayOptions {
    /// Already bound to 127.0.0.1 (by the supervisor, so the port survives restarts).
    pub listener: std::net::TcpListener,
    pub port: u16,
    pub dirs: Dirs,
    /// `SVC_API_TOKEN`, when set.
    pub token: Option<String>,
    /// `/mcp` offers the write tools (`SVC_MCP_ENABLE_WRITE=1`).
    pub mcp_writes: bool,
}

/// Shared state of the routes.
#[derive(Clone)]
pub struct AppState {
    pub worker: WorkerClient,
    pub dirs: Arc<Dirs>,
    pub security: Arc<security::SecurityPolicy>,
    pub mcp_writes: bool,
    /// Cancelled at shutdown: ends the open `/mcp` sessions so the server can stop.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The router with every route and middleware; used by `run` and by tests.
pub fn app(state: AppState) -> axum::Router {
    routes::router(state)
}

/// The OpenAPI document of the API, as served at `/api/openapi.json`.
pub fn openapi_json() -> Vec<u8> {
    let (_, doc) = routes::api().split_for_parts();
    openapi::Document::new(doc).reply_bytes()
}

/// Serves until SIGTERM/SIGINT.
pub async fn run(opts: GatewayOptions) -> std::io::Result<()> {
    opts.listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(opts.listener)?;
    let worker = WorkerClient::start(opts.dirs.worker_socket(), opts.dirs.worker_failure_file());
    let state = AppState {
        worker,
        dirs: Arc::new(opts.dirs),
        security: Arc::new(security::SecurityPolicy::new(opts.port, opts.token)),
        mcp_writes: opts.mcp_writes,
        shutdown: tokio_util::sync::CancellationToken::new(),
    };
    let shutdown = state.shutdown.clone();
    tracing::info!("gateway serving http://127.0.0.1:{}", opts.port);
    serve::serve(listener, app(state), async move {
        shutdown_signal().await;
        shutdown.cancel();
    })
    .await;
    Ok(())
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
}
