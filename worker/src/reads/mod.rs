//! Read requests over the catalog: documents, tags and sections; links, backlinks and the
//! graph; the status snapshot.

pub mod docs;
pub mod links;
pub mod status;
