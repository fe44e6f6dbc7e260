//! `/mcp`: the streamable-HTTP transport. It sits behind the gateway's security middleware
//! like `/api` (Host check, the Origin/token rule for POST and DELETE), so rmcp's own Host
//! allow-list is turned off rather than kept as a second copy of the rule.

use super::SvcMcp;
use crate::WorkerClient;
use protocol::Dirs;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub type McpService = StreamableHttpService<SvcMcp<WorkerClient>, LocalSessionManager>;

/// The `/mcp` service over the gateway's worker connection; write tools when `writes`. Its
/// sessions end when `shutdown` is cancelled.
pub fn service(worker: WorkerClient, writes: bool, dirs: &Dirs, shutdown: CancellationToken) -> McpService {
    let dirs = dirs.clone();
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts().with_cancellation_token(shutdown);
    StreamableHttpService::new(
        move || Ok(SvcMcp::new(worker.clone(), writes, &dirs)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
