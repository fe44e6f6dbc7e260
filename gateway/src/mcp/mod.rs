//! The MCP server: svc's tools for agents, over stdio (`svc mcp`) and over streamable HTTP
//! at `/mcp`. A tool runs through the same body types and rules as its HTTP route and
//! answers the same JSON; an API error is a tool error result carrying the API's code.

mod args;
pub mod http;
mod replies;
mod run;
mod schema;
mod tools;

pub use tools::ToolId;

use crate::WorkerClient;
use protocol::{ApiError, Dirs, JsonBody, Request};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

/// Where tool calls go: the worker of the running server, or one opened in process.
pub trait Calls: Clone + Send + Sync + 'static {
    /// One request to the worker; its reply's bytes ([`run`] reads them as the request's
    /// [`protocol::Call::Reply`]).
    fn call_request(&self, request: Request) -> impl Future<Output = Result<JsonBody, ApiError>> + Send;
}

impl Calls for WorkerClient {
    fn call_request(&self, request: Request) -> impl Future<Output = Result<JsonBody, ApiError>> + Send {
        WorkerClient::call_request(self, request)
    }
}

const INSTRUCTIONS: &str = "svc indexes the user's local notes. Find notes with svc_query (hybrid; \
svc_search for exact keywords), read them with svc_get (ref: #docid, svc:// URI or collection/path), \
answer with citations through svc_ask, and hand evidence on with svc_context, whose capsule can be \
re-verified. Results carry docids and svc:// URIs that every other tool accepts as ref.";

/// svc's MCP server handler.
#[derive(Clone)]
pub struct SvcMcp<C> {
    calls: C,
    writes: bool,
    tools: Arc<Vec<Tool>>,
    /// The index's saved connector verifications (`svc_status` shows them as `/api/status` does).
    connectors_file: Arc<PathBuf>,
}

impl<C: Calls> SvcMcp<C> {
    /// The read-only tools, and the write tools when `writes`, over the index of `dirs`.
    pub fn new(calls: C, writes: bool, dirs: &Dirs) -> Self {
        SvcMcp {
            calls,
            writes,
            tools: Arc::new(tools::catalog(writes)),
            connectors_file: Arc::new(dirs.connectors_file()),
        }
    }

    fn offered(&self, name: &str) -> Option<ToolId> {
        ToolId::from_name(name).filter(|t| self.writes || !t.writes())
    }
}

/// A tool's success: the reply as structured content, its JSON (or readable form) as text.
fn success(out: run::ToolOutput) -> CallToolResult {
    let text = out.text.clone();
    let mut result = CallToolResult::structured(out.json);
    if let Some(text) = text {
        result.content = vec![ContentBlock::text(text)];
    }
    result
}

/// A tool's failure: the API's error envelope as structured content, `CODE: message` as text.
fn failure(e: &ApiError) -> CallToolResult {
    let envelope = serde_json::to_value(e.to_envelope()).unwrap_or_default();
    let mut result = CallToolResult::structured_error(envelope);
    result.content = vec![ContentBlock::text(format!("{}: {}", e.code.as_str(), e.message))];
    result
}

impl<C: Calls> ServerHandler for SvcMcp<C> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("svc", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(id) = self.offered(&request.name) else {
            return Err(McpError::invalid_params(format!("Unknown tool: {}", request.name), None));
        };
        let args = request.arguments.unwrap_or_default();
        let result = match run::run(&self.calls, id, args, &self.connectors_file).await {
            Ok(out) => success(out),
            Err(e) => failure(&e),
        };
        Ok(result.into())
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin. Nothing else may write to
/// stdout meanwhile (logs go to stderr).
pub async fn serve_stdio<C: Calls>(calls: C, writes: bool, dirs: &Dirs) -> anyhow::Result<()> {
    let running = SvcMcp::new(calls, writes, dirs).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
