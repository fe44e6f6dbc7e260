//! The write operations: create, update, deactivate, folders, and asset resolution.

use super::note::{self, Placed};
use super::{atomic, front_matter_edit};
use crate::config::CollectionConfig;
use crate::index::indexer::{is_text_note, source_kind, FileSync};
use crate::index::Indexing;
use crate::paths::{contain, RelPath};
use crate::stores::catalog::{self, Origin};
use crate::{time_fmt, uri};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use protocol::api::{
    AssetLocation, CreatedDoc, CreatedFolder, DeactivatedDoc, DocVersion, JobKind, UpdatedDoc, VersionConflictDetails,
};
use protocol::{ApiError, CreateDoc, DocRef, ErrorCode, Tag, UpdateDoc};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Characters a file name built from a title may not hold.
const FORBIDDEN_IN_NAME: &[char] = &['/', '\\', ':', '*', '?', '"', '<', '>', '|', '#', '^', '[', ']'];
/// What a `file://` URI path escapes.
const PATH_ESCAPES: &AsciiSet =
    &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'%').add(b'<').add(b'>').add(b'?').add(b'`').add(b'{').add(b'}');

pub(crate) fn file_uri(abs: &Path) -> String {
    format!("file://{}", utf8_percent_encode(&abs.display().to_string(), PATH_ESCAPES))
}

/// The configured collection and its canonical root.
pub(crate) fn collection(w: &Indexing, name: &str) -> Result<(CollectionConfig, PathBuf), ApiError> {
    w.core.settings.config().with_root(name)
}

fn modified_iso(md: &std::fs::Metadata) -> String {
    time_fmt::ms_to_iso(crate::index::walk::mtime_ns(md) / 1_000_000)
}

/// Indexes the written file and records it as a finished `sync` job; returns the job id
/// and what the sync did.
fn index_after_write(
    w: &Arc<Indexing>,
    coll: &CollectionConfig,
    root: &Path,
    rel: &RelPath,
    origin: Origin,
) -> (String, Result<FileSync, String>) {
    let (result, outcome) = crate::index::collections::sync_one(w, coll, root, rel.as_str(), origin);
    if outcome.is_err() {
        // The note is on disk; the index takes it in once the cause (a full disk, say) is gone.
        w.watchers.retry_later(&coll.name);
    }
    let job_id = w.record_finished_job(JobKind::Sync, outcome.as_ref().map(|_| &result).map_err(|e| e.as_str()));
    (job_id, outcome)
}

pub(super) fn name_from_title(title: &str) -> String {
    let cleaned: String =
        title.trim().chars().map(|c| if FORBIDDEN_IN_NAME.contains(&c) || c.is_control() { '-' } else { c }).collect();
    let cleaned = cleaned.trim_matches(|c: char| c == '.' || c.is_whitespace()).to_string();
    let cut: String = cleaned.chars().take(120).collect();
    if cut.is_empty() {
        "untitled".to_string()
    } else {
        cut
    }
}

