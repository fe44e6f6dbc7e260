//! The models of the active preset, each an independent session loaded on first use.
//! A load failure is remembered (and reported) until the files change through a pull or a
//! preset switch; a missing file is looked for again on every use.

use super::embedder::{Embedder, ServerEmbedder};
use super::encoder::{CountingTokenizer, CrossEncoder, OnnxEmbedder};
use super::generator::{Generator, LlamaGenerator, ServerGenerator};
use super::ocr::OcrEngine;
use super::presets::{self, Prefixes, Preset, Role};
use super::runtime::{ModelError, Result};
use super::server::ModelServer;
use super::ModelRef;
use protocol::api::EgressPolicy;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

enum SlotState<T> {
    Unloaded,
    Ready(Arc<T>),
    Failed(ModelError),
}

struct Slot<T>(Mutex<SlotState<T>>);

impl<T> Slot<T> {
    fn new() -> Self {
        Slot(Mutex::new(SlotState::Unloaded))
    }

    fn get_or_load(&self, load: impl FnOnce() -> Result<T>) -> Result<Arc<T>> {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match &*state {
            SlotState::Ready(m) => return Ok(Arc::clone(m)),
            SlotState::Failed(e) => return Err(e.clone()),
            SlotState::Unloaded => {}
        }
        match load() {
            Ok(m) => {
                let m = Arc::new(m);
                *state = SlotState::Ready(Arc::clone(&m));
                Ok(m)
            }
            // Not remembered: a file may be pulled, a model server may come up.
            Err(e @ (ModelError::Missing(_) | ModelError::Server(_))) => Err(e),
            Err(e) => {
                tracing::warn!("{e}");
                *state = SlotState::Failed(e.clone());
                Err(e)
            }
        }
    }

    fn is_ready(&self) -> bool {
        matches!(&*self.0.lock().unwrap_or_else(|p| p.into_inner()), SlotState::Ready(_))
    }

    fn has_failed(&self) -> bool {
        matches!(&*self.0.lock().unwrap_or_else(|p| p.into_inner()), SlotState::Failed(_))
    }

    fn reset(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = SlotState::Unloaded;
    }
}

/// Which models are usable right now (for capabilities and status).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loaded {
    pub embed: bool,
    pub rerank: bool,
    pub gen: bool,
}

pub struct Models {
    cache_dir: PathBuf,
    /// The built-in presets, then the user's (index.yml).
    presets: Vec<&'static Preset>,
    preset: RwLock<&'static Preset>,
    egress: EgressPolicy,
    threads: usize,
    /// The generator's threads: one per physical core (llama.cpp gains nothing from a core's
    /// second hardware thread).
    gen_threads: usize,
    embed: Slot<Embedder>,
    rerank: Slot<CrossEncoder>,
    gen: Slot<Generator>,
    counting: Slot<CountingTokenizer>,
    /// OCR: the same models whatever the preset.
    ocr: Slot<OcrEngine>,
    /// The downloads of a preset's missing files (`POST /api/models/pull`).
    pub pulls: super::pull::PullManager,
}

