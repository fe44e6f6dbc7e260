//! The stores the worker owns, one module each: the SQLite catalog (the source of truth for
//! documents, chunks, links, jobs and the change journal), the tantivy BM25 index and the
//! LanceDB vector tables. Both indexes are derived from the catalog and can be re-fed from it;
//! `recovery` checks them at start and rebuilds what it finds broken.

pub mod bm25;
pub mod catalog;
pub mod recovery;
pub mod vectors;
