//! The token budget of a capsule: it covers the whole canonical payload. Tokens are counted
//! with the active embedder's tokenizer when its file is in place, else estimated
//! conservatively (one token per UTF-8 byte, which no tokenizer exceeds).

use crate::models::encoder::CountingTokenizer;
use protocol::api::Capsule;
use protocol::{ApiError, ErrorCode};
use std::sync::Arc;

pub enum TokenCounter {
    Tokenizer(Arc<CountingTokenizer>),
    Conservative,
}

impl TokenCounter {
    pub fn estimator(&self) -> &'static str {
        match self {
            TokenCounter::Tokenizer(_) => "active_tokenizer",
            TokenCounter::Conservative => "unicode_conservative",
        }
    }

    pub fn fingerprint(&self) -> Option<String> {
        match self {
            TokenCounter::Tokenizer(t) => Some(t.fingerprint.clone()),
            TokenCounter::Conservative => None,
        }
    }

    pub fn exact(&self) -> bool {
        matches!(self, TokenCounter::Tokenizer(_))
    }

    pub fn count(&self, text: &str) -> Result<u64, ApiError> {
        match self {
            TokenCounter::Tokenizer(t) => t.count(text).map_err(|e| {
                tracing::warn!("capsule token count failed: {e}");
                ApiError::context(ErrorCode::TokenizerUnavailable)
            }),
            TokenCounter::Conservative => Ok(text.len() as u64),
        }
    }
}

/// The limits the payload must stay within: budget less safety margin, in tokens and bytes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub tokens: u64,
    pub bytes: u64,
}

impl Limits {
    pub fn fits(&self, tokens: u64, bytes: u64) -> bool {
        tokens <= self.tokens && bytes <= self.bytes
    }
}

/// Sets `budget.usedBytes` / `usedTokens` to the size of the final canonical JSON, which
/// includes those two numbers: iterated until they describe themselves (at most 32 rounds).
/// Returns the final JSON.
pub fn settle_size(capsule: &mut Capsule, counter: &TokenCounter) -> Result<String, ApiError> {
    let runtime = || ApiError::context(ErrorCode::RuntimeError);
    for _ in 0..32 {
        let json = serde_json::to_string(capsule).map_err(|_| runtime())?;
        let (bytes, tokens) = (json.len() as u64, counter.count(&json)?);
        if bytes == capsule.budget.used_bytes && tokens == capsule.budget.used_tokens {
            return Ok(json);
        }
        capsule.budget.used_bytes = bytes;
        capsule.budget.used_tokens = tokens;
    }
    Err(runtime())
}