pub fn create_doc(w: &Arc<Indexing>, req: CreateDoc) -> Result<CreatedDoc, ApiError> {
    let _write = w.write_lock();
    let (coll, root) = collection(w, &req.collection)?;
    let preset = note::preset(req.preset_id.as_deref())?;
    let tags = note::tags(&req.tags, preset);
    let rel = match (&req.rel_path, &req.title) {
        (Some(r), _) => RelPath::parse(r, "relPath")?,
        (None, title) => {
            let name = format!("{}.md", name_from_title(title.as_deref().unwrap_or("untitled")));
            match RelPath::parse_folder(req.folder_path.as_deref(), "folderPath")? {
                Some(folder) => folder.join(&name)?,
                None => RelPath::parse(&name, "title")?,
            }
        }
    };
    if !is_text_note(rel.as_str()) {
        return Err(ApiError::validation("A note's path must end in .md, .markdown or .txt"));
    }
    let text = match (&req.title, &req.content) {
        (None, None) if preset.is_none() => return Err(ApiError::validation("content is required")),
        (Some(title), content) => {
            let extra: Vec<(String, String)> =
                preset.and_then(|p| p.kind).map(|k| vec![("type".to_string(), k.to_string())]).unwrap_or_default();
            let body = content.clone().unwrap_or_else(|| preset.map(|p| p.body()).unwrap_or_default());
            format!("{}# {}\n\n{body}", front_matter_edit::new_block(None, &tags, &extra), title.trim())
        }
        (None, content) => {
            let body = content.clone().unwrap_or_else(|| preset.map(|p| p.scaffold("Untitled")).unwrap_or_default());
            if tags.is_empty() {
                body
            } else {
                front_matter_edit::set_tags(&body, &tags)
            }
        }
    };
    let exists = |_: &RelPath| ApiError::conflict("File already exists. Set overwrite=true to replace it.");
    crate::index::team::require_connected(w, &coll)?;
    let replaced = if coll.shared { contain(&root, &rel).ok().and_then(|abs| std::fs::read(abs).ok()) } else { None };
    let (abs, rel, suffixed) = match note::place(&root, rel, &text, req.collision, exists)? {
        Placed::Written { abs, rel, suffixed } => {
            // A shared note: acknowledged only once the team's stream holds it; else the
            // file written is taken back (the one it replaced restored).
            match crate::index::team::publish_write(w, &coll, rel.as_str(), text.as_bytes()) {
                Ok(Some(published)) => published.record(w)?,
                Ok(None) => {}
                Err(e) => {
                    let undo = match (&replaced, suffixed) {
                        (Some(old), false) => atomic::write_file(&abs, old, true),
                        _ => std::fs::remove_file(&abs),
                    };
                    if let Err(u) = undo {
                        tracing::error!("a shared note not published could not be taken back: {u}");
                    }
                    return Err(e);
                }
            }
            (abs, rel, suffixed)
        }
        Placed::Existing { abs, rel } => {
            let row = catalog::doc_by_path(&w.core.stores.catalog.reader(), &coll.name, rel.as_str())?;
            return Ok(CreatedDoc {
                uri: file_uri(&abs),
                path: abs.display().to_string(),
                rel_path: rel.as_str().to_string(),
                doc_uri: uri::doc_uri(&coll.name, rel.as_str()),
                docid: row.map(|r| r.docid),
                job_id: None,
                created: false,
                opened_existing: true,
                created_with_suffix: false,
                note: "A note already exists at this path; nothing was written.".to_string(),
            });
        }
    };
    let (job_id, outcome) = index_after_write(w, &coll, &root, &rel, Origin::Create);
    let docid =
        catalog::doc_by_path(&w.core.stores.catalog.reader(), &coll.name, rel.as_str()).ok().flatten().map(|r| r.docid);
    Ok(CreatedDoc {
        uri: file_uri(&abs),
        path: abs.display().to_string(),
        rel_path: rel.as_str().to_string(),
        doc_uri: uri::doc_uri(&coll.name, rel.as_str()),
        docid,
        job_id: Some(job_id),
        created: true,
        opened_existing: false,
        created_with_suffix: suffixed,
        note: match outcome {
            Ok(_) => "Created and indexed; it is searchable now.".to_string(),
            Err(e) => format!("Created, but indexing failed ({e}); svc indexes it once the cause is gone."),
        },
    })
}

