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
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct Shared {
    pub stores: Stores,
    pub settings: Settings,
    pub models: Models,
    pub events: EventBus,
    pub hooks: Hooks,
    /// What the reads compute from the whole catalog (the link resolver, each document's
    /// dependents), kept from one catalog generation's requests to the next.
    pub generation_caches: GenerationCaches,
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

/// Values computed from the whole catalog (by the reads: the link resolver, each document's
/// dependents), one per type, each kept with the catalog generation it was computed at and
/// computed again once a change to a document bumped it.
#[derive(Default)]
pub struct GenerationCaches(Mutex<HashMap<TypeId, Kept>>);

/// A value kept, its type erased, with the catalog generation it was computed at.
type Kept = (i64, Arc<dyn Any + Send + Sync>);

impl GenerationCaches {
    /// The `T` kept when it is of the `current` generation, else the one `build` makes (with
    /// the generation it read), kept for the next request.
    pub fn get<T: Any + Send + Sync, E>(
        &self,
        current: i64,
        build: impl FnOnce() -> Result<(i64, T), E>,
    ) -> Result<Arc<T>, E> {
        let kept = {
            let caches = self.0.lock().unwrap_or_else(|p| p.into_inner());
            caches.get(&TypeId::of::<T>()).filter(|(generation, _)| *generation == current).map(|(_, v)| Arc::clone(v))
        };
        if let Some(value) = kept.and_then(|v| v.downcast::<T>().ok()) {
            return Ok(value);
        }
        let (generation, value) = build()?;
        let value = Arc::new(value);
        let erased: Arc<dyn Any + Send + Sync> = value.clone();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(TypeId::of::<T>(), (generation, erased));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_computed_once_per_catalog_generation_and_type() {
        let caches = GenerationCaches::default();
        let builds = std::cell::Cell::new(0);
        let build = |generation: i64, value: &'static str| {
            let builds = &builds;
            move || -> Result<(i64, String), ()> {
                builds.set(builds.get() + 1);
                Ok((generation, value.to_string()))
            }
        };
        let first = caches.get(1, build(1, "a")).unwrap();
        let again = caches.get(1, build(1, "b")).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same generation: the one kept");
        assert_eq!((builds.get(), again.as_str()), (1, "a"));
        let other: Arc<u32> = caches.get(1, || Ok::<_, ()>((1, 7))).unwrap();
        assert_eq!(*other, 7, "another type is kept apart");
        let next = caches.get(2, build(2, "c")).unwrap();
        assert_eq!((builds.get(), next.as_str()), (2, "c"), "a change: computed again");
        assert!(Arc::ptr_eq(&next, &caches.get(2, build(2, "d")).unwrap()));
        assert_eq!(caches.get::<String, _>(3, || Err("failed")), Err("failed"));
        assert_eq!(*caches.get(2, build(2, "e")).unwrap(), "c", "a failed build keeps what was kept");
    }
}
