//! Links an older parser stored, parsed again when the worker opens the catalog
//! (`index::relink`), on a worker's real catalog.

use crate::index::relink::bring_up_to_date;
use crate::stores::catalog;

#[test]
fn links_of_an_older_parser_are_parsed_again_once() {
    let dir = tempfile::tempdir().unwrap();
    let w = crate::app::test_worker_with_notes(dir.path(), &[("a.md", "# A\n![[B]] and [[#A]]\n"), ("B.md", "# B\n")]);
    let catalog = &w.shared.stores.catalog;
    let conn = catalog.writer();
    let a = catalog::active_docs(&conn, None).unwrap().into_iter().find(|d| d.rel_path == "a.md").unwrap();
    assert_eq!(catalog::links_of(&conn, a.id).unwrap().len(), 2, "this parser's links");
    // As an older svc left them: no embed, no same-note link, no version.
    let mut old = catalog::links_of(&conn, a.id).unwrap()[0].link.clone();
    old.embed = false;
    catalog::replace_links(&conn, a.id, &[old]).unwrap();
    conn.execute("DELETE FROM meta WHERE key = 'links_version'", []).unwrap();
    drop(conn);
    assert_eq!(bring_up_to_date(catalog).unwrap(), 2);
    let links = catalog::links_of(&catalog.reader(), a.id).unwrap();
    assert_eq!(links.len(), 2);
    assert!(links[0].embed);
    assert_eq!(bring_up_to_date(catalog).unwrap(), 0, "once");
}
