//! ONNX Runtime, loaded dynamically once per process, and the sessions built on it.
//!
//! The library is found through `ORT_DYLIB_PATH`, else in `<cache>/runtime/`
//! (where `scripts/ort-env` copies it). A missing or unloadable library makes every model
//! unavailable, never the worker.

use ort::session::Session;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    #[error("ONNX Runtime is not available: {0}")]
    Runtime(String),
    #[error("model file {0} is missing")]
    Missing(String),
    #[error("model {path} could not be loaded: {reason}")]
    Load { path: String, reason: String },
    #[error("model inference failed: {0}")]
    Inference(String),
    #[error("tokenizer failed: {0}")]
    Tokenizer(String),
    #[error("model gave an unexpected output: {0}")]
    Shape(String),
    #[error("model call exceeded its time limit")]
    Timeout,
}

pub type Result<T> = std::result::Result<T, ModelError>;

pub(crate) fn infer<E: std::fmt::Display>(e: E) -> ModelError {
    ModelError::Inference(e.to_string())
}

/// The library file: `ORT_DYLIB_PATH`, else the newest `libonnxruntime.so*` in `<cache>/runtime/`.
pub fn locate_library(cache_dir: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dir = cache_dir.join("runtime");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libonnxruntime.so")))
        .collect();
    found.sort();
    found.pop()
}

static ENVIRONMENT: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

/// Loads ONNX Runtime once; later calls return the first outcome.
pub fn environment(cache_dir: &Path) -> Result<&'static ort::environment::Environment> {
    let outcome = ENVIRONMENT.get_or_init(|| {
        let lib = locate_library(cache_dir).ok_or_else(|| {
            "libonnxruntime.so not found: set ORT_DYLIB_PATH or run scripts/ort-env".to_string()
        })?;
        if !lib.is_file() {
            return Err(format!("{} does not exist", lib.display()));
        }
        // A library that is not ONNX Runtime may abort inside dlopen'd code; catch what we can.
        let built = std::panic::catch_unwind(|| -> std::result::Result<_, String> {
            ort::init_from(&lib).map_err(|e| e.to_string())?.with_name("svc").build().map_err(|e| e.to_string())
        });
        match built {
            Ok(r) => r.map_err(|e| format!("{}: {e}", lib.display())),
            Err(_) => Err(format!("{}: loading ONNX Runtime panicked", lib.display())),
        }
    });
    outcome.as_ref().map_err(|e| ModelError::Runtime(e.clone()))
}

/// A session on `path` with `threads` intra-op threads.
pub fn session(cache_dir: &Path, path: &Path, threads: usize) -> Result<Session> {
    let env = environment(cache_dir)?;
    if !path.is_file() {
        return Err(ModelError::Missing(path.display().to_string()));
    }
    let load = |reason: String| ModelError::Load { path: path.display().to_string(), reason };
    let builder = Session::builder(env).map_err(|e| load(e.to_string()))?;
    let mut builder = builder.with_intra_threads(threads.max(1)).map_err(|e| load(e.to_string()))?;
    builder.commit_from_file(path).map_err(|e| load(e.to_string()))
}

/// Runs `f`, turning a panic inside the model code into an error of this call only.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(ModelError::Inference(format!("{what} panicked"))),
    }
}
