//! A decoder-only language model on ONNX Runtime with a KV cache: ChatML prompts, greedy
//! decoding, stop tokens, a token cap and a deadline.
//!
//! The model has the optimum/transformers.js "merged decoder" I/O: `input_ids`,
//! `attention_mask`, optional `position_ids`, `past_key_values.{i}.key|value` in, `logits` and
//! `present.{i}.key|value` out. The cache shape is read from the model's inputs.

use super::runtime::{self, infer, ModelError, Result};
use ort::session::{RunOptions, Session, SessionInputValue};
use ort::value::{DynValue, Tensor, ValueType};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;
use tokenizers::Tokenizer;

/// Longest prompt we feed, in tokens (the start of a longer one is dropped).
const MAX_PROMPT_TOKENS: usize = 1536;

pub struct Generator {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    layers: usize,
    kv_heads: usize,
    head_dim: usize,
    has_position_ids: bool,
    stop_ids: Vec<u32>,
}

/// One chat turn of a ChatML prompt.
pub fn chatml(system: &str, user: &str) -> String {
    format!("<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")
}

/// A ChatML prompt with one example exchange before the real question.
pub fn chatml_with_example(system: &str, example: (&str, &str), user: &str) -> String {
    format!(
        "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n{}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n",
        example.0, example.1
    )
}

impl Generator {
    pub fn load(cache_dir: &Path, model: &Path, tokenizer: &Path, threads: usize) -> Result<Self> {
        let tokenizer = Tokenizer::from_file(tokenizer)
            .map_err(|e| ModelError::Load { path: tokenizer.display().to_string(), reason: e.to_string() })?;
        let session = runtime::session(cache_dir, model, threads)?;
        let mut layers = 0;
        let (mut kv_heads, mut head_dim) = (0, 0);
        let mut has_position_ids = false;
        for input in session.inputs() {
            let name = input.name();
            if name == "position_ids" {
                has_position_ids = true;
            }
            if let Some(rest) = name.strip_prefix("past_key_values.") {
                if rest.ends_with(".key") {
                    layers += 1;
                    if let ValueType::Tensor { shape, .. } = input.dtype() {
                        if shape.len() == 4 {
                            kv_heads = shape[1].max(0) as usize;
                            head_dim = shape[3].max(0) as usize;
                        }
                    }
                }
            }
        }
        if layers == 0 || kv_heads == 0 || head_dim == 0 {
            return Err(ModelError::Shape("the generator has no usable past_key_values inputs".into()));
        }
        // `<|im_start|>`: a model that goes on to write the next chat turn has finished its own.
        let stop_ids = ["<|im_end|>", "<|im_start|>", "<|endoftext|>", "</s>", "<|eot_id|>"]
            .iter()
            .filter_map(|t| tokenizer.token_to_id(t))
            .collect();
        Ok(Generator {
            session: Mutex::new(session),
            tokenizer,
            layers,
            kv_heads,
            head_dim,
            has_position_ids,
            stop_ids,
        })
    }

    /// Greedy continuation of `prompt` (special tokens in it are honoured), at most
    /// `max_tokens` tokens, stopping at a stop token. Past `deadline` it fails with `Timeout`:
    /// the watchdog of [`runtime::with_deadline`] stops a run in progress, and no new step
    /// starts.
    pub fn generate(&self, prompt: &str, max_tokens: usize, deadline: Instant) -> Result<String> {
        self.generate_streaming(prompt, max_tokens, deadline, &[], &mut |_| {}).map(|g| g.text)
    }

