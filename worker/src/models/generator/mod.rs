//! The generator: a GGUF model run by llama.cpp (through the `llama-cpp-2` binding) on the
//! CPU ([`llama`]), or an OpenAI-compatible model server the user runs ([`server`]). Either
//! way decoding is greedy (the same prompt gives the same text), the text streams as it
//! becomes certain ([`stream`]), and a generation ends at the end of the model's turn, a stop
//! sequence, a repetition ([`repetition`]), its token cap or its deadline, or when the caller
//! stops reading. Every ending but an error returns what was generated, with [`Finish`]
//! saying why it ended.

mod batches;
mod llama;
mod repetition;
pub mod server;
mod stream;

use super::runtime::Result;
pub use llama::LlamaGenerator;
pub use server::ServerGenerator;
use std::time::{Duration, Instant};

/// A chat for the model: the instruction, worked examples (user, assistant) and the question.
#[derive(Debug, Clone, Copy)]
pub struct Chat<'a> {
    pub system: &'a str,
    pub examples: &'a [(&'a str, &'a str)],
    pub user: &'a str,
}

impl<'a> Chat<'a> {
    /// The chat as (role, content) turns: the system turn, each example's user and assistant
    /// turns, then the question.
    pub fn turns(&self) -> impl Iterator<Item = (&'static str, &'a str)> + '_ {
        let examples = self.examples.iter().flat_map(|&(user, assistant)| [("user", user), ("assistant", assistant)]);
        std::iter::once(("system", self.system)).chain(examples).chain(std::iter::once(("user", self.user)))
    }
}

/// Why a generation ended (the API's `finishReason`).
pub use protocol::api::FinishReason as Finish;

/// What one generation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub text: String,
    /// Tokens of the prompt as fed.
    pub prompt_tokens: usize,
    /// Tokens generated (without the end-of-turn token).
    pub tokens: usize,
    pub finish: Finish,
    pub timing: Timing,
}

/// Where one generation's time went: the prompt read (to the first answer token's odds), then
/// the answer's tokens generated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// Tokens of the prompt kept from the cache of the last prompt with the same head, not
    /// read again.
    pub reused_tokens: usize,
    /// Reading the prompt (a model server: until its first piece of text).
    pub prompt: Duration,
    /// Generating the answer after it.
    pub answer: Duration,
}

impl Generated {
    /// One line of the log for this generation, done for `purpose` (a draft, a judgement):
    /// where its time went.
    pub fn log_timing(&self, purpose: &str) {
        tracing::info!(
            purpose,
            prompt_tokens = self.prompt_tokens,
            reused_tokens = self.timing.reused_tokens,
            prompt_ms = self.timing.prompt.as_millis() as u64,
            tokens = self.tokens,
            answer_ms = self.timing.answer.as_millis() as u64,
            finish = ?self.finish,
            "generation timed"
        );
    }
}

/// What the caller wants after a piece of text: go on or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Where a generation must end at the latest.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    pub max_tokens: usize,
    pub deadline: Instant,
    /// Text that ends the answer where it appears (it is not part of it).
    pub stops: &'a [&'a str],
}

/// Two sets of first words a reply may start with (a yes/no question's yes and no): the share
/// of the probability the model gives the first set of both, on its first step, is read off
/// its logits ([`Generator::generate_weighing`]).
#[derive(Debug, Clone, Copy)]
pub struct FirstWords<'a> {
    pub yes: &'a [&'a str],
    pub no: &'a [&'a str],
}

/// A generator: a local GGUF model, or a model server the user runs.
pub enum Generator {
    Llama(LlamaGenerator),
    Server(ServerGenerator),
}

impl Generator {
    /// Greedy continuation of `chat` within `limits`, ending also at the end of the model's
    /// turn, at a repetition, or when `on_text` (which gets each new piece of certain text)
    /// says stop.
    pub fn generate(
        &self,
        chat: &Chat<'_>,
        limits: Limits<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generated> {
        match self {
            Generator::Llama(g) => g.generate(chat, limits, on_text),
            Generator::Server(g) => g.generate(chat, limits, on_text),
        }
    }

    /// [`Self::generate`], and the share of the probability that the reply starts with one of
    /// `words.yes` rather than one of `words.no`, from the first step's logits; none where the
    /// logits cannot be read (a model server streams text only).
    pub fn generate_weighing(
        &self,
        chat: &Chat<'_>,
        limits: Limits<'_>,
        words: FirstWords<'_>,
    ) -> Result<(Generated, Option<f64>)> {
        match self {
            Generator::Llama(g) => g.generate_weighing(chat, limits, words),
            Generator::Server(g) => Ok((g.generate(chat, limits, &mut |_| Flow::Continue)?, None)),
        }
    }
}

/// The share of `exp(logit)` that `yes` takes of `yes` and `no` together (a softmax over the
/// two sets' tokens alone); none when either set is empty.
pub fn share_of(logits: &[f32], yes: &[usize], no: &[usize]) -> Option<f64> {
    let at = |ids: &[usize]| -> Vec<f64> { ids.iter().filter_map(|&i| logits.get(i)).map(|&l| f64::from(l)).collect() };
    let (yes, no) = (at(yes), at(no));
    if yes.is_empty() || no.is_empty() {
        return None;
    }
    let top = yes.iter().chain(&no).copied().fold(f64::NEG_INFINITY, f64::max);
    let mass = |ls: &[f64]| ls.iter().map(|l| (l - top).exp()).sum::<f64>();
    let (y, n) = (mass(&yes), mass(&no));
    Some(y / (y + n))
}

#[cfg(test)]
mod tests {
    use super::{share_of, Chat};

    #[test]
    fn the_share_of_yes_is_a_softmax_over_both_sets_alone() {
        let logits = [0.0_f32, 2.0, 2.0, 9.0, 1.0];
        // Token 3 is neither yes nor no: it takes nothing from either.
        assert!((share_of(&logits, &[1], &[2]).unwrap() - 0.5).abs() < 1e-9);
        let s = share_of(&logits, &[1, 4], &[0]).unwrap();
        let (y, n) = (2f64.exp() + 1f64.exp(), 1.0);
        assert!((s - y / (y + n)).abs() < 1e-9);
        assert_eq!(share_of(&logits, &[], &[0]), None);
        assert_eq!(share_of(&logits, &[1], &[99]), None);
    }

    #[test]
    fn a_chat_is_the_system_turn_the_examples_then_the_question() {
        let chat = Chat { system: "s", examples: &[("q1", "a1"), ("q2", "a2")], user: "q" };
        let turns: Vec<_> = chat.turns().collect();
        assert_eq!(
            turns,
            [("system", "s"), ("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", "a2"), ("user", "q")]
        );
    }
}
