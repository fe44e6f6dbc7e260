//! Every request the worker answers, on a catalog whose every table is gone: whatever fails
//! reaches the client without internal text (no SQL, no table names, no paths of the index).
//! The request list is checked against the protocol's variants, so a new request joins the
//! walk or this file does not compile.

use crate::{test_worker, Worker};
use protocol::RefactorOp;
use protocol::{
    AddCollection, ApplyConfirmation, AskRequest, Autocomplete, Backlinks, ChangeCursor, ChangesQuery, ChangesSince,
    CodeTokens, CollectionName, ContextRequest, CreateDoc, CreateFolder, DeactivateDoc, Diagnose, Diff, DocRef,
    DocsQuery, Explain, GetDoc, GetJob, GraphQuery, Impact, ImpactBounds, Links, ListTags, PlanRefactor, QueryRequest,
    RegisterCapsule, RemoveCapsule, RemoveCollection, ReplayEvents, Request, ResolveAsset, SearchRequest, Sections,
    SetPreset, Similar, SimilarQuery, SyncCollections, UpdateDoc, VectorSearch, VerifiedAsk, VerifyContext,
};
use std::sync::Arc;

/// Each variant's place in the walk: exhaustive, so a new request is a compile error here.
fn variant(r: &Request) -> usize {
    match r {
        Request::Capabilities => 0,
        Request::Status => 1,
        Request::ListCollections => 2,
        Request::AddCollection(_) => 3,
        Request::RemoveCollection(_) => 4,
        Request::Sync(_) => 5,
        Request::GetJob(_) => 6,
        Request::Search(_) => 7,
        Request::ListTags(_) => 8,
        Request::ListDocs(_) => 9,
        Request::GetDoc(_) => 10,
        Request::Links(_) => 11,
        Request::Backlinks(_) => 12,
        Request::Sections(_) => 13,
        Request::CodeTokens(_) => 14,
        Request::Graph(_) => 15,
        Request::CreateDoc(_) => 16,
        Request::UpdateDoc(_) => 17,
        Request::DeactivateDoc(_) => 18,
        Request::CreateFolder(_) => 19,
        Request::ResolveAsset(_) => 20,
        Request::NotePresets => 21,
        Request::Capture(_) => 22,
        Request::RefactorPlan(_) => 23,
        Request::RefactorApply(_) => 24,
        Request::VectorSearch(_) => 25,
        Request::Query(_) => 26,
        Request::Diagnose(_) => 27,
        Request::Explain(_) => 28,
        Request::Similar(_) => 29,
        Request::ListPresets => 30,
        Request::SetPreset(_) => 31,
        Request::PullModels => 32,
        Request::ModelStatus => 33,
        Request::ListChanges(_) => 34,
        Request::ReplayEvents(_) => 35,
        Request::Diff(_) => 36,
        Request::Impact(_) => 37,
        Request::Context(_) => 38,
        Request::VerifyContext(_) => 39,
        Request::RegisterCapsule(_) => 40,
        Request::ListCapsules => 41,
        Request::RemoveCapsule(_) => 42,
        Request::ActiveJob => 43,
        Request::Autocomplete(_) => 44,
        Request::Ask(_) => 45,
        Request::Audit(_) => 46,
    }
}
const VARIANTS: usize = 47;

fn name(raw: &str) -> CollectionName {
    CollectionName::parse(raw).expect("a valid collection name")
}

