//! Read requests over the catalog: documents, tags and sections; links, backlinks and the
//! graph; change reads and impact over the journal and the links; the audit.

pub mod anchors;
pub mod audit;
pub mod changes;
pub mod docs;
pub mod impact;
pub mod links;
