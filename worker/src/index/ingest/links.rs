//! Link target interpretation for wiki links and inline Markdown links.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;

use super::canonical::nfc;

/// Parsed target of a link, before positions are attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) target_ref: String,
    pub(super) target_ref_norm: String,
    pub(super) anchor: Option<String>,
    pub(super) collection: Option<String>,
}

const URL_SCHEMES: &[&str] = &[
    "http",
    "https",
    "ftp",
    "ftps",
    "sftp",
    "file",
    "mailto",
    "tel",
    "data",
    "javascript",
    "irc",
    "ircs",
    "news",
    "ssh",
    "git",
    "obsidian",
    "zotero",
    "onenote",
    "vscode",
];

/// Length of a leading `scheme:` (RFC 3986 scheme chars), if any.
fn scheme_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let n = bytes.iter().position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (bytes.get(n) == Some(&b':')).then_some(n)
}

/// Whether a wiki target looks like a URL rather than a note reference.
fn wiki_is_url(s: &str) -> bool {
    match scheme_len(s) {
        Some(n) => s[n + 1..].starts_with("//") || URL_SCHEMES.contains(&s[..n].to_ascii_lowercase().as_str()),
        None => s.starts_with("//"),
    }
}

fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Interprets the inside of `[[...]]` (before any '|'):
/// `coll:Target#Anchor`. Returns `None` for URLs and empty targets.
pub(super) fn wiki_target(raw: &str) -> Option<Target> {
    // `[[a\|b]]` (escaped pipe, as in tables) leaves a trailing backslash.
    let raw = raw.trim().trim_end_matches('\\').trim_end();
    if raw.contains('\n') || wiki_is_url(raw) {
        return None;
    }
    let mut rest = raw;
    let mut collection = None;
    if let Some(colon) = rest.find(':') {
        let prefix = &rest[..colon];
        if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            collection = Some(prefix.to_ascii_lowercase());
            rest = &rest[colon + 1..];
        }
    }
    let (target, anchor) = match rest.split_once('#') {
        Some((t, a)) => (t, non_empty(a)),
        None => (rest, None),
    };
    let target = target.trim();
    if target.is_empty() {
        // `[[#Heading]]`, `[[#^block]]`: a link to a part of the note itself.
        return anchor.filter(|_| collection.is_none()).map(|anchor| Target {
            target_ref: String::new(),
            target_ref_norm: String::new(),
            anchor: Some(anchor),
            collection: None,
        });
    }
    Some(Target {
        target_ref: target.to_string(),
        target_ref_norm: nfc(target).to_lowercase().trim().to_string(),
        anchor,
        collection,
    })
}

/// POSIX-normalizes `dir/path` ("." and ".." resolved). `None` if the path
/// escapes above the root.
fn normalize_path(dir: &str, path: &str) -> Option<String> {
    crate::paths::lexical_join(if path.starts_with('/') { "" } else { dir }, path)
}

