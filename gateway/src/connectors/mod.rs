//! Agents' connectors: the MCP clients svc wires itself into (their configuration files),
//! the skill-file targets, verifying a connector end to end, and the saved verifications.

pub mod catalog;
pub mod clients;
mod jsonc;
pub mod receipts;
pub mod verify;
mod yaml;

pub use catalog::Connector;
pub use clients::{ConfigError, Format, HomeEnv, McpClient, ServerEntry};
