//! Text edits at link positions (1-based lines, 1-based char columns, end inclusive).

/// Byte range of a `(line, col)..=(line, col)` span in `text`, if it exists.
pub fn span(text: &str, start_line: u32, start_col: u32, end_line: u32, end_col: u32) -> Option<(usize, usize)> {
    let offset = |line: u32, col: u32, inclusive_end: bool| -> Option<usize> {
        let mut line_start = 0usize;
        for _ in 1..line {
            line_start += text[line_start..].find('\n')? + 1;
        }
        let line_text = &text[line_start..text[line_start..].find('\n').map_or(text.len(), |i| line_start + i)];
        let mut chars = line_text.char_indices().skip(col.checked_sub(1)? as usize);
        let (i, c) = chars.next()?;
        Some(line_start + i + if inclusive_end { c.len_utf8() } else { 0 })
    };
    let s = offset(start_line, start_col, false)?;
    let e = offset(end_line, end_col, true)?;
    (s < e).then_some((s, e))
}

/// The literal of a link or an embed (`![[…]]`, `![…](…)`) with its target text replaced;
/// `None` if the target text is not where the link syntax says it is.
pub fn replace_target(literal: &str, is_wiki: bool, old_target: &str, new_target: &str) -> Option<String> {
    let from = if is_wiki {
        let open = if literal.starts_with("![[") { 3 } else { 2 };
        if !literal[open - 2..].starts_with("[[") {
            return None;
        }
        open + literal[open..].find(old_target)?
    } else {
        let open = literal.find("](")? + 2;
        let rest = &literal[open..];
        let lead = rest.len() - rest.trim_start_matches('<').len();
        open + lead + rest[lead..].find(old_target)?
    };
    Some(format!("{}{new_target}{}", &literal[..from], &literal[from + old_target.len()..]))
}

/// Applies `(start, end, replacement)` edits (non-overlapping byte ranges) to `text`.
pub fn apply(text: &str, mut edits: Vec<(usize, usize, String)>) -> Option<String> {
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    for (s, e, r) in edits {
        if s < pos || e > text.len() {
            return None;
        }
        out.push_str(&text[pos..s]);
        out.push_str(&r);
        pos = e;
    }
    out.push_str(&text[pos..]);
    Some(out)
}

/// Relative path from folder `from_dir` ("" for the root) to `to` (both `/`-separated,
/// inside one root), with spaces encoded as `%20` as Markdown links need.
pub fn relative(from_dir: &str, to: &str) -> String {
    let from: Vec<&str> = from_dir.split('/').filter(|s| !s.is_empty()).collect();
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from.iter().zip(to_parts.iter()).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(to_parts[common..].iter().map(|s| s.replace(' ', "%20")));
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_by_char_columns() {
        let t = "---\nx: 1\n---\nSée [[Ünï|alias]] end\n";
        let (s, e) = span(t, 4, 5, 4, 17).unwrap();
        assert_eq!(&t[s..e], "[[Ünï|alias]]");
        assert!(span(t, 9, 1, 9, 2).is_none());
    }

    #[test]
    fn replaces_targets() {
        assert_eq!(replace_target("[[Old|alias]]", true, "Old", "New").unwrap(), "[[New|alias]]");
        assert_eq!(replace_target("[[Old#Head]]", true, "Old", "dir/New").unwrap(), "[[dir/New#Head]]");
        assert_eq!(
            replace_target("[Old text](../a/old.md#x)", false, "../a/old.md", "b/new.md").unwrap(),
            "[Old text](b/new.md#x)"
        );
        assert_eq!(replace_target("[t](<a b.md>)", false, "a b.md", "c.md").unwrap(), "[t](<c.md>)");
        assert!(replace_target("[[Other]]", true, "Old", "New").is_none());
        assert_eq!(replace_target("![[Old#^b1]]", true, "Old", "New").unwrap(), "![[New#^b1]]", "an embed");
        assert_eq!(replace_target("![alt](old.png)", false, "old.png", "a/new.png").unwrap(), "![alt](a/new.png)");
        assert!(replace_target("!(Old)", true, "Old", "New").is_none());
    }

    #[test]
    fn applies_edits_and_computes_relative_paths() {
        assert_eq!(apply("abcdef", vec![(4, 5, "X".into()), (0, 1, "YY".into())]).unwrap(), "YYbcdXf");
        assert!(apply("abc", vec![(0, 2, "x".into()), (1, 3, "y".into())]).is_none());
        assert_eq!(relative("a/b", "a/c/n.md"), "../c/n.md");
        assert_eq!(relative("", "x/my note.md"), "x/my%20note.md");
        assert_eq!(relative("x", "n.md"), "../n.md");
    }
}
