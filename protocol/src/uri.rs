//! Virtual document URIs: `svc://<collection>/<relPath>`, each segment percent-encoded.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

pub const SCHEME: &str = "svc://";

/// What `encodeURIComponent` leaves alone.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

pub fn doc_uri(collection: &str, rel_path: &str) -> String {
    let path: Vec<String> = rel_path.split('/').map(|s| utf8_percent_encode(s, COMPONENT).to_string()).collect();
    format!("{SCHEME}{collection}/{}", path.join("/"))
}

/// `(collection, relPath)` of a `svc://` URI, or `None` if it is not one.
pub fn parse_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (collection, path) = rest.split_once('/')?;
    let collection = crate::CollectionName::parse(collection).ok()?;
    if path.is_empty() {
        return None;
    }
    let mut segs = Vec::new();
    for s in path.split('/') {
        let d = percent_decode_str(s).decode_utf8().ok()?;
        if d.is_empty() || d == "." || d == ".." || d.contains('\0') || d.contains('/') {
            return None;
        }
        segs.push(d.into_owned());
    }
    Some((collection.into(), segs.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_segments_and_round_trips() {
        let u = doc_uri("notes", "a dir/Ünï #1.md");
        assert_eq!(u, "svc://notes/a%20dir/%C3%9Cn%C3%AF%20%231.md");
        assert_eq!(parse_uri(&u), Some(("notes".into(), "a dir/Ünï #1.md".into())));
    }

    #[test]
    fn refuses_traversal_and_other_schemes() {
        assert_eq!(parse_uri("svc://notes/../x.md"), None);
        assert_eq!(parse_uri("svc://notes/%2e%2e/x.md"), None);
        assert_eq!(parse_uri("file:///etc/passwd"), None);
        assert_eq!(parse_uri("svc://notes/"), None);
    }
}
