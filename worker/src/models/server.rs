//! A model server the user runs (llama.cpp's llama-server, Ollama, LM Studio, vLLM), spoken
//! to as OpenAI's API: where it is, and the one way every request to it is made. The egress
//! policy is checked before a byte is sent; the API key is read from the environment variable
//! the config names, at each request, and never logged. Its failures are
//! [`ModelError::Server`] with a reason (503 `UNAVAILABLE` for a client).

use crate::config::ModelServerConfig;
use crate::models::egress;
use crate::models::runtime::{ModelError, Result};
use protocol::api::EgressPolicy;
use std::time::Duration;

/// How long a request may take when the config says nothing.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how to reach a model server, and the one HTTP agent (its connection pool and
/// timeouts) every request to it goes through.
#[derive(Debug, Clone)]
pub struct ModelServer {
    /// The API's base URL (`http://127.0.0.1:8080/v1`).
    pub url: String,
    pub model: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    pub timeout: Duration,
    /// Whether an embeddings request says what its texts are (`input_type`).
    pub input_type: bool,
    agent: ureq::Agent,
}

/// Two servers are the same when they are reached the same way (the agent is a consequence).
impl PartialEq for ModelServer {
    fn eq(&self, other: &Self) -> bool {
        (&self.url, &self.model, &self.api_key_env, self.timeout, self.input_type)
            == (&other.url, &other.model, &other.api_key_env, other.timeout, other.input_type)
    }
}

impl Eq for ModelServer {}

impl ModelServer {
    pub fn new(url: &str, model: Option<String>, api_key_env: Option<String>, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
            .timeout_recv_response(Some(timeout))
            .timeout_per_read(Some(timeout))
            .build()
            .new_agent();
        ModelServer { url: url.trim().to_string(), model, api_key_env, timeout, input_type: false, agent }
    }

    pub fn from_config(c: &ModelServerConfig) -> Self {
        let mut server = Self::new(
            &c.url,
            c.model.clone(),
            c.api_key_env.clone(),
            c.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis),
        );
        server.input_type = c.input_type;
        server
    }

    /// The model reference a preset shows for this server: `server:<url>`, with `#<model>`
    /// when the config names one and `+input_type` when requests say what their texts are
    /// (the embedder's reference keys its vector table, and those vectors differ).
    pub fn reference(&self) -> String {
        let mut out = match &self.model {
            Some(m) => format!("server:{}#{m}", self.url),
            None => format!("server:{}", self.url),
        };
        if self.input_type {
            out.push_str("+input_type");
        }
        out
    }

    /// The error for this server: `the model server at <url> <reason>`.
    pub fn unavailable(&self, reason: impl std::fmt::Display) -> ModelError {
        ModelError::Server(format!("the model server at {} {reason}", self.url))
    }

    /// POSTs `body` (JSON) to `{url}/{path}` once the policy allows it; the response whatever
    /// its status (the caller reads a non-200 as [`Self::refused`]).
    pub fn post(&self, policy: EgressPolicy, path: &str, body: &[u8]) -> Result<ureq::http::Response<ureq::Body>> {
        egress::check(policy, &self.url).map_err(ModelError::Egress)?;
        let endpoint = format!("{}/{path}", self.url.trim_end_matches('/'));
        let mut request = self.agent.post(endpoint).header("Content-Type", "application/json");
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var)
                .map_err(|_| self.unavailable(format!("needs an API key in ${var}, which is not set")))?;
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        request.send(body).map_err(|e| self.unavailable(format!("could not be reached: {e}")))
    }

    /// The error for a reply whose status is not 200: the status and the start of its text.
    pub fn refused(&self, response: ureq::http::Response<ureq::Body>) -> ModelError {
        let status = response.status().as_u16();
        let mut text = response.into_body().read_to_string().unwrap_or_default();
        text.truncate(text.char_indices().nth(300).map_or(text.len(), |(i, _)| i));
        self.unavailable(format!("answered {status}: {}", text.trim()))
    }
}
