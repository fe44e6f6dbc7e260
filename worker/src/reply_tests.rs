//! Every reply body, end to end through the worker, is its `protocol::api` type: the bytes
//! deserialize into the type and serialize back to the same bytes (nothing is lost or
//! reordered), and error details deserialize into their `*Details` types.

use protocol::api::*;
use protocol::{
    AddCollection, ApiError, ApplyConfirmation, ApplyRefactor, Backlinks, Call, Capture, CollisionPolicy, CreateDoc,
    CreateFolder, DeactivateDoc, Diagnose, DocRef, DocsQuery, GetCapabilities, GetDoc, GetJob, GetModelStatus,
    GetStatus, GraphQuery, Links, ListCollections, ListNotePresets, ListPresets, ListTags, PlanRefactor, QueryRequest,
    RefactorOp, RemoveCollection, ResolveAsset, SearchRequest, Sections, SyncCollections, UpdateDoc,
};
use serde::de::DeserializeOwned;
use std::sync::Arc;

use crate::{test_worker as worker, Worker};

/// The worker's reply to `call`, as the request's reply type, after checking that the type
/// carries it byte for byte.
fn reply<C: Call>(w: &Arc<Worker>, call: C) -> C::Reply {
    let body = w.handle(call.into()).unwrap();
    let text = String::from_utf8(body.bytes).unwrap();
    let typed: C::Reply = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(serde_json::to_string(&typed).unwrap(), text, "{}", std::any::type_name::<C::Reply>());
    typed
}

/// The error `call` fails with, and its details as `T`.
fn details<T: DeserializeOwned>(w: &Arc<Worker>, call: impl Call) -> (ApiError, T) {
    let err = w.handle(call.into()).expect_err("an error");
    let d = err.details.clone().expect("details");
    (err, serde_json::from_str(&d).unwrap_or_else(|e| panic!("{e}: {d}")))
}

fn name(raw: &str) -> protocol::CollectionName {
    protocol::CollectionName::parse(raw).expect("a valid collection name")
}

fn by_uri(uri: &str) -> DocRef {
    DocRef::Uri(uri.to_string())
}

/// A worker with collection `n` indexed: `a.md` (tags, a date, three links), `b.md` (a
/// backlink to A) and `sub/c.md`.
fn indexed() -> (tempfile::TempDir, Arc<Worker>) {
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
    let added = reply(&w, add);
    w.wait_idle();
    let job = reply(&w, GetJob { id: added.job_id });
    assert_eq!((job.kind, job.status), (JobKind::Add, JobStatus::Completed));
    (dir, w)
}

#[test]
fn collections_jobs_and_status_replies_are_their_types() {
    let (_dir, w) = indexed();
    let list = reply(&w, ListCollections);
    assert_eq!(list[0].name, "n");
    let started = reply(&w, SyncCollections { collection: None, git_pull: None });
    w.wait_idle();
    let job = reply(&w, GetJob { id: started.job_id });
    assert_eq!(job.kind, JobKind::Sync);
    reply(&w, GetStatus);
    reply(&w, GetCapabilities);
    let models = reply(&w, ListPresets);
    assert!(models.presets.iter().any(|p| p.active));
    reply(&w, GetModelStatus);
    let removed = reply(&w, RemoveCollection { name: name("n") });
    assert_eq!(removed.collection, "n");
}

#[test]
fn read_replies_are_their_types() {
    let (_dir, w) = indexed();
    let search = SearchRequest { query: "apples".into(), limit: 5, ..Default::default() };
    let found = reply(&w, search.clone());
    assert_eq!(found.mode, SearchMode::Bm25);
    let tags = reply(&w, ListTags { collection: None, prefix: Some("y".into()) });
    assert_eq!(tags.tags[0].tag, "y/z");
    let docs = reply(&w, DocsQuery { limit: 10, sort_field: protocol::SortField::Modified, ..Default::default() });
    assert_eq!(docs.total, 3);
    let a = by_uri("svc://n/a.md");
    let doc = reply(&w, GetDoc { doc: a.clone() });
    assert!(doc.source.abs_path.is_some());
    let links = reply(&w, Links { doc: a.clone(), kind: None });
    assert_eq!(links.meta.total_links, 3);
    assert_eq!(links.meta.resolved_count, 2);
    let anchored = links.links.iter().find(|l| l.link_type == LinkKind::Markdown).unwrap();
    assert_eq!(anchored.target_anchor.as_deref(), Some("top"));
    reply(&w, Links { doc: a.clone(), kind: Some(LinkKind::Wiki) });
    let back = reply(&w, Backlinks { doc: a.clone() });
    assert_eq!(back.backlinks[0].link_text, "the a note");
    reply(&w, Sections { doc: a.clone() });
    let graph = reply(&w, GraphQuery { limit: 10, edge_limit: 10, include_similar: true, ..Default::default() });
    assert!(graph.links.iter().all(|e| matches!(e.weight, EdgeWeight::Count(_))));
    assert_eq!(graph.meta.warnings.len(), 1, "no embeddings: a warning");
    let query = QueryRequest { search: search.clone(), expand: false, no_rerank: true, ..Default::default() };
    let diag = reply(&w, Diagnose { query: query.clone(), target: DocRef::Uri("svc://n/sub/c.md".into()) });
    assert_eq!(diag.stages.len(), 5);
    let missing = reply(&w, Diagnose { query, target: DocRef::Docid("#00000000".into()) });
    assert_eq!(missing.target.status, TargetStatus::NotFound);
}

