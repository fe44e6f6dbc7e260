//! The request table: each [`Request`] to the handler that answers it. The handlers live
//! in their layers (`index`, `retrieval`, `reads`, `write`, `models`); this is the one place
//! that knows them all.

use crate::index::collections;
use crate::reads::{changes, docs, impact, links};
use crate::retrieval::{diagnose, hybrid, keyword, vector};
use crate::{answer, evidence, models, write, Flow, Worker};
use protocol::{ApiError, JsonBody, Request};
use std::sync::Arc;

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
            Request::Capabilities => JsonBody::of(&self.capabilities()),
            Request::Status => JsonBody::of(&self.status_snapshot()?),
            Request::ListCollections => collections::list(self),
            Request::AddCollection(add) => collections::add(self, add),
            Request::RemoveCollection { name } => collections::remove(self, &name),
            Request::Sync { collection, git_pull } => collections::sync(self, collection, git_pull),
            Request::GetJob { id } => collections::get_job(self, &id),
            Request::Search(s) => JsonBody::of(&keyword::search(self, &s)?),
            Request::ListTags { collection, prefix } => docs::tags(self, collection, prefix),
            Request::ListDocs(q) => docs::docs(self, &q),
            Request::GetDoc(r) => docs::doc(self, &r),
            Request::Links { doc, kind } => links::links(self, &doc, kind),
            Request::Backlinks { doc } => links::backlinks(self, &doc),
            Request::Sections { doc } => docs::sections(self, &doc),
            Request::CodeTokens { doc } => docs::code_tokens(self, &doc),
            Request::Graph(q) => links::graph(self, &q),
            Request::CreateDoc(c) => write::create_doc(self, c),
            Request::UpdateDoc(u) => write::update_doc(self, u),
            Request::DeactivateDoc { doc } => write::deactivate_doc(self, &doc),
            Request::CreateFolder { collection, name, parent_path } => {
                write::create_folder(self, &collection, &name, parent_path.as_deref())
            }
            Request::ResolveAsset { uri, path } => write::resolve_asset(self, &uri, path.as_deref()),
            Request::NotePresets => JsonBody::of(&write::note_presets::list()),
            Request::Capture(c) => write::capture(self, c),
            Request::RefactorPlan { doc, op } => write::refactor::preview(self, &doc, op),
            Request::RefactorApply { doc, op, confirm } => write::refactor::apply(self, &doc, op, confirm),
            Request::VectorSearch(s) => JsonBody::of(&vector::vsearch(self, &s)?),
            Request::Query(q) => JsonBody::of(&hybrid::run(self, &q)?.response),
            Request::Diagnose { query, target } => diagnose::diagnose(self, &query, &target),
            Request::Similar { doc, query } => vector::similar(self, &doc, &query),
            Request::ListPresets => models::api::list(self),
            Request::SetPreset { id } => models::api::set(self, &id),
            Request::PullModels => models::api::pull(self),
            Request::ModelStatus => models::api::status(self),
            Request::ListChanges(q) => changes::changes(self, &q),
            Request::ReplayEvents { after } => JsonBody::of(&crate::events::replay(&self.catalog.reader(), after)?),
            Request::Diff { doc, change } => changes::diff(self, &doc, change),
            Request::Impact { doc, bounds } => impact::impact(self, &doc, &bounds),
            Request::Context(req) => {
                for c in &req.collections {
                    if self.config().find(c).is_none() {
                        return Err(ApiError::context(protocol::ErrorCode::InvalidFilter));
                    }
                }
                let compiled = evidence::compile::compile(self, &req)?;
                Ok(JsonBody { bytes: compiled.json.into_bytes() })
            }
            Request::VerifyContext { capsule } => JsonBody::of(&evidence::verify::verify(self, &capsule)?),
            Request::RegisterCapsule { capsule, label } => evidence::saved::register(self, &capsule, label),
            Request::ListCapsules => evidence::saved::list(self),
            Request::ActiveJob => collections::active_job(self),
            Request::Autocomplete { query, collection, limit } => {
                docs::autocomplete(self, &query, collection.as_deref(), limit)
            }
            Request::RemoveCapsule { id } => evidence::saved::remove(self, &id),
            Request::Ask(req) => {
                let mut quiet = |_: &str| Flow::Continue;
                let sink: &mut dyn FnMut(&str) -> Flow = if req.stream { partial } else { &mut quiet };
                answer::answer(self, &req, sink)
            }
        }
    }
}
