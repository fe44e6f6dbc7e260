//! A test that the wire's types cannot change without [`PROTOCOL_VERSION`] changing too. The
//! gateway and the worker are two processes that may come from two builds (a rebuilt worker
//! beside a running gateway, an upgrade half done); both refuse a peer of another version, so
//! a frame type that changes shape under the same version would be decoded as garbage. The
//! fingerprint is of the serde types' definitions in the files that make up the frames (their
//! attributes and fields, without comments or tests), so a change there fails this test until
//! the version is bumped and the new fingerprint recorded.

use crate::PROTOCOL_VERSION;

/// The files whose serde types travel in `postcard` frames (replies travel as JSON bytes, so
/// `api/` is not here except the event kind a frame carries).
const WIRE_FILES: &[(&str, &str)] = &[
    ("anchor.rs", include_str!("anchor.rs")),
    ("cursor.rs", include_str!("cursor.rs")),
    ("dirs.rs", include_str!("dirs.rs")),
    ("error.rs", include_str!("error.rs")),
    ("frame.rs", include_str!("frame.rs")),
    ("ids.rs", include_str!("ids.rs")),
    ("messages.rs", include_str!("messages.rs")),
    ("requests.rs", include_str!("requests.rs")),
    ("source_kind.rs", include_str!("source_kind.rs")),
    ("tag.rs", include_str!("tag.rs")),
    ("uri.rs", include_str!("uri.rs")),
    ("api/events.rs", include_str!("api/events.rs")),
];

/// The version and fingerprint last recorded. A failure of [`the_wire_types_match_their_version`]
/// prints the values to write here after bumping [`PROTOCOL_VERSION`].
const RECORDED: (u32, u64) = (15, 0xf9d9_463b_9781_001d);

/// The serde types of `source` (before its tests), each from its `#[derive(…Serialize…)]` to the
/// end of its item, trimmed lines without comments.
fn serde_types(source: &str) -> Vec<String> {
    let body = source.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = Vec::new();
    let mut depth: i32 = 0;
    let mut capturing = false;
    let mut opened = false;
    for line in body.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if !capturing && line.starts_with("#[derive(") && line.contains("Serialize") {
            capturing = true;
            opened = false;
            depth = 0;
        }
        if !capturing {
            continue;
        }
        out.push(line.to_string());
        if line.starts_with("#[") {
            continue;
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        opened |= line.contains('{');
        if (opened && depth <= 0) || (!opened && line.ends_with(';')) {
            capturing = false;
        }
    }
    out
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike the standard library's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn fingerprint() -> u64 {
    let mut text = String::new();
    for (name, source) in WIRE_FILES {
        text.push_str(name);
        text.push('\n');
        for line in serde_types(source) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    fnv1a(text.as_bytes())
}

#[test]
fn the_wire_types_match_their_version() {
    let now = fingerprint();
    assert!(
        RECORDED == (PROTOCOL_VERSION, now),
        "the wire's types or version changed (fingerprint {now:#018x}, recorded {:#018x} for protocol {}): \
         bump PROTOCOL_VERSION in protocol/src/lib.rs if a frame type changed shape, then record \
         ({PROTOCOL_VERSION}, {now:#018x}) in protocol/src/wire_fingerprint.rs",
        RECORDED.1,
        RECORDED.0
    );
}

#[test]
fn a_serde_type_is_read_from_its_derive_to_its_end() {
    let source = "use x;\n/// Doc.\n#[derive(Debug, Serialize)]\n#[serde(rename_all = \"camelCase\")]\npub struct A {\n    // note\n    pub b: u32,\n}\n\nfn helper() {}\n#[derive(Serialize)]\npub struct Unit;\n#[cfg(test)]\nmod tests { #[derive(Serialize)] struct T; }\n";
    assert_eq!(
        serde_types(source),
        [
            "#[derive(Debug, Serialize)]",
            "#[serde(rename_all = \"camelCase\")]",
            "pub struct A {",
            "pub b: u32,",
            "}",
            "#[derive(Serialize)]",
            "pub struct Unit;"
        ]
    );
    assert_ne!(fnv1a(b"a"), fnv1a(b"b"));
}
