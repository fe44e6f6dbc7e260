//! Identifiers that cross the process boundary.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid collection name {0:?}: use 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit")]
pub struct InvalidName(pub String);

/// A collection name: `^[a-z0-9][a-z0-9_-]{0,63}$`. Lookups are case-insensitive, so
/// construction lowercases.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CollectionName(String);

impl CollectionName {
    pub fn parse(raw: &str) -> Result<Self, InvalidName> {
        let lower = raw.trim().to_lowercase();
        let mut chars = lower.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if first_ok && rest_ok && lower.len() <= 64 {
            Ok(CollectionName(lower))
        } else {
            Err(InvalidName(raw.to_string()))
        }
    }

    /// The default name for a folder: its last segment lowercased, other characters
    /// turned into '-', runs collapsed, trimmed to 64.
    pub fn slug_of(folder_name: &str) -> Result<Self, InvalidName> {
        let mut out = String::new();
        for c in folder_name.to_lowercase().chars() {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
                out.push(c);
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        let trimmed: String = out.trim_matches(|c| c == '-' || c == '_').chars().take(64).collect();
        Self::parse(trimmed.trim_end_matches('-'))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The traits of a text made only by parsing (`$name::parse(&str) -> Result<$name, $error>`):
/// decoding parses again (serde's `try_from = "String"`), and the value reads as the text it is
/// (`&name` where a `&str` is wanted, compared with strings, displayed as itself).
macro_rules! parsed_text {
    ($name:ident, $error:ty) => {
        impl TryFrom<String> for $name {
            type Error = $error;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}
pub(crate) use parsed_text;

parsed_text!(CollectionName, InvalidName);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated_and_lowercased() {
        assert_eq!(CollectionName::parse("Notes").unwrap().as_str(), "notes");
        assert!(CollectionName::parse("-x").is_err());
        assert!(CollectionName::parse("a b").is_err());
        assert!(CollectionName::parse("").is_err());
        assert!(CollectionName::parse(&"a".repeat(65)).is_err());
    }

    #[test]
    fn slugs_folder_names() {
        assert_eq!(CollectionName::slug_of("My Notes!").unwrap().as_str(), "my-notes");
        assert_eq!(CollectionName::slug_of("work_2024").unwrap().as_str(), "work_2024");
        assert!(CollectionName::slug_of("!!!").is_err());
    }
}
