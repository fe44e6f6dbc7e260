//! What the gateway (or the CLI) asks the worker: [`Request`], one variant per operation, each
//! holding its own request type. [`crate::Call`] pairs each request type with its reply.

use crate::messages::{
    AddCollection, ApplyConfirmation, AskRequest, Capture, ChangesQuery, ContextRequest, CreateDoc, DocRef, DocsQuery,
    GraphQuery, ImpactBounds, LinkKind, QueryRequest, RefactorOp, SearchRequest, SimilarQuery, UpdateDoc,
};
use crate::{ChangeCursor, CollectionName};
use serde::{Deserialize, Serialize};

/// One operation of the worker, as it travels in a [`crate::ClientFrame::Call`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// A request lives for one send; boxing every large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Request {
    Capabilities,
    Status,
    ListCollections,
    AddCollection(AddCollection),
    RemoveCollection(RemoveCollection),
    Sync(SyncCollections),
    GetJob(GetJob),
    Search(SearchRequest),
    ListTags(ListTags),
    ListDocs(DocsQuery),
    GetDoc(GetDoc),
    Links(Links),
    Backlinks(Backlinks),
    Sections(Sections),
    /// A code file's colouring for the workspace ([`crate::api::CodeTokensResponse`]).
    CodeTokens(CodeTokens),
    Graph(GraphQuery),
    CreateDoc(CreateDoc),
    UpdateDoc(UpdateDoc),
    DeactivateDoc(DeactivateDoc),
    CreateFolder(CreateFolder),
    /// Resolves a document asset to a file the gateway may serve.
    ResolveAsset(ResolveAsset),
    NotePresets,
    Capture(Capture),
    RefactorPlan(PlanRefactor),
    RefactorApply(ApplyRefactor),
    VectorSearch(VectorSearch),
    Query(QueryRequest),
    Diagnose(Diagnose),
    /// Whether a path is indexed, and the rule that leaves it out.
    Explain(Explain),
    Similar(Similar),
    ListPresets,
    SetPreset(SetPreset),
    PullModels,
    ModelStatus,
    ListChanges(ChangesQuery),
    /// The `document-changed` events of the changes after a cursor (a reconnecting
    /// `/api/events` subscriber's `Last-Event-ID`), oldest first.
    ReplayEvents(ReplayEvents),
    Diff(Diff),
    Impact(Impact),
    /// Compiles a Context Capsule (the reply is its canonical JSON).
    Context(Box<ContextRequest>),
    /// Verifies a capsule a client kept (its JSON as sent).
    VerifyContext(VerifyContext),
    /// Saves a capsule to be re-verified after changes to its evidence (CLI only).
    RegisterCapsule(RegisterCapsule),
    ListCapsules,
    RemoveCapsule(RemoveCapsule),
    ActiveJob,
    Autocomplete(Autocomplete),
    Ask(Box<AskRequest>),
    /// Read-only findings over the index and its folders.
    Audit(Audit),
}

impl Request {
    /// Short name for logs (never includes user content).
    pub fn name(&self) -> &'static str {
        match self {
            Request::Capabilities => "capabilities",
            Request::Status => "status",
            Request::ListCollections => "list_collections",
            Request::AddCollection(_) => "add_collection",
            Request::RemoveCollection(_) => "remove_collection",
            Request::Sync(_) => "sync",
            Request::GetJob(_) => "get_job",
            Request::Search(_) => "search",
            Request::ListTags(_) => "list_tags",
            Request::ListDocs(_) => "list_docs",
            Request::GetDoc(_) => "get_doc",
            Request::Links(_) => "links",
            Request::Backlinks(_) => "backlinks",
            Request::Sections(_) => "sections",
            Request::CodeTokens(_) => "code_tokens",
            Request::Graph(_) => "graph",
            Request::CreateDoc(_) => "create_doc",
            Request::UpdateDoc(_) => "update_doc",
            Request::DeactivateDoc(_) => "deactivate_doc",
            Request::CreateFolder(_) => "create_folder",
            Request::ResolveAsset(_) => "resolve_asset",
            Request::NotePresets => "note_presets",
            Request::Capture(_) => "capture",
            Request::RefactorPlan(_) => "refactor_plan",
            Request::RefactorApply(_) => "refactor_apply",
            Request::VectorSearch(_) => "vsearch",
            Request::Query(_) => "query",
            Request::Diagnose(_) => "diagnose",
            Request::Explain(_) => "explain",
            Request::Similar(_) => "similar",
            Request::ListPresets => "list_presets",
            Request::SetPreset(_) => "set_preset",
            Request::PullModels => "pull_models",
            Request::ModelStatus => "model_status",
            Request::ListChanges(_) => "list_changes",
            Request::ReplayEvents(_) => "replay_events",
            Request::Diff(_) => "diff",
            Request::Impact(_) => "impact",
            Request::Context(_) => "context",
            Request::VerifyContext(_) => "verify_context",
            Request::RegisterCapsule(_) => "register_capsule",
            Request::ListCapsules => "list_capsules",
            Request::RemoveCapsule(_) => "remove_capsule",
            Request::ActiveJob => "active_job",
            Request::Autocomplete(_) => "autocomplete",
            Request::Ask(_) => "ask",
            Request::Audit(_) => "audit",
        }
    }
}

