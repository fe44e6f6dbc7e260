//! A GGUF generator run by llama.cpp on the CPU (through the `llama-cpp-2` binding).

use super::batches::Layout;
use super::stream::TextStream;
use super::{Chat, Finish, FirstWords, Flow, Generated, Limits, Timing};
use crate::models::runtime::{ModelError, Result};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

/// Tokens decoded per step of the prompt (llama.cpp's batch).
const PROMPT_BATCH: usize = 512;
/// A context's size is a multiple of this many tokens (a context that fits is kept).
const CONTEXT_STEP: usize = 1024;

/// llama.cpp's process-wide state, initialized once.
fn backend() -> Result<&'static LlamaBackend> {
    static BACKEND: OnceLock<std::result::Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp's own logging would print every model load's details on stderr.
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default().with_logs_enabled(false));
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| ModelError::Runtime(format!("llama.cpp could not start: {e}")))
}

/// A context and the tokens its KV cache holds, kept so the next prompt with the same head
/// decodes only what follows the part both share (the instruction and the worked example of
/// every answer), cut into batches as [`Layout`] says.
struct Cached<'m> {
    ctx: LlamaContext<'m>,
    tokens: Vec<LlamaToken>,
    /// How the prompt whose tokens start `tokens` was cut (none before the first).
    layout: Option<Layout>,
    /// The head ([`Prompt::head`]) of the prompt the cache was last filled from.
    head: String,
}

/// Contexts kept, one per prompt head: an answer's draft and the judge of its claims take
/// turns, and each would otherwise read the other's instruction and worked examples again
/// (about 140 and 190 tokens: a second or two each on two cores). A context costs its KV
/// cache and compute buffers (docs/benchmarks.md).
const HEADS: usize = 2;

/// A prompt's text in the model's template, and its fixed head ([`LlamaGenerator::head`]).
#[derive(Clone, Copy)]
struct Prompt<'a> {
    text: &'a str,
    head: &'a str,
}

/// One generation at a time (each takes every core anyway): the lock is held for a whole run.
/// The cached contexts, the one used last at the end.
struct Session<'m>(Mutex<Vec<Cached<'m>>>);

impl<'m> Session<'m> {
    /// The cached contexts; after a generation that panicked, none (a cache may not match
    /// its tokens).
    fn lock(&self) -> MutexGuard<'_, Vec<Cached<'m>>> {
        self.0.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            guard.clear();
            guard
        })
    }
}

/// The context to run a prompt with `head` in, taken out of `kept`: the one last filled from
/// the same head; else none while fewer than [`HEADS`] are kept (a new one is made); else the
/// least recently used, whose cache the prompt then shares nothing with.
fn take_for<'m>(kept: &mut Vec<Cached<'m>>, head: &str) -> Option<Cached<'m>> {
    match kept.iter().position(|c| c.head == head) {
        Some(i) => Some(kept.remove(i)),
        None if kept.len() < HEADS => None,
        None => Some(kept.remove(0)),
    }
}

self_cell::self_cell!(
    /// A model and the session that runs it (a context borrows its model).
    struct Loaded {
        owner: LlamaModel,
        #[not_covariant]
        dependent: Session,
    }
);

pub struct LlamaGenerator {
    loaded: Loaded,
    template: LlamaChatTemplate,
    threads: i32,
}

