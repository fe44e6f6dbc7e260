//! The active preset's embedder: the ONNX model on this machine, or a model server's
//! `/embeddings` (OpenAI's API: llama-server, Ollama, LM Studio, vLLM). Either way every
//! vector has unit length, and the reference of the model keys its own vector table.

use super::encoder::{OnnxEmbedder, BATCH_LIMIT, QUERY_LIMIT};
use super::presets::TextRole;
use super::runtime::{ModelError, Result};
use super::server::ModelServer;
use protocol::api::EgressPolicy;
use serde::{Deserialize, Serialize};

pub enum Embedder {
    Onnx(Box<OnnxEmbedder>),
    Server(ServerEmbedder),
}

/// Texts per ONNX run. Small batches are the fastest on a CPU: at 2 the activations of a run
/// stay in the cores' caches, and the int8 MiniLM embeds the ask-docs chunks 1.4x faster than at
/// 32 (docs/benchmarks.md). Sorting by length keeps the padding small either way.
const ONNX_BATCH: usize = 2;
/// Texts per request to a model server: one HTTP round trip carries many.
const SERVER_BATCH: usize = 32;

impl Embedder {
    /// How many texts one background `embed` call should carry.
    pub fn batch_size(&self) -> usize {
        match self {
            Embedder::Onnx(_) => ONNX_BATCH,
            Embedder::Server(_) => SERVER_BATCH,
        }
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        match self {
            Embedder::Onnx(e) => e.dim(),
            Embedder::Server(e) => e.dim,
        }
    }

    /// One unit-length vector per text, as a background batch.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match self {
            Embedder::Onnx(e) => e.embed_with_limit(texts, TextRole::Passage, BATCH_LIMIT),
            Embedder::Server(e) => e.embed(texts, TextRole::Passage),
        }
    }

    /// The unit-length vector of one query text.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut vectors = match self {
            Embedder::Onnx(e) => e.embed_with_limit(&[text], TextRole::Query, QUERY_LIMIT)?,
            Embedder::Server(e) => e.embed(&[text], TextRole::Query)?,
        };
        vectors.pop().ok_or_else(|| ModelError::Shape("the embedder returned no vector".into()))
    }
}

/// A model server's embeddings.
pub struct ServerEmbedder {
    server: ModelServer,
    policy: EgressPolicy,
    dim: usize,
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    input: &'a [&'a str],
    encoding_format: &'static str,
    /// What the texts are, for a server that reads a query and a passage differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    input_type: Option<&'static str>,
}

#[derive(Deserialize)]
struct EmbeddingsReply {
    data: Vec<EmbeddingRow>,
}

#[derive(Deserialize)]
struct EmbeddingRow {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl ServerEmbedder {
    /// Asks the server for one vector, to learn their length (and that it answers at all).
    pub fn connect(server: ModelServer, policy: EgressPolicy) -> Result<Self> {
        let mut e = ServerEmbedder { server, policy, dim: 0 };
        let probe = e.embed(&["dimension probe"], TextRole::Passage)?;
        e.dim = probe.first().map_or(0, Vec::len);
        if e.dim == 0 {
            return Err(e.server.unavailable("returned an empty embedding"));
        }
        Ok(e)
    }

    fn embed(&self, texts: &[&str], role: TextRole) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let server = &self.server;
        let input: Vec<&str> = texts.iter().map(|t| clip(t)).collect();
        let input_type = server.input_type.then_some(role.as_str());
        let body =
            EmbeddingsRequest { model: server.model.as_deref(), input: &input, encoding_format: "float", input_type };
        let bytes = serde_json::to_vec(&body).map_err(|e| ModelError::Inference(e.to_string()))?;
        let response = server.post(self.policy, "embeddings", &bytes)?;
        if response.status().as_u16() != 200 {
            return Err(server.refused(response));
        }
        let text =
            response.into_body().read_to_string().map_err(|e| server.unavailable(format!("stopped mid-reply: {e}")))?;
        let reply: EmbeddingsReply = serde_json::from_str(&text)
            .map_err(|e| server.unavailable(format!("sent a reply that is not an embeddings list: {e}")))?;
        self.vectors(reply, texts.len())
    }

