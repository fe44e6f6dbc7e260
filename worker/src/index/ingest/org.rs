//! Org-mode notes (`.org`), read as the Markdown they mean, line for line: each line of the
//! result stands for the same line of the file, so chunks, sections and citations point into
//! the original. Headings keep their level (one deeper under a `#+TITLE:`, which becomes the
//! note's title heading), heading tags and `#+FILETAGS:` become tags, `#+BEGIN_SRC`/`EXAMPLE`
//! blocks become fences, org links become Markdown and wiki links, comment lines are dropped,
//! other `#+KEY:` lines stay as text.

use regex::Regex;
use std::sync::OnceLock;

/// The Markdown reading of an org note: as many lines as `org`.
pub fn to_markdown(org: &str) -> String {
    let titled = org.lines().any(|l| keyword(l).is_some_and(|(k, _)| k.eq_ignore_ascii_case("title")));
    let mut out: Vec<String> = Vec::new();
    let mut in_block = false;
    for line in org.split('\n') {
        let trimmed = line.trim_start();
        let upper = trimmed.to_ascii_uppercase();
        if in_block {
            if upper.starts_with("#+END_SRC") || upper.starts_with("#+END_EXAMPLE") {
                in_block = false;
                out.push("```".to_string());
            } else {
                out.push(line.to_string());
            }
            continue;
        }
        if upper.starts_with("#+BEGIN_SRC") || upper.starts_with("#+BEGIN_EXAMPLE") {
            in_block = true;
            let lang = trimmed.split_whitespace().nth(1).filter(|_| upper.starts_with("#+BEGIN_SRC")).unwrap_or("");
            out.push(format!("```{lang}"));
            continue;
        }
        out.push(convert_line(line, titled));
    }
    out.join("\n")
}

/// `#+KEY: value` of a line.
fn keyword(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("#+")?;
    let (key, value) = rest.split_once(':')?;
    (!key.is_empty() && !key.contains(char::is_whitespace)).then_some((key, value.trim()))
}

fn convert_line(line: &str, titled: bool) -> String {
    if let Some((key, value)) = keyword(line) {
        return match key.to_ascii_lowercase().as_str() {
            "title" => format!("# {value}"),
            "filetags" => tags_text(value),
            _ => format!("{key}: {}", links(value)),
        };
    }
    // A comment line (`# text`, or `#` alone) is not content; in Markdown it would be a heading.
    if line == "#" || line.starts_with("# ") {
        return String::new();
    }
    if let Some(h) = heading(line, titled) {
        return h;
    }
    links(line)
}

/// `** Title  :tag1:tag2:` → `### Title #tag1 #tag2` (one level deeper when titled).
fn heading(line: &str, titled: bool) -> Option<String> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^(\*+)\s+(.*?)(?:\s+(:[\w@#%:]+:))?\s*$").ok()).as_ref()?;
    let caps = re.captures(line)?;
    let level = (caps[1].len() + usize::from(titled)).min(6);
    let title = links(caps.get(2).map_or("", |m| m.as_str()));
    let tags = caps.get(3).map(|m| tags_text(m.as_str())).unwrap_or_default();
    let mut out = format!("{} {title}", "#".repeat(level));
    if !tags.is_empty() {
        out.push(' ');
        out.push_str(&tags);
    }
    Some(out)
}

/// `:a:b:` (or `a b`) → `#a #b`.
fn tags_text(raw: &str) -> String {
    raw.split(|c: char| c == ':' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| format!("#{t}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Org links in a line as Markdown: `[[file:x.org][Desc]]` → `[Desc](x.org)`, an URL the
/// same, `[[Target][Desc]]` → `[[Target|Desc]]`, `[[Target]]` as it is.
fn links(line: &str) -> String {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = RE.get_or_init(|| Regex::new(r"\[\[([^\]\[]+)\](?:\[([^\]\[]*)\])?\]").ok()).as_ref() else {
        return line.to_string();
    };
    re.replace_all(line, |c: &regex::Captures<'_>| {
        let target = &c[1];
        let desc = c.get(2).map(|m| m.as_str());
        let external = target.contains("://") || target.starts_with("mailto:");
        match (target.strip_prefix("file:"), desc) {
            (Some(path), Some(d)) => format!("[{d}]({path})"),
            (Some(path), None) => format!("[{path}]({path})"),
            (None, Some(d)) if external => format!("[{d}]({target})"),
            (None, None) if external => format!("<{target}>"),
            (None, Some(d)) => format!("[[{target}|{d}]]"),
            (None, None) => format!("[[{target}]]"),
        }
    })
    .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "#+TITLE: Garden plan\n#+FILETAGS: :garden:spring:\n# a comment\n\
* Beds :soil:\nCompost the [[file:beds.org][raised beds]] and see [[Watering]].\n\
** TODO Tomatoes\n#+BEGIN_SRC python\n# not a heading\nprint(1)\n#+END_SRC\n\
:PROPERTIES:\n:ID: 42\n:END:\nSee [[https://example.org][the site]].";

    #[test]
    fn an_org_note_reads_as_markdown_line_for_line() {
        let md = to_markdown(NOTE);
        assert_eq!(md.lines().count(), NOTE.lines().count(), "line for line:\n{md}");
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], "# Garden plan");
        assert_eq!(lines[1], "#garden #spring");
        assert_eq!(lines[2], "", "a comment is not a heading");
        assert_eq!(lines[3], "## Beds #soil", "one level deeper under the title");
        assert_eq!(lines[4], "Compost the [raised beds](beds.org) and see [[Watering]].");
        assert_eq!(lines[5], "### TODO Tomatoes");
        assert_eq!(&lines[6..10], ["```python", "# not a heading", "print(1)", "```"]);
        assert_eq!(lines[13], "See [the site](https://example.org).");
    }

    #[test]
    fn the_parsed_note_has_its_title_tags_sections_and_links() {
        let doc = super::super::parse_markdown(&to_markdown(NOTE), "plan.org");
        assert_eq!(doc.title, "Garden plan");
        for t in ["garden", "spring", "soil"] {
            assert!(doc.tags.iter().any(|x| x == t), "{t} in {:?}", doc.tags);
        }
        // Heading tags stay on the heading's line (line for line): the section is "Beds #soil".
        assert!(doc.sections.iter().any(|s| s.title.starts_with("Beds") && s.line == 4), "{:?}", doc.sections);
        let targets: Vec<&str> = doc.links.iter().map(|l| l.target_ref.as_str()).collect();
        assert!(targets.contains(&"beds.org") && targets.contains(&"Watering"), "{targets:?}");
    }

    #[test]
    fn without_a_title_headings_keep_their_level() {
        assert_eq!(to_markdown("* One\n** Two"), "# One\n## Two");
        assert_eq!(to_markdown("*bold* text"), "*bold* text", "not a heading without a space");
    }
}