    /// [`Generator::generate`], ending also where the text reaches one of `stops` (which is
    /// not part of the result), and handing each piece of new text to `on_text` as soon as it
    /// is certain (the pieces add up to the returned text).
    pub fn generate_streaming(
        &self,
        prompt: &str,
        max_tokens: usize,
        deadline: Instant,
        stops: &[&str],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Generated> {
        runtime::guarded("generation", || {
            let enc = self.tokenizer.encode(prompt, false).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
            let ids = enc.get_ids();
            let ids = &ids[ids.len().saturating_sub(MAX_PROMPT_TOKENS)..];
            if ids.is_empty() {
                return Ok(Generated { text: String::new(), prompt_tokens: 0, tokens: 0 });
            }
            let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
            let mut text = TextStream::new(stops);
            let out_ids = runtime::with_deadline(deadline, |options| {
                self.decode(&mut session, ids, max_tokens, deadline, options, &mut |so_far| {
                    let piece =
                        self.tokenizer.decode(so_far, true).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
                    if let Some(new) = text.advance(piece) {
                        on_text(new);
                    }
                    Ok(!text.stopped)
                })
            })?;
            // What was held back in case it grew into a stop sequence is final now.
            if let Some(rest) = text.flush() {
                on_text(rest);
            }
            Ok(Generated { text: text.into_text(), prompt_tokens: ids.len(), tokens: out_ids.len() })
        })
    }

    /// The decoding loop of [`Generator::generate`] on a locked session, every run under `options`.
    fn decode(
        &self,
        session: &mut Session,
        ids: &[u32],
        max_tokens: usize,
        deadline: Instant,
        options: &RunOptions,
        on_token: &mut dyn FnMut(&[u32]) -> Result<bool>,
    ) -> Result<Vec<u32>> {
        let mut past: Vec<DynValue> = Vec::with_capacity(self.layers * 2);
        for _ in 0..self.layers * 2 {
            let empty =
                Tensor::from_array((vec![1i64, self.kv_heads as i64, 0, self.head_dim as i64], Vec::<f32>::new()))
                    .map_err(infer)?;
            past.push(empty.into_dyn());
        }
        let mut step: Vec<i64> = ids.iter().map(|&i| i as i64).collect();
        let mut total = 0usize;
        let mut out_ids: Vec<u32> = Vec::new();
        while out_ids.len() < max_tokens {
            // The same deadline as the watchdog's: no step starts after it (a terminated
            // `options` would fail it anyway; this also holds when the watchdog is not running).
            if Instant::now() > deadline {
                return Err(ModelError::Timeout);
            }
            let seq = step.len();
            let mut feed: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::with_capacity(3 + past.len());
            feed.push((
                "input_ids".into(),
                Tensor::from_array((vec![1i64, seq as i64], step.clone())).map_err(infer)?.into(),
            ));
            feed.push((
                "attention_mask".into(),
                Tensor::from_array((vec![1i64, (total + seq) as i64], vec![1i64; total + seq])).map_err(infer)?.into(),
            ));
            if self.has_position_ids {
                let pos: Vec<i64> = (total..total + seq).map(|p| p as i64).collect();
                feed.push((
                    "position_ids".into(),
                    Tensor::from_array((vec![1i64, seq as i64], pos)).map_err(infer)?.into(),
                ));
            }
            for (i, v) in past.drain(..).enumerate() {
                let kind = if i % 2 == 0 { "key" } else { "value" };
                feed.push((Cow::Owned(format!("past_key_values.{}.{kind}", i / 2)), v.into()));
            }
            let mut out = session.run_with_options(feed, options).map_err(infer)?;
            let next = {
                let logits = out.get("logits").ok_or_else(|| ModelError::Shape("no logits output".into()))?;
                let (shape, data) = logits.try_extract_tensor::<f32>().map_err(infer)?;
                let vocab = shape.last().copied().unwrap_or(0).max(0) as usize;
                if vocab == 0 || data.len() < vocab {
                    return Err(ModelError::Shape(format!("logits have shape {shape:?}")));
                }
                argmax(&data[data.len() - vocab..])
            };
            for layer in 0..self.layers {
                for kind in ["key", "value"] {
                    let v = out
                        .remove(format!("present.{layer}.{kind}"))
                        .ok_or_else(|| ModelError::Shape(format!("no present.{layer}.{kind} output")))?;
                    past.push(v);
                }
            }
            total += seq;
            if self.stop_ids.contains(&next) {
                break;
            }
            out_ids.push(next);
            if !on_token(&out_ids)? {
                break;
            }
            step = vec![next as i64];
        }
        Ok(out_ids)
    }
}

/// What one generation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub text: String,
    /// Tokens of the prompt as fed (after cutting a long one).
    pub prompt_tokens: usize,
    /// Tokens generated (without the stop token).
    pub tokens: usize,
}

