//! JSON with comments (JSONC), as Zed, VS Code, OpenCode, Amp and Gemini CLI read their
//! settings: `//` and `/* */` comments, trailing commas. Such a file is never written back
//! whole (that would drop its comments): svc's entry is spliced into the text, every other
//! byte stays where it was, and the result must read back as the old document with only that
//! entry changed, else nothing is written.

use serde::Serialize;
use serde_json::{Map, Value};
use std::ops::Range;

/// The detail of a splice whose result did not read back as expected.
const SPLICE_FAILED: &str = "svc could not change its entry without changing the rest of the file; \
     add it by hand (`svc mcp install --print` shows it)";

/// The document: its top-level object (an empty or comments-only file is an empty one).
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let plain = blank(text)?;
    if plain.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&plain) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("the top level is not an object".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `text` with `root[outer][name]` set to `value`: the member's value replaced where it is, or
/// the member added first in `outer` (itself added first in the root when missing).
pub fn set(text: &str, outer: &str, name: &str, value: &Value) -> Result<String, String> {
    let plain = blank(text)?;
    if plain.trim().is_empty() {
        // Nothing but blanks or comments: an object after them.
        let base = if text.trim().is_empty() { "{}\n".to_string() } else { format!("{text}\n{{}}\n") };
        return set(&base, outer, name, value);
    }
    let mut desired = parse(text)?;
    let servers = desired.entry(outer.to_string()).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else { return Err(format!("{outer} is not an object")) };
    servers.insert(name.to_string(), value.clone());

    let s = plain.as_bytes();
    let root_open = skip_ws(s, 0);
    let root = members(s, root_open).ok_or("the top level is not an object")?;
    let unit = indent_unit(text, &root);
    let mut out = text.to_string();
    match root.iter().rev().find(|m| m.key == outer) {
        Some(o) => {
            let inner = members(s, o.value.start).ok_or_else(|| format!("{outer} is not an object"))?;
            match inner.iter().rev().find(|m| m.key == name) {
                Some(m) => out.replace_range(m.value.clone(), &render(value, &unit, 2)),
                None => out.insert_str(o.value.start + 1, &member_text(name, value, &unit, 2, !inner.is_empty())),
            }
        }
        None => {
            let mut servers = Map::new();
            servers.insert(name.to_string(), value.clone());
            let member = member_text(outer, &Value::Object(servers), &unit, 1, !root.is_empty());
            out.insert_str(root_open + 1, &member);
        }
    }
    reads_as(&out, &desired)?;
    Ok(out)
}

/// `text` without `root[outer][name]` (and the comma that separated it), or `None` when there
/// is no such member.
pub fn remove(text: &str, outer: &str, name: &str) -> Result<Option<String>, String> {
    let mut desired = parse(text)?;
    let removed = desired.get_mut(outer).and_then(Value::as_object_mut).and_then(|s| s.remove(name));
    if removed.is_none() {
        return Ok(None);
    }
    let plain = blank(text)?;
    let s = plain.as_bytes();
    let t = text.as_bytes();
    let root = members(s, skip_ws(s, 0)).ok_or(SPLICE_FAILED)?;
    let o = root.iter().rev().find(|m| m.key == outer).ok_or(SPLICE_FAILED)?;
    let inner = members(s, o.value.start).ok_or(SPLICE_FAILED)?;
    let m = inner.iter().rev().find(|m| m.key == name).ok_or(SPLICE_FAILED)?;
    // The member with the blanks before it (not a comment before it: that is the user's).
    let mut start = m.key_start;
    while start > 0 && matches!(t[start - 1], b' ' | b'\t' | b'\r' | b'\n') {
        start -= 1;
    }
    let mut cuts: Vec<Range<usize>> = Vec::with_capacity(2);
    cuts.push(start..m.value.end);
    let after = skip_ws(s, m.value.end);
    if s.get(after) == Some(&b',') {
        cuts.push(after..after + 1);
    } else if let Some(before) = last_token(s, m.key_start).filter(|&b| s[b] == b',') {
        cuts.push(before..before + 1);
    }
    cuts.sort_by_key(|r| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for cut in cuts {
        out.replace_range(cut, "");
    }
    reads_as(&out, &desired)?;
    Ok(Some(out))
}

/// The spliced text must read as `desired` (key order aside).
fn reads_as(text: &str, desired: &Map<String, Value>) -> Result<(), String> {
    match parse(text) {
        Ok(got) if got == *desired => Ok(()),
        _ => Err(SPLICE_FAILED.into()),
    }
}

/// `text` with its comments, trailing commas and byte-order mark blanked to spaces (line
/// breaks kept): plain JSON whose every byte sits where it sat in `text`.
fn blank(text: &str) -> Result<String, String> {
    let src = text.as_bytes();
    let mut out = src.to_vec();
    let mut i = 0;
    if src.starts_with(b"\xEF\xBB\xBF") {
        out[..3].fill(b' ');
        i = 3;
    }
    while i < src.len() {
        match src[i] {
            b'"' => i = string_end(src, i).ok_or("a string is not closed")?,
            b'/' if src.get(i + 1) == Some(&b'/') => {
                while i < src.len() && src[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map(|p| i + 2 + p + 2)
                    .ok_or("a /* comment is not closed")?;
                for b in &mut out[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    // A trailing comma: the next token closes an object or an array.
    let mut i = 0;
    while i < out.len() {
        match out[i] {
            b'"' => i = string_end(&out, i).ok_or("a string is not closed")?,
            b',' => {
                if matches!(out.get(skip_ws(&out, i + 1)), Some(b'}' | b']')) {
                    out[i] = b' ';
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    // Whole characters were blanked (a comment starts and ends at ASCII bytes).
    String::from_utf8(out).map_err(|_| "the file is not UTF-8".to_string())
}

/// A member of an object in the blanked text: its key, where its key's quote is, and its value.
struct Member {
    key: String,
    key_start: usize,
    value: Range<usize>,
}

/// The members of the object whose `{` is at `open` in `s` (plain JSON), in order.
fn members(s: &[u8], open: usize) -> Option<Vec<Member>> {
    if s.get(open) != Some(&b'{') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_ws(s, open + 1);
    if s.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        if s.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(s, i)?;
        let key: String = serde_json::from_slice(&s[i..key_end]).ok()?;
        let colon = skip_ws(s, key_end);
        if s.get(colon) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(s, colon + 1);
        let value_end = value_end(s, value_start)?;
        out.push(Member { key, key_start: i, value: value_start..value_end });
        i = skip_ws(s, value_end);
        match s.get(i)? {
            b',' => i = skip_ws(s, i + 1),
            b'}' => return Some(out),
            _ => return None,
        }
    }
}

/// Where the value that starts at `start` ends (exclusive).
fn value_end(s: &[u8], start: usize) -> Option<usize> {
    match s.get(start)? {
        b'"' => string_end(s, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < s.len() {
                match s[i] {
                    b'"' => {
                        i = string_end(s, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = start;
            while i < s.len() && !matches!(s[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

/// Past the string whose opening quote is at `start`.
fn string_end(s: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// The last byte before `pos` that is not a blank.
fn last_token(s: &[u8], pos: usize) -> Option<usize> {
    s[..pos].iter().rposition(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// One level of the file's indentation: what precedes the root's first member on its line,
/// else two spaces.
fn indent_unit(text: &str, root: &[Member]) -> String {
    let Some(first) = root.first() else { return "  ".into() };
    let line_start = text[..first.key_start].rfind('\n').map_or(0, |p| p + 1);
    let lead = &text[line_start..first.key_start];
    if !lead.is_empty() && lead.bytes().all(|b| b == b' ' || b == b'\t') {
        lead.to_string()
    } else {
        "  ".into()
    }
}

/// `value` pretty-printed with `unit` per level, its lines indented to `depth` levels.
fn render(value: &Value, unit: &str, depth: usize) -> String {
    let mut buf = Vec::new();
    let written = {
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
        value.serialize(&mut ser).is_ok()
    };
    let text = if written { String::from_utf8(buf).unwrap_or_else(|_| value.to_string()) } else { value.to_string() };
    text.replace('\n', &format!("\n{}", unit.repeat(depth)))
}

/// `"key": value` as a new first member at `depth`, on its own line: followed by a comma when
/// other members follow it, else by the line of the object's closing brace.
fn member_text(key: &str, value: &Value, unit: &str, depth: usize, more: bool) -> String {
    let key = Value::String(key.to_string()).to_string();
    let tail = if more { ",".to_string() } else { format!("\n{}", unit.repeat(depth.saturating_sub(1))) };
    format!("\n{}{key}: {}{tail}", unit.repeat(depth), render(value, unit, depth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ZED: &str = concat!(
        "// Zed settings\n//\n// See https://zed.dev/docs\n{\n",
        "  \"ui_font_size\": 16, // big\n",
        "  /* the theme */\n",
        "  \"theme\": \"One Dark\",\n",
        "  \"context_servers\": {\n",
        "    \"other\": {\"command\": \"x\", \"args\": [],},\n",
        "  },\n",
        "}\n",
    );

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let plain = blank(ZED).unwrap();
        assert_eq!(plain.len(), ZED.len());
        assert!(!plain.contains("//") && !plain.contains("/*"));
        assert_eq!(parse(ZED).unwrap()["context_servers"]["other"]["command"], "x");
        let tricky = "{\"url\": \"http://x/*y*/\", // c\n \"a\": [1,],}";
        assert_eq!(parse(tricky).unwrap(), json!({"url": "http://x/*y*/", "a": [1]}).as_object().unwrap().clone());
        assert!(parse("{\"a\": 1 /* open").is_err());
        assert!(parse("[1]").is_err());
        assert_eq!(parse("// only a comment\n").unwrap(), Map::new());
    }

    #[test]
    fn set_and_remove_keep_every_other_byte() {
        let entry = json!({"command": "/bin/svc", "args": ["mcp"], "env": {}});
        let added = set(ZED, "context_servers", "svc", &entry).unwrap();
        for kept in ["// Zed settings", "// big", "/* the theme */", "\"args\": [],},"] {
            assert!(added.contains(kept), "{kept}: {added}");
        }
        assert_eq!(parse(&added).unwrap()["context_servers"]["svc"], entry);
        let again = set(&added, "context_servers", "svc", &json!({"command": "/bin/other"})).unwrap();
        assert_eq!(parse(&again).unwrap()["context_servers"]["svc"], json!({"command": "/bin/other"}));
        let gone = remove(&again, "context_servers", "svc").unwrap().unwrap();
        assert_eq!(parse(&gone).unwrap(), parse(ZED).unwrap());
        assert!(gone.contains("/* the theme */"), "{gone}");
        assert_eq!(remove(&gone, "context_servers", "svc").unwrap(), None);
    }

    #[test]
    fn a_missing_table_or_file_is_created_and_the_last_member_leaves_cleanly() {
        let entry = json!({"command": "/bin/svc"});
        let fresh = set("", "amp.mcpServers", "svc", &entry).unwrap();
        assert_eq!(parse(&fresh).unwrap(), json!({"amp.mcpServers": {"svc": entry}}).as_object().unwrap().clone());
        let other = "{\n\t\"a\": 1,\n\t\"servers\": {\n\t\t\"x\": {}\n\t}\n}\n";
        let added = set(other, "servers", "svc", &entry).unwrap();
        assert!(added.contains("\n\t\t\"svc\": {"), "the file's tabs: {added}");
        let removed = remove(&added, "servers", "svc").unwrap().unwrap();
        assert_eq!(removed, other);
        let last = "{\"servers\": {\"x\": 1, \"svc\": {}}}";
        assert_eq!(remove(last, "servers", "svc").unwrap().unwrap(), "{\"servers\": {\"x\": 1}}");
        assert!(set("{\"servers\": []}", "servers", "svc", &entry).is_err());
    }
}