    /// The reply's vectors in the order of the texts, each of unit length.
    fn vectors(&self, mut reply: EmbeddingsReply, texts: usize) -> Result<Vec<Vec<f32>>> {
        if reply.data.len() != texts {
            return Err(self.server.unavailable(format!("returned {} embeddings for {texts} texts", reply.data.len())));
        }
        reply.data.sort_by_key(|row| row.index.unwrap_or(usize::MAX));
        let mut out = Vec::with_capacity(texts);
        for row in reply.data {
            let mut v = row.embedding;
            if v.is_empty() || (self.dim != 0 && v.len() != self.dim) {
                return Err(self.server.unavailable(format!(
                    "returned an embedding of length {} where {} was expected",
                    v.len(),
                    self.dim
                )));
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if !norm.is_finite() || norm == 0.0 {
                return Err(self.server.unavailable("returned an embedding of zero or non-finite length"));
            }
            v.iter_mut().for_each(|x| *x /= norm);
            out.push(v);
        }
        Ok(out)
    }
}

/// Characters of a text sent to a model server: about as much as the built-in embedder reads
/// (256 tokens), and within the batch a server takes by default (llama-server: 512 tokens).
const MAX_SERVER_CHARS: usize = 1_500;

/// `text` cut to [`MAX_SERVER_CHARS`] at a character boundary.
fn clip(text: &str) -> &str {
    text.char_indices().nth(MAX_SERVER_CHARS).map_or(text, |(i, _)| &text[..i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn embedder(dim: usize) -> ServerEmbedder {
        let server = ModelServer::new("http://127.0.0.1:9/v1", None, None, Duration::from_secs(1));
        ServerEmbedder { server, policy: EgressPolicy::LocalOnly, dim }
    }

    fn reply(rows: &[(usize, &[f32])]) -> EmbeddingsReply {
        EmbeddingsReply {
            data: rows.iter().map(|(i, v)| EmbeddingRow { index: Some(*i), embedding: v.to_vec() }).collect(),
        }
    }

    #[test]
    fn vectors_come_back_in_the_texts_order_with_unit_length() {
        let got = embedder(2).vectors(reply(&[(1, &[0.0, 2.0]), (0, &[3.0, 4.0])]), 2).unwrap();
        assert_eq!(got, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
    }

    #[test]
    fn a_reply_of_the_wrong_count_length_or_norm_is_refused() {
        assert!(embedder(2).vectors(reply(&[(0, &[1.0, 0.0])]), 2).is_err());
        assert!(embedder(3).vectors(reply(&[(0, &[1.0, 0.0])]), 1).is_err());
        assert!(embedder(2).vectors(reply(&[(0, &[0.0, 0.0])]), 1).is_err());
        assert!(embedder(2).vectors(reply(&[(0, &[f32::NAN, 1.0])]), 1).is_err());
    }

    #[test]
    fn a_server_outside_the_policy_is_refused_before_any_request() {
        let server = ModelServer::new("http://10.255.255.1:9/v1", None, None, Duration::from_secs(1));
        let got = ServerEmbedder::connect(server, EgressPolicy::LocalOnly);
        assert!(matches!(got, Err(ModelError::Egress(ref why)) if why.contains("local_only")));
    }

    #[test]
    fn long_texts_are_clipped_at_a_character_boundary() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(MAX_SERVER_CHARS + 10);
        assert_eq!(clip(&long).chars().count(), MAX_SERVER_CHARS);
    }

    #[test]
    fn the_request_body_is_openai_embeddings() {
        let body =
            EmbeddingsRequest { model: Some("m"), input: &["a", "b"], encoding_format: "float", input_type: None };
        let v: serde_json::Value = serde_json::to_value(&body).unwrap();
        assert_eq!(v, serde_json::json!({"model": "m", "input": ["a", "b"], "encoding_format": "float"}));
        let body =
            EmbeddingsRequest { model: None, input: &["a"], encoding_format: "float", input_type: Some("query") };
        let v: serde_json::Value = serde_json::to_value(&body).unwrap();
        assert_eq!(v, serde_json::json!({"input": ["a"], "encoding_format": "float", "input_type": "query"}));
    }
}