/// The text of a generation as it grows: the decoding of all tokens so far, cut at the first
/// stop sequence, of which only the new end is handed out. Held back until it is certain: a
/// decoding that ends in U+FFFD (a character whose bytes are still arriving), an end that
/// could begin a stop sequence, and a decoding that rewrites earlier text (a tokenizer that
/// joins pieces differently) until it extends what was sent again.
#[derive(Debug)]
struct TextStream<'s> {
    stops: &'s [&'s str],
    sent: String,
    visible: String,
    /// A stop sequence appeared: the generation is over.
    stopped: bool,
}

impl<'s> TextStream<'s> {
    fn new(stops: &'s [&'s str]) -> Self {
        TextStream { stops, sent: String::new(), visible: String::new(), stopped: false }
    }

    fn advance(&mut self, decoded: String) -> Option<&str> {
        let cut = self.stops.iter().filter_map(|s| decoded.find(s)).min();
        self.stopped = cut.is_some();
        self.visible = match cut {
            Some(at) => decoded[..at].to_string(),
            None => decoded,
        };
        let mut safe = self.visible.len();
        if !self.stopped {
            // The longest end of the text that a stop sequence starts with.
            for stop in self.stops {
                for (i, _) in stop.char_indices().skip(1) {
                    if self.visible.ends_with(&stop[..i]) {
                        safe = safe.min(self.visible.len() - i);
                    }
                }
            }
        }
        let ready = &self.visible[..safe];
        if ready.ends_with('\u{FFFD}') || !ready.starts_with(self.sent.as_str()) || ready.len() == self.sent.len() {
            return None;
        }
        let from = self.sent.len();
        self.sent = ready.to_string();
        Some(&self.sent[from..])
    }

    /// At the end: the held-back rest of the text, if any. Afterwards the text is exactly
    /// what was handed out (after a rewrite of earlier text, what was handed out stands).
    fn flush(&mut self) -> Option<&str> {
        if !self.visible.starts_with(self.sent.as_str()) || self.visible.len() == self.sent.len() {
            return None;
        }
        let from = self.sent.len();
        self.sent.clone_from(&self.visible);
        Some(&self.sent[from..])
    }

    fn into_text(self) -> String {
        self.sent
    }
}

fn argmax(v: &[f32]) -> u32 {
    let mut best = 0usize;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_the_first_maximum() {
        assert_eq!(argmax(&[0.1, 0.9, 0.9, -1.0]), 1);
        assert_eq!(argmax(&[3.0]), 0);
    }

    #[test]
    fn text_stream_stops_at_a_stop_sequence_and_never_sends_part_of_one() {
        let mut t = TextStream::new(&["\nQuestion:"]);
        assert_eq!(t.advance("Paris.".into()), Some("Paris."));
        assert_eq!(t.advance("Paris.\nQue".into()), None, "might be a stop sequence");
        assert_eq!(t.advance("Paris.\nQuestion: why".into()), None);
        assert!(t.stopped);
        assert_eq!(t.flush(), None);
        assert_eq!(t.into_text(), "Paris.");
        let mut t = TextStream::new(&["\nQuestion:"]);
        assert_eq!(t.advance("Done.\n".into()), Some("Done."));
        assert_eq!(t.flush(), Some("\n"), "the end held back is sent when generation ends");
        assert_eq!(t.into_text(), "Done.\n");
        let mut t = TextStream::new(&["\nQuestion:"]);
        assert_eq!(t.advance("a\nQ".into()), Some("a"));
        assert_eq!(t.advance("a\nQuick".into()), Some("\nQuick"), "released once it is not one");
    }

    #[test]
    fn text_stream_hands_out_each_new_end_once() {
        let mut t = TextStream::new(&[]);
        assert_eq!(t.advance("Par".into()), Some("Par"));
        assert_eq!(t.advance("Paris".into()), Some("is"));
        assert_eq!(t.advance("Paris \u{FFFD}".into()), None, "an unfinished character waits");
        assert_eq!(t.advance("Paris é".into()), Some(" é"));
        assert_eq!(t.advance("Paris é".into()), None);
        assert_eq!(t.flush(), None);
        assert_eq!(t.into_text(), "Paris é");
    }

    #[test]
    fn chatml_has_the_turn_markers() {
        let p = chatml("sys", "hi");
        assert!(p.starts_with("<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nhi<|im_end|>"));
        assert!(p.ends_with("<|im_start|>assistant\n"));
    }
}