pub fn update_doc(w: &Arc<Indexing>, req: UpdateDoc) -> Result<UpdatedDoc, ApiError> {
    if req.content.is_none() && req.tags.is_none() {
        return Err(ApiError::validation("content or tags is required"));
    }
    let tags: Option<Vec<String>> = req.tags.map(|t| t.into_iter().map(Tag::into_string).collect());
    let _write = w.write_lock();
    let row = w.core.resolve_doc(&req.doc)?;
    let (coll, root) = collection(w, &row.collection)?;
    let rel = RelPath::parse(&row.rel_path, "relPath")?;
    if !is_text_note(rel.as_str()) {
        return Err(ApiError::new(
            ErrorCode::Unsupported,
            "This document is converted from another format (PDF, DOCX, a sheet, slides, a web page or mail) and cannot be edited as text",
        ));
    }
    let abs = contain(&root, &rel)?;
    let (bytes, md) = match (std::fs::read(&abs), std::fs::metadata(&abs)) {
        (Ok(b), Ok(m)) => (b, m),
        _ => return Err(ApiError::new(ErrorCode::FileNotFound, "The source file no longer exists")),
    };
    let current_hash = crate::digest::sha256_hex(&bytes);
    let current_modified = modified_iso(&md);
    let hash_stale = req.expected_source_hash.as_deref().is_some_and(|h| !h.eq_ignore_ascii_case(&current_hash));
    let time_stale = req
        .expected_modified_at
        .as_deref()
        .is_some_and(|t| time_fmt::iso_to_ms(t) != time_fmt::iso_to_ms(&current_modified));
    if hash_stale || time_stale {
        return Err(ApiError::conflict("Document changed on disk. Reload before saving.").with_details(
            VersionConflictDetails {
                current_version: DocVersion { source_hash: current_hash, modified_at: current_modified },
            },
        ));
    }
    let base = match req.content {
        Some(c) => c,
        None => String::from_utf8(bytes)
            .map_err(|_| ApiError::validation("The file is not UTF-8 text; send content to replace it"))?,
    };
    let text = match &tags {
        Some(t) => front_matter_edit::set_tags(&base, t),
        None => base,
    };
    // A shared note: the team's stream holds it first (409 when another member saved it
    // since the version this replica holds).
    let published = crate::index::team::publish_write(w, &coll, rel.as_str(), text.as_bytes())?;
    atomic::write_file(&abs, text.as_bytes(), true)
        .map_err(|e| ApiError::runtime(format!("The note could not be written: {}", crate::errors::io_kind(&e))))?;
    if let Some(published) = published {
        published.record(w)?;
    }
    let (job_id, _) = index_after_write(w, &coll, &root, &rel, Origin::Save);
    let md = std::fs::metadata(&abs).map_err(crate::errors::internal)?;
    let new_hash = crate::digest::sha256_hex(text.as_bytes());
    Ok(UpdatedDoc {
        success: true,
        doc_id: catalog::docid_of(&new_hash),
        uri: file_uri(&abs),
        doc_uri: uri::doc_uri(&coll.name, rel.as_str()),
        path: abs.display().to_string(),
        rel_path: rel.as_str().to_string(),
        job_id,
        version: DocVersion { source_hash: new_hash, modified_at: modified_iso(&md) },
    })
}

pub fn deactivate_doc(w: &Arc<Indexing>, doc: &DocRef) -> Result<DeactivatedDoc, ApiError> {
    let _write = w.write_lock();
    let row = w.core.resolve_doc(doc)?;
    w.indexer().deactivate_now(&row.collection, &[row.id], Origin::Save)?;
    w.after_job();
    let path = w
        .core
        .settings
        .config()
        .find(&row.collection)
        .map(|c| Path::new(&c.path).join(row.file_rel()).display().to_string());
    Ok(DeactivatedDoc {
        success: true,
        doc_id: row.docid,
        path,
        warning: "The document left the index, but its file stays on disk: the next sync indexes it again unless the collection excludes it."
            .to_string(),
    })
}

pub fn create_folder(
    w: &Arc<Indexing>,
    collection_name: &str,
    name: &str,
    parent: Option<&str>,
) -> Result<CreatedFolder, ApiError> {
    let _write = w.write_lock();
    let (coll, root) = collection(w, collection_name)?;
    if name.contains('/') {
        return Err(ApiError::validation("name is one folder name, without '/'"));
    }
    let rel = match RelPath::parse_folder(parent, "parentPath")? {
        Some(p) => p.join(name)?,
        None => RelPath::parse(name, "name")?,
    };
    let abs = contain(&root, &rel)?;
    if abs.exists() {
        return Err(ApiError::conflict(format!("{rel} already exists")));
    }
    std::fs::create_dir_all(&abs)
        .map_err(|e| ApiError::runtime(format!("The folder could not be created: {}", crate::errors::io_kind(&e))))?;
    Ok(CreatedFolder {
        success: true,
        collection: coll.name,
        folder_path: rel.as_str().to_string(),
        path: abs.display().to_string(),
    })
}

