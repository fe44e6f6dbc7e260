//! The status snapshot: computed after every job and published to `status.json`.

use crate::events::ActiveJob;
use crate::index::Indexing;
use crate::{stores::catalog, time_fmt};
use protocol::api::{CollectionStatus, ConnectorProjection, StatusSnapshot, StoreCounts, WorkerState};
use protocol::ApiError;
use std::collections::HashMap;

/// The status as it stands.
pub(crate) fn snapshot(w: &Indexing) -> Result<StatusSnapshot, ApiError> {
    snapshot_as(w, w.jobs.active())
}

/// What a snapshot counts over every active row (seconds at a million notes).
#[derive(Default)]
struct RowCounts {
    /// Per collection: active documents and their chunks.
    per_collection: HashMap<String, (u64, u64)>,
    /// Per collection: active documents whose content the loaded embedder embedded.
    embedded: HashMap<String, u64>,
    embedding_backlog: u64,
    recorded_vectors: u64,
    last_updated: Option<String>,
}

impl RowCounts {
    fn counted(w: &Indexing, table: &str) -> Result<RowCounts, ApiError> {
        let conn = w.core.stores.catalog.reader();
        Ok(RowCounts {
            per_collection: catalog::collection_counts(&conn)?,
            last_updated: catalog::last_synced(&conn)?,
            embedded: catalog::embedded_counts(&conn, table)?,
            embedding_backlog: catalog::embed_backlog_count(&conn, table)?,
            recorded_vectors: catalog::embedded_chunk_count(&conn, table)?,
        })
    }

    /// The counts of the status published before (by the worker's last run): what a large
    /// catalog's worker says until its pacing thread has counted again.
    fn carried(before: &StatusSnapshot) -> RowCounts {
        RowCounts {
            per_collection: before
                .collections
                .iter()
                .map(|c| (c.name.clone(), (c.document_count, c.chunk_count)))
                .collect(),
            embedded: before.collections.iter().map(|c| (c.name.clone(), c.embedded_count)).collect(),
            embedding_backlog: before.embedding_backlog,
            recorded_vectors: before.stores.recorded_vectors,
            last_updated: Some(before.last_updated.clone()),
        }
    }
}

fn snapshot_as(w: &Indexing, active_job_id: Option<String>) -> Result<StatusSnapshot, ApiError> {
    // Before the embedder loaded, no table is known and everything counts as backlog.
    let key = w.core.stores.embed_table();
    let table = key.as_ref().map_or_else(String::new, |k| k.name.clone());
    let counts = RowCounts::counted(w, &table)?;
    Ok(snapshot_with(w, active_job_id, counts))
}

fn snapshot_with(w: &Indexing, active_job_id: Option<String>, counts: RowCounts) -> StatusSnapshot {
    let (core, settings, stores) = (&w.core, &w.core.settings, &w.core.stores);
    let key = stores.embed_table();
    let vector_rows = match (&key, &stores.vectors) {
        (Some(key), Some(v)) => v.count(key).unwrap_or(0) as u64,
        _ => 0,
    };
    let collections: Vec<CollectionStatus> = settings
        .config()
        .collections
        .iter()
        .map(|c| {
            let (docs, chunks) = counts.per_collection.get(&c.name).copied().unwrap_or((0, 0));
            CollectionStatus {
                name: c.name.clone(),
                path: c.path.clone(),
                document_count: docs,
                chunk_count: chunks,
                embedded_count: counts.embedded.get(&c.name).copied().unwrap_or(0),
                watch: w.watchers.state(&c.name),
            }
        })
        .collect();
    let documents = collections.iter().map(|c| c.document_count).sum();
    StatusSnapshot {
        index_name: settings.dirs.index_name.clone(),
        config_path: settings.dirs.config_file().display().to_string(),
        db_path: settings.dirs.catalog_file().display().to_string(),
        total_documents: documents,
        total_chunks: collections.iter().map(|c| c.chunk_count).sum(),
        collections,
        embedding_backlog: counts.embedding_backlog,
        embedding_rate: w.embedding_pace.per_second().map(|r| (r * 10.0).round() / 10.0),
        ocr_backlog: w.pictures.pending() as u64,
        keyword_backlog: crate::index::keyword_refeed::backlog(w),
        last_updated: counts.last_updated.unwrap_or_else(time_fmt::now_iso),
        healthy: true,
        connector_projection: ConnectorProjection::default(),
        content_type_boost: settings.content_types.status(),
        capabilities: core.capabilities(),
        active_job_id,
        repairs: stores.repairs.list(),
        stores: StoreCounts {
            catalog_documents: documents,
            keyword_documents: stores.bm25.num_docs(),
            recorded_vectors: counts.recorded_vectors,
            vector_rows,
        },
        worker: WorkerState::Running,
        cluster: crate::index::team::status(w),
    }
}

/// Writes the snapshot atomically; failures are logged, never fatal. `job` says whether the
/// job runner's lock is held by a finishing job (which then is not named as running).
/// Publishers run on several threads at once (a job finishing, the pacing thread, the team's
/// tasks): a snapshot is written only if none counted after it was written first.
pub(crate) fn publish(w: &Indexing, job: ActiveJob) {
    let order = &w.core.hooks.status_order;
    let ticket = order.ticket();
    let active = match job {
        ActiveJob::Current => w.jobs.active(),
        ActiveJob::Finishing => None,
    };
    match snapshot_as(w, active) {
        Ok(s) => write(w, ticket, &s),
        Err(e) => tracing::warn!("could not compute status: {e}"),
    }
}

/// Publishes the status as the worker opens without counting every row: the counts of the
/// status the last run published (none when there is none), everything else as it stands
/// (no job running, the repairs of this start, the folders not followed yet). The pacing
/// thread counts again as soon as the worker listens.
pub(crate) fn publish_carried(w: &Indexing) {
    let order = &w.core.hooks.status_order;
    let ticket = order.ticket();
    let before = std::fs::read(w.core.settings.dirs.status_file())
        .ok()
        .and_then(|bytes| serde_json::from_slice::<StatusSnapshot>(&bytes).ok());
    let counts = before.as_ref().map_or_else(RowCounts::default, RowCounts::carried);
    write(w, ticket, &snapshot_with(w, None, counts));
}

fn write(w: &Indexing, ticket: u64, s: &StatusSnapshot) {
    match serde_json::to_vec_pretty(s) {
        Ok(bytes) => w.core.hooks.status_order.write_if_newest(ticket, || {
            if let Err(e) = protocol::write_atomic(&w.core.settings.dirs.status_file(), &bytes) {
                tracing::warn!("could not publish status: {e}");
            }
        }),
        Err(e) => tracing::warn!("could not serialize status: {e}"),
    }
}
