//! YAML front matter detection and metadata extraction.

use std::collections::BTreeMap;

use serde_norway::Value;

use super::dates::{is_date_key, parse_date, snake_key};
use super::tags::normalize_tag;

/// Metadata taken from a YAML mapping.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Meta {
    pub(super) title: Option<String>,
    /// Normalized, sorted, deduplicated.
    pub(super) tags: Vec<String>,
    pub(super) author: Option<String>,
    /// Lowercased, sorted, deduplicated.
    pub(super) categories: Vec<String>,
    /// Front-matter `type` (its first string, lowercased): names a content type.
    pub(super) doc_type: Option<String>,
    /// Front-matter `lang` or `language` (its first string): the language the note is written in.
    pub(super) language: Option<String>,
    pub(super) date: Option<String>,
    pub(super) date_fields: BTreeMap<String, String>,
}

/// Result of splitting a canonical text into front matter and body.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FrontMatter<'a> {
    pub(super) present: bool,
    pub(super) body: &'a str,
    /// 1-based canonical line where `body` starts.
    pub(super) body_start_line: u32,
    /// `Some` only when the YAML is a mapping.
    pub(super) meta: Option<Meta>,
}

/// Finds the front matter block: first line `---`, closed by a line `---`
/// or `...`. Returns (yaml, body, body_start_line).
fn find_block(text: &str) -> Option<(&str, &str, u32)> {
    let rest = text.strip_prefix("---")?;
    let rest = rest.strip_prefix('\r').unwrap_or(rest);
    let rest = rest.strip_prefix('\n')?;
    let yaml_start = text.len() - rest.len();
    let mut pos = yaml_start;
    let mut line_no: u32 = 2;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[pos..line_end].trim_end();
        if line == "---" || line == "..." {
            let body_start = (line_end + 1).min(text.len());
            return Some((&text[yaml_start..pos], &text[body_start..], line_no + 1));
        }
        pos = line_end + 1;
        line_no = line_no.saturating_add(1);
    }
    None
}

fn parse_yaml(yaml: &str) -> Option<Value> {
    if yaml.trim().is_empty() {
        return Some(Value::Null);
    }
    // serde_norway should not panic, but never let a library bug on user
    // input take the worker down.
    std::panic::catch_unwind(|| serde_norway::from_str::<Value>(yaml)).ok()?.ok()
}

/// Splits front matter from the body and extracts metadata.
pub(super) fn split(text: &str) -> FrontMatter<'_> {
    let none = FrontMatter { present: false, body: text, body_start_line: 1, meta: None };
    let Some((yaml, body, body_start_line)) = find_block(text) else {
        return none;
    };
    let Some(value) = parse_yaml(yaml) else {
        return none;
    };
    let meta = match untag(&value) {
        Value::Mapping(map) => Some(extract(map)),
        _ => None,
    };
    FrontMatter { present: true, body, body_start_line, meta }
}

fn untag(v: &Value) -> &Value {
    let mut v = v;
    while let Value::Tagged(t) = v {
        v = &t.value;
    }
    v
}

