//! Connectors: `GET /api/connectors` lists the agents svc can be reached from, and
//! `POST /api/connectors/verify` checks one end to end. Neither edits a client's files.

use crate::bodies::VerifyConnectorBody;
use crate::connectors::verify::{self, Outcome};
use crate::connectors::{receipts, Connector, HomeEnv};
use crate::error::ApiReply;
use crate::extract::Body;
use crate::AppState;
use axum::extract::State;
use protocol::api::{
    CollectionInfo, ConnectorCode, ConnectorReceipt, ConnectorStage, ConnectorStageStatus, ConnectorVerification,
    ConnectorVerifyResponse, ConnectorsResponse, VerificationStages,
};
use protocol::time_fmt::now_iso;
use protocol::{ApiError, ErrorCode, ErrorEnvelope, JsonBody};

fn home() -> Result<HomeEnv, ApiError> {
    HomeEnv::from_env()
        .map_err(|e| ApiError::new(ErrorCode::ConnectorVerificationFailed, format!("Connectors are unavailable: {e}")))
}

async fn collection_names(s: &AppState) -> Result<Vec<String>, ApiError> {
    let list: Vec<CollectionInfo> = s.worker.call(protocol::ListCollections).await?.decode()?;
    Ok(list.into_iter().map(|c| c.name).collect())
}

/// The MCP clients and skill targets, whether svc is configured in each, and what to do next.
#[utoipa::path(get, path = "/api/connectors", tag = "connectors", operation_id = "list_connectors",
    responses((status = 200, description = "Connectors and the configured collections", body = ConnectorsResponse),
              (status = 500, description = "No home directory to look in", body = ErrorEnvelope)))]
pub async fn list(State(s): State<AppState>) -> ApiReply {
    let reply = async {
        let env = home()?;
        let connectors = Connector::ALL.into_iter().map(|c| c.info(&env)).collect();
        Ok(ConnectorsResponse { connectors, collections: collection_names(&s).await? })
    };
    ApiReply::ok(reply.await.and_then(|r: ConnectorsResponse| JsonBody::of(&r)))
}

/// Verifies a connector: starts the command the client's MCP entry names, lists its tools,
/// runs status and a search scoped to the collection (bounded in time; a hung command is
/// killed). Skill targets answer `skipped` / `target_runtime_unverifiable`.
#[utoipa::path(post, path = "/api/connectors/verify", tag = "connectors", operation_id = "verify_connector", request_body = VerifyConnectorBody,
    responses((status = 200, description = "The verification; a failed stage carries its code", body = ConnectorVerifyResponse),
              (status = 400, description = "Unknown connectorId or collection, or another key in the body", body = ErrorEnvelope),
              (status = 500, description = "CONNECTOR_VERIFICATION_FAILED: the probe could not run", body = ErrorEnvelope)))]
pub async fn verify(State(s): State<AppState>, Body(b): Body<VerifyConnectorBody>) -> ApiReply {
    ApiReply::ok(run(&s, b).await.and_then(|r| JsonBody::of(&r)))
}

async fn run(s: &AppState, b: VerifyConnectorBody) -> Result<ConnectorVerifyResponse, ApiError> {
    let (connector, collection) = b.into_parts()?;
    if !collection_names(s).await?.contains(&collection) {
        return Err(ApiError::validation(format!("Unknown collection: {collection}")));
    }
    let started_at = now_iso();
    let clock = std::time::Instant::now();
    let (outcome, client_id) = match connector {
        Connector::Skill(_) => (
            Outcome { status: ConnectorStageStatus::Skipped, code: Some(ConnectorCode::TargetRuntimeUnverifiable) },
            "",
        ),
        Connector::Mcp(client) => {
            let outcome = match HomeEnv::from_env().map(|env| client.read_entry(&connector.path(&env))) {
                Err(_) => Outcome::failed(ConnectorCode::ConnectorProbeUnavailable),
                Ok(Ok(None)) => Outcome::failed(ConnectorCode::ConnectorNotConfigured),
                Ok(Err(_)) => Outcome::failed(ConnectorCode::ConnectorUnsupportedConfig),
                Ok(Ok(Some(entry))) => {
                    let db = s.dirs.catalog_file();
                    verify::probe(&entry, &collection, &db, verify::timeout_from_env()).await
                }
            };
            (outcome, client.id())
        }
    };
    let stage = ConnectorStage {
        status: outcome.status,
        started_at,
        completed_at: now_iso(),
        latency_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
        code: outcome.code,
    };
    let receipt = ConnectorReceipt {
        connector_id: connector.id().into(),
        collection: collection.clone(),
        status: stage.status,
        code: stage.code,
        verified_at: stage.completed_at.clone(),
    };
    receipts::save(&s.dirs.connectors_file(), receipt)
        .map_err(|e| ApiError::new(ErrorCode::ConnectorVerificationFailed, format!("cannot save the receipt: {e}")))?;
    Ok(ConnectorVerifyResponse {
        verification: ConnectorVerification {
            lexical_ready: lexical_ready(s, &collection),
            connector_ready: stage.status == ConnectorStageStatus::Passed,
            collection,
            generated_at: now_iso(),
            stages: VerificationStages { connector: stage },
        },
        remediation: outcome.code.map(|c| verify::remediation(c, client_id)),
    })
}

/// Whether the collection has indexed documents, by the worker's last published status.
fn lexical_ready(s: &AppState, collection: &str) -> bool {
    super::system::published_status(&s.dirs)
        .is_some_and(|st| st.collections.iter().any(|c| c.name == collection && c.document_count > 0))
}
