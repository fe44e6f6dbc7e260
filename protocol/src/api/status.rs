//! Health, status and capabilities.

use serde::{Deserialize, Serialize};

/// `GET /api/health`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct Health {
    pub ok: bool,
}

/// `GET /api/capabilities`; also part of `GET /api/status` and `/api/presets`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub bm25: bool,
    pub vector: bool,
    pub hybrid: bool,
    pub answer: bool,
    /// Where svc may send data: a model server outside it must be allowed by this policy.
    pub egress_policy: super::EgressPolicy,
}

/// An entry of `GET /api/status` `collections`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionStatus {
    pub name: String,
    pub path: String,
    pub document_count: u64,
    pub chunk_count: u64,
    pub embedded_count: u64,
    /// How svc follows the folder's changes.
    pub watch: FolderWatch,
}

/// How svc follows a collection's folder (`GET /api/status` `collections[].watch`).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, Eq, utoipa::ToSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FolderWatch {
    /// Changes are indexed as they happen.
    Watching,
    /// The folder cannot be watched (gone, unreadable, the system's watch limit reached): it
    /// is scanned every `intervalMs`, and watched again as soon as it can be.
    Polling {
        #[serde(rename = "intervalMs")]
        interval_ms: u64,
        reason: String,
    },
    /// Not followed (`watch: false`, or a worker that serves no requests): syncs pick up its
    /// changes.
    #[default]
    Off,
}

/// `GET /api/status` `connectorProjection`: the newest saved connector verifications, one
/// per connector and collection, newest first. `truncated`: older pairs were left out (they
/// have no implied result).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
pub struct ConnectorProjection {
    pub targets: Vec<super::ConnectorReceipt>,
    pub truncated: bool,
}

/// One content-type boost rule of `GET /api/status` `contentTypeBoost`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentTypeBoostRule {
    pub id: String,
    pub search_boost: f64,
}

/// `GET /api/status` `contentTypeBoost`: no boost rules are configured (`rulesFingerprint`
/// is `none` then).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentTypeBoost {
    pub rules: Vec<ContentTypeBoostRule>,
    pub rules_fingerprint: String,
}

impl Default for ContentTypeBoost {
    fn default() -> Self {
        ContentTypeBoost { rules: Vec::new(), rules_fingerprint: "none".to_string() }
    }
}

/// The worker process as the gateway sees it (`GET /api/status` `worker`).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, Eq, utoipa::ToSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum WorkerState {
    /// Connected: the index answers.
    #[default]
    Running,
    /// Starting, or restarting after a crash, a hang or its memory ceiling.
    Starting,
    /// It failed to start `attempts` times in a row (never answered); the supervisor still
    /// tries again, at most `retryIntervalMs` apart. `reason` is the last start's error.
    Failed {
        reason: String,
        attempts: u32,
        #[serde(rename = "retryIntervalMs")]
        retry_interval_ms: u64,
    },
}

/// What the supervisor records when the worker keeps failing to start
/// (`<data>/<index>/worker-failure.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WorkerFailure {
    pub reason: String,
    pub attempts: u32,
    pub retry_interval_ms: u64,
}

/// How the failure reads for a person: the gateway's 503 and `svc status` say it alike.
impl std::fmt::Display for WorkerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "failed to start {} times in a row: {} (svc tries again every {} s or sooner)",
            self.attempts,
            self.reason,
            self.retry_interval_ms.div_ceil(1000)
        )
    }
}

impl WorkerFailure {
    /// The recorded failure in `path`, if there is a readable one.
    pub fn read(path: &std::path::Path) -> Option<Self> {
        std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok())
    }

    pub fn state(self) -> WorkerState {
        WorkerState::Failed { reason: self.reason, attempts: self.attempts, retry_interval_ms: self.retry_interval_ms }
    }
}

