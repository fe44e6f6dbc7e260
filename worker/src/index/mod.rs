//! Building the index from the user's folders: walking a collection, converting files
//! (PDF, DOCX) to text, ingesting (canonical text, front matter, chunks, links, tags),
//! the sync pipeline that feeds the stores, background embedding, and the collection
//! requests that start it all.

pub mod collections;
pub mod convert;
pub mod embedding;
pub mod explain;
pub mod git;
pub mod indexer;
pub mod ingest;
pub mod mounts;
pub mod pictures;
pub mod rules;
pub mod walk;
pub mod watch;
