//! Editing the YAML front matter of a note without touching anything else: the `tags:` key
//! is replaced (or added, or the block is created); every other byte stays as it was.

/// YAML flow list of validated tags (letters, digits, `-`, `_`, `.`, `/`: no quoting needed).
fn tags_line(tags: &[String]) -> String {
    format!("tags: [{}]", tags.join(", "))
}

/// Byte range of the front matter's inner lines: `(start of first key line, start of closing line)`.
fn block(text: &str) -> Option<(usize, usize)> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end_matches('\r') != "---" {
        return None;
    }
    let mut pos = first_end + 1;
    while pos <= text.len() {
        let end = text[pos..].find('\n').map(|i| pos + i).unwrap_or(text.len());
        let line = text[pos..end].trim_end_matches('\r');
        if line == "---" || line == "..." {
            return Some((first_end + 1, pos));
        }
        if end == text.len() {
            break;
        }
        pos = end + 1;
    }
    None
}

fn is_top_level_key(line: &str, key: &str) -> bool {
    line.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':'))
}

/// Returns `text` with its front-matter `tags` set to `tags`.
pub fn set_tags(text: &str, tags: &[String]) -> String {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let Some((start, close)) = block(text) else {
        return format!("---{nl}{}{nl}---{nl}{text}", tags_line(tags));
    };
    let inner = &text[start..close];
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..start]);
    let mut replaced = false;
    let mut skipping = false;
    for line in inner.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if skipping {
            // Lines that belong to the old value: indented lines and block-list items.
            if bare.starts_with(' ') || bare.starts_with('\t') || bare.starts_with('-') || bare.is_empty() {
                continue;
            }
            skipping = false;
        }
        if !replaced && is_top_level_key(bare, "tags") {
            out.push_str(&tags_line(tags));
            out.push_str(nl);
            replaced = true;
            skipping = true;
            continue;
        }
        out.push_str(line);
    }
    if !replaced {
        if !out.ends_with('\n') {
            out.push_str(nl);
        }
        out.push_str(&tags_line(tags));
        out.push_str(nl);
    }
    out.push_str(&text[close..]);
    out
}

/// A front-matter block for a new note (empty when there is nothing to say).
pub fn new_block(title: Option<&str>, tags: &[String], extra: &[(String, String)]) -> String {
    let mut lines = Vec::new();
    if let Some(t) = title {
        lines.push(format!("title: {}", serde_json::to_string(t).unwrap_or_default()));
    }
    for (k, v) in extra {
        lines.push(format!("{k}: {v}"));
    }
    if !tags.is_empty() {
        lines.push(tags_line(tags));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("---\n{}\n---\n", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn adds_a_block_when_missing() {
        assert_eq!(set_tags("# Title\nbody\n", &t(&["a", "b/c"])), "---\ntags: [a, b/c]\n---\n# Title\nbody\n");
    }

    #[test]
    fn replaces_inline_and_block_lists_keeping_other_bytes() {
        let src = "---\ntitle:   Keep  me\ntags: [old]\ndate: 2024-01-01 # comment\n---\nbody  \n";
        assert_eq!(
            set_tags(src, &t(&["new"])),
            "---\ntitle:   Keep  me\ntags: [new]\ndate: 2024-01-01 # comment\n---\nbody  \n"
        );
        let block_list = "---\ntags:\n  - one\n  - two\nauthor: Ann\n---\nx\n";
        assert_eq!(set_tags(block_list, &t(&["z"])), "---\ntags: [z]\nauthor: Ann\n---\nx\n");
        let dash_list = "---\ntags:\n- one\n- two\n---\nx\n";
        assert_eq!(set_tags(dash_list, &t(&[])), "---\ntags: []\n---\nx\n");
    }

    #[test]
    fn appends_the_key_when_the_block_has_none() {
        assert_eq!(set_tags("---\ntitle: T\n---\nx\n", &t(&["a"])), "---\ntitle: T\ntags: [a]\n---\nx\n");
        assert_eq!(
            set_tags("---\r\ntitle: T\r\n---\r\nx\r\n", &t(&["a"])),
            "---\r\ntitle: T\r\ntags: [a]\r\n---\r\nx\r\n"
        );
    }

    #[test]
    fn does_not_touch_nested_or_similar_keys() {
        let src = "---\nmeta:\n  tags: [inner]\ntagsx: 1\n---\nx\n";
        assert_eq!(set_tags(src, &t(&["a"])), "---\nmeta:\n  tags: [inner]\ntagsx: 1\ntags: [a]\n---\nx\n");
    }

    #[test]
    fn unterminated_front_matter_is_not_a_block() {
        assert_eq!(set_tags("---\ntitle: x\n", &t(&["a"])), "---\ntags: [a]\n---\n---\ntitle: x\n");
    }

    #[test]
    fn new_blocks_quote_titles() {
        assert_eq!(new_block(Some("A: b"), &t(&["x"]), &[]), "---\ntitle: \"A: b\"\ntags: [x]\n---\n");
        assert_eq!(new_block(None, &[], &[]), "");
    }
}