/// Interprets an inline Markdown link destination relative to the note at
/// `rel_path`. Returns `None` for URLs with a scheme, `//host` URLs, pure
/// in-page anchors, empty targets and targets escaping the collection root.
pub(super) fn markdown_target(dest: &str, rel_path: &str) -> Option<Target> {
    let dest = dest.trim();
    if dest.is_empty() || dest.starts_with('#') || dest.starts_with("//") || scheme_len(dest).is_some() {
        return None;
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((p, a)) => (p, non_empty(a)),
        None => (dest, None),
    };
    let path_no_query = path.split_once('?').map_or(path, |(p, _)| p);
    if path_no_query.is_empty() {
        return None;
    }
    let decoded: Cow<'_, str> = percent_decode_str(path_no_query).decode_utf8_lossy();
    let rel_path = rel_path.replace('\\', "/");
    let dir = crate::paths::dir_of(&rel_path);
    let norm = normalize_path(dir, &decoded)?;
    if norm.is_empty() {
        return None;
    }
    Some(Target { target_ref: path.to_string(), target_ref_norm: nfc(&norm), anchor, collection: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wiki_targets() {
        let t = wiki_target("Some Note").unwrap();
        assert_eq!(t.target_ref, "Some Note");
        assert_eq!(t.target_ref_norm, "some note");
        assert_eq!(t.anchor, None);
        assert_eq!(t.collection, None);

        let t = wiki_target(" Note.md#Sub Heading ").unwrap();
        assert_eq!(t.target_ref, "Note.md");
        assert_eq!(t.target_ref_norm, "note.md");
        assert_eq!(t.anchor.as_deref(), Some("Sub Heading"));

        let t = wiki_target("Work_2:Plan#^block").unwrap();
        assert_eq!(t.collection.as_deref(), Some("work_2"));
        assert_eq!(t.target_ref, "Plan");
        assert_eq!(t.anchor.as_deref(), Some("^block"));

        let t = wiki_target("ÉTÉ Ünï").unwrap();
        assert_eq!(t.target_ref_norm, "été ünï");

        assert_eq!(wiki_target("Esc\\").unwrap().target_ref, "Esc");

        let t = wiki_target("folder/Note: with colon").unwrap();
        assert_eq!(t.collection, None);
        assert_eq!(t.target_ref, "folder/Note: with colon");
    }

    #[test]
    fn wiki_rejects() {
        for s in ["", "  ", "a\nb", "\\", "#", "# ", "https://x.org", "mailto:a@b.c", "//host/x", "coll:", "coll:#h"] {
            assert_eq!(wiki_target(s), None, "{s:?}");
        }
    }

    #[test]
    fn a_link_to_a_heading_or_block_of_the_note_itself_has_no_target_but_its_anchor() {
        for (raw, anchor) in [("#Heading", "Heading"), (" #^b-1 ", "^b-1"), ("#A#B", "A#B")] {
            let t = wiki_target(raw).unwrap();
            assert_eq!((t.target_ref.as_str(), t.target_ref_norm.as_str()), ("", ""), "{raw:?}");
            assert_eq!(t.anchor.as_deref(), Some(anchor));
            assert_eq!(t.collection, None);
        }
    }

    #[test]
    fn markdown_targets() {
        let t = markdown_target("../b/c.md", "a/x.md").unwrap();
        assert_eq!(t.target_ref, "../b/c.md");
        assert_eq!(t.target_ref_norm, "b/c.md");

        let t = markdown_target("./Sub%20Dir/My%20Note.md#Part%201", "a/b/x.md").unwrap();
        assert_eq!(t.target_ref, "./Sub%20Dir/My%20Note.md");
        assert_eq!(t.target_ref_norm, "a/b/Sub Dir/My Note.md");
        assert_eq!(t.anchor.as_deref(), Some("Part%201"));

        let t = markdown_target("/root.md?x=1", "a/b/x.md").unwrap();
        assert_eq!(t.target_ref, "/root.md?x=1");
        assert_eq!(t.target_ref_norm, "root.md");

        let t = markdown_target("Other.md", "x.md").unwrap();
        assert_eq!(t.target_ref_norm, "Other.md");

        let t = markdown_target("%C3%A9t%C3%A9.md", "x.md").unwrap();
        assert_eq!(t.target_ref_norm, "été.md");

        let t = markdown_target("sub/", "d/x.md").unwrap();
        assert_eq!(t.target_ref_norm, "d/sub");
    }

    #[test]
    fn markdown_rejects() {
        for (d, p) in [
            ("https://x.org/a.md", "x.md"),
            ("mailto:a@b.c", "x.md"),
            ("//cdn/x.js", "x.md"),
            ("#top", "x.md"),
            ("", "x.md"),
            ("?q", "x.md"),
            ("../x.md", "x.md"),
            ("../../x.md", "a/x.md"),
            ("%2E%2E/x.md", "x.md"),
            ("a/../..", "x.md"),
            (".", "x.md"),
        ] {
            assert_eq!(markdown_target(d, p), None, "{d:?} from {p:?}");
        }
    }
}
