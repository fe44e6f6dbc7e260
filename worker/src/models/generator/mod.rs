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
use std::time::Instant;

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
}

#[cfg(test)]
mod tests {
    use super::Chat;

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
