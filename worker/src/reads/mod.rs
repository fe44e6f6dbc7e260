//! Read requests over the catalog: documents, tags and sections; links, backlinks and the
//! graph; change reads and impact over the journal and the links.

pub mod anchors;
pub mod changes;
pub mod docs;
pub mod impact;
pub mod links;
