//! Connectors: the agents svc can be reached from (MCP clients and skill files), and the
//! receipts of their verification (`GET /api/connectors`, `POST /api/connectors/verify`).

use serde::{Deserialize, Serialize};

/// How a connector reaches svc.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstallKind {
    /// An MCP stdio server entry in the client's configuration.
    Mcp,
    /// A skill file the agent reads; it cannot be verified at runtime.
    Skill,
}

/// `mode` of a connector: what the configured entry allows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ConnectorMode {
    pub label: String,
    pub detail: String,
}

/// One entry of `GET /api/connectors`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorInfo {
    pub id: String,
    pub app_name: String,
    pub install_kind: InstallKind,
    /// The client (`claude-desktop`, `cursor`, `codex`, `claude-code`, `zed`, `windsurf`,
    /// `vscode`, `opencode`, `amp`, `lm-studio`, `librechat`, `gemini-cli`, …).
    pub target: String,
    /// `user`: the per-user configuration; `project`: the file in the server's working
    /// directory (LibreChat's `librechat.yaml`).
    pub scope: String,
    pub installed: bool,
    /// The file the client reads.
    pub path: String,
    pub summary: String,
    pub next_action: String,
    pub mode: ConnectorMode,
    /// Why the client's file could not be read (absent when it could).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `GET /api/connectors`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ConnectorsResponse {
    pub connectors: Vec<ConnectorInfo>,
    /// The configured collections (what `collection` of a verification may name).
    pub collections: Vec<String>,
}

/// The state of a verification stage.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorStageStatus {
    Passed,
    Pending,
    Failed,
    Skipped,
}

/// Why a connector stage did not pass.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorCode {
    /// The client's file has no svc entry (or does not exist).
    ConnectorNotConfigured,
    /// The probe could not be set up on this machine.
    ConnectorProbeUnavailable,
    /// The client's file or entry is not something svc can start.
    ConnectorUnsupportedConfig,
    /// The entry's command did not start, or ended before it answered.
    ConnectorStartFailed,
    /// The command did not answer within the time bound (it was killed).
    ConnectorTimeout,
    /// The server lacks `svc_status` or `svc_search`.
    ConnectorMissingTools,
    ConnectorStatusFailed,
    ConnectorSearchFailed,
    /// The search answered with documents of another collection.
    ConnectorResultMismatch,
    /// A skill file: the agent reads it when it runs; nothing here can start it.
    TargetRuntimeUnverifiable,
}

/// `verification.stages.connector`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorStage {
    pub status: ConnectorStageStatus,
    pub started_at: String,
    pub completed_at: String,
    pub latency_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ConnectorCode>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct VerificationStages {
    pub connector: ConnectorStage,
}

/// `verification` of `POST /api/connectors/verify`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorVerification {
    pub collection: String,
    /// The collection has indexed documents to search.
    pub lexical_ready: bool,
    /// The connector's stage passed.
    pub connector_ready: bool,
    pub generated_at: String,
    pub stages: VerificationStages,
}

/// `POST /api/connectors/verify`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ConnectorVerifyResponse {
    pub verification: ConnectorVerification,
    /// What to do about a stage that did not pass (`null` when all passed).
    pub remediation: Option<String>,
}

/// One saved verification, as `GET /api/status` `connectorProjection.targets` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorReceipt {
    pub connector_id: String,
    pub collection: String,
    pub status: ConnectorStageStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ConnectorCode>,
    pub verified_at: String,
}
