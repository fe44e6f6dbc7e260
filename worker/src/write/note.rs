//! What creating a note and capturing one share: the note preset, the tags (the request's,
//! normalized, then the preset's defaults), and placing the file under a collision policy.

use super::atomic;
use super::note_presets::{self, NotePreset};
use crate::paths::{contain, RelPath};
use protocol::{ApiError, CollisionPolicy, Tag};
use std::path::{Path, PathBuf};

/// `create_with_suffix` tries `name-2` up to `name-1000`.
pub const MAX_SUFFIX: u32 = 1000;

/// The note preset a request names, if any (an unknown id is a 400).
pub fn preset(id: Option<&str>) -> Result<Option<&'static NotePreset>, ApiError> {
    id.map(|id| note_presets::find(id).ok_or_else(|| ApiError::validation(format!("Unknown note preset: {id}"))))
        .transpose()
}

/// The request's tags (normalized by parsing), then the preset's defaults not already there.
pub fn tags(requested: &[Tag], preset: Option<&NotePreset>) -> Vec<String> {
    let mut tags: Vec<String> = requested.iter().map(ToString::to_string).collect();
    for t in preset.map(|p| p.default_tags).unwrap_or(&[]) {
        if !tags.iter().any(|x| x == t) {
            tags.push(t.to_string());
        }
    }
    tags
}

/// Where a new note landed.
pub enum Placed {
    /// Written at `rel` (`suffixed` when the policy moved it to `name-N`).
    Written { abs: PathBuf, rel: RelPath, suffixed: bool },
    /// A note exists at `rel` and the policy says to answer with it; nothing was written.
    Existing { abs: PathBuf, rel: RelPath },
}

/// Writes `text` at `rel` under `root` (contained, atomic) as `policy` says when the file
/// exists; `exists` is the 409 of `error` (and of `overwrite` on a folder).
pub fn place(
    root: &Path,
    mut rel: RelPath,
    text: &str,
    policy: CollisionPolicy,
    exists: impl Fn(&RelPath) -> ApiError,
) -> Result<Placed, ApiError> {
    let mut n = 1;
    let mut suffixed = false;
    loop {
        let abs = contain(root, &rel)?;
        if abs.is_dir() {
            return Err(ApiError::conflict(format!("A folder exists at {rel}")));
        }
        match atomic::write_file(&abs, text.as_bytes(), policy == CollisionPolicy::Overwrite) {
            Ok(()) => return Ok(Placed::Written { abs, rel, suffixed }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match policy {
                CollisionPolicy::Error | CollisionPolicy::Overwrite => return Err(exists(&rel)),
                CollisionPolicy::OpenExisting => return Ok(Placed::Existing { abs, rel }),
                CollisionPolicy::CreateWithSuffix => {
                    n += 1;
                    if n > MAX_SUFFIX {
                        return Err(ApiError::conflict("No free file name found"));
                    }
                    rel = rel.with_suffix(n)?;
                    suffixed = true;
                }
            },
            Err(e) => {
                return Err(ApiError::runtime(format!("The note could not be written: {}", crate::errors::io_kind(&e))))
            }
        }
    }
}
