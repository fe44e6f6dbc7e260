//! The status snapshot: computed after every job and published to `status.json`.

use crate::{stores::catalog, time_fmt, Worker};
use protocol::api::{Capabilities, CollectionStatus, ConnectorProjection, StatusSnapshot, StoreCounts, WorkerState};
use protocol::ApiError;

impl Worker {
    /// What the loaded models allow (vector search needs the vector store too).
    pub(crate) fn capabilities(&self) -> Capabilities {
        let loaded = self.models.loaded();
        let vector = loaded.embed && self.vectors.is_some();
        Capabilities { bm25: true, vector, hybrid: vector, answer: loaded.gen, egress_policy: self.models.egress() }
    }

    pub(crate) fn status_snapshot(&self) -> Result<StatusSnapshot, ApiError> {
        self.status_snapshot_as(self.jobs.active())
    }

    fn status_snapshot_as(&self, active_job_id: Option<String>) -> Result<StatusSnapshot, ApiError> {
        let conn = self.catalog.reader();
        let counts = catalog::collection_counts(&conn)?;
        let last = catalog::last_synced(&conn)?;
        // Before the embedder loaded, no table is known and everything counts as backlog.
        let key = self.embed_table();
        let table = key.as_ref().map_or_else(String::new, |k| k.name.clone());
        let embedded = catalog::embedded_counts(&conn, &table)?;
        let backlog = catalog::embed_backlog_count(&conn, &table)?;
        let recorded_vectors = catalog::embedded_chunk_count(&conn, &table)?;
        drop(conn);
        let vector_rows = match (&key, &self.vectors) {
            (Some(key), Some(v)) => v.count(key).unwrap_or(0) as u64,
            _ => 0,
        };
        let collections: Vec<CollectionStatus> = self
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
                    watch: self.watchers.state(&c.name),
                }
            })
            .collect();
        let documents = collections.iter().map(|c| c.document_count).sum();
        Ok(StatusSnapshot {
            index_name: self.dirs.index_name.clone(),
            config_path: self.dirs.config_file().display().to_string(),
            db_path: self.dirs.catalog_file().display().to_string(),
            total_documents: documents,
            total_chunks: collections.iter().map(|c| c.chunk_count).sum(),
            collections,
            embedding_backlog: backlog,
            ocr_backlog: self.pictures.pending() as u64,
            last_updated: last.unwrap_or_else(time_fmt::now_iso),
            healthy: true,
            connector_projection: ConnectorProjection::default(),
            content_type_boost: self.content_types.status(),
            capabilities: self.capabilities(),
            active_job_id,
            repairs: self.repairs.list(),
            stores: StoreCounts {
                catalog_documents: documents,
                keyword_documents: self.bm25.num_docs(),
                recorded_vectors,
                vector_rows,
            },
            worker: WorkerState::Running,
        })
    }

    /// Writes the snapshot atomically; failures are logged, never fatal.
    pub(crate) fn publish_status(&self) {
        self.publish_status_as(self.jobs.active());
    }

    /// Publishes with a known active job (used while the job runner holds its lock).
    pub(crate) fn publish_status_as(&self, active_job_id: Option<String>) {
        match self.status_snapshot_as(active_job_id) {
            Ok(s) => match serde_json::to_vec_pretty(&s) {
                Ok(bytes) => {
                    if let Err(e) = protocol::write_atomic(&self.dirs.status_file(), &bytes) {
                        tracing::warn!("could not publish status: {e}");
                    }
                }
                Err(e) => tracing::warn!("could not serialize status: {e}"),
            },
            Err(e) => tracing::warn!("could not compute status: {e}"),
        }
    }
}
