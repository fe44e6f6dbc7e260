//! Collections and the jobs that index them.

use crate::config::{CollectionConfig, DEFAULT_PATTERN};
use crate::index::rules::FileMatcher;
use crate::stores::catalog::Origin;
use crate::{index::git, runtime, stores::catalog, Worker, WorkerError};
use protocol::api::{
    CollectionAdded, CollectionInfo, CollectionRef, CollectionRemoved, JobKind, SyncResult, SyncStarted,
};
use protocol::{AddCollection, ApiError, CollectionName, ErrorCode};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub fn list(w: &Worker) -> Result<Vec<CollectionInfo>, ApiError> {
    let cfg = w.config();
    let list: Vec<CollectionInfo> = cfg
        .collections
        .iter()
        .map(|c| CollectionInfo {
            name: c.name.clone(),
            path: c.path.clone(),
            pattern: c.pattern.clone(),
            include: c.include.clone(),
            exclude: c.exclude.clone(),
            git_pull: c.git_pull,
        })
        .collect();
    Ok(list)
}

pub fn add(w: &Arc<Worker>, req: AddCollection) -> Result<CollectionAdded, ApiError> {
    let path = Path::new(&req.path);
    if req.path.trim().is_empty() || !path.is_absolute() {
        return Err(ApiError::validation("path must be an absolute folder path"));
    }
    if !path.exists() {
        return Err(ApiError::new(ErrorCode::PathNotFound, format!("Path does not exist: {}", req.path)));
    }
    let root = path
        .canonicalize()
        .map_err(|e| ApiError::new(ErrorCode::PathNotFound, format!("Path is not accessible: {e}")))?;
    if !root.is_dir() {
        return Err(ApiError::validation("path must be a folder"));
    }
    let name = match req.name.as_deref() {
        Some(n) => CollectionName::parse(n),
        None => CollectionName::slug_of(root.file_name().and_then(|n| n.to_str()).unwrap_or("")),
    }
    .map_err(|e| ApiError::validation(e.to_string()))?;
    let coll = CollectionConfig {
        name: name.as_str().to_string(),
        path: root.display().to_string(),
        pattern: req.pattern.filter(|p| !p.trim().is_empty()).unwrap_or_else(|| DEFAULT_PATTERN.to_string()),
        include: req.include.unwrap_or_default(),
        exclude: req.exclude.unwrap_or_default(),
        git_pull: req.git_pull,
        watch: req.watch.unwrap_or(true),
    };
    FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude).map_err(|e| ApiError::validation(e.to_string()))?;

    let slot = w.jobs.reserve()?;
    {
        let mut cfg = w.config();
        if cfg.find(&coll.name).is_some() {
            return Err(ApiError::new(ErrorCode::Duplicate, format!("Collection already exists: {}", coll.name)));
        }
        cfg.collections.push(coll.clone());
        if let Err(e) = cfg.save(&w.dirs.config_file()) {
            cfg.collections.pop();
            return Err(runtime(e));
        }
    }
    catalog::upsert_collection(&w.catalog.writer(), &coll.name, &coll.path)?;
    let job_coll = coll.clone();
    let job_id = slot.spawn(w, JobKind::Add, move |w| run_sync(w, vec![job_coll], None))?;
    w.refresh_watches();
    w.publish_status();
    Ok(CollectionAdded { job_id, collection: CollectionRef { name: coll.name, path: coll.path } })
}

/// Takes a collection's documents out of the index (they stay in the catalog).
pub fn drop_from_index(w: &Worker, name: &str) -> Result<(), WorkerError> {
    let ids = {
        let mut conn = w.catalog.writer();
        let tx = conn.transaction().map_err(catalog::CatalogError::from)?;
        let gen = catalog::next_generation(&tx)?;
        let ids = catalog::deactivate_collection(&tx, gen, name)?;
        catalog::delete_collection_row(&tx, name)?;
        tx.commit().map_err(catalog::CatalogError::from)?;
        ids
    };
    if !ids.is_empty() {
        w.indexer().converge()?;
    }
    Ok(())
}

pub fn remove(w: &Worker, name: &str) -> Result<CollectionRemoved, ApiError> {
    let _slot = w.jobs.reserve()?;
    let removed = {
        let mut cfg = w.config();
        let Some(pos) = cfg.collections.iter().position(|c| c.name.eq_ignore_ascii_case(name)) else {
            return Err(ApiError::not_found(format!("Collection not found: {name}")));
        };
        let removed = cfg.collections.remove(pos);
        if let Err(e) = cfg.save(&w.dirs.config_file()) {
            cfg.collections.insert(pos, removed);
            return Err(runtime(e));
        }
        removed
    };
    w.refresh_watches();
    drop_from_index(w, &removed.name)?;
    w.publish_status();
    Ok(CollectionRemoved {
        success: true,
        collection: removed.name,
        note: "The collection was removed from the config. Its files are untouched; its documents no longer appear in searches.".to_string(),
    })
}

pub fn sync(
    w: &Arc<Worker>,
    collection: Option<CollectionName>,
    git_pull: Option<bool>,
) -> Result<SyncStarted, ApiError> {
    let slot = w.jobs.reserve()?;
    let targets: Vec<CollectionConfig> = {
        let cfg = w.config();
        match collection.as_deref() {
            Some(name) => match cfg.find(name) {
                Some(c) => vec![c.clone()],
                None => return Err(ApiError::not_found(format!("Collection not found: {name}"))),
            },
            None => cfg.collections.clone(),
        }
    };
    let job_id = slot.spawn(w, JobKind::Sync, move |w| run_sync(w, targets, git_pull))?;
    Ok(SyncStarted { job_id })
}

pub fn get_job(w: &Worker, id: &str) -> Result<protocol::api::Job, ApiError> {
    match catalog::get_job(&w.catalog.reader(), id)? {
        Some(job) => Ok(job),
        None => Err(ApiError::not_found("Job not found or expired")),
    }
}

/// The indexing job that runs now (`null` when none).
pub fn active_job(w: &Worker) -> Result<protocol::api::ActiveJobResponse, ApiError> {
    let job = match w.jobs.active() {
        Some(id) => catalog::get_job(&w.catalog.reader(), &id)?,
        None => None,
    };
    Ok(protocol::api::ActiveJobResponse { active_job: job })
}

/// The body of `add` and `sync` jobs.
fn run_sync(w: &Worker, targets: Vec<CollectionConfig>, git_pull: Option<bool>) -> Result<SyncResult, String> {
    let started = Instant::now();
    let mut result = SyncResult::default();
    for coll in targets {
        if git_pull.unwrap_or(coll.git_pull) {
            git::pull_if_repo(Path::new(&coll.path)).map_err(|e| format!("{}: {e}", coll.name))?;
        }
        let r = {
            let _scan = w.scan_lock();
            w.indexer().sync_collection(&coll, Origin::Sync).map_err(|e| format!("{}: {e}", coll.name))?
        };
        result.total_files_processed += r.files_processed;
        result.total_files_added += r.files_added;
        result.total_files_updated += r.files_updated;
        result.total_files_errored += r.files_errored;
        result.total_files_skipped += r.files_skipped;
        result.collections.push(r);
    }
    if let Err(e) = catalog::collect_garbage(&w.catalog.writer()) {
        tracing::warn!("catalog garbage collection failed: {e}");
    }
    result.total_duration_ms = started.elapsed().as_millis() as u64;
    Ok(result)
}
