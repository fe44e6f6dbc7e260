//! The hashes that make evidence and capsules checkable: `passageHash`, `evidenceId` and
//! `capsuleId`, and the passage itself (exact lines of the canonical mirror).

use crate::digest::sha256_hex;
use protocol::api::canonical_json;
use serde_json::Value;

/// Lines `start..=end` (1-based) of a canonical text, joined with `\n`; `None` when the span
/// is empty or outside the text.
pub fn passage(canonical: &str, start: u32, end: u32) -> Option<String> {
    if start == 0 || end < start {
        return None;
    }
    let lines: Vec<&str> = canonical.lines().collect();
    if end as usize > lines.len() {
        return None;
    }
    Some(lines[start as usize - 1..end as usize].join("\n"))
}

pub fn passage_hash(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

/// SHA-256 of the canonical JSON of the evidence's identity fields.
pub fn evidence_id(
    docid: &str,
    start_line: u32,
    end_line: u32,
    mirror_hash: &str,
    passage_hash: &str,
    source_hash: &str,
    uri: &str,
) -> String {
    let v = serde_json::json!({
        "docid": docid,
        "endLine": end_line,
        "mirrorHash": mirror_hash,
        "passageHash": passage_hash,
        "sourceHash": source_hash,
        "startLine": start_line,
        "uri": uri,
    });
    sha256_hex(canonical_json(&v).as_bytes())
}

/// SHA-256 of the canonical capsule without `capsuleId`, `budget.usedBytes` and
/// `budget.usedTokens` (the fields that depend on the identity or the final size).
pub fn capsule_id(capsule: &Value) -> String {
    let mut v = capsule.clone();
    if let Value::Object(map) = &mut v {
        map.remove("capsuleId");
        if let Some(Value::Object(budget)) = map.get_mut("budget") {
            budget.remove("usedBytes");
            budget.remove("usedTokens");
        }
    }
    sha256_hex(canonical_json(&v).as_bytes())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn passages_are_exact_line_spans() {
        let text = "a\nb\nc\n";
        assert_eq!(passage(text, 2, 3).as_deref(), Some("b\nc"));
        assert_eq!(passage(text, 1, 1).as_deref(), Some("a"));
        assert_eq!(passage(text, 3, 4), None);
        assert_eq!(passage(text, 0, 1), None);
        assert_eq!(passage(text, 2, 1), None);
    }

    #[test]
    fn capsule_id_ignores_key_order_and_the_size_fields() {
        let a: Value = serde_json::from_str(
            r#"{"goal":"g","budget":{"usedBytes":1,"usedTokens":2,"requestedTokens":9},"capsuleId":"x"}"#,
        )
        .unwrap();
        let b: Value =
            serde_json::from_str(r#"{"budget":{"requestedTokens":9,"usedTokens":7,"usedBytes":5},"goal":"g"}"#)
                .unwrap();
        assert_eq!(capsule_id(&a), capsule_id(&b));
        let c: Value = serde_json::from_str(r#"{"budget":{"requestedTokens":8},"goal":"g"}"#).unwrap();
        assert_ne!(capsule_id(&a), capsule_id(&c));
    }
}