fn scalar_string(v: &Value) -> Option<String> {
    match untag(v) {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

/// Strings of a list or of a comma/whitespace separated string.
fn string_items(v: &Value, split_ws: bool) -> Vec<String> {
    let split = |s: &str| -> Vec<String> {
        s.split(|c: char| c == ',' || (split_ws && c.is_whitespace()))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    match untag(v) {
        Value::Sequence(items) => items
            .iter()
            .filter_map(scalar_string)
            .flat_map(|s| if s.contains(',') { split(&s) } else { vec![s] })
            .collect(),
        other => scalar_string(other).map(|s| split(&s)).unwrap_or_default(),
    }
}

fn first_string(v: &Value) -> Option<String> {
    match untag(v) {
        Value::Sequence(items) => items.iter().find_map(first_string),
        Value::Mapping(m) => m
            .iter()
            .find(|(k, _)| k.as_str().is_some_and(|k| k.eq_ignore_ascii_case("name")))
            .and_then(|(_, v)| first_string(v)),
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        _ => None,
    }
}

fn extract(map: &serde_norway::Mapping) -> Meta {
    let entries: Vec<(String, &Value)> = map
        .iter()
        .filter_map(|(k, v)| {
            let key = match untag(k) {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((snake_key(&key), v))
        })
        .collect();
    let get = |name: &'static str| entries.iter().filter(move |(k, _)| k == name).map(|(_, v)| *v);

    let mut meta = Meta {
        title: get("title").find_map(|v| match untag(v) {
            Value::String(_) | Value::Number(_) => scalar_string(v),
            _ => None,
        }),
        ..Meta::default()
    };

    for key in ["tags", "tag"] {
        for v in get(key) {
            meta.tags.extend(string_items(v, true).iter().filter_map(|t| normalize_tag(t)));
        }
    }
    meta.tags.sort();
    meta.tags.dedup();

    meta.author = ["author", "by", "owner", "creator"].iter().find_map(|&k| get(k).find_map(first_string));

    meta.language = ["lang", "language"]
        .iter()
        .find_map(|&k| get(k).find_map(first_string))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty());
    meta.doc_type = get("type").find_map(first_string).map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty());
    for key in ["category", "categories", "type"] {
        for v in get(key) {
            meta.categories.extend(string_items(v, false).iter().map(|c| c.to_lowercase()));
        }
    }
    meta.categories.sort();
    meta.categories.dedup();

    let date_of = |v: &Value| match untag(v) {
        Value::String(s) => parse_date(s),
        _ => None,
    };
    meta.date = ["date", "published", "published_at", "created", "created_at", "updated", "updated_at"]
        .iter()
        .find_map(|&k| get(k).find_map(date_of));

    for (key, v) in &entries {
        if is_date_key(key) && !meta.date_fields.contains_key(key) {
            if let Some(d) = date_of(v) {
                meta.date_fields.insert(key.clone(), d);
            }
        }
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(text: &str) -> Meta {
        split(text).meta.unwrap()
    }

    #[test]
    fn no_front_matter() {
        let f = split("# Title\n---\n");
        assert!(!f.present);
        assert_eq!(f.body_start_line, 1);
        assert_eq!(f.body, "# Title\n---\n");
        // must be on the very first line
        assert!(!split("\n---\na: 1\n---\n").present);
        // unclosed
        let f = split("---\na: 1\nbody\n");
        assert!(!f.present);
        assert_eq!(f.body, "---\na: 1\nbody\n");
        // "----" is not an opener
        assert!(!split("----\na: 1\n---\n").present);
    }

    #[test]
    fn basic_block() {
        let f = split("---\ntitle: T\n---\nbody\n");
        assert!(f.present);
        assert_eq!(f.body, "body\n");
        assert_eq!(f.body_start_line, 4);
        assert_eq!(f.meta.unwrap().title.as_deref(), Some("T"));
        let f = split("---\ntitle: T\n...\n\nbody\n");
        assert_eq!(f.body, "\nbody\n");
        assert_eq!(f.body_start_line, 4);
        let f = split("---\ntitle: T\n---");
        assert_eq!(f.body, "");
        assert_eq!(f.body_start_line, 4);
    }

    #[test]
    fn empty_and_non_mapping() {
        let f = split("---\n---\nbody\n");
        assert!(f.present);
        assert_eq!(f.meta, None);
        assert_eq!(f.body, "body\n");
        assert_eq!(f.body_start_line, 3);
        let f = split("---\n- a\n- b\n---\nbody\n");
        assert!(f.present);
        assert_eq!(f.meta, None);
        assert_eq!(f.body, "body\n");
        let f = split("---\njust text\n---\nbody\n");
        assert!(f.present);
        assert_eq!(f.meta, None);
    }

    #[test]
    fn invalid_yaml_means_no_front_matter() {
        let text = "---\ntitle: [unclosed\ntags: a\n---\nbody\n";
        let f = split(text);
        assert!(!f.present);
        assert_eq!(f.body, text);
        assert_eq!(f.body_start_line, 1);
        assert_eq!(f.meta, None);
        let f = split("---\na: 1\na: 2\n---\n"); // duplicate keys are an error
        assert!(!f.present);
        let f = split("---\n\tbad: tab\n---\n");
        assert!(!f.present || f.meta.is_some());
    }

    #[test]
    fn tags_variants() {
        assert_eq!(meta("---\ntags: [Rust, 'project/Alpha', '#x']\n---\n").tags, vec!["project/alpha", "rust", "x"]);
        assert_eq!(meta("---\ntags:\n  - b\n  - a\n  - b\n---\n").tags, vec!["a", "b"]);
        assert_eq!(meta("---\ntags: one, Two,three\n---\n").tags, vec!["one", "three", "two"]);
        assert_eq!(meta("---\ntags: 'one two #three'\n---\n").tags, vec!["one", "three", "two"]);
        // an unquoted " #x" is a YAML comment
        assert_eq!(meta("---\ntags: one #two\n---\n").tags, vec!["one"]);
        assert_eq!(meta("---\ntag: project/alpha\n---\n").tags, vec!["project/alpha"]);
        assert_eq!(meta("---\ntags: [ok, 'bad tag!', '/x', '']\n---\n").tags, vec!["ok"]);
        assert_eq!(meta("---\ntags: [2024, true]\n---\n").tags, vec!["2024", "true"]);
        assert!(meta("---\ntags: {a: 1}\n---\n").tags.is_empty());
        assert!(meta("---\ntags:\n---\n").tags.is_empty());
    }

    #[test]
    fn author_and_categories() {
        assert_eq!(meta("---\nauthor: Ann\n---\n").author.as_deref(), Some("Ann"));
        assert_eq!(meta("---\nauthor: ''\nby: Bob\n---\n").author.as_deref(), Some("Bob"));
        assert_eq!(meta("---\nauthor: [5, ' ', Cy, Di]\n---\n").author.as_deref(), Some("Cy"));
        assert_eq!(meta("---\ncreator: {name: Eve}\n---\n").author.as_deref(), Some("Eve"));
        assert_eq!(meta("---\nowner: Fay\n---\n").author.as_deref(), Some("Fay"));
        assert_eq!(meta("---\nlang: de-AT\n---\n").language.as_deref(), Some("de-AT"));
        assert_eq!(meta("---\nlanguage: [fr, en]\n---\n").language.as_deref(), Some("fr"));
        assert_eq!(meta("---\nlang: ' '\n---\n").language, None);
        assert_eq!(meta("---\na: 1\n---\n").author, None);
        let m = meta("---\ncategory: Notes, Dev\ncategories: [dev, Ideas]\ntype: Journal\n---\n");
        assert_eq!(m.categories, vec!["dev", "ideas", "journal", "notes"]);
    }

    #[test]
    fn dates() {
        let m = meta("---\ncreated: 2024-01-02\ndate: not a date\npublished: 2024-03-01T10:00:00+02:00\nupdatedAt: 2024-05-01 10:00\ndueDate: '2024-06-01'\ntimeline: 2024-01-01\nend: nope\nstart: 2024-07-01T00:00:00Z\n---\n");
        assert_eq!(m.date.as_deref(), Some("2024-03-01T08:00:00Z"));
        let keys: Vec<&str> = m.date_fields.keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["created", "due_date", "published", "start", "updated_at"]);
        assert_eq!(m.date_fields["updated_at"], "2024-05-01T10:00:00Z");
        assert_eq!(m.date_fields["created"], "2024-01-02T00:00:00Z");
        let m = meta("---\nupdated_at: 2024-05-01\n---\n");
        assert_eq!(m.date.as_deref(), Some("2024-05-01T00:00:00Z"));
        let m = meta("---\ndate: 20240101\n---\n");
        assert_eq!(m.date, None);
    }

    #[test]
    fn title_values() {
        assert_eq!(meta("---\ntitle: '  Hi  '\n---\n").title.as_deref(), Some("Hi"));
        assert_eq!(meta("---\ntitle: 1984\n---\n").title.as_deref(), Some("1984"));
        assert_eq!(meta("---\ntitle: ''\n---\n").title, None);
        assert_eq!(meta("---\ntitle: [a]\n---\n").title, None);
        assert_eq!(meta("---\nTitle: Caps\n---\n").title.as_deref(), Some("Caps"));
        assert_eq!(meta("---\ntitle: !custom Tagged\n---\n").title.as_deref(), Some("Tagged"));
    }

    #[test]
    fn alias_bomb_is_harmless() {
        let y = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\ntags: *g\n---\nbody\n";
        let fm = split(y);
        // Either the YAML parser refuses the expansion (the block then stays plain text) or
        // the million aliased "x" collapse to one tag; never a million tags.
        let tags = fm.meta.as_ref().map(|m| m.tags.clone()).unwrap_or_default();
        assert!(tags.len() <= 1, "{} tags", tags.len());
        if fm.present {
            assert_eq!(fm.body, "body\n");
        } else {
            assert_eq!(fm.body, y);
        }
    }
}
