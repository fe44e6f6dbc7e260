//! A tool's input schema: the utoipa schema of its argument type (the same type that parses
//! the arguments, so the two cannot drift), with every `$ref` inlined, because an MCP tool
//! schema is a standalone JSON Schema object without the OpenAPI document's components.

use serde_json::{Map, Value};
use std::collections::HashMap;
use utoipa::ToSchema;

const REF_PREFIX: &str = "#/components/schemas/";
/// Deeper nesting than any argument type has; a recursive type stops here as `{}`.
const MAX_DEPTH: usize = 12;

/// The inlined JSON schema object of `T`.
pub fn input_schema<T: ToSchema>() -> Map<String, Value> {
    let mut deps = Vec::new();
    T::schemas(&mut deps);
    let defs: HashMap<String, Value> =
        deps.into_iter().filter_map(|(name, s)| serde_json::to_value(s).ok().map(|v| (name, v))).collect();
    let root = serde_json::to_value(T::schema()).unwrap_or(Value::Null);
    match inline(root, &defs, 0) {
        Value::Object(m) => {
            let mut m = flatten_all_of(m);
            m.entry("type").or_insert_with(|| Value::String("object".into()));
            m
        }
        _ => empty_object(),
    }
}

/// `{"type": "object", "properties": {}}`: the schema of a tool without arguments.
pub fn empty_object() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("object".into()));
    m.insert("properties".into(), Value::Object(Map::new()));
    m.insert("additionalProperties".into(), Value::Bool(false));
    m
}

/// Adds a required string property (`ref` of the tools that name a document) to `schema`.
pub fn with_required_string(mut schema: Map<String, Value>, key: &str, description: &str) -> Map<String, Value> {
    let mut prop = Map::new();
    prop.insert("type".into(), Value::String("string".into()));
    prop.insert("description".into(), Value::String(description.into()));
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert(key.into(), Value::Object(prop));
    }
    match schema.get_mut("required") {
        Some(Value::Array(req)) => req.push(Value::String(key.into())),
        _ => {
            schema.insert("required".into(), Value::Array(vec![Value::String(key.into())]));
        }
    }
    schema
}

/// `allOf` of object schemas (the query and ask bodies are unions of parts) merged into one
/// object with every part's properties: some clients read only top-level `properties`.
fn flatten_all_of(mut m: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Array(parts)) = m.remove("allOf") else { return m };
    let mut props = Map::new();
    let mut required = Vec::new();
    for part in parts {
        let Value::Object(part) = part else { continue };
        if let Some(Value::Object(p)) = part.get("properties") {
            props.extend(p.clone());
        }
        if let Some(Value::Array(r)) = part.get("required") {
            required.extend(r.iter().cloned());
        }
    }
    m.insert("type".into(), Value::String("object".into()));
    m.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        m.insert("required".into(), Value::Array(required));
    }
    m
}

fn inline(v: Value, defs: &HashMap<String, Value>, depth: usize) -> Value {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                let target = r.strip_prefix(REF_PREFIX).and_then(|name| defs.get(name));
                return match target {
                    Some(t) if depth < MAX_DEPTH => inline(t.clone(), defs, depth + 1),
                    _ => Value::Object(Map::new()),
                };
            }
            Value::Object(m.into_iter().map(|(k, v)| (k, inline(v, defs, depth))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|i| inline(i, defs, depth)).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_schemas_inline_their_references() {
        let s = input_schema::<crate::bodies::QueryBody>();
        let text = serde_json::to_string(&s).unwrap();
        assert!(!text.contains("$ref"), "{text}");
        assert_eq!(s["type"], "object");
        assert!(s["properties"].get("query").is_some(), "{text}");
    }

    #[test]
    fn a_required_ref_is_added() {
        let s = with_required_string(empty_object(), "ref", "the note");
        assert_eq!(s["required"], serde_json::json!(["ref"]));
        assert_eq!(s["properties"]["ref"]["type"], "string");
    }
}
