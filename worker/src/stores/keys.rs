//! A document's row in the catalog, which the keyword index keeps as its key: typed, so that
//! it is not mixed up with a generation, a sequence number, a count or a score where they
//! travel together (`(DocKey, f32)` is a ranked document).

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use std::fmt;

/// The catalog's `documents.id` of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocKey(pub i64);

impl fmt::Display for DocKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl ToSql for DocKey {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl FromSql for DocKey {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::column_result(value).map(DocKey)
    }
}
