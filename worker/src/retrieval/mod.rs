//! Answering searches: keyword (BM25), vector and hybrid retrieval, the keyword query
//! parser, query expansion, and `/api/query/diagnose`. `common` holds what every retrieval
//! shares: scope and filters, score normalization, recency, the result shape.

pub mod common;
pub mod diagnose;
pub mod expansion;
pub mod hybrid;
pub mod keyword;
pub mod vector;
