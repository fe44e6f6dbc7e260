//! YAML (LibreChat's `librechat.yaml`). Such a file is never written back whole (that would
//! drop its comments and anchors): svc's entry is spliced into the text as a block under the
//! top-level key, every other line stays as it was, and the result must read back as the old
//! document with only that entry changed, else nothing is written.

use serde_norway::{Mapping, Value};

/// The detail of a splice whose result did not read back as expected.
const SPLICE_FAILED: &str = "svc could not change its entry without changing the rest of the file; \
     add it by hand (`svc mcp install --print` shows it)";

/// The document: its top-level mapping (an empty or comments-only file is an empty one).
pub fn parse(text: &str) -> Result<Mapping, String> {
    if text.trim().is_empty() {
        return Ok(Mapping::new());
    }
    match serde_norway::from_str::<Value>(text) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(Value::Null) => Ok(Mapping::new()),
        Ok(_) => Err("the top level is not a mapping".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `root[outer][name]`, as JSON (`None` when there is no such entry; `Some(None)` when it
/// cannot be told as JSON).
pub fn entry(root: &Mapping, outer: &str, name: &str) -> Option<Option<serde_json::Value>> {
    let v = root.get(outer)?.get(name)?;
    Some(serde_json::to_value(v).ok())
}

/// `text` with `root[outer][name]` set to `value`: the entry's block replaced, or added first
/// under `outer` (itself added at the end of the file when missing).
pub fn set(text: &str, outer: &str, name: &str, value: &serde_json::Value) -> Result<String, String> {
    let mut desired = parse(text)?;
    let entry = serde_norway::to_value(value).map_err(|e| e.to_string())?;
    let servers = desired.entry(Value::String(outer.to_string())).or_insert(Value::Null);
    if servers.is_null() {
        *servers = Value::Mapping(Mapping::new());
    }
    let Value::Mapping(servers) = servers else { return Err(format!("{outer} is not a mapping")) };
    servers.insert(Value::String(name.to_string()), entry);

    let mut one = serde_json::Map::new();
    one.insert(name.to_string(), value.clone());
    let block = serde_norway::to_string(&serde_json::Value::Object(one)).map_err(|e| e.to_string())?;
    let block = block.strip_prefix("---\n").unwrap_or(&block);

    let lines = lines(text);
    let out = match top_level_block(&lines, outer)? {
        Some(k) => {
            let children = &lines[k + 1..block_end(&lines, k)];
            let indent = children.iter().find(|l| !l.is_filler()).map_or(2, Line::indent);
            let mut out = text.to_string();
            if let Some(cut) = child_block(children, name, indent) {
                out.replace_range(cut, "");
            }
            let at = lines[k].next;
            let lead = if text[..at].ends_with('\n') { "" } else { "\n" };
            out.insert_str(at, &format!("{lead}{}", indented(block, indent)));
            out
        }
        None => {
            let mut out = text.to_string();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("{outer}:\n{}", indented(block, 2)));
            out
        }
    };
    reads_as(&out, &desired, outer)?;
    Ok(out)
}

/// `text` without `root[outer][name]`'s block, or `None` when there is no such entry.
pub fn remove(text: &str, outer: &str, name: &str) -> Result<Option<String>, String> {
    let mut desired = parse(text)?;
    let removed = desired.get_mut(outer).and_then(Value::as_mapping_mut).and_then(|m| m.shift_remove(name));
    if removed.is_none() {
        return Ok(None);
    }
    let lines = lines(text);
    let k = top_level_block(&lines, outer)?.ok_or(SPLICE_FAILED)?;
    let children = &lines[k + 1..block_end(&lines, k)];
    let indent = children.iter().find(|l| !l.is_filler()).map(Line::indent).ok_or(SPLICE_FAILED)?;
    let cut = child_block(children, name, indent).ok_or(SPLICE_FAILED)?;
    let mut out = text.to_string();
    out.replace_range(cut, "");
    reads_as(&out, &desired, outer)?;
    Ok(Some(out))
}

/// The spliced text must read as `desired` (key order aside; `outer:` with nothing under it
/// reads as null, which is what an emptied table is).
fn reads_as(text: &str, desired: &Mapping, outer: &str) -> Result<(), String> {
    let emptied = |mut m: Mapping| {
        if let Some(v) = m.get_mut(outer) {
            if v.as_mapping().is_some_and(Mapping::is_empty) {
                *v = Value::Null;
            }
        }
        m
    };
    let Ok(got) = parse(text) else { return Err(SPLICE_FAILED.into()) };
    if emptied(got) == emptied(desired.clone()) {
        Ok(())
    } else {
        Err(SPLICE_FAILED.into())
    }
}

/// A line of the file: where it starts, where the next one starts, and its text without the
/// line break.
struct Line<'a> {
    start: usize,
    next: usize,
    body: &'a str,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let next = start + piece.len();
        out.push(Line { start, next, body: piece.trim_end_matches(&['\r', '\n'][..]) });
        start = next;
    }
    out
}

