//! What the layers above the stores share: the stores, the settings, the models and the
//! event bus, with the hooks the composition root answers. Nothing here reaches up: a layer
//! holds this and what it owns itself.

use crate::config::Settings;
use crate::events::{EventBus, Hooks};
use crate::models::Models;
use crate::stores::catalog::{self, DocRow};
use crate::stores::Stores;
use crate::uri;
use protocol::api::Capabilities;
use protocol::{ApiError, DocRef};

pub struct Shared {
    pub stores: Stores,
    pub settings: Settings,
    pub models: Models,
    pub events: EventBus,
    pub hooks: Hooks,
    /// Link resolution over the active documents, kept from one catalog generation's
    /// requests to the next.
    pub link_resolver: crate::reads::links::GenerationCache<crate::reads::links::Resolver>,
    /// Each document's dependents (backlinks, impact), kept the same way.
    pub link_dependents: crate::reads::links::GenerationCache<crate::reads::links::Dependents>,
}

impl Shared {
    /// What the loaded models allow (vector search needs the vector store too).
    pub fn capabilities(&self) -> Capabilities {
        let loaded = self.models.loaded();
        let vector = loaded.embed && self.stores.vectors.is_some();
        Capabilities { bm25: true, vector, hybrid: vector, answer: loaded.gen, egress_policy: self.models.egress() }
    }

    /// The active document a reference names.
    pub fn resolve_doc(&self, r: &DocRef) -> Result<DocRow, ApiError> {
        self.find_doc(r, false)
    }

    /// The document a reference names, active or not (the active one first): for the change
    /// reads, which also speak of deactivated and deleted notes.
    pub fn resolve_any_doc(&self, r: &DocRef) -> Result<DocRow, ApiError> {
        self.find_doc(r, true)
    }

    fn find_doc(&self, r: &DocRef, inactive_too: bool) -> Result<DocRow, ApiError> {
        let conn = self.stores.catalog.reader();
        let found = match r {
            DocRef::Uri(u) => {
                let (collection, rel) =
                    uri::parse_uri(u).ok_or_else(|| ApiError::validation(format!("Invalid document uri: {u}")))?;
                if inactive_too {
                    catalog::any_doc_by_path(&conn, &collection, &rel)
                } else {
                    catalog::doc_by_path(&conn, &collection, &rel)
                }
            }
            DocRef::Docid(id) if inactive_too => catalog::any_doc_by_docid(&conn, id),
            DocRef::Docid(id) => catalog::doc_by_docid(&conn, id),
        };
        found?.ok_or_else(|| ApiError::not_found("Document not found"))
    }
}
