//! BERT-style encoders on ONNX Runtime: the embedder (mean pooling, L2) and the
//! cross-encoder reranker (pair input, one logit). Both tokenize with the model's
//! `tokenizer.json`, truncate, and pad each batch to its longest sequence. Every run has a
//! time limit (see [`runtime::with_limit`]): past it ONNX Runtime stops the run and the call
//! fails with [`ModelError::Timeout`].

use super::presets::{Prefixes, TextRole};
use super::runtime::{self, infer, ModelError, Result};
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use tokenizers::{EncodeInput, Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Tokens per input; longer inputs are truncated.
pub const MAX_TOKENS: usize = 256;

/// Time limit of a query embedding (one short text: milliseconds when all is well).
pub const QUERY_LIMIT: Duration = Duration::from_secs(5);
/// Time limit of one background embedding batch (a few chunks of 256 tokens, well under a second
/// on two idle cores; the limit leaves room for busy ones).
pub const BATCH_LIMIT: Duration = Duration::from_secs(60);
/// Time limit of one rerank batch (up to `candidateLimit` ≤ 100 pairs of 256 tokens).
pub const RERANK_LIMIT: Duration = Duration::from_secs(10);

/// A tokenizer with our truncation and padding (the file's own settings are replaced).
pub fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer> {
    let mut tok = Tokenizer::from_file(path)
        .map_err(|e| ModelError::Load { path: path.display().to_string(), reason: e.to_string() })?;
    let pad_token = ["[PAD]", "<pad>"].into_iter().find(|t| tok.token_to_id(t).is_some()).unwrap_or("[PAD]");
    let pad_id = tok.token_to_id(pad_token).unwrap_or(0);
    tok.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        pad_id,
        pad_token: pad_token.to_string(),
        ..Default::default()
    }));
    tok.with_truncation(Some(TruncationParams { max_length: max_tokens, ..Default::default() }))
        .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
    Ok(tok)
}

/// The embedder's tokenizer alone (no ONNX session, no truncation, no padding): it counts
/// the tokens of a whole Context Capsule payload.
pub struct CountingTokenizer {
    tokenizer: Tokenizer,
    /// `sha256:` + SHA-256 of the tokenizer file.
    pub fingerprint: String,
}

impl CountingTokenizer {
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path)
            .map_err(|e| ModelError::Load { path: path.display().to_string(), reason: e.to_string() })?;
        let mut tokenizer = Tokenizer::from_bytes(&bytes)
            .map_err(|e| ModelError::Load { path: path.display().to_string(), reason: e.to_string() })?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        Ok(CountingTokenizer { tokenizer, fingerprint: format!("sha256:{}", crate::digest::sha256_hex(&bytes)) })
    }

    /// Tokens of `text` (special tokens not added; no offsets are tracked).
    pub fn count(&self, text: &str) -> Result<u64> {
        let enc = self.tokenizer.encode_fast(text, false).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        Ok(enc.len() as u64)
    }
}

/// One ONNX encoder session with its tokenizer.
struct Encoder {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    input_names: Vec<String>,
}

impl Encoder {
    fn load(cache_dir: &Path, model: &Path, tokenizer: &Path, threads: usize) -> Result<Self> {
        let tokenizer = load_tokenizer(tokenizer, MAX_TOKENS)?;
        let session = runtime::session(cache_dir, model, threads)?;
        let input_names = session.inputs().iter().map(|i| i.name().to_string()).collect();
        Ok(Encoder { session: Mutex::new(session), tokenizer, input_names })
    }

    /// Runs the model on a batch within `limit` (counted once the session is ours); returns
    /// the named output as (shape, data).
    fn run<'s, E: Into<EncodeInput<'s>> + Send>(
        &self,
        inputs: Vec<E>,
        output: &str,
        limit: Duration,
    ) -> Result<(Vec<usize>, Vec<f32>, Vec<Encoding>)> {
        let enc = self.tokenizer.encode_batch(inputs, true).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let batch = enc.len();
        let seq = enc.first().map_or(0, |e| e.len());
        let column = |f: &dyn Fn(&Encoding) -> &[u32]| -> Vec<i64> {
            enc.iter().flat_map(|e| f(e).iter().map(|&v| v as i64)).collect()
        };
        let mut feed: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::new();
        for name in &self.input_names {
            let data = match name.as_str() {
                "input_ids" => column(&|e| e.get_ids()),
                "attention_mask" => column(&|e| e.get_attention_mask()),
                "token_type_ids" => column(&|e| e.get_type_ids()),
                other => return Err(ModelError::Shape(format!("unexpected model input {other}"))),
            };
            let t = Tensor::from_array((vec![batch as i64, seq as i64], data)).map_err(infer)?;
            feed.push((Cow::Owned(name.clone()), t.into()));
        }
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let (shape, data) = runtime::with_limit(limit, |options| {
            let out = session.run_with_options(feed, options).map_err(infer)?;
            let value =
                out.get(output).ok_or_else(|| ModelError::Shape(format!("the model has no output {output}")))?;
            let (shape, data) = value.try_extract_tensor::<f32>().map_err(infer)?;
            Ok((shape.iter().map(|&d| d.max(0) as usize).collect::<Vec<usize>>(), data.to_vec()))
        })?;
        Ok((shape, data, enc))
    }
}