/// Lexically joins `path` (relative to the note's folder) and refuses a result above the root.
fn relative_to_note(note_rel: &str, path: &str) -> Result<RelPath, ApiError> {
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return Err(ApiError::validation("path must be relative to the note, without '\\\\' or NUL"));
    }
    let mut segs: Vec<&str> = note_rel.split('/').collect();
    segs.pop();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                if segs.pop().is_none() {
                    return Err(ApiError::validation("path points outside the collection"));
                }
            }
            other => segs.push(other),
        }
    }
    RelPath::parse(&segs.join("/"), "path")
}

/// `GET /api/doc-asset`: the file a `svc://` URI names (a note or any other file inside the
/// collection, indexed or not; for a part of a file, that file), or the file at `path`
/// relative to that file's folder.
/// Contained after following symlinks; folders that are never indexed are never served.
pub fn resolve_asset(w: &Arc<Indexing>, asset_uri: &str, path: Option<&str>) -> Result<AssetLocation, ApiError> {
    let (collection_name, uri_rel) =
        uri::parse_uri(asset_uri).ok_or_else(|| ApiError::validation("uri must be a svc://<collection>/<path> URI"))?;
    let (_, root) = collection(w, &collection_name)?;
    // A part of a file (a mailbox's message) is served as that file, its paths beside it.
    let part_of =
        catalog::any_doc_by_path(&w.core.stores.catalog.reader(), &collection_name, &uri_rel)?.and_then(|d| d.part_of);
    let base = part_of.unwrap_or(uri_rel);
    let rel = match path {
        Some(p) => relative_to_note(&base, p)?,
        None => RelPath::parse(&base, "uri")?,
    };
    if rel.as_str().split('/').any(|seg| crate::index::rules::NEVER_NOTES.contains(&seg)) {
        return Err(ApiError::not_found("Asset not found"));
    }
    let abs = contain(&root, &rel)?;
    let md = std::fs::metadata(&abs).map_err(|_| ApiError::not_found("Asset not found"))?;
    if !md.is_file() {
        return Err(ApiError::not_found("Asset not found"));
    }
    let mime = match source_kind(rel.as_str()) {
        Some(_) => crate::index::reading::mime_and_ext(rel.as_str()).0,
        None => mime_guess::from_path(&abs).first_or_octet_stream().essence_str().to_string(),
    };
    Ok(AssetLocation { abs_path: abs.display().to_string(), mime, size: md.len(), name: rel.file_name().to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_become_safe_names() {
        assert_eq!(name_from_title("  My: Note / 2?  "), "My- Note - 2-");
        assert_eq!(name_from_title("..."), "untitled");
        assert_eq!(name_from_title(""), "untitled");
    }

    #[test]
    fn asset_paths_stay_inside() {
        assert_eq!(relative_to_note("a/b/n.md", "img/x.png").unwrap().as_str(), "a/b/img/x.png");
        assert_eq!(relative_to_note("a/b/n.md", "../../x.png").unwrap().as_str(), "x.png");
        assert!(relative_to_note("a/n.md", "../../x.png").is_err());
        assert!(relative_to_note("n.md", "/etc/passwd").is_err());
        assert!(relative_to_note("n.md", "a\\b").is_err());
    }

    #[test]
    fn file_uris_escape_spaces_and_hashes() {
        assert_eq!(file_uri(Path::new("/tmp/a b/#1.md")), "file:///tmp/a%20b/%231.md");
    }
}