impl Line<'_> {
    /// Its leading spaces.
    fn indent(&self) -> usize {
        self.body.len() - self.body.trim_start_matches(' ').len()
    }

    /// Blank, or a comment alone.
    fn is_filler(&self) -> bool {
        let t = self.body.trim_start();
        t.is_empty() || t.starts_with('#')
    }

    /// What follows `key:` when the line is that key (plain or quoted) at `indent`.
    fn after_key(&self, key: &str, indent: usize) -> Option<&str> {
        if self.indent() != indent {
            return None;
        }
        let body = &self.body[indent..];
        let forms = [key.to_string(), format!("\"{key}\""), format!("'{key}'")];
        let rest = forms.iter().find_map(|k| body.strip_prefix(k.as_str()))?;
        let rest = rest.trim_start_matches(' ').strip_prefix(':')?;
        (rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')).then_some(rest)
    }
}

/// The line that opens `outer:` as a block at the top level (nothing after the colon but a
/// comment); an error when the key is there with its value on the same line (a flow mapping
/// svc does not edit).
fn top_level_block(lines: &[Line<'_>], outer: &str) -> Result<Option<usize>, String> {
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.after_key(outer, 0) {
            let rest = rest.trim_start();
            if rest.is_empty() || rest.starts_with('#') {
                return Ok(Some(i));
            }
            return Err(format!(
                "{outer} is written on one line; svc adds its entry only to a block of entries \
                 (or add it by hand: `svc mcp install --print` shows it)"
            ));
        }
    }
    Ok(None)
}

/// Where the block under line `k` ends: the next line that is neither blank, a comment nor
/// indented.
fn block_end(lines: &[Line<'_>], k: usize) -> usize {
    (k + 1..lines.len()).find(|&i| !lines[i].is_filler() && lines[i].indent() == 0).unwrap_or(lines.len())
}

/// The bytes of the child `name:` at `indent` among `children`, with every more indented line
/// under it (blank and comment lines between them included, not those after).
fn child_block(children: &[Line<'_>], name: &str, indent: usize) -> Option<std::ops::Range<usize>> {
    let first = children.iter().position(|l| !l.is_filler() && l.after_key(name, indent).is_some())?;
    let mut last = first;
    for (i, line) in children.iter().enumerate().skip(first + 1) {
        if line.is_filler() {
            continue;
        }
        if line.indent() <= indent {
            break;
        }
        last = i;
    }
    Some(children[first].start..children[last].next)
}

/// `block`'s lines, each indented by `indent` spaces.
fn indented(block: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    block.lines().map(|l| if l.is_empty() { "\n".to_string() } else { format!("{pad}{l}\n") }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LIBRECHAT: &str = concat!(
        "# LibreChat configuration\n",
        "version: 1.2.8\n",
        "cache: true\n",
        "interface:\n",
        "  # who may add servers\n",
        "  mcpServers:\n",
        "    use: true\n",
        "\n",
        "mcpServers:\n",
        "    # the file system\n",
        "    filesystem:\n",
        "        command: npx\n",
        "        args:\n",
        "            - -y\n",
        "            - \"@modelcontextprotocol/server-filesystem\"\n",
        "\n",
        "endpoints: &shared\n",
        "  custom: []\n",
    );

    fn svc_entry() -> serde_json::Value {
        json!({"type": "stdio", "command": "/opt/svc/bin/svc", "args": ["mcp"], "env": {"SVC_DATA_DIR": "/data"}})
    }

    #[test]
    fn the_entry_goes_under_the_top_level_key_and_leaves_again() {
        let added = set(LIBRECHAT, "mcpServers", "svc", &svc_entry()).unwrap();
        for kept in ["# LibreChat configuration\n", "  # who may add servers\n", "    # the file system\n", "&shared"] {
            assert!(added.contains(kept), "{kept}: {added}");
        }
        assert!(added.contains("\nmcpServers:\n    svc:\n      "), "the children's indent: {added}");
        let root = parse(&added).unwrap();
        assert_eq!(entry_of(&root), Some(Some(svc_entry())));
        let old = parse(LIBRECHAT).unwrap();
        assert_eq!(root.get("interface"), old.get("interface"), "the nested mcpServers is not svc's");
        let again = set(&added, "mcpServers", "svc", &json!({"command": "/other"})).unwrap();
        assert_eq!(again.matches("svc:").count(), 1, "{again}");
        let gone = remove(&again, "mcpServers", "svc").unwrap().unwrap();
        assert_eq!(gone, LIBRECHAT);
        assert_eq!(remove(&gone, "mcpServers", "svc").unwrap(), None);
    }

    fn entry_of(root: &Mapping) -> Option<Option<serde_json::Value>> {
        entry(root, "mcpServers", "svc")
    }

    #[test]
    fn a_missing_key_or_file_is_added_at_the_end_and_a_flow_table_is_refused() {
        let fresh = set("", "mcpServers", "svc", &svc_entry()).unwrap();
        assert!(fresh.starts_with("mcpServers:\n  svc:\n"), "{fresh}");
        assert_eq!(entry_of(&parse(&fresh).unwrap()), Some(Some(svc_entry())));
        let only = remove(&fresh, "mcpServers", "svc").unwrap().unwrap();
        assert_eq!(only, "mcpServers:\n");
        let other = "version: 1.2.8 # pinned";
        let appended = set(other, "mcpServers", "svc", &svc_entry()).unwrap();
        assert!(appended.starts_with("version: 1.2.8 # pinned\nmcpServers:\n"), "{appended}");
        assert!(set("mcpServers: {}\n", "mcpServers", "svc", &svc_entry()).is_err());
        assert!(set("mcpServers:\n  - a\n", "mcpServers", "svc", &svc_entry()).is_err());
        assert!(parse("- a\n").is_err());
    }
}
