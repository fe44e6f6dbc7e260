//! `POST /api/capture`: a note with `source:` provenance in its front matter. A capture never
//! replaces a file, not even one that appeared a moment ago; it is indexed in the background.

use super::docs::{collection, file_uri, name_from_title};
use super::note::{self, Placed};
use crate::index::Indexing;
use crate::paths::RelPath;
use crate::stores::catalog::Origin;
use crate::{index::ingest, time_fmt, uri};
use protocol::api::{CaptureEmbed, CaptureResponse, CaptureSync, CaptureSyncStatus, CollisionPolicyResult, StringMap};
use protocol::{ApiError, Capture, CollisionPolicy};
use std::sync::Arc;

fn quoted(v: &str) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "\"\"".to_string())
}

fn front_matter(title: Option<&str>, tags: &[String], source: &[(String, String)]) -> String {
    let mut out = String::from("---\n");
    if let Some(t) = title {
        out.push_str(&format!("title: {}\n", quoted(t)));
    }
    if !tags.is_empty() {
        out.push_str(&format!("tags: [{}]\n", tags.join(", ")));
    }
    out.push_str("source:\n");
    for (k, v) in source {
        out.push_str(&format!("  {k}: {}\n", quoted(v)));
    }
    out.push_str("---\n");
    out
}

pub fn capture(w: &Arc<Indexing>, req: Capture) -> Result<CaptureResponse, ApiError> {
    let _write = w.write_lock();
    let (coll, root) = collection(w, &req.collection)?;
    crate::index::team::require_connected(w, &coll)?;
    let preset = note::preset(req.preset_id.as_deref())?;
    let tags = note::tags(&req.tags, preset);
    let body = match (&req.content, preset) {
        (Some(c), _) => c.clone(),
        (None, Some(p)) => format!("# {}\n\n{}", req.title.as_deref().unwrap_or("Untitled"), p.body()),
        (None, None) => return Err(ApiError::validation("content is required")),
    };
    let content_hash = crate::digest::sha256_hex(ingest::canonicalize(&body).as_bytes());
    let generated = req.rel_path.is_none();
    let rel = match &req.rel_path {
        Some(r) => RelPath::parse(r, "relPath")?,
        None => {
            let folder = match RelPath::parse_folder(req.folder_path.as_deref(), "folderPath")? {
                Some(f) => f,
                None => RelPath::parse(&format!("inbox/{}", &time_fmt::now_iso()[..10]), "folderPath")?,
            };
            let name = match &req.title {
                Some(t) => format!("{}.md", name_from_title(t)),
                None => format!("capture-{}.md", &content_hash[..12]),
            };
            folder.join(&name)?
        }
    };
    if !crate::index::indexer::is_text_note(rel.as_str()) {
        return Err(ApiError::validation("A note's path must end in .md, .markdown or .txt"));
    }
    let policy =
        req.collision.unwrap_or(if generated { CollisionPolicy::OpenExisting } else { CollisionPolicy::Error });
    let captured_at = time_fmt::now_iso();
    let mut source = req.source.clone();
    source.push(("capturedAt".to_string(), captured_at.clone()));
    let text = format!("{}{}", front_matter(req.title.as_deref(), &tags, &source), body);

    let exists = |rel: &RelPath| ApiError::conflict(format!("{rel} already exists; a capture never replaces a file"));
    let (abs, rel, suffixed) = match note::place(&root, rel, &text, policy, exists)? {
        Placed::Written { abs, rel, suffixed } => (abs, rel, suffixed),
        Placed::Existing { abs, rel } => {
            return Ok(CaptureResponse {
                uri: uri::doc_uri(&coll.name, rel.as_str()),
                file_uri: file_uri(&abs),
                collection: coll.name,
                rel_path: rel.as_str().to_string(),
                abs_path: abs.display().to_string(),
                created: false,
                opened_existing: true,
                created_with_suffix: false,
                content_hash,
                source: StringMap(source),
                tags,
                sync: CaptureSync {
                    status: CaptureSyncStatus::Skipped,
                    reason: Some("nothing was written".to_string()),
                    job_id: None,
                },
                embed: CaptureEmbed { status: "not_requested".to_string() },
                collision_policy_result: CollisionPolicyResult::OpenedExisting,
            });
        }
    };
    let job_id = w.spawn_file_sync(coll.clone(), root.clone(), rel.as_str().to_string(), Origin::Create);
    Ok(CaptureResponse {
        uri: uri::doc_uri(&coll.name, rel.as_str()),
        file_uri: file_uri(&abs),
        collection: coll.name,
        rel_path: rel.as_str().to_string(),
        abs_path: abs.display().to_string(),
        created: true,
        opened_existing: false,
        created_with_suffix: suffixed,
        content_hash,
        source: StringMap(source),
        tags,
        sync: CaptureSync { status: CaptureSyncStatus::Pending, reason: None, job_id: Some(job_id) },
        embed: CaptureEmbed { status: "not_requested".to_string() },
        collision_policy_result: if suffixed {
            CollisionPolicyResult::CreatedWithSuffix
        } else {
            CollisionPolicyResult::Created
        },
    })
}