#[test]
fn write_replies_and_conflict_details_are_their_types() {
    let (_dir, w) = indexed();
    let create = CreateDoc {
        title: Some("New note".into()),
        tags: protocol::Tag::parse_all(&["t"]).unwrap(),
        ..CreateDoc::new(name("n"))
    };
    let created = reply(&w, create.clone());
    assert!(created.job_id.is_some());
    let again = CreateDoc { collision: CollisionPolicy::OpenExisting, ..create };
    let opened = reply(&w, again);
    assert!(opened.opened_existing && opened.job_id.is_none());
    let note = by_uri("svc://n/New note.md");
    let stale = UpdateDoc {
        doc: note.clone(),
        content: Some("x".into()),
        tags: None,
        expected_source_hash: Some("0".repeat(64)),
        expected_modified_at: None,
    };
    let (_, conflict): (_, VersionConflictDetails) = details(&w, stale);
    assert_eq!(conflict.current_version.source_hash.len(), 64);
    let updated = reply(
        &w,
        UpdateDoc {
            doc: note.clone(),
            content: None,
            tags: Some(protocol::Tag::parse_all(&["u"]).unwrap()),
            expected_source_hash: None,
            expected_modified_at: None,
        },
    );
    assert!(updated.success);
    reply(&w, CreateFolder { collection: name("n"), name: "f".into(), parent_path: None });
    reply(&w, ResolveAsset { uri: "svc://n/a.md".into(), path: Some("sub/c.md".into()) });
    let presets = reply(&w, ListNotePresets);
    assert!(presets.presets.iter().any(|p| p.frontmatter.kind.is_some()));
    let capture = Capture {
        content: Some("captured".into()),
        source: vec![("kind".into(), "web".into()), ("url".into(), "https://example.com".into())],
        ..Capture::new(name("n"))
    };
    let captured = reply(&w, capture.clone());
    let keys: Vec<&str> = captured.source.0.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["kind", "url", "capturedAt"]);
    let reopened = reply(&w, capture);
    assert_eq!(reopened.collision_policy_result, CollisionPolicyResult::OpenedExisting);
    w.wait_idle();
    reply(&w, DeactivateDoc { doc: note });
}

#[test]
fn refactor_replies_and_stale_plan_details_are_their_types() {
    let (_dir, w) = indexed();
    let rename = RefactorOp::Rename { name: "B2".into() };
    let b = by_uri("svc://n/b.md");
    let plan = reply(&w, PlanRefactor { doc: b.clone(), op: rename.clone() });
    assert!(plan.plan.can_apply, "{plan:?}");
    assert_eq!(plan.plan_digest, crate::digest::sha256_hex(serde_json::to_string(&plan.plan).unwrap().as_bytes()));
    let confirm = |digest: &str| ApplyConfirmation {
        plan_digest: Some(digest.to_string()),
        schema_version: Some("1.0".into()),
        confirmation: Some("apply".into()),
    };
    let (_, stale): (_, StalePlanDetails) =
        details(&w, ApplyRefactor { doc: b.clone(), op: rename.clone(), confirm: confirm(&"0".repeat(64)) });
    assert_eq!(stale.status, RefactorErrorStatus::StalePlan);
    let applied = reply(&w, ApplyRefactor { doc: b, op: rename, confirm: confirm(&plan.plan_digest) });
    assert_eq!(applied.status, ApplyStatus::Applied);
    assert_eq!(applied.apply.source, plan.plan.source);
}
