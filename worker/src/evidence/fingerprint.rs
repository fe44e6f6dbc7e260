//! Fingerprints of what produced a capsule (config, retrieval, models, tokenizer) and of
//! the index itself. A verification compares them with the ones in force.

use crate::digest::sha256_hex;
use crate::shared::Shared;
use crate::stores::catalog;
use protocol::api::canonical_json;
use protocol::DepthPolicy;

/// Changes whenever retrieval or capsule selection changes behaviour.
const RETRIEVAL_VERSION: &str = "svc-capsule-retrieval-v1";

fn hashed(text: &str) -> String {
    format!("sha256:{}", sha256_hex(text.as_bytes()))
}

/// The collections (name, folder, patterns) and the active preset.
pub fn config(w: &Shared) -> String {
    let cfg = w.settings.config();
    let mut collections: Vec<serde_json::Value> = cfg
        .collections
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name, "path": c.path, "pattern": c.pattern, "include": c.include, "exclude": c.exclude
            })
        })
        .collect();
    collections.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let v = serde_json::json!({ "collections": collections, "preset": w.models.preset().id });
    hashed(&canonical_json(&v))
}

/// The retrieval pipeline and the depth policy's parameters.
pub fn retrieval(depth: DepthPolicy, candidate_limit: u32) -> String {
    hashed(&format!("{RETRIEVAL_VERSION}|{}|{candidate_limit}", depth.as_str()))
}

pub fn model(reference: &str) -> String {
    hashed(reference)
}

/// The embedding model a compile at `depth` would use now: vectors only when the embedder is
/// loaded (the worker loads it at start when its files are there).
pub fn embedding_now(w: &Shared, depth: DepthPolicy) -> Option<String> {
    (depth != DepthPolicy::Fast && w.models.loaded().embed).then(|| model(w.models.embed_model_ref()))
}

/// The rerank model a compile would use now.
pub fn rerank_now(w: &Shared, depth: DepthPolicy, requested: bool) -> Option<String> {
    if depth == DepthPolicy::Fast || !requested || !w.models.loaded().rerank {
        return None;
    }
    w.models.rerank_model_ref().map(model)
}

/// The index as of now: its name and the catalog generation (bumped by every change to a
/// document).
pub fn index(w: &Shared) -> Result<String, catalog::CatalogError> {
    let generation = catalog::current_generation(&w.stores.catalog.reader())?;
    Ok(hashed(&format!("{}:{generation}", w.settings.dirs.index_name)))
}
