//! Local models: presets, the model cache, downloads, and the ONNX Runtime sessions
//! (embedder, cross-encoder reranker, generator), each loaded lazily on first use.

mod download;
pub mod egress;
pub mod embedder;
pub mod encoder;
pub mod generator;
pub mod language_means;
pub mod ocr;
pub mod presets;
pub mod pull;
mod registry;
pub mod runtime;
pub mod server;

pub use registry::{Loaded, Models};
pub use runtime::ModelError;

use protocol::ApiError;
use std::path::{Path, PathBuf};

/// A model file reference: `hf:<org>/<repo>/<path-in-repo>` or `file:/abs/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelRef {
    Hub { org: String, repo: String, path: String },
    File(PathBuf),
}

impl ModelRef {
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let bad = || {
            ApiError::validation(format!(
                "Invalid model reference {raw:?}: use hf:<org>/<repo>/<file> or file:/abs/path"
            ))
        };
        if let Some(p) = raw.strip_prefix("file:") {
            let p = Path::new(p);
            return if p.is_absolute() { Ok(ModelRef::File(p.to_path_buf())) } else { Err(bad()) };
        }
        let rest = raw.strip_prefix("hf:").ok_or_else(bad)?;
        let mut parts = rest.splitn(3, '/');
        let (Some(org), Some(repo), Some(path)) = (parts.next(), parts.next(), parts.next()) else { return Err(bad()) };
        let ok = |s: &str| {
            !s.is_empty()
                && s.split('/').all(|seg| !seg.is_empty() && seg != "." && seg != "..")
                && !s.contains(['\\', '\0', '?', '#'])
        };
        if !ok(org) || !ok(repo) || !ok(path) || org.contains('/') || repo.contains('/') {
            return Err(bad());
        }
        Ok(ModelRef::Hub { org: org.into(), repo: repo.into(), path: path.into() })
    }

    /// Where the file lives locally: `<cache>/models/<org>/<repo>/<path>` for hub files.
    pub fn local_path(&self, models_dir: &Path) -> PathBuf {
        match self {
            ModelRef::Hub { org, repo, path } => models_dir.join(org).join(repo).join(path),
            ModelRef::File(p) => p.clone(),
        }
    }

    /// The download URL under a hub base (`SVC_HF_ENDPOINT`), in the Hugging Face layout.
    pub fn url(&self, endpoint: &str) -> Option<String> {
        match self {
            ModelRef::Hub { org, repo, path } => {
                Some(format!("{}/{org}/{repo}/resolve/main/{path}", endpoint.trim_end_matches('/')))
            }
            ModelRef::File(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_refs_and_maps_them() {
        let r = ModelRef::parse("hf:sentence-transformers/all-MiniLM-L6-v2/onnx/model.onnx").unwrap();
        assert_eq!(
            r.local_path(Path::new("/c/models")),
            Path::new("/c/models/sentence-transformers/all-MiniLM-L6-v2/onnx/model.onnx")
        );
        assert_eq!(
            r.url("http://127.0.0.1:9/").unwrap(),
            "http://127.0.0.1:9/sentence-transformers/all-MiniLM-L6-v2/resolve/main/onnx/model.onnx"
        );
        assert_eq!(ModelRef::parse("file:/opt/m.onnx").unwrap(), ModelRef::File("/opt/m.onnx".into()));
        for bad in ["hf:a/b", "hf:a/../x/y", "file:rel.onnx", "http://x", "hf:a/b/../../etc", "hf:/b/c"] {
            assert!(ModelRef::parse(bad).is_err(), "{bad}");
        }
    }
}
