//! The status snapshot: computed after every job and published to `status.json`.

use crate::events::ActiveJob;
use crate::index::Indexing;
use crate::{stores::catalog, time_fmt};
use protocol::api::{CollectionStatus, ConnectorProjection, StatusSnapshot, StoreCounts, WorkerState};
use protocol::ApiError;

/// The status as it stands.
pub(crate) fn snapshot(w: &Indexing) -> Result<StatusSnapshot, ApiError> {
    snapshot_as(w, w.jobs.active())
}

fn snapshot_as(w: &Indexing, active_job_id: Option<String>) -> Result<StatusSnapshot, ApiError> {
    let (core, settings, stores) = (&w.core, &w.core.settings, &w.core.stores);
    let conn = stores.catalog.reader();
    let counts = catalog::collection_counts(&conn)?;
    let last = catalog::last_synced(&conn)?;
    // Before the embedder loaded, no table is known and everything counts as backlog.
    let key = stores.embed_table();
    let table = key.as_ref().map_or_else(String::new, |k| k.name.clone());
    let embedded = catalog::embedded_counts(&conn, &table)?;
    let backlog = catalog::embed_backlog_count(&conn, &table)?;
    let recorded_vectors = catalog::embedded_chunk_count(&conn, &table)?;
    drop(conn);
    let vector_rows = match (&key, &stores.vectors) {
        (Some(key), Some(v)) => v.count(key).unwrap_or(0) as u64,
        _ => 0,
    };
    let collections: Vec<CollectionStatus> = settings
        .config()
        .collections
        .iter()
        .map(|c| {
            let (docs, chunks) = counts.get(&c.name).copied().unwrap_or((0, 0));
            CollectionStatus {
                name: c.name.clone(),
                path: c.path.clone(),
                document_count: docs,
                chunk_count: chunks,
                embedded_count: embedded.get(&c.name).copied().unwrap_or(0),
                watch: w.watchers.state(&c.name),
            }
        })
        .collect();
    let documents = collections.iter().map(|c| c.document_count).sum();
    Ok(StatusSnapshot {
        index_name: settings.dirs.index_name.clone(),
        config_path: settings.dirs.config_file().display().to_string(),
        db_path: settings.dirs.catalog_file().display().to_string(),
        total_documents: documents,
        total_chunks: collections.iter().map(|c| c.chunk_count).sum(),
        collections,
        embedding_backlog: backlog,
        embedding_rate: w.embedding_pace.per_second().map(|r| (r * 10.0).round() / 10.0),
        ocr_backlog: w.pictures.pending() as u64,
        keyword_backlog: crate::index::keyword_refeed::backlog(w),
        last_updated: last.unwrap_or_else(time_fmt::now_iso),
        healthy: true,
        connector_projection: ConnectorProjection::default(),
        content_type_boost: settings.content_types.status(),
        capabilities: core.capabilities(),
        active_job_id,
        repairs: stores.repairs.list(),
        stores: StoreCounts {
            catalog_documents: documents,
            keyword_documents: stores.bm25.num_docs(),
            recorded_vectors,
            vector_rows,
        },
        worker: WorkerState::Running,
        cluster: crate::index::team::status(w),
    })
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
        Ok(s) => match serde_json::to_vec_pretty(&s) {
            Ok(bytes) => order.write_if_newest(ticket, || {
                if let Err(e) = protocol::write_atomic(&w.core.settings.dirs.status_file(), &bytes) {
                    tracing::warn!("could not publish status: {e}");
                }
            }),
            Err(e) => tracing::warn!("could not serialize status: {e}"),
        },
        Err(e) => tracing::warn!("could not compute status: {e}"),
    }
}
