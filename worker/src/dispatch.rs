//! The request table: each [`Request`] to the handler that answers it. The handlers live
//! in their layers (`index`, `retrieval`, `reads`, `write`, `models`); this is the one place
//! that knows them all. Each handler returns its request's reply type ([`Call::Reply`]), and
//! [`reply`] names that request type, so a handler that answered with another type would not
//! compile.

use crate::answer::{self, Answer};
use crate::app::Worker;
use crate::index::collections;
use crate::models::generator::Flow;
use crate::reads::{audit, changes, docs, impact, links};
use crate::retrieval::{diagnose, hybrid, keyword, vector};
use crate::{evidence, model_api, status, write};
use protocol::{self as p, ApiError, Call, JsonBody, Request};
use std::sync::Arc;

/// The reply to a `C`, serialized.
fn reply<C: Call>(r: Result<C::Reply, ApiError>) -> Result<JsonBody, ApiError> {
    JsonBody::of(&r?)
}

impl Worker {
    /// Answers one request. Blocking: call it from a blocking thread.
    pub fn handle(self: &Arc<Self>, req: Request) -> Result<JsonBody, ApiError> {
        self.handle_with(req, &mut |_| Flow::Continue)
    }

    /// [`Worker::handle`], handing the text of a streamed reply (an ask with `stream`) to
    /// `partial` as it is generated; `partial` answering [`Flow::Stop`] ends the generation
    /// (the caller went away).
    pub fn handle_with(
        self: &Arc<Self>,
        req: Request,
        partial: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<JsonBody, ApiError> {
        match req {
            Request::Capabilities => reply::<p::GetCapabilities>(Ok(self.shared.capabilities())),
            Request::Status => reply::<p::GetStatus>(status::snapshot(&self.indexing)),
            Request::ListCollections => reply::<p::ListCollections>(collections::list(&self.indexing)),
            Request::AddCollection(add) => reply::<p::AddCollection>(collections::add(&self.indexing, add)),
            Request::RemoveCollection(r) => reply::<p::RemoveCollection>(collections::remove(&self.indexing, &r.name)),
            Request::Sync(s) => {
                reply::<p::SyncCollections>(collections::sync(&self.indexing, s.collection, s.git_pull))
            }
            Request::GetJob(j) => reply::<p::GetJob>(collections::get_job(&self.indexing, &j.id)),
            Request::Search(s) => reply::<p::SearchRequest>(keyword::search(&self.shared, &s)),
            Request::ListTags(t) => reply::<p::ListTags>(docs::tags(&self.shared, t.collection, t.prefix)),
            Request::ListDocs(q) => reply::<p::DocsQuery>(docs::docs(&self.shared, &q)),
            Request::GetDoc(d) => reply::<p::GetDoc>(docs::doc(&self.shared, &self.indexing.pictures, &d.doc)),
            Request::Links(l) => reply::<p::Links>(links::links(&self.shared, &l.doc, l.kind)),
            Request::Backlinks(b) => reply::<p::Backlinks>(links::backlinks(&self.shared, &b.doc)),
            Request::Sections(s) => reply::<p::Sections>(docs::sections(&self.shared, &s.doc)),
            Request::CodeTokens(c) => reply::<p::CodeTokens>(docs::code_tokens(&self.shared, &c.doc)),
            Request::Graph(q) => reply::<p::GraphQuery>(links::graph(&self.shared, &q)),
            Request::CreateDoc(c) => reply::<p::CreateDoc>(write::create_doc(&self.indexing, c)),
            Request::UpdateDoc(u) => reply::<p::UpdateDoc>(write::update_doc(&self.indexing, u)),
            Request::DeactivateDoc(d) => reply::<p::DeactivateDoc>(write::deactivate_doc(&self.indexing, &d.doc)),
            Request::CreateFolder(f) => reply::<p::CreateFolder>(write::create_folder(
                &self.indexing,
                &f.collection,
                &f.name,
                f.parent_path.as_deref(),
            )),
            Request::ResolveAsset(a) => {
                reply::<p::ResolveAsset>(write::resolve_asset(&self.indexing, &a.uri, a.path.as_deref()))
            }
            Request::NotePresets => reply::<p::ListNotePresets>(Ok(write::note_presets::list())),
            Request::Capture(c) => reply::<p::Capture>(write::capture(&self.indexing, c)),
            Request::RefactorPlan(r) => {
                reply::<p::PlanRefactor>(write::refactor::preview(&self.indexing, &r.doc, r.op))
            }
            Request::RefactorApply(r) => {
                reply::<p::ApplyRefactor>(write::refactor::apply(&self.indexing, &r.doc, r.op, r.confirm))
            }
            Request::VectorSearch(v) => reply::<p::VectorSearch>(vector::vsearch(&self.shared, &v.0)),
            Request::Query(q) => reply::<p::QueryRequest>(hybrid::run(&self.shared, &q).map(|o| o.response)),
            Request::Diagnose(d) => reply::<p::Diagnose>(diagnose::diagnose(&self.shared, &d.query, &d.target)),
            Request::Explain(e) => reply::<p::Explain>(crate::index::explain::explain(&self.indexing, &e)),
            Request::Similar(s) => reply::<p::Similar>(vector::similar(&self.shared, &s.doc, &s.query)),
            Request::ListPresets => reply::<p::ListPresets>(model_api::list(&self.shared)),
            Request::SetPreset(s) => reply::<p::SetPreset>(model_api::set(&self.shared, &s.id)),
            Request::PullModels => reply::<p::PullModels>(model_api::pull(&self.shared)),
            Request::ModelStatus => reply::<p::GetModelStatus>(model_api::status(&self.shared)),
            Request::ListChanges(q) => reply::<p::ChangesQuery>(changes::changes(&self.shared, &q)),
            Request::ReplayEvents(r) => reply::<p::ReplayEvents>(
                crate::events::replay(&self.shared.stores.catalog.reader(), r.after).map_err(ApiError::from),
            ),
            Request::Diff(d) => reply::<p::Diff>(changes::diff(&self.shared, &d.doc, d.change)),
            Request::Impact(i) => reply::<p::Impact>(impact::impact(&self.shared, &i.doc, &i.bounds)),
            Request::Context(req) => {
                for c in &req.collections {
                    if self.shared.settings.config().find(c).is_none() {
                        return Err(ApiError::context(p::ErrorCode::InvalidFilter));
                    }
                }
                // The capsule's canonical JSON, as compiled (its hash covers these bytes): a
                // `p::CompileContext` reply, passed on without a second serialization.
                let compiled = evidence::compile::compile(&self.shared, &req)?;
                Ok(JsonBody { bytes: compiled.json.into_bytes() })
            }
            Request::VerifyContext(v) => reply::<p::VerifyContext>(evidence::verify::verify(&self.shared, &v.capsule)),
            Request::RegisterCapsule(r) => {
                reply::<p::RegisterCapsule>(evidence::saved::register(&self.shared, &r.capsule, r.label))
            }
            Request::ListCapsules => reply::<p::ListCapsules>(evidence::saved::list(&self.shared)),
            Request::ActiveJob => reply::<p::GetActiveJob>(collections::active_job(&self.indexing)),
            Request::Autocomplete(a) => {
                reply::<p::Autocomplete>(docs::autocomplete(&self.shared, &a.query, a.collection.as_deref(), a.limit))
            }
            Request::Audit(a) => reply::<p::Audit>(audit::audit(&self.shared, &a)),
            Request::RemoveCapsule(r) => reply::<p::RemoveCapsule>(evidence::saved::remove(&self.shared, &r.id)),
            Request::Ask(req) => {
                let mut quiet = |_: &str| Flow::Continue;
                let sink: &mut dyn FnMut(&str) -> Flow = if req.stream { partial } else { &mut quiet };
                match answer::answer(&self.shared, &req, sink)? {
                    Answer::Raw(a) => reply::<p::Ask>(Ok(a)),
                    Answer::Verified(a) => reply::<p::AskVerified>(Ok(a)),
                }
            }
        }
    }
}
