//! The request table: each [`Request`] to the handler that answers it. The handlers live
//! in their layers (`index`, `retrieval`, `reads`, `write`, `models`); this is the one place
//! that knows them all.

use crate::index::collections;
use crate::reads::{changes, docs, impact, links};
use crate::retrieval::{diagnose, hybrid, keyword, vector};
use crate::{answer, evidence, models, normalize_tags, write, Flow, Worker};
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
            Request::Search(mut s) => {
                normalize_filters(&mut s)?;
                JsonBody::of(&keyword::search(self, &s)?)
            }
            Request::ListTags { collection, prefix } => docs::tags(self, collection, prefix),
            Request::ListDocs(mut q) => {
                q.tags_all = normalize_tags(&q.tags_all)?;
                q.tags_any = normalize_tags(&q.tags_any)?;
                docs::docs(self, &q)
            }
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
            Request::VectorSearch(mut s) => {
                normalize_filters(&mut s)?;
                JsonBody::of(&vector::vsearch(self, &s)?)
            }
            Request::Query(mut q) => {
                normalize_filters(&mut q.search)?;
                JsonBody::of(&hybrid::run(self, &q)?.response)
            }
            Request::Diagnose { mut query, target } => {
                normalize_filters(&mut query.search)?;
                diagnose::diagnose(self, &query, &target)
            }
            Request::Similar { doc, query } => vector::similar(self, &doc, &query),
            Request::ListPresets => models::api::list(self),
            Request::SetPreset { id } => models::api::set(self, &id),
            Request::PullModels => models::api::pull(self),
            Request::ModelStatus => models::api::status(self),
            Request::ListChanges(q) => changes::changes(self, &q),
            Request::ReplayEvents { after } => JsonBody::of(&crate::events::replay(&self.catalog.reader(), after)?),
            Request::Diff { doc, change } => changes::diff(self, &doc, change),
            Request::Impact { doc, bounds } => impact::impact(self, &doc, &bounds),
            Request::Context(mut req) => {
                req.filters.tags_all = normalize_tags(&req.filters.tags_all)
                    .map_err(|_| ApiError::context(protocol::ErrorCode::InvalidFilter))?;
                req.filters.tags_any = normalize_tags(&req.filters.tags_any)
                    .map_err(|_| ApiError::context(protocol::ErrorCode::InvalidFilter))?;
                for c in &req.collections {
                    if self.config().find(c).is_none() {
                        return Err(ApiError::context(protocol::ErrorCode::InvalidFilter));
                    }
                }
                let compiled = evidence::compile::compile(self, &req)?;
                Ok(JsonBody { bytes: compiled.json.into_bytes(), status: None })
            }
            Request::VerifyContext { capsule } => JsonBody::of(&evidence::verify::verify(self, &capsule)?),
            Request::RegisterCapsule { capsule, label } => evidence::saved::register(self, &capsule, label),
            Request::ListCapsules => evidence::saved::list(self),
            Request::ActiveJob => collections::active_job(self),
            Request::Autocomplete { query, collection, limit } => {
                docs::autocomplete(self, &query, collection.as_deref(), limit)
            }
            Request::RemoveCapsule { id } => evidence::saved::remove(self, &id),
            Request::Ask(mut req) => {
                normalize_filters(&mut req.query.search)?;
                let mut quiet = |_: &str| Flow::Continue;
                let sink: &mut dyn FnMut(&str) -> Flow = if req.stream { partial } else { &mut quiet };
                answer::answer(self, &req, sink)
            }
        }
    }
}

/// A retrieval body's tag filters, normalized as indexed tags are.
fn normalize_filters(s: &mut protocol::SearchRequest) -> Result<(), ApiError> {
    s.filters.tags_all = normalize_tags(&s.filters.tags_all)?;
    s.filters.tags_any = normalize_tags(&s.filters.tags_any)?;
    Ok(())
}
