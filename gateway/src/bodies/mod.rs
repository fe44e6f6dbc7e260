//! The request bodies of the HTTP contract, one type each. They are what the `Body`
//! extractor deserializes (so a wrong type or an unknown enum value is a 400 naming the
//! field) and what the OpenAPI document describes: the schema cannot drift from the parser.
//! Each body turns itself into the worker's typed request, applying the contract's bounds
//! (values below a minimum are refused, values above a maximum are clamped).

mod ask;
mod collections;
mod connectors;
mod context;
mod search;
mod writes;

pub use ask::{AskBody, AskOptions};
pub use collections::{AddCollectionBody, SetPresetBody, SyncBody};
pub use connectors::VerifyConnectorBody;
pub use context::{context_error, CapsuleFormat, ContextBody, VerifyBody};
pub use search::{DiagnoseBody, QueryBody, QueryOptions, SearchBody};
pub use writes::{
    CaptureBody, CaptureSource, CreateDocBody, FolderBody, RefactorApplyBody, RefactorKind, RefactorPlanBody,
    UpdateDocBody,
};

use protocol::{ApiError, CollectionName, Tag};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// A list sent as a comma-separated string or as an array of strings; items are trimmed and
/// empty ones dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringList(pub Vec<String>);

impl StringList {
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = StringList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a comma-separated string or an array of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StringList, E> {
                Ok(StringList(v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringList, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    let item = item.trim();
                    if !item.is_empty() {
                        out.push(item.to_string());
                    }
                }
                Ok(StringList(out))
            }
        }
        d.deserialize_any(ListVisitor)
    }
}

impl utoipa::PartialSchema for StringList {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::String).description(Some("comma-separated")))
            .item(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String)))
            .into()
    }
}

impl utoipa::ToSchema for StringList {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("StringList")
    }
}

/// An integer field: refused below `min`, clamped to `max`.
pub fn int_in(key: &str, v: Option<i64>, min: u32, max: u32) -> Result<Option<u32>, ApiError> {
    match v {
        None => Ok(None),
        Some(n) if n < i64::from(min) => Err(ApiError::validation(format!("{key} must be at least {min}"))),
        Some(n) => Ok(Some(n.min(i64::from(max)) as u32)),
    }
}

/// A number field: refused below `min`, clamped to `max`.
pub fn float_in(key: &str, v: Option<f64>, min: f64, max: f64) -> Result<Option<f64>, ApiError> {
    match v {
        None => Ok(None),
        Some(f) if !f.is_finite() || f < min => {
            Err(ApiError::validation(format!("{key} must be between {min} and {max}")))
        }
        Some(f) => Ok(Some(f.min(max))),
    }
}

/// A string the request must carry with some non-blank text.
pub fn required(key: &str, v: Option<String>) -> Result<String, ApiError> {
    v.filter(|s| !s.trim().is_empty()).ok_or_else(|| ApiError::validation(format!("{key} is required")))
}

/// An optional string, absent when blank.
pub fn non_blank(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

/// The one normalization of a collection name a request looks up: trimmed, lowercased and
/// validated by [`CollectionName`]. A name that cannot be valid names no collection: 404.
pub fn collection(raw: &str) -> Result<CollectionName, ApiError> {
    CollectionName::parse(raw).map_err(|_| ApiError::not_found(format!("Collection not found: {}", raw.trim())))
}

/// [`collection`] of an optional field (absent or blank: no collection named).
pub fn collection_opt(raw: Option<String>) -> Result<Option<CollectionName>, ApiError> {
    non_blank(raw).map(|c| collection(&c)).transpose()
}

/// A tag list (`tagsAll`, `tags`...), each tag normalized as indexed tags are, duplicates
/// dropped; an invalid tag is a 400.
pub fn tags(list: Option<StringList>) -> Result<Vec<Tag>, ApiError> {
    Ok(Tag::parse_all(&list.map(StringList::into_vec).unwrap_or_default())?)
}

/// [`collection`] of a required field.
pub fn collection_req(raw: Option<String>) -> Result<CollectionName, ApiError> {
    collection(&required("collection", raw)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_come_as_strings_or_arrays() {
        let a: StringList = serde_json::from_str(r#"" a, b ,,c ""#).unwrap();
        assert_eq!(a.0, vec!["a", "b", "c"]);
        let b: StringList = serde_json::from_str(r#"["x ", "", "y"]"#).unwrap();
        assert_eq!(b.0, vec!["x", "y"]);
        let err = serde_json::from_str::<StringList>("[1]").unwrap_err().to_string();
        assert!(err.contains("expected a string"), "{err}");
        let err = serde_json::from_str::<StringList>("3").unwrap_err().to_string();
        assert!(err.contains("comma-separated string or an array"), "{err}");
    }

    #[test]
    fn bounds_refuse_below_and_clamp_above() {
        assert_eq!(int_in("limit", Some(500), 1, 50).unwrap(), Some(50));
        assert!(int_in("limit", Some(0), 1, 50).is_err());
        assert_eq!(float_in("minScore", Some(3.0), 0.0, 1.0).unwrap(), Some(1.0));
        assert!(float_in("minScore", Some(-0.1), 0.0, 1.0).is_err());
    }

    #[test]
    fn collection_names_normalize_in_one_place() {
        assert_eq!(collection(" Notes ").unwrap().as_str(), "notes");
        assert_eq!(collection("a b").unwrap_err().code, protocol::ErrorCode::NotFound);
        assert_eq!(collection_opt(Some("  ".into())).unwrap(), None);
        assert_eq!(collection_req(None).unwrap_err().code, protocol::ErrorCode::Validation);
    }
}
