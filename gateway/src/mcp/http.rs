//! `/mcp`: the streamable-HTTP transport. It sits behind the gateway's security middleware
//! like `/api` (Host check, the Origin/token rule for POST and DELETE), so rmcp's own Host
//! allow-list is turned off rather than kept as a second copy of the rule.

use super::SvcMcp;
use crate::WorkerClient;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

pub type McpService = StreamableHttpService<SvcMcp<WorkerClient>, LocalSessionManager>;

/// The `/mcp` service over the gateway's worker connection; write tools when `writes`.
pub fn service(worker: WorkerClient, writes: bool) -> McpService {
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    StreamableHttpService::new(
        move || Ok(SvcMcp::new(worker.clone(), writes)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
