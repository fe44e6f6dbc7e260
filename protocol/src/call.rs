//! Which reply goes with which request, written once: [`Call`] pairs every request type with
//! its reply type, [`Typed`] carries a reply's JSON bytes with the type they were written
//! from. The worker's handlers return `C::Reply`, the gateway's and the CLI's callers get a
//! `Typed<C::Reply>` (the gateway passes the bytes through; the CLI decodes them).

use crate::api;
use crate::error::ApiError;
use crate::frame::JsonBody;
use crate::messages::{
    AddCollection, Capture, ChangesQuery, CreateDoc, DocsQuery, GraphQuery, QueryRequest, SearchRequest, UpdateDoc,
};
use crate::requests::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

/// A request the worker answers with a `Reply`.
pub trait Call: Into<Request> {
    type Reply: Serialize + DeserializeOwned;
}

/// A reply's JSON bytes, known to be a `R` (written by the worker from one).
#[derive(Debug, Clone, PartialEq)]
pub struct Typed<R> {
    body: JsonBody,
    reply: PhantomData<fn() -> R>,
}

impl<R: Serialize + DeserializeOwned> Typed<R> {
    /// The body the worker sent in answer to a call whose reply is `R`.
    pub fn arrived(body: JsonBody) -> Self {
        Typed { body, reply: PhantomData }
    }

    /// The reply read back as its type.
    pub fn decode(&self) -> Result<R, ApiError> {
        self.body.decode()
    }

    pub fn body(&self) -> &JsonBody {
        &self.body
    }
}

impl<R> From<Typed<R>> for JsonBody {
    fn from(t: Typed<R>) -> Self {
        t.body
    }
}

/// `request type => reply type`, each request type turned into its [`Request`] variant.
macro_rules! calls {
    ($($call:ty => $reply:ty, $variant:pat_param => $make:expr;)*) => {
        $(
            impl Call for $call {
                type Reply = $reply;
            }
            impl From<$call> for Request {
                fn from(c: $call) -> Self {
                    let $variant = c;
                    $make
                }
            }
        )*
    };
}

calls! {
    GetCapabilities => api::Capabilities, _ => Request::Capabilities;
    GetStatus => api::StatusSnapshot, _ => Request::Status;
    ListCollections => Vec<api::CollectionInfo>, _ => Request::ListCollections;
    AddCollection => api::CollectionAdded, c => Request::AddCollection(c);
    RemoveCollection => api::CollectionRemoved, c => Request::RemoveCollection(c);
    SyncCollections => api::SyncStarted, c => Request::Sync(c);
    GetJob => api::Job, c => Request::GetJob(c);
    SearchRequest => api::SearchResponse, c => Request::Search(c);
    ListTags => api::TagsResponse, c => Request::ListTags(c);
    DocsQuery => api::DocsResponse, c => Request::ListDocs(c);
    GetDoc => api::DocResponse, c => Request::GetDoc(c);
    Links => api::LinksResponse, c => Request::Links(c);
    Backlinks => api::BacklinksResponse, c => Request::Backlinks(c);
    Sections => api::SectionsResponse, c => Request::Sections(c);
    CodeTokens => api::CodeTokensResponse, c => Request::CodeTokens(c);
    GraphQuery => api::GraphResponse, c => Request::Graph(c);
    CreateDoc => api::CreatedDoc, c => Request::CreateDoc(c);
    UpdateDoc => api::UpdatedDoc, c => Request::UpdateDoc(c);
    DeactivateDoc => api::DeactivatedDoc, c => Request::DeactivateDoc(c);
    CreateFolder => api::CreatedFolder, c => Request::CreateFolder(c);
    ResolveAsset => api::AssetLocation, c => Request::ResolveAsset(c);
    ListNotePresets => api::NotePresetsResponse, _ => Request::NotePresets;
    Capture => api::CaptureResponse, c => Request::Capture(c);
    PlanRefactor => api::RefactorPlan, c => Request::RefactorPlan(c);
    ApplyRefactor => api::RefactorApplied, c => Request::RefactorApply(c);
    VectorSearch => api::SearchResponse, c => Request::VectorSearch(c);
    QueryRequest => api::SearchResponse, c => Request::Query(c);
    Diagnose => api::DiagnoseResponse, c => Request::Diagnose(c);
    Explain => api::ExplainResponse, c => Request::Explain(c);
    Similar => api::SimilarResponse, c => Request::Similar(c);
    ListPresets => api::PresetsResponse, _ => Request::ListPresets;
    SetPreset => api::PresetChanged, c => Request::SetPreset(c);
    PullModels => api::PullStarted, _ => Request::PullModels;
    GetModelStatus => api::PullStatus, _ => Request::ModelStatus;
    ChangesQuery => api::ChangesResponse, c => Request::ListChanges(c);
    ReplayEvents => api::ReplayedEvents, c => Request::ReplayEvents(c);
    Diff => api::DiffResponse, c => Request::Diff(c);
    Impact => api::ImpactResponse, c => Request::Impact(c);
    VerifyContext => api::CapsuleReceipt, c => Request::VerifyContext(c);
    RegisterCapsule => api::CapsuleRegistration, c => Request::RegisterCapsule(c);
    ListCapsules => api::CapsuleRegistrations, _ => Request::ListCapsules;
    RemoveCapsule => api::CapsuleRegistration, c => Request::RemoveCapsule(c);
    GetActiveJob => api::ActiveJobResponse, _ => Request::ActiveJob;
    Autocomplete => api::AutocompleteResponse, c => Request::Autocomplete(c);
    Audit => api::AuditResponse, c => Request::Audit(c);
}

impl Call for Ask {
    type Reply = api::AskResponse;
}

impl Call for AskVerified {
    type Reply = api::VerifiedAskResponse;
}

impl Call for CompileContext {
    type Reply = api::Capsule;
}