/// One request of every kind, about the collection `n` and its note `a.md`.
fn every_request(notes: &std::path::Path) -> Vec<Request> {
    let a = DocRef::Uri("svc://n/a.md".into());
    let search = SearchRequest { query: "apples".into(), limit: 5, ..Default::default() };
    let query = QueryRequest { search: search.clone(), no_rerank: true, ..Default::default() };
    let rename = RefactorOp::Rename { name: "A2".into() };
    let update = UpdateDoc {
        doc: a.clone(),
        content: Some("changed".into()),
        tags: None,
        expected_source_hash: None,
        expected_modified_at: None,
    };
    let ask = |verified| AskRequest { query: query.clone(), max_answer_tokens: 8, stream: false, verified };
    vec![
        Request::Capabilities,
        Request::Status,
        Request::ListCollections,
        AddCollection { path: notes.display().to_string(), name: Some("m".into()), ..Default::default() }.into(),
        RemoveCollection { name: name("n") }.into(),
        SyncCollections { collection: Some(name("n")), git_pull: None }.into(),
        GetJob { id: "00000000-0000-0000-0000-000000000000".into() }.into(),
        search.clone().into(),
        ListTags { collection: None, prefix: None }.into(),
        DocsQuery { limit: 10, ..Default::default() }.into(),
        GetDoc { doc: a.clone() }.into(),
        Links { doc: a.clone(), kind: None }.into(),
        Backlinks { doc: a.clone() }.into(),
        Sections { doc: a.clone() }.into(),
        Request::CodeTokens(CodeTokens { doc: a.clone() }),
        GraphQuery { limit: 10, edge_limit: 10, ..Default::default() }.into(),
        CreateDoc { title: Some("New".into()), ..CreateDoc::new(name("n")) }.into(),
        update.into(),
        DeactivateDoc { doc: a.clone() }.into(),
        CreateFolder { collection: name("n"), name: "f".into(), parent_path: None }.into(),
        ResolveAsset { uri: "svc://n/a.md".into(), path: Some("b.md".into()) }.into(),
        Request::NotePresets,
        Request::Capture(protocol::Capture { content: Some("c".into()), ..protocol::Capture::new(name("n")) }),
        PlanRefactor { doc: a.clone(), op: rename.clone() }.into(),
        Request::RefactorApply(protocol::ApplyRefactor {
            doc: a.clone(),
            op: rename,
            confirm: ApplyConfirmation { plan_digest: None, schema_version: None, confirmation: None },
        }),
        Request::VectorSearch(VectorSearch(search.clone())),
        query.clone().into(),
        Diagnose { query: query.clone(), target: a.clone() }.into(),
        Request::Explain(Explain::Uri("svc://n/a.md".into())),
        Request::Similar(Similar {
            doc: a.clone(),
            query: SimilarQuery { limit: 5, threshold: 0.0, cross_collection: false },
        }),
        Request::ListPresets,
        Request::SetPreset(SetPreset { id: "small".into() }),
        Request::PullModels,
        Request::ModelStatus,
        Request::ListChanges(ChangesQuery { since: ChangesSince::Start, collection: None, limit: 10 }),
        Request::ReplayEvents(ReplayEvents { after: ChangeCursor(0) }),
        Request::Diff(Diff { doc: a.clone(), change: None }),
        Request::Impact(Impact { doc: a.clone(), bounds: ImpactBounds::DEFAULT }),
        Request::Context(Box::new(ContextRequest {
            goal: "apples".into(),
            query: "apples".into(),
            ..Default::default()
        })),
        Request::VerifyContext(VerifyContext { capsule: "{}".into() }),
        Request::RegisterCapsule(RegisterCapsule { capsule: "{}".into(), label: None }),
        Request::ListCapsules,
        Request::RemoveCapsule(RemoveCapsule { id: "cap_0".into() }),
        Request::ActiveJob,
        Request::Autocomplete(Autocomplete { query: "a".into(), collection: None, limit: 5 }),
        Request::Ask(Box::new(ask(None))),
        Request::Ask(Box::new(ask(Some(VerifiedAsk { budget_tokens: 2000 })))),
        Request::Audit(protocol::Audit { collection: None, limit: 10 }),
    ]
}

/// A worker with the collection `n` (`a.md`, `b.md`) indexed, then every catalog table renamed
/// away: each statement the worker runs from here fails inside SQLite.
fn worker_without_catalog(dir: &std::path::Path) -> Arc<Worker> {
    let notes = dir.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("a.md"), "# A\n\napples and [[b]]\n").unwrap();
    std::fs::write(notes.join("b.md"), "# B\n\npears\n").unwrap();
    let w = test_worker(&dir.join("svc"));
    let add = AddCollection { path: notes.display().to_string(), name: Some("n".into()), ..Default::default() };
    w.handle(add.into()).unwrap();
    w.wait_idle();
    let conn = w.shared.stores.catalog.writer();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(tables.len() > 5, "{tables:?}");
    for t in &tables {
        conn.execute_batch(&format!("ALTER TABLE \"{t}\" RENAME TO \"{t}_gone\"")).unwrap();
    }
    drop(conn);
    w
}

#[test]
fn no_request_lets_internal_text_reach_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker_without_catalog(dir.path());
    let requests = every_request(&dir.path().join("notes"));
    let mut seen: Vec<usize> = requests.iter().map(variant).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, (0..VARIANTS).collect::<Vec<_>>(), "every request kind is walked");
    // The index's own files (catalog, keyword index, vectors) live under the data dir. A model
    // file's path in the cache may be named: it is what the user has to provide.
    let index = dir.path().join("svc/d").display().to_string();
    let mut internal = 0;
    for req in requests {
        let what = req.name();
        let Err(e) = w.handle(req) else { continue };
        let shown = format!("{} {}", e.message, e.details.as_deref().unwrap_or(""));
        for secret in ["no such table", "_gone", "SQL", "sqlite", "rusqlite", index.as_str(), ".rs:"] {
            assert!(!shown.contains(secret), "{what}: {secret:?} reached the client: {shown}");
        }
        internal += usize::from(e.message.starts_with("Internal error"));
    }
    w.wait_idle();
    assert!(internal >= 10, "most requests met the broken catalog ({internal} redacted errors)");
}
