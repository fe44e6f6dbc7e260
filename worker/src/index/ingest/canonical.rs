//! Decoding, canonical text form and content hashing.

use super::IngestError;

const BOM: char = '\u{feff}';

/// Decodes UTF-8 bytes, stripping a leading UTF-8 BOM.
pub fn decode_utf8(bytes: &[u8]) -> Result<String, IngestError> {
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(_) => Err(IngestError::NotUtf8),
    }
}

/// Bytes of a text file as text: UTF-8; UTF-16 with its byte-order mark; else, when the bytes
/// hold no NUL, Windows-1252 (the Latin-1 superset most non-UTF-8 notes are saved in, which
/// maps every byte). Bytes with a NUL and no byte-order mark are binary: an error.
pub fn decode_text(bytes: &[u8]) -> Result<String, IngestError> {
    if let Some((encoding, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, malformed) = encoding.decode_without_bom_handling(&bytes[bom..]);
        return if malformed { Err(IngestError::NotUtf8) } else { Ok(text.into_owned()) };
    }
    // NUL is valid UTF-8, but no text file holds one.
    if bytes.contains(&0) {
        return Err(IngestError::Binary);
    }
    match decode_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => Ok(encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes).0.into_owned()),
    }
}

pub(super) use protocol::anchor::nfc;

/// Canonical text form: no BOM (no U+FEFF at all), LF line ends, NFC, no control chars except
/// TAB and LF, no trailing spaces/tabs, at most one blank line in a row, no
/// leading/trailing blank lines, exactly one final "\n" ("" if empty).
pub fn canonicalize(text: &str) -> String {
    let text = text.strip_prefix(BOM).unwrap_or(text);

    // Line endings + control characters in one pass.
    let mut cleaned = String::with_capacity(text.len() + 1);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                cleaned.push('\n');
            }
            '\n' | '\t' => cleaned.push(c),
            // U+FEFF anywhere (a BOM or a deprecated zero-width no-break
            // space) is dropped, which keeps canonicalize idempotent.
            c if c.is_control() || c == BOM => {}
            c => cleaned.push(c),
        }
    }
    let cleaned = nfc(&cleaned);

    let mut out = String::with_capacity(cleaned.len() + 1);
    let mut pending_blank = false;
    for line in cleaned.split('\n') {
        let line = line.trim_end_matches([' ', '\t']);
        if line.is_empty() {
            // Leading blank lines are dropped; inner runs collapse to one.
            if !out.is_empty() {
                pending_blank = true;
            }
            continue;
        }
        if pending_blank {
            out.push('\n');
            pending_blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The hash of the canonical form of `text`: what a document's `mirror_hash` is.
pub fn mirror_of(text: &str) -> String {
    crate::digest::sha256_hex(canonicalize(text).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode() {
        assert_eq!(decode_utf8(b"\xEF\xBB\xBFhi").unwrap(), "hi");
        assert_eq!(decode_utf8("é".as_bytes()).unwrap(), "é");
        assert_eq!(decode_utf8(b"\xff\xfe"), Err(IngestError::NotUtf8));
        assert_eq!(decode_utf8(b"").unwrap(), "");
    }

    #[test]
    fn other_encodings_decode_and_binary_does_not() {
        assert_eq!(decode_text("é".as_bytes()).unwrap(), "é");
        assert_eq!(decode_text(b"Caf\xe9 \x93quoted\x94").unwrap(), "Caf\u{e9} \u{201c}quoted\u{201d}");
        assert_eq!(decode_text(b"\xff\xfeh\x00i\x00").unwrap(), "hi");
        assert_eq!(decode_text(b"\x00\x01\x02ELF"), Err(IngestError::Binary));
    }

    #[test]
    fn empty_and_blank() {
        assert_eq!(canonicalize(""), "");
        assert_eq!(canonicalize("\n\n  \n\t\n"), "");
        assert_eq!(canonicalize("\u{feff}"), "");
        assert_eq!(canonicalize("\r\n\r\n"), "");
        assert_eq!(canonicalize("\u{0}\u{feff}x"), "x\n");
        assert_eq!(canonicalize("  \n\u{feff}a\u{feff}b"), "ab\n");
    }

    #[test]
    fn line_endings() {
        assert_eq!(canonicalize("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(canonicalize("a"), "a\n");
        assert_eq!(canonicalize("a\n\n\n"), "a\n");
        assert_eq!(canonicalize("a\r\r\rb"), "a\n\nb\n");
    }

    #[test]
    fn bom_trailing_and_blank_runs() {
        let s = "\u{feff}\n\n  lead  \t\nx \n\n\n\n y\t\n   \n\n";
        assert_eq!(canonicalize(s), "  lead\nx\n\n y\n");
    }

    #[test]
    fn control_chars() {
        assert_eq!(canonicalize("a\u{0}b\u{7}c\u{7f}d\u{1b}[0m\u{85}e\tf"), "abcd[0me\tf\n");
        // form feed alone on a line makes it blank
        assert_eq!(canonicalize("a\n\u{c}\n\nb"), "a\n\nb\n");
    }

    #[test]
    fn nfc_applied() {
        let decomposed = "e\u{301}te\u{301}";
        assert_eq!(canonicalize(decomposed), "été\n");
        // NBSP is not trimmed (only spaces/tabs)
        assert_eq!(canonicalize("a\u{a0}"), "a\u{a0}\n");
    }

    #[test]
    fn idempotent() {
        let s = "\u{feff}# T \r\n\r\n\r\nbody\u{0}\ttext\t \r\n";
        let once = canonicalize(s);
        assert_eq!(canonicalize(&once), once);
        assert_eq!(once, "# T\n\nbody\ttext\n");
    }

    #[test]
    fn hash() {}
}
