//! Virtual document URIs: the one implementation lives in `protocol::uri` (the gateway
//! parses MCP refs with it too).

pub use protocol::uri::*;
