//! The indexer: what a sync writes to and answers with. Its work is in three files:
//! `reading` (a file's text and parse), `writer` (each batch into the catalog and BM25, journaled
//! in the same transaction and announced on the event bus after it commits) and `sync` (a
//! collection's sync and one file's).

use crate::config::content_types::ContentTypes;
use crate::events::EventBus;
use crate::index::pictures;
use crate::index::rules::PatternError;
use crate::stores::bm25::Bm25Index;
use crate::stores::catalog::{self, Catalog};
use std::sync::atomic::AtomicBool;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("collection folder {0} is missing or not a folder")]
    RootMissing(String),
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error(transparent)]
    Bm25(#[from] crate::stores::bm25::Bm25Error),
    #[error("stopped: the worker is shutting down")]
    Cancelled,
}

crate::errors::internal_errors!(SyncError);

impl From<rusqlite::Error> for SyncError {
    fn from(e: rusqlite::Error) -> Self {
        SyncError::Catalog(e.into())
    }
}

pub use protocol::source_kind::{is_text_note, source_kind, SourceKind};

pub struct Indexer<'a> {
    pub catalog: &'a Catalog,
    pub bm25: &'a Bm25Index,
    /// Each document's content type joins its categories in the BM25 index (the filter field).
    pub content_types: &'a ContentTypes,
    pub cancel: &'a AtomicBool,
    /// Set while the whole keyword index is re-fed in the background
    /// ([`crate::index::keyword_refeed`]).
    pub refeeding: &'a AtomicBool,
    pub events: &'a EventBus,
    /// Pictures' OCR readings, and the queue a sync adds pictures without one to.
    pub pictures: &'a pictures::Readings,
    /// The language each collection declares for its notes (`lang` in its configuration).
    pub languages: CollectionLanguages,
    /// The languages of the folders this indexer's feeds met (for their short notes).
    pub(crate) folder_languages: super::writer::FolderLanguages,
}

/// What the keyword index's feed adds to its rules' fingerprint: a change of it re-feeds an
/// index fed before it. Since the catalog keeps what the feed read of each note's language
/// (for the notes beside a short one), it is fed once more after an upgrade, to learn it.
pub const KEYWORD_FEED_VERSION: &str = "; feed: folder languages";

/// The language each collection declares for its notes, by collection name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectionLanguages(std::collections::BTreeMap<String, String>);

impl CollectionLanguages {
    pub fn of(collections: &[crate::config::CollectionConfig]) -> Self {
        CollectionLanguages(collections.iter().filter_map(|c| Some((c.name.clone(), c.lang.clone()?))).collect())
    }

    pub fn get(&self, collection: &str) -> Option<&str> {
        self.0.get(collection).map(String::as_str)
    }

    /// What the keyword index was fed under, beside the content-type rules: empty when no
    /// collection declares a language (as before there was a way to).
    pub fn fingerprint(&self) -> String {
        self.0.iter().map(|(name, lang)| format!("; lang {name}={lang}")).collect()
    }
}

/// What the single-file sync did.
#[derive(Debug, Clone, PartialEq)]
pub enum FileSync {
    /// Indexed (created, changed or reactivated).
    Indexed,
    /// The bytes equal the indexed version.
    Unchanged,
    /// The file is gone (or no longer a supported note): deactivated if it was indexed.
    Removed,
    /// Unreadable, not UTF-8 or not convertible; the previous version stays.
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CollectionConfig;

    #[test]
    fn collections_languages_and_their_fingerprint() {
        let coll = |name: &str, lang: Option<&str>| CollectionConfig {
            name: name.into(),
            path: format!("/notes/{name}"),
            pattern: "**/*.md".into(),
            include: String::new(),
            exclude: String::new(),
            git_pull: false,
            watch: true,
            lang: lang.map(str::to_string),
            shared: false,
            replica: false,
        };
        let none = CollectionLanguages::of(&[coll("a", None)]);
        assert_eq!(none.fingerprint(), "", "no language declared: the fingerprint is the rules' alone");
        let some = CollectionLanguages::of(&[coll("b", Some("fr")), coll("a", Some("de")), coll("c", None)]);
        assert_eq!(some.get("a"), Some("de"));
        assert_eq!(some.get("c"), None);
        assert_eq!(some.fingerprint(), "; lang a=de; lang b=fr");
    }
}
