//! The token budget of a capsule: it covers the whole canonical payload. Tokens are counted
//! with the active embedder's tokenizer when its file is in place, else estimated
//! conservatively (one token per UTF-8 byte, which no tokenizer exceeds).

use crate::models::encoder::CountingTokenizer;
use protocol::api::{Capsule, TokenEstimator};
use protocol::{ApiError, ErrorCode};
use std::sync::Arc;

pub enum TokenCounter {
    Tokenizer(Arc<CountingTokenizer>),
    Conservative,
}

impl TokenCounter {
    pub fn estimator(&self) -> TokenEstimator {
        match self {
            TokenCounter::Tokenizer(_) => TokenEstimator::ActiveTokenizer,
            TokenCounter::Conservative => TokenEstimator::UnicodeConservative,
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

/// Rounds after which `usedTokens` may only grow: a tokenizer can split the count's own
/// digits differently, so exact counts can alternate between two values forever.
const EXACT_ROUNDS: usize = 8;

/// Sets `budget.usedBytes` / `usedTokens` to the size of the final canonical JSON, which
/// includes those two numbers: iterated until they describe themselves (at most 32 rounds).
/// `usedBytes` is always exact. `usedTokens` is exact, or, when the count keeps alternating
/// because of its own digits, the larger of the alternatives: never below the real count.
/// Returns the final JSON.
pub fn settle_size(capsule: &mut Capsule, counter: &TokenCounter) -> Result<String, ApiError> {
    let (bytes, tokens, json) = settle(|bytes, tokens| {
        capsule.budget.used_bytes = bytes;
        capsule.budget.used_tokens = tokens;
        let json = serde_json::to_string(capsule).map_err(|_| ApiError::context(ErrorCode::RuntimeError))?;
        let count = counter.count(&json)?;
        Ok((json.len() as u64, count, json))
    })?;
    capsule.budget.used_bytes = bytes;
    capsule.budget.used_tokens = tokens;
    Ok(json)
}

/// The fixed point of `measure(usedBytes, usedTokens) -> (bytes, tokens, payload)`.
fn settle<T>(mut measure: impl FnMut(u64, u64) -> Result<(u64, u64, T), ApiError>) -> Result<(u64, u64, T), ApiError> {
    let (mut used_bytes, mut used_tokens) = (0, 0);
    for round in 0..32 {
        let (bytes, tokens, payload) = measure(used_bytes, used_tokens)?;
        let tokens_ok = tokens == used_tokens || (round > EXACT_ROUNDS && tokens <= used_tokens);
        if bytes == used_bytes && tokens_ok {
            return Ok((used_bytes, used_tokens, payload));
        }
        used_bytes = bytes;
        used_tokens = if round >= EXACT_ROUNDS { tokens.max(used_tokens) } else { tokens };
    }
    Err(ApiError::context(ErrorCode::RuntimeError))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn payload(bytes: u64, tokens: u64) -> String {
        format!("{{\"usedBytes\":{bytes},\"usedTokens\":{tokens}}}")
    }

    #[test]
    fn sizes_describe_themselves() {
        let (bytes, tokens, json) = settle(|b, t| {
            let p = payload(b, t);
            Ok((p.len() as u64, p.len() as u64, p))
        })
        .unwrap();
        assert_eq!((bytes as usize, tokens as usize), (json.len(), json.len()));
        assert_eq!(json, payload(bytes, tokens));
    }

    /// A count that depends on the parity of the number written: exact settling never ends,
    /// so the larger count is kept, and it bounds the real one.
    #[test]
    fn an_alternating_count_settles_on_the_larger_value() {
        let count = |t: u64| if t.is_multiple_of(2) { 11 } else { 10 };
        let (bytes, tokens, json) = settle(|b, t| {
            let p = payload(b, t);
            Ok((p.len() as u64, count(t), p))
        })
        .unwrap();
        assert_eq!(bytes as usize, json.len());
        assert_eq!(tokens, 11);
        assert!(count(tokens) <= tokens);
    }
}
