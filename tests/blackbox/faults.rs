//! Hostile files in a notes folder: each is one file's problem, named with its reason in the
//! sync's result, while the rest of the sync completes and stays searchable.

use crate::common::*;
use serde_json::{json, Value};

fn problems(job: &Value) -> Vec<(String, String)> {
    job["result"]["collections"][0]["problems"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| (p["relPath"].as_str().unwrap().to_string(), p["reason"].as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn hostile_files_are_problems_of_their_own_and_the_sync_completes() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(&n, &[("good.md", "# Good\ngoodword stays searchable\n")]);
    // Saved by an old editor in Windows-1252: read with that fallback.
    std::fs::write(n.join("latin.md"), b"# Caf\xe9\nlatinword cr\xe8me br\xfbl\xe9e\n").unwrap();
    // UTF-16 with its byte-order mark.
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("# Wide\nwideword\n".encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
    std::fs::write(n.join("wide.md"), utf16).unwrap();
    // Binary bytes behind a text extension.
    std::fs::write(n.join("binary.md"), [0x7F, b'E', b'L', b'F', 0, 0, 1, 2, 3, 0, 0xFF].repeat(100)).unwrap();
    // 200 MB (sparse: no disk needed), over the 32 MB limit.
    std::fs::File::create(n.join("huge.md")).unwrap().set_len(200 << 20).unwrap();
    // A folder link to its own parent: a loop the walk must not follow forever.
    std::os::unix::fs::symlink(&n, n.join("loop")).unwrap();
    // Not a DOCX at all.
    std::fs::write(n.join("broken.docx"), b"PK\x03\x04 not really a zip").unwrap();
    // A zip bomb: a small archive whose document part says it inflates to 3 GB.
    let mut bomb = testkit::docx(Some("Bomb"), &[(None, "bombword")]);
    testkit::declare_uncompressed_size(&mut bomb, 3_000_000_000);
    std::fs::write(n.join("bomb.docx"), bomb).unwrap();

    let added = s.post("/api/collections", json!({ "path": n, "name": "notes", "include": "**/*.docx" }));
    assert_eq!(added.status, 202, "{}", String::from_utf8_lossy(&added.body));
    let job = s.wait_job(added.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    let listed = problems(&job);
    let reason = |rel: &str| listed.iter().find(|(r, _)| r == rel).map(|(_, why)| why.clone());
    assert!(reason("binary.md").is_some_and(|r| r.contains("binary")), "{job}");
    assert!(reason("huge.md").is_some_and(|r| r.contains("200 MB") && r.contains("limit")), "{job}");
    assert!(reason("broken.docx").is_some(), "{job}");
    assert!(reason("bomb.docx").is_some_and(|r| r.contains("larger than")), "{job}");
    assert_eq!(listed.len(), 4, "{job}");
    let r = &job["result"]["collections"][0];
    assert_eq!(r["filesErrored"], 3, "{job}");
    assert!(uris(&s.search(json!({ "query": "bombword" }))).is_empty());

    assert_eq!(uris(&s.search(json!({ "query": "goodword" }))), vec!["svc://notes/good.md"]);
    assert_eq!(uris(&s.search(json!({ "query": "latinword" }))), vec!["svc://notes/latin.md"]);
    assert_eq!(uris(&s.search(json!({ "query": "wideword" }))), vec!["svc://notes/wide.md"]);
    let latin = s.get("/api/doc?uri=svc://notes/latin.md").json();
    assert!(latin["content"].as_str().unwrap().contains("crème brûlée"), "{latin}");
    assert_eq!(latin["title"], "Café");
    // The loop was not walked into: no note appears twice under another path.
    let st = s.get("/api/status").json();
    assert_eq!(st["totalDocuments"], 3, "{st}");
    // A later sync lists the same problems and changes nothing else.
    let again = s.sync(json!({}));
    assert_eq!(again["status"], "completed");
    assert_eq!(problems(&again).len(), 4, "{again}");
    assert_eq!(again["result"]["totalFilesAdded"], 0, "{again}");
}

/// A small tmpfs mounted for a test, unmounted when dropped. `None` (with the reason printed)
/// where this process may not mount one: not root, or a container without the right.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &std::path::Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(at.to_path_buf())),
            Ok(o) => {
                eprintln!("skipped: cannot mount a tmpfs here ({})", String::from_utf8_lossy(&o.stderr).trim());
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount ({e})");
                None
            }
        }
    }

    /// Fills the file system: a file of every byte left. Returns it (remove it to free space).
    fn fill(&self) -> std::path::PathBuf {
        let filler = self.0.join("filler.bin");
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0xAB_u8; 64 * 1024];
        use std::io::Write;
        while f.write_all(&block).is_ok() {}
        let _ = f.flush();
        while f.write_all(&[0]).is_ok() {}
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_full_notes_folder_refuses_the_write_leaves_nothing_partial_and_recovers() {
    let s = Server::start();
    let n = s.path("notes");
    let Some(fs) = Tmpfs::mount(&n, "2m") else { return };
    write_notes(&n, &[("kept.md", "# Kept\nkeptword original\n")]);
    s.add_collection(&n, "notes");
    let filler = fs.fill();
    let before = names_in(&n);
    let big = format!("# Big\nbigword {}\n", "lorem ipsum ".repeat(20_000));

    let created = s.post("/api/docs", json!({ "collection": "notes", "relPath": "big.md", "content": big }));
    created.assert_error(500, "RUNTIME");
    assert!(created.json()["error"]["message"].as_str().unwrap().contains("space"), "{}", created.json());
    let replaced =
        s.post("/api/docs", json!({ "collection": "notes", "relPath": "kept.md", "content": big, "overwrite": true }));
    replaced.assert_error(500, "RUNTIME");
    assert_eq!(names_in(&n), before, "no temp file or partial note is left");
    assert_eq!(std::fs::read_to_string(n.join("kept.md")).unwrap(), "# Kept\nkeptword original\n");
    assert_eq!(uris(&s.search(json!({ "query": "keptword" }))), vec!["svc://notes/kept.md"]);

    std::fs::remove_file(filler).unwrap();
    let r = s.post("/api/docs", json!({ "collection": "notes", "relPath": "big.md", "content": big }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(uris(&s.search(json!({ "query": "bigword" }))), vec!["svc://notes/big.md"]);
}

#[test]
fn a_full_data_folder_keeps_the_notes_safe_and_catches_up_once_space_is_back() {
    let base = tempfile::tempdir().unwrap();
    let data = base.path().join("data");
    let Some(fs) = Tmpfs::mount(&data, "24m") else { return };
    let s = Server::start_with(&[("SVC_DATA_DIR", data.to_str().unwrap())]);
    let n = s.path("notes");
    write_notes(&n, &[("a.md", "# A\nalphaword\n")]);
    s.add_collection(&n, "notes");
    let filler = fs.fill();

    // Reads go on.
    assert_eq!(uris(&s.search(json!({ "query": "alphaword" }))), vec!["svc://notes/a.md"]);
    // A write reaches the disk (the notes are elsewhere) and says the index could not take it.
    let r = s.post("/api/docs", json!({ "collection": "notes", "relPath": "b.md", "content": "# B\nbetaword\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let note = r.json()["note"].as_str().unwrap().to_string();
    assert!(note.contains("indexing failed") && note.contains("full"), "{note}");
    assert_eq!(std::fs::read_to_string(n.join("b.md")).unwrap(), "# B\nbetaword\n");
    let sync = s.post("/api/sync", json!({}));
    if sync.status == 202 {
        let job = s.wait_job(sync.json()["jobId"].as_str().unwrap());
        assert!(job["status"] == "failed" || job["status"] == "completed", "{job}");
    }
    assert_eq!(s.get("/api/health").status, 200);

    // Space comes back: the note that was written is indexed without a restart or a sync.
    std::fs::remove_file(filler).unwrap();
    s.wait_until(std::time::Duration::from_secs(30), |s| {
        uris(&s.search(json!({ "query": "betaword" }))) == vec!["svc://notes/b.md"]
    });
    let r = s.post("/api/docs", json!({ "collection": "notes", "relPath": "c.md", "content": "# C\ngammaword\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(uris(&s.search(json!({ "query": "gammaword" }))), vec!["svc://notes/c.md"]);
}

/// Another program deletes, truncates and rewrites notes while a sync reads them: every file
/// is either indexed as it was read or a problem of its own, the sync completes, and once the
/// churn stops the index agrees with the disk.
#[test]
fn notes_deleted_or_truncated_while_a_sync_reads_them() {
    const NOTES: usize = 1500;
    let s = Server::start();
    let n = s.path("notes");
    let files: Vec<(String, String)> = (0..NOTES)
        .map(|i| (format!("n{i:04}.md"), format!("# Note {i}\nchurnword{i} {}\n", "text ".repeat(200))))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    write_notes(&n, &refs);
    let added = s.post("/api/collections", json!({ "path": n, "name": "notes", "watch": false }));
    assert_eq!(added.status, 202);
    // The churn runs while the first sync reads the folder.
    let churn_dir = n.clone();
    let churn = std::thread::spawn(move || {
        for round in 0..3 {
            for i in (round..NOTES).step_by(7) {
                let p = churn_dir.join(format!("n{i:04}.md"));
                match i % 3 {
                    0 => {
                        let _ = std::fs::remove_file(&p);
                    }
                    1 => {
                        let _ = std::fs::OpenOptions::new().write(true).open(&p).and_then(|f| f.set_len(3));
                    }
                    _ => {
                        let _ = std::fs::write(&p, format!("# Note {i}\nrewritten{i}\n"));
                    }
                }
            }
        }
    });
    let job = s.wait_job(added.json()["jobId"].as_str().unwrap());
    churn.join().unwrap();
    assert_eq!(job["status"], "completed", "{job}");
    let done = s.sync(json!({}));
    assert_eq!(done["status"], "completed", "{done}");
    let on_disk = std::fs::read_dir(&n).unwrap().count();
    let st = s.get("/api/status").json();
    assert_eq!(st["totalDocuments"], on_disk, "{st}");
    assert_eq!(st["stores"]["keywordDocuments"], on_disk, "{st}");
    for i in (0..NOTES).step_by(50) {
        let p = n.join(format!("n{i:04}.md"));
        let doc = s.get(&format!("/api/doc?uri=svc://notes/n{i:04}.md"));
        match std::fs::read_to_string(&p) {
            Ok(text) => {
                assert_eq!(doc.status, 200, "n{i:04}");
                // The canonical text: one final line break.
                assert_eq!(doc.json()["content"].as_str().unwrap().trim_end(), text.trim_end(), "n{i:04}");
            }
            Err(_) => assert_eq!(doc.status, 404, "n{i:04} was deleted"),
        }
    }
}

/// Makes `path` unwritable: immutable (`chattr +i`) for root, whom permissions do not stop;
/// read-only permissions for anyone else. `false` when neither works here.
fn lock(path: &std::path::Path, locked: bool) -> bool {
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        let flag = if locked { "+i" } else { "-i" };
        return std::process::Command::new("chattr").arg(flag).arg(path).status().is_ok_and(|s| s.success());
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = match (path.is_dir(), locked) {
        (true, true) => 0o555,
        (false, true) => 0o444,
        (true, false) => 0o755,
        (false, false) => 0o644,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).is_ok()
}

#[test]
fn a_read_only_note_or_folder_refuses_the_write_and_works_once_writable() {
    let s = Server::start();
    let n = s.path("notes");
    write_notes(&n, &[("locked.md", "# Locked\nlockedword\n"), ("ro/inside.md", "# Inside\n")]);
    s.add_collection(&n, "notes");
    if !lock(&n.join("locked.md"), true) {
        eprintln!("skipped: cannot make a file unwritable here (chattr +i needs a file system that has it)");
        return;
    }
    let r = s.post(
        "/api/docs",
        json!({ "collection": "notes", "relPath": "locked.md", "content": "# New\n", "overwrite": true }),
    );
    lock(&n.join("locked.md"), false);
    r.assert_error(500, "RUNTIME");
    assert_eq!(std::fs::read_to_string(n.join("locked.md")).unwrap(), "# Locked\nlockedword\n");

    assert!(lock(&n.join("ro"), true));
    let r =
        s.post("/api/docs", json!({ "collection": "notes", "relPath": "ro/new.md", "content": "# New\nnewword\n" }));
    let listed = names_in(&n.join("ro"));
    lock(&n.join("ro"), false);
    r.assert_error(500, "RUNTIME");
    assert_eq!(listed, vec!["inside.md"], "nothing partial is left");
    assert_eq!(names_in(&n), vec!["locked.md", "ro"]);

    // Writable again: the same writes work, without a restart.
    let r =
        s.post("/api/docs", json!({ "collection": "notes", "relPath": "ro/new.md", "content": "# New\nnewword\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let r = s.post(
        "/api/docs",
        json!({ "collection": "notes", "relPath": "locked.md", "content": "# Locked\nfreedword\n", "overwrite": true }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(uris(&s.search(json!({ "query": "freedword" }))), vec!["svc://notes/locked.md"]);
    assert_eq!(uris(&s.search(json!({ "query": "newword" }))), vec!["svc://notes/ro/new.md"]);
}

/// 100,000 notes in one folder: the sync completes, every note is counted and findable, and
/// listing pages through them.
#[test]
fn a_hundred_thousand_notes_in_one_folder() {
    const NOTES: usize = 100_000;
    let s = Server::start();
    let n = s.path("flat");
    std::fs::create_dir_all(&n).unwrap();
    for i in 0..NOTES {
        std::fs::write(n.join(format!("n{i:06}.md")), format!("# N{i}\nflat{i}word\n")).unwrap();
    }
    let added = s.post("/api/collections", json!({ "path": n, "name": "flat", "watch": false }));
    assert_eq!(added.status, 202);
    let job = s.wait_job_within(added.json()["jobId"].as_str().unwrap(), std::time::Duration::from_secs(600));
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["result"]["totalFilesAdded"], NOTES, "{job}");
    let st = s.get("/api/status").json();
    assert_eq!(st["totalDocuments"], NOTES, "{st}");
    assert_eq!(st["stores"]["keywordDocuments"], NOTES, "{st}");
    for i in [0, 4_321, 99_999] {
        assert_eq!(uris(&s.search(json!({ "query": format!("flat{i}word") }))), vec![format!("svc://flat/n{i:06}.md")]);
    }
    let page = s.get("/api/docs?limit=100&offset=99950").json();
    assert_eq!(page["total"], NOTES, "{page}");
    assert_eq!(page["documents"].as_array().map(Vec::len), Some(50), "{page}");
}
