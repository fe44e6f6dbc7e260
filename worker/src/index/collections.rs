//! Collections and the jobs that index them.

use crate::config::{CollectionConfig, DEFAULT_PATTERN};
use crate::errors::internal;
use crate::index::indexer::{FileSync, SyncError};
use crate::index::rules::FileMatcher;
use crate::index::Indexing;
use crate::stores::catalog::Origin;
use crate::{index::git, stores::catalog};
use protocol::api::{
    CollectionAdded, CollectionInfo, CollectionRef, CollectionRemoved, CollectionSyncResult, JobKind, SyncResult,
    SyncStarted,
};
use protocol::{AddCollection, ApiError, CollectionName, ErrorCode};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub fn list(w: &Indexing) -> Result<Vec<CollectionInfo>, ApiError> {
    let cfg = w.core.settings.config();
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
            shared: c.shared,
            replica: c.replica,
        })
        .collect();
    Ok(list)
}

pub fn add(w: &Arc<Indexing>, req: AddCollection) -> Result<CollectionAdded, ApiError> {
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
        lang: req.lang,
        shared: req.shared,
        replica: false,
    };
    if coll.shared {
        crate::index::team::can_share(w)?;
    }
    FileMatcher::new(&coll.pattern, &coll.include, &coll.exclude).map_err(|e| ApiError::validation(e.to_string()))?;

    let slot = w.jobs.reserve()?;
    {
        let mut cfg = w.core.settings.config();
        if cfg.find(&coll.name).is_some() {
            return Err(ApiError::new(ErrorCode::Duplicate, format!("Collection already exists: {}", coll.name)));
        }
        cfg.collections.push(coll.clone());
        if let Err(e) = cfg.save(&w.core.settings.dirs.config_file()) {
            cfg.collections.pop();
            return Err(internal(e));
        }
    }
    catalog::upsert_collection(&w.core.stores.catalog.writer(), &coll.name, &coll.path)?;
    let job_coll = coll.clone();
    let job_id = slot.spawn(w, JobKind::Add, move |w| run_sync(w, vec![job_coll], None))?;
    w.refresh_watches();
    w.core.hooks.publish_status();
    Ok(CollectionAdded { job_id, collection: CollectionRef { name: coll.name, path: coll.path } })
}

/// Takes a collection's documents out of the index (they stay in the catalog).
pub fn drop_from_index(w: &Indexing, name: &str) -> Result<(), SyncError> {
    let ids = {
        let mut conn = w.core.stores.catalog.writer();
        let tx = conn.transaction().map_err(catalog::CatalogError::from)?;
        let gen = catalog::next_generation(&tx)?;
        let ids = catalog::deactivate_collection(&tx, gen, name)?;
        catalog::delete_collection_row(&tx, name)?;
        tx.commit().map_err(catalog::CatalogError::from)?;
        ids
    };
    if !ids.is_empty() {
        w.indexer().converge_rows(ids)?;
    }
    Ok(())
}

pub fn remove(w: &Indexing, name: &str) -> Result<CollectionRemoved, ApiError> {
    let _slot = w.jobs.reserve()?;
    let removed = {
        let mut cfg = w.core.settings.config();
        let Some(pos) = cfg.collections.iter().position(|c| c.name.eq_ignore_ascii_case(name)) else {
            return Err(ApiError::not_found(format!("Collection not found: {name}")));
        };
        let removed = cfg.collections.remove(pos);
        if let Err(e) = cfg.save(&w.core.settings.dirs.config_file()) {
            cfg.collections.insert(pos, removed);
            return Err(internal(e));
        }
        removed
    };
    w.refresh_watches();
    drop_from_index(w, &removed.name)?;
    w.core.hooks.publish_status();
    Ok(CollectionRemoved {
        success: true,
        collection: removed.name,
        note: "The collection was removed from the config. Its files are untouched; its documents no longer appear in searches.".to_string(),
    })
}

pub fn sync(
    w: &Arc<Indexing>,
    collection: Option<CollectionName>,
    git_pull: Option<bool>,
) -> Result<SyncStarted, ApiError> {
    let slot = w.jobs.reserve()?;
    let targets: Vec<CollectionConfig> = {
        let cfg = w.core.settings.config();
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

pub fn get_job(w: &Indexing, id: &str) -> Result<protocol::api::Job, ApiError> {
    match catalog::get_job(&w.core.stores.catalog.reader(), id)? {
        Some(job) => Ok(job),
        None => Err(ApiError::not_found("Job not found or expired")),
    }
}

/// The indexing job that runs now (`null` when none).
pub fn active_job(w: &Indexing) -> Result<protocol::api::ActiveJobResponse, ApiError> {
    let job = match w.jobs.active() {
        Some(id) => catalog::get_job(&w.core.stores.catalog.reader(), &id)?,
        None => None,
    };
    Ok(protocol::api::ActiveJobResponse { active_job: job })
}

/// The body of `add` and `sync` jobs.
fn run_sync(w: &Indexing, targets: Vec<CollectionConfig>, git_pull: Option<bool>) -> Result<SyncResult, String> {
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
    if let Err(e) = catalog::collect_garbage(&w.core.stores.catalog.writer()) {
        tracing::warn!("catalog garbage collection failed: {e}");
    }
    result.total_duration_ms = started.elapsed().as_millis() as u64;
    Ok(result)
}

/// Syncs one file and describes it as a sync result.
pub(crate) fn sync_one(
    w: &Indexing,
    coll: &CollectionConfig,
    root: &Path,
    rel: &str,
    origin: Origin,
) -> (SyncResult, Result<FileSync, String>) {
    let started = Instant::now();
    let outcome = w.indexer().sync_file(coll, root, rel, origin).map_err(|e| e.to_string());
    let mut r = CollectionSyncResult { collection: coll.name.clone(), files_processed: 1, ..Default::default() };
    match &outcome {
        Ok(FileSync::Indexed) if origin == Origin::Create => r.files_added = 1,
        Ok(FileSync::Indexed) => r.files_updated = 1,
        Ok(FileSync::Unchanged) => r.files_unchanged = 1,
        Ok(FileSync::Removed) => r.files_deactivated = 1,
        Ok(FileSync::Failed) | Err(_) => r.files_errored = 1,
    }
    r.duration_ms = started.elapsed().as_millis() as u64;
    let result = SyncResult {
        total_duration_ms: r.duration_ms,
        total_files_processed: 1,
        total_files_added: r.files_added,
        total_files_updated: r.files_updated,
        total_files_errored: r.files_errored,
        total_files_skipped: 0,
        collections: vec![r],
    };
    (result, outcome)
}

/// The config file is the user's: collections it no longer lists leave the index, and new
/// ones get a catalog row.
pub fn reconcile(w: &Indexing) -> Result<(), SyncError> {
    let configured: Vec<(String, String)> =
        w.core.settings.config().collections.iter().map(|c| (c.name.clone(), c.path.clone())).collect();
    let known = catalog::catalog_collections(&w.core.stores.catalog.reader())?;
    for name in known {
        if !configured.iter().any(|(n, _)| *n == name) {
            drop_from_index(w, &name)?;
        }
    }
    let conn = w.core.stores.catalog.writer();
    for (name, path) in configured {
        catalog::upsert_collection(&conn, &name, &path)?;
    }
    Ok(())
}