/// Sentence embeddings on ONNX Runtime: mean pooling over the attention mask, then L2
/// normalization.
pub struct OnnxEmbedder {
    encoder: Encoder,
    prefixes: Prefixes,
    dim: usize,
}

impl OnnxEmbedder {
    pub fn load(cache_dir: &Path, model: &Path, tokenizer: &Path, prefixes: Prefixes, threads: usize) -> Result<Self> {
        let encoder = Encoder::load(cache_dir, model, tokenizer, threads)?;
        let mut e = OnnxEmbedder { encoder, prefixes, dim: 0 };
        let probe = e.embed_with_limit(&["dimension probe"], TextRole::Passage, BATCH_LIMIT)?;
        e.dim = probe.first().map_or(0, Vec::len);
        if e.dim == 0 {
            return Err(ModelError::Shape("the embedder returned an empty vector".into()));
        }
        Ok(e)
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// One unit-length vector per text, each after the model's prefix for its role; past
    /// `limit` the call fails with [`ModelError::Timeout`].
    pub fn embed_with_limit(&self, texts: &[&str], role: TextRole, limit: Duration) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let prefix = self.prefixes.of(role);
        let inputs: Vec<Cow<'_, str>> = texts
            .iter()
            .map(|t| if prefix.is_empty() { Cow::Borrowed(*t) } else { Cow::Owned(format!("{prefix}{t}")) })
            .collect();
        runtime::guarded("embedding", || {
            let inputs: Vec<&str> = inputs.iter().map(|t| t.as_ref()).collect();
            let (shape, hidden, enc) = self.encoder.run(inputs, "last_hidden_state", limit)?;
            let [batch, seq, dim] = shape[..] else {
                return Err(ModelError::Shape(format!("last_hidden_state has shape {shape:?}")));
            };
            if batch != texts.len() || hidden.len() != batch * seq * dim {
                return Err(ModelError::Shape(format!("last_hidden_state has shape {shape:?}")));
            }
            Ok((0..batch)
                .map(|b| mean_pool(&hidden[b * seq * dim..(b + 1) * seq * dim], enc[b].get_attention_mask(), dim))
                .collect())
        })
    }
}

/// Mean of the token vectors under the mask, scaled to unit length.
pub fn mean_pool(hidden: &[f32], mask: &[u32], dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    let mut n = 0f32;
    for (t, &m) in mask.iter().enumerate() {
        if m == 0 {
            continue;
        }
        n += 1.0;
        for (acc, x) in v.iter_mut().zip(&hidden[t * dim..(t + 1) * dim]) {
            *acc += x;
        }
    }
    let n = n.max(1e-9);
    v.iter_mut().for_each(|x| *x /= n);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// A cross-encoder: one relevance logit per (query, passage) pair.
pub struct CrossEncoder {
    encoder: Encoder,
}

impl CrossEncoder {
    pub fn load(cache_dir: &Path, model: &Path, tokenizer: &Path, threads: usize) -> Result<Self> {
        Ok(CrossEncoder { encoder: Encoder::load(cache_dir, model, tokenizer, threads)? })
    }

    /// Relevance of each passage to the query, as a probability (sigmoid of the logit),
    /// within [`RERANK_LIMIT`].
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        runtime::guarded("reranking", || {
            let pairs: Vec<(&str, &str)> = passages.iter().map(|p| (query, *p)).collect();
            let (shape, logits, _) = self.encoder.run(pairs, "logits", RERANK_LIMIT)?;
            let batch = shape.first().copied().unwrap_or(0);
            if batch != passages.len() || logits.len() % batch.max(1) != 0 {
                return Err(ModelError::Shape(format!("logits have shape {shape:?}")));
            }
            let labels = logits.len() / batch;
            // One label: the logit; several: the last one is "relevant".
            Ok((0..batch).map(|b| sigmoid(logits[b * labels + labels - 1])).collect())
        })
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pool_ignores_padding_and_normalizes() {
        // two tokens of dim 2 plus one padding token that must not count
        let hidden = [1.0, 0.0, 3.0, 0.0, 100.0, 100.0];
        let v = mean_pool(&hidden, &[1, 1, 0], 2);
        assert!((v[0] - 1.0).abs() < 1e-6 && v[1].abs() < 1e-6, "{v:?}");
        let v = mean_pool(&[3.0, 4.0], &[1], 2);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn sigmoid_is_monotonic() {
        assert!(sigmoid(-2.0) < sigmoid(0.0) && sigmoid(0.0) < sigmoid(3.0));
        assert!((sigmoid(0.0) - 0.5).abs() < 1e-6);
    }
}
