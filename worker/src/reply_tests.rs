//! Every reply body, end to end through the worker, is its `protocol::api` type: the bytes
//! deserialize into the type and serialize back to the same bytes (nothing is lost or
//! reordered), and error details deserialize into their `*Details` types.

use protocol::api::*;
use protocol::{
    AddCollection, ApiError, ApplyConfirmation, Capture, CollisionPolicy, CreateDoc, DocRef, DocsQuery, GraphQuery,
    JsonBody, QueryRequest, RefactorOp, Request, SearchRequest, UpdateDoc,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::test_worker as worker;

/// The reply as `T`, after checking that `T` carries it byte for byte.
fn reply<T: DeserializeOwned + Serialize>(body: Result<JsonBody, ApiError>) -> T {
    let body = body.unwrap();
    let text = String::from_utf8(body.bytes).unwrap();
    let typed: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(serde_json::to_string(&typed).unwrap(), text, "{}", std::any::type_name::<T>());
    typed
}

/// The error's details as `T`.
fn details<T: DeserializeOwned>(body: Result<JsonBody, ApiError>) -> (ApiError, T) {
    let err = body.expect_err("an error");
    let d = err.details.clone().expect("details");
    (err, serde_json::from_str(&d).unwrap_or_else(|e| panic!("{e}: {d}")))
}

fn name(raw: &str) -> protocol::CollectionName {
    protocol::CollectionName::parse(raw).expect("a valid collection name")
}

fn by_uri(uri: &str) -> DocRef {
    DocRef::Uri(uri.to_string())
}

#[test]
fn every_reply_is_its_protocol_type() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(notes.join("sub")).unwrap();
    std::fs::write(
        notes.join("a.md"),
        "---\ntags: [x, y/z]\ndate: 2024-01-02\n---\n# A\n## One\nsee [[B]] and [c](sub/c.md#top) and [[nowhere]]\n",
    )
    .unwrap();
    std::fs::write(notes.join("b.md"), "# B\nback to [[A|the a note]]\n").unwrap();
    std::fs::write(notes.join("sub/c.md"), "# C\nplain text about apples\n").unwrap();
    let w = worker(dir.path());

    let add = AddCollection { path: notes.display().to_string(), name: Some("n".into()), ..Default::default() };
    let added: CollectionAdded = reply(w.handle(Request::AddCollection(add)));
    w.wait_idle();
    let job: Job = reply(w.handle(Request::GetJob { id: added.job_id }));
    assert_eq!((job.kind, job.status), (JobKind::Add, JobStatus::Completed));
    let list: Vec<CollectionInfo> = reply(w.handle(Request::ListCollections));
    assert_eq!(list[0].name, "n");
    let started: SyncStarted = reply(w.handle(Request::Sync { collection: None, git_pull: None }));
    w.wait_idle();
    let job: Job = reply(w.handle(Request::GetJob { id: started.job_id }));
    assert_eq!(job.kind, JobKind::Sync);
    let _: StatusSnapshot = reply(w.handle(Request::Status));
    let _: Capabilities = reply(w.handle(Request::Capabilities));

    let search = SearchRequest { query: "apples".into(), limit: 5, ..Default::default() };
    let found: SearchResponse = reply(w.handle(Request::Search(search.clone())));
    assert_eq!(found.mode, SearchMode::Bm25);
    let tags: TagsResponse = reply(w.handle(Request::ListTags { collection: None, prefix: Some("y".into()) }));
    assert_eq!(tags.tags[0].tag, "y/z");
    let docs: DocsResponse = reply(w.handle(Request::ListDocs(DocsQuery {
        limit: 10,
        sort_field: protocol::SortField::Modified,
        ..Default::default()
    })));
    assert_eq!(docs.total, 3);
    let a = by_uri("svc://n/a.md");
    let doc: DocResponse = reply(w.handle(Request::GetDoc(a.clone())));
    assert!(doc.source.abs_path.is_some());
    let links: LinksResponse = reply(w.handle(Request::Links { doc: a.clone(), kind: None }));
    assert_eq!(links.meta.total_links, 3);
    assert_eq!(links.meta.resolved_count, 2);
    let anchored = links.links.iter().find(|l| l.link_type == LinkKind::Markdown).unwrap();
    assert_eq!(anchored.target_anchor.as_deref(), Some("top"));
    let _: LinksResponse = reply(w.handle(Request::Links { doc: a.clone(), kind: Some(LinkKind::Wiki) }));
    let back: BacklinksResponse = reply(w.handle(Request::Backlinks { doc: a.clone() }));
    assert_eq!(back.backlinks[0].link_text, "the a note");
    let _: SectionsResponse = reply(w.handle(Request::Sections { doc: a.clone() }));
    let graph: GraphResponse = reply(w.handle(Request::Graph(GraphQuery {
        limit: 10,
        edge_limit: 10,
        include_similar: true,
        ..Default::default()
    })));
    assert!(graph.links.iter().all(|e| matches!(e.weight, EdgeWeight::Count(_))));
    assert_eq!(graph.meta.warnings.len(), 1, "no embeddings: a warning");
    let query = QueryRequest { search: search.clone(), expand: false, no_rerank: true, ..Default::default() };
    let diag: DiagnoseResponse =
        reply(w.handle(Request::Diagnose { query: query.clone(), target: DocRef::Uri("svc://n/sub/c.md".into()) }));
    assert_eq!(diag.stages.len(), 5);
    let missing: DiagnoseResponse =
        reply(w.handle(Request::Diagnose { query, target: DocRef::Docid("#00000000".into()) }));
    assert_eq!(missing.target.status, TargetStatus::NotFound);

    let create = CreateDoc {
        title: Some("New note".into()),
        tags: protocol::Tag::parse_all(&["t"]).unwrap(),
        ..CreateDoc::new(name("n"))
    };
    let created: CreatedDoc = reply(w.handle(Request::CreateDoc(create.clone())));
    assert!(created.job_id.is_some());
    let again = CreateDoc { collision: CollisionPolicy::OpenExisting, ..create };
    let opened: CreatedDoc = reply(w.handle(Request::CreateDoc(again)));
    assert!(opened.opened_existing && opened.job_id.is_none());
    let note = by_uri("svc://n/New note.md");
    let stale = UpdateDoc {
        doc: note.clone(),
        content: Some("x".into()),
        tags: None,
        expected_source_hash: Some("0".repeat(64)),
        expected_modified_at: None,
    };
    let (_, conflict): (_, VersionConflictDetails) = details(w.handle(Request::UpdateDoc(stale)));
    assert_eq!(conflict.current_version.source_hash.len(), 64);
    let updated: UpdatedDoc = reply(w.handle(Request::UpdateDoc(UpdateDoc {
        doc: note.clone(),
        content: None,
        tags: Some(protocol::Tag::parse_all(&["u"]).unwrap()),
        expected_source_hash: None,
        expected_modified_at: None,
    })));
    assert!(updated.success);
    let _: CreatedFolder =
        reply(w.handle(Request::CreateFolder { collection: name("n"), name: "f".into(), parent_path: None }));
    let _: AssetLocation =
        reply(w.handle(Request::ResolveAsset { uri: "svc://n/a.md".into(), path: Some("sub/c.md".into()) }));
    let presets: NotePresetsResponse = reply(w.handle(Request::NotePresets));
    assert!(presets.presets.iter().any(|p| p.frontmatter.kind.is_some()));
    let capture = Capture {
        content: Some("captured".into()),
        source: vec![("kind".into(), "web".into()), ("url".into(), "https://example.com".into())],
        ..Capture::new(name("n"))
    };
    let captured: CaptureResponse = reply(w.handle(Request::Capture(capture.clone())));
    let keys: Vec<&str> = captured.source.0.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["kind", "url", "capturedAt"]);
    let reopened: CaptureResponse = reply(w.handle(Request::Capture(capture)));
    assert_eq!(reopened.collision_policy_result, CollisionPolicyResult::OpenedExisting);
    w.wait_idle();
    let _: DeactivatedDoc = reply(w.handle(Request::DeactivateDoc { doc: note }));

    let rename = RefactorOp::Rename { name: "B2".into() };
    let b = by_uri("svc://n/b.md");
    let plan: RefactorPlan = reply(w.handle(Request::RefactorPlan { doc: b.clone(), op: rename.clone() }));
    assert!(plan.plan.can_apply, "{plan:?}");
    assert_eq!(
        plan.plan_digest,
        crate::index::ingest::sha256_hex(serde_json::to_string(&plan.plan).unwrap().as_bytes())
    );
    let confirm = |digest: &str| ApplyConfirmation {
        plan_digest: Some(digest.to_string()),
        schema_version: Some("1.0".into()),
        confirmation: Some("apply".into()),
    };
    let (_, stale): (_, StalePlanDetails) = details(w.handle(Request::RefactorApply {
        doc: b.clone(),
        op: rename.clone(),
        confirm: confirm(&"0".repeat(64)),
    }));
    assert_eq!(stale.status, RefactorErrorStatus::StalePlan);
    let applied: RefactorApplied =
        reply(w.handle(Request::RefactorApply { doc: b, op: rename, confirm: confirm(&plan.plan_digest) }));
    assert_eq!(applied.status, ApplyStatus::Applied);
    assert_eq!(applied.apply.source, plan.plan.source);

    let models: PresetsResponse = reply(w.handle(Request::ListPresets));
    assert!(models.presets.iter().any(|p| p.active));
    let _: PullStatus = reply(w.handle(Request::ModelStatus));
    let removed: CollectionRemoved = reply(w.handle(Request::RemoveCollection { name: name("n") }));
    assert_eq!(removed.collection, "n");
}