/// `GET /api/status`. The worker publishes it to `<data>/<index>/status.json`; the gateway
/// serves it without asking the worker.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusSnapshot {
    pub index_name: String,
    pub config_path: String,
    pub db_path: String,
    pub collections: Vec<CollectionStatus>,
    pub total_documents: u64,
    pub total_chunks: u64,
    pub embedding_backlog: u64,
    /// Contents embedded per second by the run under way (absent between runs): with the
    /// backlog, how long the vectors will take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_rate: Option<f64>,
    /// Pictures and scanned PDFs waiting for OCR (found by their names until it reads them).
    #[serde(default)]
    pub ocr_backlog: u64,
    /// Documents the keyword index has still to be fed from the catalog: above 0 while it is
    /// re-fed in the background (a new analyzer, a lost index), when a search finds what is
    /// fed so far.
    #[serde(default)]
    pub keyword_backlog: u64,
    pub last_updated: String,
    pub healthy: bool,
    pub connector_projection: ConnectorProjection,
    pub content_type_boost: ContentTypeBoost,
    pub capabilities: Capabilities,
    pub active_job_id: Option<String>,
    /// What the worker found broken and rebuilt since it started (empty when nothing was).
    #[serde(default)]
    pub repairs: Vec<Repair>,
    /// What each store holds: the derived ones agree with the catalog once the worker is idle.
    #[serde(default)]
    pub stores: StoreCounts,
    /// Set by the gateway as it serves the snapshot.
    #[serde(default)]
    pub worker: WorkerState,
    /// The team this server joined (`svc serve --cluster … --team …`); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterStatus>,
}

/// `cluster` in `/api/status`: the team's NATS JetStream cluster as this member sees it.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// Connected to a server of the cluster, with the team's stream open.
    pub connected: bool,
    pub team: String,
    /// This member's name in the team.
    pub member: String,
    /// The cluster's URLs as configured (credentials never shown).
    pub servers: Vec<String>,
    /// The stream's last sequence, as last seen.
    pub stream_seq: u64,
    /// The last stream sequence this member's replica has applied.
    pub applied_seq: u64,
    /// `streamSeq - appliedSeq`: messages this replica has still to apply.
    pub lag: u64,
    /// The members heard from (each publishes a heartbeat), with when.
    pub members: Vec<ClusterMember>,
    /// Why it is not connected (a refused credential, an unreachable server), without secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Files of shared collections too large for one message, left unpublished.
    #[serde(default)]
    pub unpublished: u64,
    /// Since the worker started: documents whose chunk vectors this member sent to the team
    /// (after embedding them), and contents whose vectors it stored from the team instead of
    /// embedding them itself.
    #[serde(default)]
    pub vectors_sent: u64,
    #[serde(default)]
    pub vectors_received: u64,
}

/// A member of the team (`cluster.members`).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterMember {
    pub name: String,
    /// When its last heartbeat was published (ISO 8601).
    pub last_seen: String,
}

/// What each store holds, to check that the derived ones agree with the catalog.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreCounts {
    /// Active documents in the catalog.
    pub catalog_documents: u64,
    /// Documents in the keyword index (equal to `catalogDocuments` once converged).
    pub keyword_documents: u64,
    /// Chunk vectors the catalog records as embedded by the loaded embedder.
    pub recorded_vectors: u64,
    /// Chunk vectors the embedder's table holds (at least `recordedVectors`; more only while
    /// rows of removed contents wait for the next embedding run to drop them).
    pub vector_rows: u64,
}

/// A store the worker found missing, unreadable or out of step with the catalog, and rebuilt.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Repair {
    pub store: RepairedStore,
    /// What was found and what was done, in a sentence.
    pub message: String,
    /// When (ISO 8601, UTC).
    pub at: String,
}

/// The stores the worker keeps.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepairedStore {
    /// `catalog.sqlite`: rebuilt from the notes on disk, the unreadable file kept aside.
    Catalog,
    /// The keyword index (`bm25/`): rebuilt from the catalog.
    Bm25,
    /// The vector tables (`vectors/`): the lost contents embedded again.
    Vectors,
}
