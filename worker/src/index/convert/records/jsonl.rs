//! JSON Lines (`.jsonl`, `.ndjson`): a document per line, each line a JSON object. The
//! fields that say what a record is are found by their names ([`TITLE`], [`TEXT`], [`DATE`],
//! [`AUTHOR`], [`TAGS`], [`ID`], in that order of preference, any case): the title heads the
//! document, the text is its body, the date, author and tags are its front matter; every other
//! field is a `name: value` line (an object or a list of objects as compact JSON), so nothing
//! the record holds is lost to search. A record's key is its id field, else its line number.

use super::{epoch_to_rfc3339, key_from_id, unique_keys, Record, Rendered};
use crate::index::convert::{non_empty_title, ConvertError, Converted};
use serde_json::{Map, Value};

const TITLE: &[&str] = &["title", "name", "subject", "headline", "summary"];
const TEXT: &[&str] = &["text", "body", "content", "description", "message", "note", "notes", "summary"];
const DATE: &[&str] =
    &["date", "created", "created_at", "createdat", "timestamp", "time", "published", "updated", "updated_at"];
const AUTHOR: &[&str] = &["author", "from", "sender", "user", "by", "creator"];
const TAGS: &[&str] = &["tags", "labels", "keywords", "categories"];
const ID: &[&str] = &["id", "uuid", "_id", "key", "guid", "uid"];
/// A field rendered as a line is cut to this many characters.
const MAX_FIELD_CHARS: usize = 1_000;

/// One line of the file: its 1-based line number and its text.
pub(in crate::index::convert) struct Line {
    number: usize,
    text: String,
}

impl Record for Line {
    fn raw(&self) -> &[u8] {
        self.text.as_bytes()
    }

    fn convert(&self) -> Result<Converted, ConvertError> {
        let value: Value = serde_json::from_str(&self.text)
            .map_err(|e| ConvertError::Records(format!("line {}: not JSON: {e}", self.number)))?;
        let Value::Object(fields) = value else {
            return Err(ConvertError::Records(format!("line {}: not a JSON object", self.number)));
        };
        render(fields).into_converted()
    }
}

/// The file's records (non-empty lines), keyed.
pub(in crate::index::convert) fn records(bytes: &[u8]) -> Result<Vec<(String, Line)>, ConvertError> {
    let text = crate::index::ingest::decode_text(bytes).map_err(|e| ConvertError::Records(e.to_string()))?;
    let records = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .take(super::MAX_RECORDS)
        .map(|(i, l)| {
            let line = Line { number: i + 1, text: l.trim().to_string() };
            (key_of(&line), line)
        })
        .collect();
    Ok(unique_keys(records))
}

/// A line's key: its id field's value, else its line number (`00007.jsonl`).
fn key_of(line: &Line) -> String {
    let id = serde_json::from_str::<Map<String, Value>>(&line.text)
        .ok()
        .and_then(|mut fields| take_field(&mut fields, ID))
        .and_then(|v| scalar(&v));
    id.and_then(|id| key_from_id(&id, "jsonl")).unwrap_or_else(|| format!("{:05}.jsonl", line.number))
}

/// The first field of `names` (any case) with a value, taken out of `fields`.
fn take_field(fields: &mut Map<String, Value>, names: &[&str]) -> Option<Value> {
    take_as(fields, names, |v| Some(v.clone()))
}

/// The first field of `names` (any case) whose value `read` reads, taken out of `fields` and
/// read; a field it cannot read stays, to be a `name: value` line.
fn take_as<T>(fields: &mut Map<String, Value>, names: &[&str], read: impl Fn(&Value) -> Option<T>) -> Option<T> {
    for name in names {
        let found = fields.iter().find(|(k, v)| k.eq_ignore_ascii_case(name) && !v.is_null());
        if let Some((key, value)) = found {
            if let Some(read) = read(value) {
                let key = key.clone();
                fields.remove(&key);
                return Some(read);
            }
        }
    }
    None
}

/// A date field: a string as written, a number as seconds (or milliseconds, microseconds)
/// since 1970.
fn date_of(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)).and_then(epoch_to_rfc3339)
        }
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        _ => None,
    }
}

/// A tags field: a list of strings or numbers, or a comma-separated string.
fn tags_of(v: &Value) -> Option<Vec<String>> {
    let tags: Vec<String> = match v {
        Value::Array(items) if items.iter().all(|i| i.is_string() || i.is_number()) => {
            items.iter().filter_map(scalar).collect()
        }
        Value::String(s) => s.split(',').map(str::trim).filter(|t| !t.is_empty()).map(String::from).collect(),
        _ => return None,
    };
    Some(tags)
}

