//! The change journal, end to end through the worker: every sync and write records the
//! lifecycle of each document, with structure deltas and never bodies.

use crate::stores::catalog::changes_of;
use crate::Worker;
use protocol::{AddCollection, DocRef, Request, UpdateDoc};
use std::sync::Arc;

use crate::stores::DocKey;
use crate::test_worker as worker;

fn kinds(w: &Worker, id: DocKey) -> Vec<String> {
    changes_of(&w.shared.stores.catalog.reader(), id).unwrap().into_iter().map(|c| c.0).collect()
}

fn row_id(w: &Worker, rel: &str) -> DocKey {
    w.shared
        .stores
        .catalog
        .reader()
        .query_row("SELECT id FROM documents WHERE rel_path = ?1", [rel], |r| r.get(0))
        .unwrap()
}

fn sync(w: &Arc<Worker>) {
    w.handle(protocol::SyncCollections { collection: None, git_pull: None }.into()).unwrap();
    w.wait_idle();
}

#[test]
fn lifecycle_is_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("a.md"), "# A\n## One\nsee [[B]]\n").unwrap();
    let w = worker(dir.path());
    let add = AddCollection { path: notes.display().to_string(), name: Some("n".into()), ..Default::default() };
    w.handle(Request::AddCollection(add)).unwrap();
    w.wait_idle();
    let id = row_id(&w, "a.md");
    assert_eq!(kinds(&w, id), vec!["create"]);

    std::fs::write(notes.join("a.md"), "# A\n## Two\nsee [[C]]\n").unwrap();
    sync(&w);
    let rows = changes_of(&w.shared.stores.catalog.reader(), id).unwrap();
    assert_eq!(rows[1].0, "update");
    let delta: serde_json::Value = serde_json::from_str(&rows[1].4).unwrap();
    assert_eq!(delta["headings"]["added"], serde_json::json!(["Two"]));
    assert_eq!(delta["headings"]["removed"], serde_json::json!(["One"]));
    assert_eq!(delta["links"]["added"], serde_json::json!(["wiki:c"]));
    assert!(!rows[1].3.as_deref().unwrap().contains("see [["), "never bodies");

    std::fs::rename(notes.join("a.md"), notes.join("renamed.md")).unwrap();
    sync(&w);
    assert_eq!(row_id(&w, "renamed.md"), id, "a moved file keeps its row");
    std::fs::remove_file(notes.join("renamed.md")).unwrap();
    sync(&w);
    std::fs::write(notes.join("renamed.md"), "# A\n## Two\nsee [[C]]\n").unwrap();
    sync(&w);
    assert_eq!(kinds(&w, id), vec!["create", "update", "rename", "inactivate", "reactivate"]);

    let docid = w
        .shared
        .stores
        .catalog
        .reader()
        .query_row("SELECT docid FROM documents WHERE id = ?1", [id], |r| r.get::<_, String>(0))
        .unwrap();
    let upd = UpdateDoc {
        doc: DocRef::Docid(docid),
        content: Some("# A\nnew\n".into()),
        tags: None,
        expected_source_hash: None,
        expected_modified_at: None,
    };
    w.handle(Request::UpdateDoc(upd)).unwrap();
    let rows = changes_of(&w.shared.stores.catalog.reader(), id).unwrap();
    assert_eq!((rows[5].0.as_str(), rows[5].1.as_str()), ("update", "save"));
}
