//! Agents' connectors: the MCP clients svc wires itself into (their configuration files).

pub mod clients;

pub use clients::{ConfigError, HomeEnv, McpClient, ServerEntry};