/// The operations that take no argument.
macro_rules! unit_requests {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
            pub struct $name;
        )*
    };
}

unit_requests!(
    /// `GET /api/capabilities`.
    GetCapabilities,
    /// `GET /api/status`.
    GetStatus,
    /// `GET /api/collections`.
    ListCollections,
    /// `GET /api/note-presets`.
    ListNotePresets,
    /// `GET /api/presets`.
    ListPresets,
    /// `POST /api/models/pull`.
    PullModels,
    /// `GET /api/models/status`.
    GetModelStatus,
    /// The capsules registered for re-verification.
    ListCapsules,
    /// The job that runs now, if any.
    GetActiveJob,
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoveCollection {
    pub name: CollectionName,
}

/// A sync of one collection, or of all when `collection` is `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncCollections {
    pub collection: Option<CollectionName>,
    pub git_pull: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetJob {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListTags {
    pub collection: Option<CollectionName>,
    pub prefix: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetDoc {
    pub doc: DocRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Links {
    pub doc: DocRef,
    pub kind: Option<LinkKind>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Backlinks {
    pub doc: DocRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sections {
    pub doc: DocRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeTokens {
    pub doc: DocRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeactivateDoc {
    pub doc: DocRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateFolder {
    pub collection: CollectionName,
    pub name: String,
    pub parent_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolveAsset {
    pub uri: String,
    pub path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRefactor {
    pub doc: DocRef,
    pub op: RefactorOp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApplyRefactor {
    pub doc: DocRef,
    pub op: RefactorOp,
    pub confirm: ApplyConfirmation,
}

/// `POST /api/vsearch`: the body of a keyword search, answered by vector search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorSearch(pub SearchRequest);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnose {
    pub query: QueryRequest,
    pub target: DocRef,
}

/// `GET /api/audit` and `svc audit`: read-only findings over the index and its folders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// Only this collection's documents and folder.
    pub collection: Option<CollectionName>,
    /// Findings of each kind listed at most (1..=[`Audit::MAX_LIMIT`]).
    pub limit: u32,
}

impl Audit {
    /// Findings of each kind listed when a request names no limit.
    pub const DEFAULT_LIMIT: u32 = 100;
    pub const MAX_LIMIT: u32 = 1000;
}

/// `GET /api/explain`: a path on disk or a document's address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Explain {
    /// An absolute path (the CLI makes a relative one absolute against its working folder).
    Path(String),
    /// A `svc://<collection>/<path>` URI.
    Uri(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Similar {
    pub doc: DocRef,
    pub query: SimilarQuery,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetPreset {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayEvents {
    pub after: ChangeCursor,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub doc: DocRef,
    /// The change asked for (its cursor); the document's newest when absent.
    pub change: Option<ChangeCursor>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Impact {
    pub doc: DocRef,
    pub bounds: ImpactBounds,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyContext {
    /// The capsule's JSON as the client sent it.
    pub capsule: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegisterCapsule {
    pub capsule: String,
    pub label: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoveCapsule {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Autocomplete {
    /// Lowercased, trimmed, non-empty.
    pub query: String,
    pub collection: Option<CollectionName>,
    pub limit: u32,
}

/// `POST /api/ask` without `verify`: the reply is an [`crate::api::AskResponse`]. Made by
/// [`AskRequest::into_call`], so its request has no verified settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask(AskRequest);

/// `POST /api/ask` with `verify`: the reply is a [`crate::api::VerifiedAskResponse`]. Made by
/// [`AskRequest::into_call`], so its request has verified settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AskVerified(AskRequest);

/// An ask as the call it makes: its reply type depends on the mode.
#[derive(Debug, Clone, PartialEq)]
pub enum AskCall {
    Raw(Ask),
    Verified(AskVerified),
}

impl AskRequest {
    /// The call this request makes, as its `verified` says.
    pub fn into_call(self) -> AskCall {
        if self.verified.is_some() {
            AskCall::Verified(AskVerified(self))
        } else {
            AskCall::Raw(Ask(self))
        }
    }
}

impl From<Ask> for Request {
    fn from(c: Ask) -> Self {
        Request::Ask(Box::new(c.0))
    }
}

impl From<AskVerified> for Request {
    fn from(c: AskVerified) -> Self {
        Request::Ask(Box::new(c.0))
    }
}

impl From<AskCall> for Request {
    fn from(c: AskCall) -> Self {
        match c {
            AskCall::Raw(a) => a.into(),
            AskCall::Verified(a) => a.into(),
        }
    }
}

/// `POST /api/context`: the reply is the capsule's canonical JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileContext(pub ContextRequest);

impl From<CompileContext> for Request {
    fn from(c: CompileContext) -> Self {
        Request::Context(Box::new(c.0))
    }
}