impl Models {
    /// The models of the preset `preset_id` (the default one when absent or unknown) among the
    /// built-in presets and `custom`; model servers are called only where `egress` allows.
    pub fn new(cache_dir: &Path, preset_id: Option<&str>, custom: Vec<&'static Preset>, egress: EgressPolicy) -> Self {
        let presets: Vec<&'static Preset> = presets::PRESETS.iter().chain(custom).collect();
        let find = |id: &str| presets::find_in(presets.iter().copied(), id);
        let preset = preset_id.and_then(find).or_else(|| find(presets::DEFAULT_PRESET)).unwrap_or(&presets::PRESETS[0]);
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4);
        Models {
            cache_dir: cache_dir.to_path_buf(),
            presets,
            preset: RwLock::new(preset),
            egress,
            threads,
            gen_threads: physical_cores(),
            embed: Slot::new(),
            rerank: Slot::new(),
            gen: Slot::new(),
            counting: Slot::new(),
            ocr: Slot::new(),
            pulls: Default::default(),
        }
    }

    /// Every preset: the built-in ones, then the user's.
    pub fn presets(&self) -> &[&'static Preset] {
        &self.presets
    }

    /// The preset `id` names, directly or as an alias ([`presets::canonical_id`]).
    pub fn find_preset(&self, id: &str) -> Option<&'static Preset> {
        presets::find_in(self.presets.iter().copied(), id)
    }

    pub fn egress(&self) -> EgressPolicy {
        self.egress
    }

    pub fn preset(&self) -> &'static Preset {
        *self.preset.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Switches the preset; every model loads again on next use.
    pub fn set_preset(&self, preset: &'static Preset) {
        *self.preset.write().unwrap_or_else(|p| p.into_inner()) = preset;
        self.reset();
    }

    /// Forgets loaded models and failures (after a pull wrote new files).
    pub fn reset(&self) {
        self.embed.reset();
        self.rerank.reset();
        self.gen.reset();
        self.counting.reset();
        self.ocr.reset();
    }

    pub fn models_dir(&self) -> PathBuf {
        self.cache_dir.join("models")
    }

    /// The local files of a role's model in the active preset: the model and, for an ONNX
    /// model, its tokenizer.
    fn files(&self, role: Role) -> Result<(PathBuf, Option<PathBuf>)> {
        let spec = self
            .preset()
            .model(role)
            .ok_or_else(|| ModelError::Missing(format!("the preset has no {} model", role.as_str())))?;
        let dir = self.models_dir();
        let path = |r: &str| {
            let p = ModelRef::parse(r).map(|m| m.local_path(&dir)).map_err(|_| ModelError::Missing(r.to_string()))?;
            if p.is_file() {
                Ok(p)
            } else {
                Err(ModelError::Missing(p.display().to_string()))
            }
        };
        Ok((path(spec.model)?, spec.tokenizer.map(path).transpose()?))
    }

    /// An ONNX model's files: both must be named by the preset.
    fn onnx_files(&self, role: Role) -> Result<(PathBuf, PathBuf)> {
        match self.files(role)? {
            (model, Some(tokenizer)) => Ok((model, tokenizer)),
            (model, None) => Err(ModelError::Load {
                path: model.display().to_string(),
                reason: format!("the preset names no tokenizer for its {} model", role.as_str()),
            }),
        }
    }

    /// The model server that runs a role's model in the active preset, if one does.
    fn server(&self, role: Role) -> Option<&'static ModelServer> {
        self.preset().model(role).and_then(|spec| spec.server)
    }

    /// The embedding model's reference: the key of its vector table.
    pub fn embed_model_ref(&self) -> &'static str {
        self.preset().model(Role::Embed).map_or("", |m| m.model)
    }

    /// How the embedder's queries are moved before they are searched
    /// ([`super::presets::ModelSpec::query_offset`]).
    pub fn embed_query_offset(&self) -> Option<super::presets::QueryOffset> {
        self.preset().model(Role::Embed).and_then(|m| m.query_offset)
    }

    /// The active preset's generator, as its model reference ("" when it has none).
    pub fn gen_model_ref(&self) -> &'static str {
        self.preset().model(Role::Gen).map_or("", |m| m.model)
    }

    pub fn embedder(&self) -> Result<Arc<Embedder>> {
        self.embed.get_or_load(|| {
            if let Some(server) = self.server(Role::Embed) {
                return ServerEmbedder::connect(server.clone(), self.egress).map(Embedder::Server);
            }
            let (m, t) = self.onnx_files(Role::Embed)?;
            let prefixes = self.preset().model(Role::Embed).map_or(Prefixes::NONE, |spec| spec.prefixes);
            OnnxEmbedder::load(&self.cache_dir, &m, &t, prefixes, self.threads).map(|e| Embedder::Onnx(Box::new(e)))
        })
    }

    pub fn reranker(&self) -> Result<Arc<CrossEncoder>> {
        self.rerank.get_or_load(|| {
            let (m, t) = self.onnx_files(Role::Rerank)?;
            CrossEncoder::load(&self.cache_dir, &m, &t, self.threads)
        })
    }

    pub fn generator(&self) -> Result<Arc<Generator>> {
        self.gen.get_or_load(|| {
            if let Some(server) = self.server(Role::Gen) {
                return Ok(Generator::Server(ServerGenerator::new(server.clone(), self.egress)));
            }
            let (model, _) = self.files(Role::Gen)?;
            LlamaGenerator::load(&model, self.gen_threads).map(Generator::Llama)
        })
    }

    /// The OCR engine (its files are in the cache of every preset's models: `scripts/models`).
    pub fn ocr(&self) -> Result<Arc<OcrEngine>> {
        self.ocr.get_or_load(|| OcrEngine::load(&self.cache_dir, &self.models_dir(), self.threads))
    }

    /// The embedder's tokenizer for counting a payload, when the preset's embedder files are
    /// in place (no ONNX session is created).
    pub fn counting_tokenizer(&self) -> Result<Arc<CountingTokenizer>> {
        self.counting.get_or_load(|| {
            let (_, t) = self.onnx_files(Role::Embed)?;
            CountingTokenizer::load(&t)
        })
    }

    /// The rerank model's reference, when the preset has one.
    pub fn rerank_model_ref(&self) -> Option<&'static str> {
        self.preset().model(Role::Rerank).map(|m| m.model)
    }

    /// Usable models without loading anything new: a loaded model, or (for the lazily
    /// loaded reranker and generator) files in place and no failed load.
    pub fn loaded(&self) -> Loaded {
        let onnx = || super::runtime::environment(&self.cache_dir).is_ok();
        let present = |role| self.server(role).is_some() || (self.files(role).is_ok() && (role == Role::Gen || onnx()));
        Loaded {
            embed: self.embed.is_ready(),
            rerank: self.rerank.is_ready() || (!self.rerank.has_failed() && present(Role::Rerank)),
            gen: self.gen.is_ready() || (!self.gen.has_failed() && present(Role::Gen)),
        }
    }
}

/// The machine's physical cores (logical ones when that is unknown).
fn physical_cores() -> usize {
    sysinfo::System::physical_core_count()
        .ok()
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(2)
        .max(1)
}
