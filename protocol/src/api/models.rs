//! Model presets and downloads.

use super::Capabilities;
use serde::{Deserialize, Serialize};

/// What a model is for (the contract's model `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModelRole {
    Embed,
    Rerank,
    Gen,
}

impl ModelRole {
    pub const ALL: [ModelRole; 3] = [ModelRole::Embed, ModelRole::Rerank, ModelRole::Gen];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelRole::Embed => "embed",
            ModelRole::Rerank => "rerank",
            ModelRole::Gen => "gen",
        }
    }
}

/// Where svc may send data (a model server's requests): `local_only` (the default) allows only
/// loopback addresses, `lan` adds private ranges, `remote` allows any host. Set by
/// `egressPolicy` in index.yml.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EgressPolicy {
    #[default]
    LocalOnly,
    Lan,
    Remote,
}

impl EgressPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            EgressPolicy::LocalOnly => "local_only",
            EgressPolicy::Lan => "lan",
            EgressPolicy::Remote => "remote",
        }
    }
}

/// An entry of `GET /api/presets`: model references by role (`null` when the preset has
/// no model for it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct ModelPreset {
    pub id: String,
    pub name: String,
    pub embed: Option<String>,
    pub rerank: Option<String>,
    pub gen: Option<String>,
    pub active: bool,
}

impl ModelPreset {
    /// The model reference for `role`.
    pub fn model(&self, role: ModelRole) -> Option<&str> {
        match role {
            ModelRole::Embed => self.embed.as_deref(),
            ModelRole::Rerank => self.rerank.as_deref(),
            ModelRole::Gen => self.gen.as_deref(),
        }
    }
}

/// `GET /api/presets`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PresetsResponse {
    pub presets: Vec<ModelPreset>,
    pub active_preset: String,
    pub capabilities: Capabilities,
}

/// `POST /api/presets`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PresetChanged {
    pub success: bool,
    pub active_preset: String,
    pub embed_model_changed: bool,
    pub capabilities: Capabilities,
    /// Only when the embedding model changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `POST /api/models/pull`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct PullStarted {
    pub started: bool,
    pub message: String,
}

/// `progress` of `GET /api/models/status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullProgress {
    pub downloaded_bytes: u64,
    pub total_bytes: u64,
    pub percent: f64,
}

/// An entry of `failed` of `GET /api/models/status`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct PullFailure {
    #[serde(rename = "type")]
    pub role: ModelRole,
    pub error: String,
}

/// `GET /api/models/status`: the model download status.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullStatus {
    pub active: bool,
    pub current_type: Option<ModelRole>,
    pub progress: Option<PullProgress>,
    pub completed: Vec<ModelRole>,
    pub failed: Vec<PullFailure>,
    pub started_at: Option<i64>,
}
