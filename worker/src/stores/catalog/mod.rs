//! The SQLite catalog: the source of truth. tantivy and LanceDB are derived from it.
//!
//! Every change to a document bumps the catalog `generation` and stamps the row with it
//! (`gen`). After the BM25 index commits a document, its `bm25_gen` is set to `gen`; at
//! start the worker re-feeds every row where the two differ, so a crash at any point
//! converges without a full rebuild.

mod capsules;
mod changes;
mod collections;
mod docs;
mod embeddings;
mod jobs;
mod keyword_feed;
mod links;
mod listing;
mod pool;
mod schema;
mod team;
#[cfg(test)]
mod test_rows;

pub use capsules::*;
pub use changes::*;
pub use collections::*;
pub use docs::*;
pub use embeddings::*;
pub use jobs::*;
pub use keyword_feed::*;
pub use links::*;
pub use listing::{doc_page, title_matches, DocPage};
pub use pool::{snapshot, Catalog};
pub use team::*;

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("catalog query failed: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("catalog row is malformed: {0}")]
    Malformed(String),
    #[error("catalog file: {0}")]
    Io(#[from] std::io::Error),
}

crate::errors::internal_errors!(CatalogError);

pub type Result<T, E = CatalogError> = std::result::Result<T, E>;
