//! The opaque cursor of the change journal: `svc-change-v1.` + base64 of
//! `{"sequence":N}`. A change's id is the cursor positioned at it, so `since=<id>` reads
//! what came after that change.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

const PREFIX: &str = "svc-change-v1.";

/// A position in the change journal: every change with a greater sequence comes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChangeCursor(pub u64);

#[derive(Serialize, Deserialize)]
struct Payload {
    sequence: u64,
}

impl ChangeCursor {
    pub fn encode(self) -> String {
        let json = format!("{{\"sequence\":{}}}", self.0);
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(json))
    }

    /// `None` for anything that is not a cursor this version wrote.
    pub fn parse(s: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(s.strip_prefix(PREFIX)?).ok()?;
        serde_json::from_slice::<Payload>(&bytes).ok().map(|p| ChangeCursor(p.sequence))
    }

    pub fn looks_like_cursor(s: &str) -> bool {
        s.starts_with(PREFIX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_others() {
        for n in [0, 1, 42, u64::MAX] {
            let c = ChangeCursor(n).encode();
            assert!(c.starts_with(PREFIX) && !c.contains('='), "{c}");
            assert_eq!(ChangeCursor::parse(&c), Some(ChangeCursor(n)));
        }
        assert_eq!(ChangeCursor::parse("svc-change-v1.!!"), None);
        assert_eq!(ChangeCursor::parse("2024-01-01"), None);
        let other = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode("{\"seq\":1}"));
        assert_eq!(ChangeCursor::parse(&other), None);
    }
}
