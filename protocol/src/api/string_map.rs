//! A JSON object of string values that keeps its keys in insertion order.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An ordered `{key: "value", ...}` object (a `BTreeMap` would sort the keys). In a schema,
/// declare the field with `#[schema(value_type = HashMap<String, String>)]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringMap(pub Vec<(String, String)>);

impl Serialize for StringMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of string values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StringMap, A::Error> {
                let mut out = Vec::with_capacity(access.size_hint().unwrap_or(0));
                while let Some((k, v)) = access.next_entry::<String, String>()? {
                    out.push((k, v));
                }
                Ok(StringMap(out))
            }
        }
        deserializer.deserialize_map(MapVisitor)
    }
}

impl From<Vec<(String, String)>> for StringMap {
    fn from(pairs: Vec<(String, String)>) -> Self {
        StringMap(pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order() {
        let m = StringMap(vec![("z".into(), "1".into()), ("a".into(), "2".into())]);
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"z":"1","a":"2"}"#);
        assert_eq!(serde_json::from_str::<StringMap>(&s).unwrap(), m);
    }
}
