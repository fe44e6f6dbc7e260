//! The model endpoints: presets (`GET/POST /api/presets`) and pulls
//! (`POST /api/models/pull`, `GET /api/models/status`).

use crate::models::presets;
use crate::models::pull::{PullError, PullSource};
use crate::shared::Shared;
use crate::time_fmt;
use protocol::api::{PresetChanged, PresetsResponse, PullStarted};
use protocol::ApiError;
use std::sync::Arc;

pub fn list(w: &Shared) -> Result<PresetsResponse, ApiError> {
    let active = w.models.preset().id;
    Ok(PresetsResponse {
        presets: presets::views(w.models.presets(), active),
        active_preset: active.to_string(),
        capabilities: w.capabilities(),
    })
}

/// Switches the active preset (saved in `index.yml`); the new models load on next use and
/// the embedding backlog of a new embedder starts.
pub fn set(w: &Shared, id: &str) -> Result<PresetChanged, ApiError> {
    let preset = w.models.find_preset(id).ok_or_else(|| ApiError::not_found(format!("Unknown preset: {id}")))?;
    let before = w.models.embed_model_ref();
    {
        let mut cfg = w.settings.config();
        cfg.preset = Some(preset.id.to_string());
        cfg.save(&w.settings.dirs.config_file())?;
    }
    w.models.set_preset(preset);
    let changed = before != w.models.embed_model_ref();
    if changed {
        w.stores.set_embed_table(None);
    }
    w.events.changes.fire();
    w.hooks.publish_status();
    Ok(PresetChanged {
        success: true,
        active_preset: preset.id.to_string(),
        embed_model_changed: changed,
        capabilities: w.capabilities(),
        note: changed
            .then(|| "The embedding model changed: documents are embedded again in the background.".to_string()),
    })
}

/// Starts a pull of the active preset's missing files; 409 while one runs.
pub fn pull(w: &Arc<Shared>) -> Result<PullStarted, ApiError> {
    w.models.pulls.begin(time_fmt::now_ms()).map_err(|e: PullError| ApiError::conflict(e.to_string()))?;
    let worker = Arc::clone(w);
    let spawned = std::thread::Builder::new().name("model-pull".into()).spawn(move || {
        worker.models.pulls.run(worker.models.preset(), &worker.models.models_dir(), &PullSource::from_env());
        worker.models.reset();
        worker.events.changes.fire();
        worker.hooks.publish_status();
    });
    if let Err(e) = spawned {
        w.models.pulls.run_failed(&e.to_string());
        return Err(crate::errors::internal(format!("could not start the download: {e}")));
    }
    Ok(PullStarted { started: true, message: "Download started. Poll /api/models/status for progress.".to_string() })
}

pub fn status(w: &Shared) -> Result<protocol::api::PullStatus, ApiError> {
    Ok(w.models.pulls.status())
}
