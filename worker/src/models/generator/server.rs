//! A model server's generator: OpenAI's chat completions API (`POST {url}/chat/completions`
//! with `stream: true`), which llama.cpp's llama-server, Ollama, LM Studio and vLLM all serve.
//! The streamed text goes through the same [`TextStream`] as a local model's, so stop
//! sequences and the loop guard apply alike.

use super::stream::TextStream;
use super::{Chat, Finish, Flow, Generated, Limits, Timing};
use crate::models::runtime::{ModelError, Result};
use crate::models::server::ModelServer;
use protocol::api::EgressPolicy;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::time::Instant;

/// OpenAI's API takes at most four stop sequences; the rest are applied here.
const MAX_SERVER_STOPS: usize = 4;

pub struct ServerGenerator {
    server: ModelServer,
    policy: EgressPolicy,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The body of a chat completion request.
#[derive(Serialize)]
struct ChatRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    messages: Vec<Message<'a>>,
    stream: bool,
    stream_options: StreamOptions,
    temperature: f32,
    max_tokens: usize,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop: &'a [&'a str],
}

/// One `data:` event of the stream.
#[derive(Deserialize)]
struct ChatChunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: usize,
    #[serde(default)]
    completion_tokens: usize,
}

impl ServerGenerator {
    pub fn new(server: ModelServer, policy: EgressPolicy) -> Self {
        ServerGenerator { server, policy }
    }

    /// [`super::Generator::generate`] on this server.
    pub fn generate(
        &self,
        chat: &Chat<'_>,
        limits: Limits<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generated> {
        let Limits { max_tokens, deadline, stops } = limits;
        let server = &self.server;
        let messages = chat.turns().map(|(role, content)| Message { role, content }).collect();
        let body = ChatRequest {
            model: server.model.as_deref(),
            messages,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            temperature: 0.0,
            max_tokens,
            stop: &stops[..stops.len().min(MAX_SERVER_STOPS)],
        };
        let bytes = serde_json::to_vec(&body).map_err(|e| ModelError::Inference(e.to_string()))?;
        let asked = Instant::now();
        let response = server.post(self.policy, "chat/completions", &bytes)?;
        if response.status().as_u16() != 200 {
            return Err(server.refused(response));
        }
        let reader = BufReader::new(response.into_body().into_reader());
        let mut stream = TextStream::new(stops);
        let mut text = String::new();
        let mut generated = Generated {
            text: String::new(),
            prompt_tokens: 0,
            tokens: 0,
            finish: Finish::EndOfTurn,
            timing: Timing::default(),
        };
        let mut finish = None;
        for line in reader.lines() {
            let line = line.map_err(|e| server.unavailable(format!("stopped mid-answer: {e}")))?;
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
            if data == "[DONE]" {
                break;
            }
            let chunk: ChatChunk = serde_json::from_str(data)
                .map_err(|e| server.unavailable(format!("sent an event that is not a chat chunk: {e}")))?;
            if let Some(usage) = chunk.usage {
                generated.prompt_tokens = usage.prompt_tokens;
                generated.tokens = usage.completion_tokens.max(generated.tokens);
            }
            let Some(choice) = chunk.choices.into_iter().next() else { continue };
            if let Some(piece) = choice.delta.content.filter(|p| !p.is_empty()) {
                if text.is_empty() {
                    generated.timing.prompt = asked.elapsed();
                }
                generated.tokens += 1;
                text.push_str(&piece);
                finish = stream.push(text.clone(), on_text);
                if finish.is_some() {
                    break;
                }
            }
            match choice.finish_reason.as_deref() {
                Some("length") => finish = finish.or(Some(Finish::MaxTokens)),
                Some("stop") => finish = finish.or(Some(Finish::EndOfTurn)),
                _ => {}
            }
            if Instant::now() > deadline {
                finish = Some(Finish::TimeLimit);
                break;
            }
        }
        let finish =
            finish.unwrap_or(if generated.tokens >= max_tokens { Finish::MaxTokens } else { Finish::EndOfTurn });
        generated.text = stream.close(finish, on_text);
        generated.finish = finish;
        generated.timing.answer = asked.elapsed().saturating_sub(generated.timing.prompt);
        Ok(generated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(url: &str) -> ServerGenerator {
        let s = ModelServer::new(url, None, None, std::time::Duration::from_secs(1));
        ServerGenerator::new(s, EgressPolicy::LocalOnly)
    }

    #[test]
    fn a_server_outside_the_policy_is_refused_before_any_request() {
        let chat = Chat { system: "s", examples: &[], user: "u" };
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let got = server("http://10.255.255.1:9/v1").generate(
            &chat,
            Limits { max_tokens: 8, deadline, stops: &[] },
            &mut |_| Flow::Continue,
        );
        assert!(matches!(got, Err(ModelError::Egress(ref why)) if why.contains("local_only")), "{:?}", got.err());
    }

    #[test]
    fn a_server_that_is_down_is_unavailable() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let chat = Chat { system: "s", examples: &[], user: "u" };
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let got = server(&format!("http://127.0.0.1:{port}/v1")).generate(
            &chat,
            Limits { max_tokens: 8, deadline, stops: &[] },
            &mut |_| Flow::Continue,
        );
        assert!(
            matches!(got, Err(ModelError::Server(ref why)) if why.contains("could not be reached")),
            "{:?}",
            got.err()
        );
    }

    #[test]
    fn the_request_body_is_openai_chat_completions() {
        let body = ChatRequest {
            model: Some("m"),
            messages: vec![Message { role: "user", content: "hi" }],
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            temperature: 0.0,
            max_tokens: 16,
            stop: &["\nQuestion:"],
        };
        let v: serde_json::Value = serde_json::to_value(&body).unwrap();
        assert_eq!(v["messages"][0]["role"], "user");
        assert_eq!(v["stream"], true);
        assert_eq!(v["max_tokens"], 16);
        assert_eq!(v["stop"][0], "\nQuestion:");
    }
}