impl LlamaGenerator {
    /// Loads the GGUF file at `path`, to run on `threads` threads.
    pub fn load(path: &Path, threads: usize) -> Result<Self> {
        if !path.is_file() {
            return Err(ModelError::Missing(path.display().to_string()));
        }
        let load = |reason: String| ModelError::Load { path: path.display().to_string(), reason };
        if !is_gguf(path) {
            return Err(load("not a GGUF file".into()));
        }
        let backend = backend()?;
        let model =
            LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()).map_err(|e| load(e.to_string()))?;
        // The template the model was trained with; ChatML when the file names none.
        let template = match model.chat_template(None) {
            Ok(t) => t,
            Err(_) => LlamaChatTemplate::new("chatml").map_err(|e| load(e.to_string()))?,
        };
        let loaded = Loaded::new(model, |_| Session(Mutex::new(Vec::with_capacity(HEADS))));
        Ok(LlamaGenerator { loaded, template, threads: threads.clamp(1, 64) as i32 })
    }

    /// The prompt text of `chat` in the model's template, ending where the assistant speaks.
    pub fn prompt(&self, chat: &Chat<'_>) -> Result<String> {
        self.templated(chat.turns(), true)
    }

    /// The text of the prompt's fixed head: the system turn and the worked examples, which
    /// every question asked with the same instruction shares.
    fn head(&self, chat: &Chat<'_>) -> Result<String> {
        let turns: Vec<_> = chat.turns().collect();
        self.templated(turns[..turns.len() - 1].iter().copied(), false)
    }

    fn templated<'a>(
        &self,
        turns: impl Iterator<Item = (&'static str, &'a str)>,
        add_assistant: bool,
    ) -> Result<String> {
        let messages = turns
            .map(|(role, content)| {
                LlamaChatMessage::new(role.to_string(), content.to_string())
                    .map_err(|e| ModelError::Tokenizer(format!("the prompt holds a NUL byte: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        self.loaded
            .borrow_owner()
            .apply_chat_template(&self.template, &messages, add_assistant)
            .map_err(|e| ModelError::Tokenizer(format!("the chat template failed: {e}")))
    }

    /// [`super::Generator::generate`] on this model.
    pub fn generate(
        &self,
        chat: &Chat<'_>,
        limits: Limits<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generated> {
        self.templated_run(chat, limits, None, on_text).map(|(generated, _)| generated)
    }

    /// [`super::Generator::generate_weighing`] on this model.
    pub fn generate_weighing(
        &self,
        chat: &Chat<'_>,
        limits: Limits<'_>,
        words: FirstWords<'_>,
    ) -> Result<(Generated, Option<f64>)> {
        self.templated_run(chat, limits, Some(words), &mut |_| Flow::Continue)
    }

    /// `chat` through the model's chat template, then generated from, guarded.
    fn templated_run(
        &self,
        chat: &Chat<'_>,
        limits: Limits<'_>,
        weigh: Option<FirstWords<'_>>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<(Generated, Option<f64>)> {
        let prompt = self.prompt(chat)?;
        let head = self.head(chat)?;
        crate::models::runtime::guarded("generation", || {
            self.run(Prompt { text: &prompt, head: &head }, limits, weigh, on_text)
        })
    }

    fn run(
        &self,
        prompt: Prompt<'_>,
        limits: Limits<'_>,
        weigh: Option<FirstWords<'_>>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<(Generated, Option<f64>)> {
        self.loaded.with_dependent(|model, session| {
            let mut kept = session.lock();
            let mut cached = take_for(&mut kept, prompt.head);
            let result = self.run_in(model, &mut cached, prompt, limits, weigh, on_text);
            // A failed decode may leave the cache unlike its tokens: it is not kept.
            if let (Ok(_), Some(c)) = (&result, cached) {
                kept.push(c);
            }
            result
        })
    }

    fn run_in<'m>(
        &self,
        model: &'m LlamaModel,
        cached: &mut Option<Cached<'m>>,
        prompt: Prompt<'_>,
        limits: Limits<'_>,
        weigh: Option<FirstWords<'_>>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<(Generated, Option<f64>)> {
        let Limits { max_tokens, deadline, stops } = limits;
        let vocab = model.vocab();
        let mut ids = vocab.tokenize(prompt.text.as_bytes(), true, true);
        // The head's tokens, when the prompt's tokens start with them (a template whose turns
        // merge into one token across the boundary has no head).
        let head_ids = vocab.tokenize(prompt.head.as_bytes(), true, true);
        let mut head_tokens = if ids.starts_with(&head_ids) { head_ids.len() } else { 0 };
        // The context holds the prompt and the answer; a prompt too long for the model loses
        // its start (svc's prompts stay far below any model's context).
        let n_ctx_train = model.n_ctx_train().max(256) as usize;
        let room = n_ctx_train.saturating_sub(max_tokens.min(n_ctx_train / 2) + 1);
        if ids.len() > room {
            ids.drain(..ids.len() - room);
            head_tokens = 0;
        }
        let prompt_tokens = ids.len();
        let layout = Layout::new(head_tokens, prompt_tokens, PROMPT_BATCH);
        let mut generated = Generated {
            text: String::new(),
            prompt_tokens,
            tokens: 0,
            finish: Finish::EndOfTurn,
            timing: Timing::default(),
        };
        if ids.is_empty() || max_tokens == 0 {
            generated.finish = if max_tokens == 0 { Finish::MaxTokens } else { Finish::EndOfTurn };
            return Ok((generated, None));
        }
        let infer = |e: &dyn std::fmt::Display| ModelError::Inference(e.to_string());
        let needed = (prompt_tokens + max_tokens + 1).min(n_ctx_train);
        let session = match cached.take() {
            Some(c) if c.ctx.n_ctx() as usize >= needed => c,
            _ => {
                let n_ctx = (needed.div_ceil(CONTEXT_STEP) * CONTEXT_STEP).min(n_ctx_train);
                let params = LlamaContextParams::default()
                    .with_n_ctx(NonZeroU32::new(n_ctx as u32))
                    .with_n_batch(PROMPT_BATCH as u32)
                    .with_n_ubatch(PROMPT_BATCH as u32)
                    .with_n_threads(self.threads)
                    .with_n_threads_batch(self.threads);
                let ctx = model.new_context(backend()?, params).map_err(|e| infer(&e))?;
                Cached { ctx, tokens: Vec::new(), layout: None, head: String::new() }
            }
        };
        let Cached { ctx, tokens, layout: cached_layout, head } = cached.insert(session);
        prompt.head.clone_into(head);

        // What the cache holds of this prompt, up to a cut both prompts share, is kept; the
        // rest of the cache goes (the last prompt token is always decoded again: its logits
        // give the first answer token).
        let common = tokens.iter().zip(&ids).take_while(|(a, b)| a == b).count();
        let mut kept = layout.reusable(cached_layout.as_ref(), common);
        if !ctx.clear_kv_cache_seq(Some(0), Some(kept as u32), None).map_err(|e| infer(&e))? {
            ctx.clear_kv_cache();
            kept = 0;
        }
        tokens.truncate(kept);
        *cached_layout = Some(layout);
        generated.timing.reused_tokens = kept;
        let reading = Instant::now();
        let mut batch = LlamaBatch::new(PROMPT_BATCH, 1);
        for range in layout.batches_from(kept) {
            if Instant::now() > deadline {
                generated.finish = Finish::TimeLimit;
                return Ok((generated, None));
            }
            batch.clear();
            for &token in &ids[range] {
                let pos = tokens.len();
                tokens.push(token);
                batch.add(token, pos as i32, &[0], pos + 1 == prompt_tokens).map_err(|e| infer(&e))?;
            }
            ctx.decode(&mut batch).map_err(|e| infer(&e))?;
        }
        generated.timing.prompt = reading.elapsed();
        let answering = Instant::now();

        // The first step's odds of the words asked for, before anything is sampled.
        let share = weigh.and_then(|words| {
            let first = |ws: &[&str]| -> Vec<usize> {
                let mut ids: Vec<usize> = ws
                    .iter()
                    .filter_map(|w| vocab.tokenize(w.as_bytes(), false, false).first().map(|t| t.0 as usize))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            };
            super::share_of(ctx.get_logits_ith(batch.n_tokens() - 1), &first(words.yes), &first(words.no))
        });
        let mut sampler = LlamaSampler::greedy();
        let mut text = TextStream::new(stops);
        let mut bytes: Vec<u8> = Vec::new();
        let finish = loop {
            if generated.tokens >= max_tokens {
                break Finish::MaxTokens;
            }
            if Instant::now() > deadline {
                break Finish::TimeLimit;
            }
            let token = sampler.sample(ctx, batch.n_tokens() - 1);
            // The end of the turn, or a control token: the model moves on to the template's
            // next part, so its answer is over.
            if vocab.is_eog(token) || vocab.is_control(token) {
                break Finish::EndOfTurn;
            }
            generated.tokens += 1;
            bytes.extend(vocab.token_to_piece(token, true, None));
            if let Some(end) = text.push(String::from_utf8_lossy(&bytes).into_owned(), on_text) {
                break end;
            }
            batch.clear();
            batch.add(token, tokens.len() as i32, &[0], true).map_err(|e| infer(&e))?;
            tokens.push(token);
            ctx.decode(&mut batch).map_err(|e| infer(&e))?;
        };
        // What was held back in case it grew into a stop sequence or a repetition is final now.
        generated.text = text.close(finish, on_text);
        generated.finish = finish;
        generated.timing.answer = answering.elapsed();
        Ok((generated, share))
    }
}

/// Whether `path` starts with the GGUF magic (llama.cpp is not asked to parse anything else).
fn is_gguf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"GGUF"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_gguf_file_is_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.gguf");
        std::fs::write(&path, b"ONNX not a gguf").unwrap();
        assert!(matches!(LlamaGenerator::load(&path, 1), Err(ModelError::Load { .. })));
        assert!(matches!(LlamaGenerator::load(&dir.path().join("absent.gguf"), 1), Err(ModelError::Missing(_))));
    }
}