/// A string, number or boolean as text.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A value as one line of text: scalars as they are, a list of scalars joined by commas,
/// anything else as compact JSON; cut to [`MAX_FIELD_CHARS`].
fn as_line(v: &Value) -> String {
    let s = match v {
        Value::Array(items) if items.iter().all(|i| scalar(i).is_some()) => {
            items.iter().filter_map(scalar).collect::<Vec<_>>().join(", ")
        }
        other => scalar(other).unwrap_or_else(|| other.to_string()),
    };
    match s.char_indices().nth(MAX_FIELD_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

fn render(mut fields: Map<String, Value>) -> Rendered {
    let title = take_as(&mut fields, TITLE, |v| scalar(v).and_then(|t| non_empty_title(&t)));
    let text = take_as(&mut fields, TEXT, |v| match v {
        Value::String(s) => Some(s.clone()),
        other => Some(as_line(other)),
    });
    let date = take_as(&mut fields, DATE, date_of);
    let author = take_as(&mut fields, AUTHOR, |v| Some(as_line(v)).filter(|a| !a.trim().is_empty()));
    let tags = take_as(&mut fields, TAGS, tags_of).unwrap_or_default();
    let heading = title.clone().unwrap_or_else(|| "(record)".to_string());
    let fields = fields.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), as_line(v))).collect();
    Rendered {
        front: super::FrontMatter { title, author, date, tags },
        heading,
        fields,
        text: text.unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const FILE: &str = r#"{"id": "n-1", "title": "Standup notes", "body": "We chose tantivy.\nShip Friday.", "created_at": "2026-12-01T09:00:00Z", "author": "Ann", "tags": ["team", "search"], "priority": 2}

{"ID": 7, "Subject": "Budget", "text": "Q1 is tight", "timestamp": 1700000000.25, "date": {"y": 2023}, "tags": [{"k": 1}]}
not json at all
{"text": "no title, no id", "meta": {"source": "slack", "channel": "general"}}
[1, 2]
{"id": "n-1", "title": "Same id again"}
"#;

    fn parts() -> Vec<crate::index::convert::records::Part> {
        super::super::into_parts(records(FILE.as_bytes()).unwrap(), &HashMap::new(), || {
            ConvertError::Records("none".into())
        })
        .unwrap()
    }

    #[test]
    fn a_record_per_line_keyed_by_its_id_else_its_line() {
        let parts = parts();
        let keys: Vec<&str> = parts.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["n-1.jsonl", "7.jsonl", "00004.jsonl", "00005.jsonl", "00006.jsonl", "n-1-2.jsonl"]);
        let first = parts[0].converted.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(first.title.as_deref(), Some("Standup notes"));
        assert!(first.text.starts_with("---\n"), "{}", first.text);
        assert!(first.text.contains("date: 2026-12-01T09:00:00Z"), "{}", first.text);
        assert!(first.text.contains("author: Ann"));
        assert!(first.text.contains("- team"));
        assert!(
            first.text.contains("# Standup notes\n\nid: n-1  \npriority: 2  \n\nWe chose tantivy.\nShip Friday.\n"),
            "{}",
            first.text
        );
        let second = parts[1].converted.as_ref().unwrap().as_ref().unwrap();
        assert!(second.text.contains("date: 2023-11-14T22:13:20Z"), "{}", second.text);
        assert!(second.text.contains("# Budget"));
        // Fields that say nothing the front matter can hold stay lines.
        assert!(
            second.text.contains(r#"date: {"y":2023}"#) && second.text.contains(r#"tags: [{"k":1}]"#),
            "{}",
            second.text
        );
        assert!(matches!(&parts[2].converted, Some(Err(e)) if e.contains("line 4: not JSON")));
        let fourth = parts[3].converted.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(fourth.title, None);
        assert!(fourth.text.contains(r#"meta: {"source":"slack","channel":"general"}"#), "{}", fourth.text);
        assert!(matches!(&parts[4].converted, Some(Err(e)) if e.contains("not a JSON object")));
    }

    #[test]
    fn unchanged_lines_are_not_converted_again() {
        let first = parts();
        let indexed: HashMap<String, String> = first.iter().map(|p| (p.key.clone(), p.source_hash.clone())).collect();
        let again = super::super::into_parts(records(FILE.as_bytes()).unwrap(), &indexed, || {
            ConvertError::Records("none".into())
        })
        .unwrap();
        assert!(again.iter().all(|p| p.converted.is_none()));
    }

    #[test]
    fn a_file_of_no_object_is_an_error() {
        let r = super::super::into_parts(records(b"nope\n[1]\n").unwrap(), &HashMap::new(), || {
            ConvertError::Records("none".into())
        });
        assert!(r.is_err());
    }
}
