//! Model presets. `docs/models.md` says where each file comes from.

use super::ModelRef;
use protocol::api::ModelPreset;

/// What a model is for (`embed`, `rerank`, `gen`).
pub use protocol::api::ModelRole as Role;

/// One model of a preset: its ONNX file and its tokenizer, as model references.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    pub role: Role,
    pub model: &'static str,
    pub tokenizer: &'static str,
    /// An optional model may be missing (the reranker): its feature is then off.
    pub optional: bool,
}

impl ModelSpec {
    /// The files to fetch for this model (the ONNX file first).
    pub fn files(&self) -> Vec<ModelRef> {
        [self.model, self.tokenizer].iter().filter_map(|r| ModelRef::parse(r).ok()).collect()
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

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "default",
        name: "Default (small, ~0.6 GB)",
        models: &[
            ModelSpec {
                role: Role::Embed,
                model: "hf:sentence-transformers/all-MiniLM-L6-v2/onnx/model.onnx",
                tokenizer: "hf:sentence-transformers/all-MiniLM-L6-v2/tokenizer.json",
                optional: false,
            },
            ModelSpec {
                role: Role::Rerank,
                model: "hf:cross-encoder/ms-marco-MiniLM-L6-v2/onnx/model.onnx",
                tokenizer: "hf:cross-encoder/ms-marco-MiniLM-L6-v2/tokenizer.json",
                optional: true,
            },
            ModelSpec {
                role: Role::Gen,
                model: "hf:HuggingFaceTB/SmolLM2-135M-Instruct/onnx/model.onnx",
                tokenizer: "hf:HuggingFaceTB/SmolLM2-135M-Instruct/tokenizer.json",
                optional: false,
            },
        ],
    },
    Preset {
        id: "quality",
        name: "Quality (~1.5 GB)",
        models: &[
            ModelSpec {
                role: Role::Embed,
                model: "hf:BAAI/bge-small-en-v1.5/onnx/model.onnx",
                tokenizer: "hf:BAAI/bge-small-en-v1.5/tokenizer.json",
                optional: false,
            },
            ModelSpec {
                role: Role::Rerank,
                model: "hf:BAAI/bge-reranker-base/onnx/model.onnx",
                tokenizer: "hf:BAAI/bge-reranker-base/tokenizer.json",
                optional: true,
            },
            ModelSpec {
                role: Role::Gen,
                model: "hf:onnx-community/Qwen2.5-0.5B-Instruct/onnx/model.onnx",
                tokenizer: "hf:onnx-community/Qwen2.5-0.5B-Instruct/tokenizer.json",
                optional: false,
            },
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
                assert_eq!(m.files().len(), 2, "{} {role:?}", p.id);
            }
        }
        assert!(find(DEFAULT_PRESET).is_some());
        let v = views("quality");
        assert!(v.iter().any(|p| p.id == "quality" && p.active) && v.iter().any(|p| p.id == "default" && !p.active));
    }
}
