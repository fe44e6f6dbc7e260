//! The stores the worker owns, one module each: the SQLite catalog (the source of truth for
//! documents, chunks, links, jobs and the change journal), the tantivy BM25 index and the
//! LanceDB vector tables. Both indexes are derived from the catalog and can be re-fed from it;
//! `recovery` checks them at start and rebuilds what it finds broken.

pub mod bm25;
pub mod catalog;
pub mod keys;
pub mod recovery;
pub mod vectors;

pub use keys::DocKey;
use std::sync::Mutex;

/// The stores, opened: what every layer above reads and the index layer writes.
pub struct Stores {
    pub catalog: catalog::Catalog,
    pub bm25: bm25::Bm25Index,
    /// LanceDB; `None` when it could not be opened (vector features are then off).
    pub vectors: Option<vectors::VectorStore>,
    /// The vector table of the loaded embedder (known once it loaded).
    embed_table: Mutex<Option<vectors::TableKey>>,
    /// What was found broken and rebuilt since the worker started (`/api/status`).
    pub repairs: recovery::Repairs,
}

impl Stores {
    pub fn new(
        catalog: catalog::Catalog,
        bm25: bm25::Bm25Index,
        vectors: Option<vectors::VectorStore>,
        repairs: recovery::Repairs,
    ) -> Self {
        Stores { catalog, bm25, vectors, embed_table: Mutex::new(None), repairs }
    }

    pub fn set_embed_table(&self, key: Option<vectors::TableKey>) {
        *self.embed_table.lock().unwrap_or_else(|p| p.into_inner()) = key;
    }

    pub fn embed_table(&self) -> Option<vectors::TableKey> {
        self.embed_table.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
