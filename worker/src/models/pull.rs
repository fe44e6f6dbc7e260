//! `POST /api/models/pull` and `GET /api/models/status`: one pull at a time fetches every
//! missing file of the active preset from the hub (`SVC_HF_ENDPOINT`), with byte progress,
//! resumable `.part` files and checksums. `SVC_OFFLINE=1` forbids downloads.

use super::download::download;
use super::presets::{Preset, Role};
use super::ModelRef;
pub use protocol::api::{PullFailure, PullProgress, PullStatus};
use std::path::PathBuf;
use std::sync::Mutex;

pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PullError {
    #[error("Download already in progress")]
    Busy,
}

/// Where downloads come from and whether they are allowed.
#[derive(Debug, Clone)]
pub struct PullSource {
    pub endpoint: String,
    pub offline: bool,
}

impl PullSource {
    pub fn from_env() -> Self {
        let endpoint = std::env::var("SVC_HF_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let offline = std::env::var("SVC_OFFLINE").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        PullSource { endpoint, offline }
    }
}

#[derive(Default)]
pub struct PullManager {
    status: Mutex<PullStatus>,
}

impl PullManager {
    pub fn status(&self) -> PullStatus {
        self.status.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn update(&self, f: impl FnOnce(&mut PullStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// Marks a pull as started; fails when one is running.
    pub fn begin(&self, now_ms: i64) -> Result<(), PullError> {
        let mut s = self.status.lock().unwrap_or_else(|p| p.into_inner());
        if s.active {
            return Err(PullError::Busy);
        }
        *s = PullStatus { active: true, started_at: Some(now_ms), ..Default::default() };
        Ok(())
    }

    /// Ends a pull whose thread could not start.
    pub fn run_failed(&self, error: &str) {
        self.update(|s| {
            s.active = false;
            s.failed.push(PullFailure { role: Role::Embed, error: error.to_string() });
        });
    }

    /// Fetches the preset's missing files (call after [`PullManager::begin`], on its own thread).
    pub fn run(&self, preset: &Preset, models_dir: &std::path::Path, source: &PullSource) {
        for spec in preset.models {
            self.update(|s| {
                s.current_type = Some(spec.role);
                s.progress = Some(PullProgress::default());
            });
            match self.fetch_model_guarded(&spec.files(), models_dir, source) {
                Ok(()) => self.update(|s| s.completed.push(spec.role)),
                Err(error) => {
                    tracing::warn!("pull of the {} model failed: {error}", spec.role.as_str());
                    self.update(|s| s.failed.push(PullFailure { role: spec.role, error }));
                }
            }
        }
        self.update(|s| {
            s.active = false;
            s.current_type = None;
        });
    }

    /// [`PullManager::fetch_model`], with a panic turned into this model's failure, so that
    /// the pull still ends (a pull left `active` would answer every later pull with 409).
    fn fetch_model_guarded(
        &self,
        files: &[ModelRef],
        models_dir: &std::path::Path,
        source: &PullSource,
    ) -> Result<(), String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.fetch_model(files, models_dir, source)))
            .unwrap_or_else(|_| Err("the download panicked".to_string()))
    }

    fn fetch_model(&self, files: &[ModelRef], models_dir: &std::path::Path, source: &PullSource) -> Result<(), String> {
        let missing: Vec<(&ModelRef, PathBuf)> =
            files.iter().map(|f| (f, f.local_path(models_dir))).filter(|(_, p)| !p.is_file()).collect();
        if missing.is_empty() {
            return Ok(());
        }
        if source.offline {
            return Err(
                "offline (SVC_OFFLINE=1): downloads are disabled; prepare the models with scripts/models".into()
            );
        }
        for (file, dest) in missing {
            let Some(url) = file.url(&source.endpoint) else {
                return Err(format!("{} does not exist", dest.display()));
            };
            let mut on_progress = |done: u64, total: Option<u64>| {
                let total = total.unwrap_or(0);
                let percent = if total > 0 { (done as f64 / total as f64 * 100.0).min(100.0) } else { 0.0 };
                self.update(|s| {
                    s.progress = Some(PullProgress { downloaded_bytes: done, total_bytes: total, percent })
                });
            };
            download(&url, &dest, None, &mut on_progress).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pull_at_a_time_and_offline_fails_clearly() {
        let m = PullManager::default();
        m.begin(1).unwrap();
        assert_eq!(m.begin(2), Err(PullError::Busy));
        let dir = tempfile::tempdir().unwrap();
        let preset = super::super::presets::find("default").unwrap();
        m.run(preset, dir.path(), &PullSource { endpoint: "http://127.0.0.1:9".into(), offline: true });
        let s = m.status();
        assert!(!s.active && s.completed.is_empty());
        assert_eq!(s.failed.len(), 3);
        assert!(s.failed[0].error.contains("offline"), "{:?}", s.failed);
        m.begin(3).unwrap();
    }
}
