//! The body of `POST /api/connectors/verify`.

use super::required;
use crate::connectors::catalog::MAX_CONNECTOR_ID_CHARS;
use crate::connectors::Connector;
use protocol::ApiError;
use serde::Deserialize;
use utoipa::ToSchema;

/// The longest collection name a verification may name.
const MAX_COLLECTION_CHARS: usize = 64;

/// `POST /api/connectors/verify` (closed: other keys are a 400).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyConnectorBody {
    /// An MCP client's `<client>-mcp` (`claude-desktop-mcp`, `cursor-mcp`, `codex-mcp`,
    /// `claude-code-mcp`, `zed-mcp`, `windsurf-mcp`, `vscode-mcp`, `opencode-mcp`, `amp-mcp`,
    /// `lm-studio-mcp`, `librechat-mcp`, `gemini-cli-mcp`), or a skill target
    /// (`claude-code-skill`, `codex-skill`, `opencode-skill`, `openclaw-skill`, `hermes-skill`).
    #[schema(required = true, max_length = 128)]
    pub connector_id: Option<String>,
    /// A configured collection (its exact name).
    #[schema(required = true, max_length = 64)]
    pub collection: Option<String>,
}

impl VerifyConnectorBody {
    /// The connector and the collection name as sent (checked against the configured ones
    /// by the route).
    pub fn into_parts(self) -> Result<(Connector, String), ApiError> {
        let id = required("connectorId", self.connector_id)?;
        if id.chars().count() > MAX_CONNECTOR_ID_CHARS {
            return Err(ApiError::validation("connectorId must be at most 128 characters"));
        }
        let connector =
            Connector::from_id(&id).ok_or_else(|| ApiError::validation(format!("Unknown connectorId: {id}")))?;
        let collection = required("collection", self.collection)?;
        if collection.chars().count() > MAX_COLLECTION_CHARS {
            return Err(ApiError::validation("collection must be at most 64 characters"));
        }
        Ok((connector, collection))
    }
}
