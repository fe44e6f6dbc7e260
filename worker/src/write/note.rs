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
    let original = rel.clone();
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
                    // Each try suffixes the name asked for (`note-3`, not `note-2-3`).
                    rel = original.with_suffix(n)?;
                    suffixed = true;
                }
            },
            // A name this file system refuses (too long with its suffix, say) is the
            // request's to change, not the server's failure.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => {
                return Err(ApiError::validation(format!("{rel}: not a file name this folder accepts")))
            }
            Err(e) => {
                return Err(ApiError::runtime(format!("The note could not be written: {}", crate::errors::io_kind(&e))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(placed: Placed) -> String {
        match placed {
            Placed::Written { rel, .. } => rel.as_str().to_string(),
            Placed::Existing { rel, .. } => panic!("{rel} exists"),
        }
    }

    #[test]
    fn each_collision_suffixes_the_name_asked_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("root");
        let rel = || RelPath::parse("inbox/note.md", "relPath").expect("rel");
        let place_one = || {
            place(&root, rel(), "# Note\n", CollisionPolicy::CreateWithSuffix, |r| ApiError::conflict(r.to_string()))
        };
        std::fs::create_dir_all(root.join("inbox")).expect("inbox");
        let names: Vec<String> = (0..4).map(|_| written(place_one().expect("placed"))).collect();
        assert_eq!(names, ["inbox/note.md", "inbox/note-2.md", "inbox/note-3.md", "inbox/note-4.md"]);
    }

    #[test]
    fn a_name_too_long_for_the_folder_is_the_requests_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("root");
        // 255 bytes: a valid segment, until a collision suffixes it past the file system's limit.
        let name = format!("{}.md", "n".repeat(252));
        let rel = RelPath::parse(&name, "relPath").expect("rel");
        let conflict = |r: &RelPath| ApiError::conflict(r.to_string());
        written(place(&root, rel.clone(), "x", CollisionPolicy::CreateWithSuffix, conflict).expect("first"));
        let err = place(&root, rel, "x", CollisionPolicy::CreateWithSuffix, conflict).err().expect("refused");
        assert_eq!(err.code, protocol::ErrorCode::Validation, "{err:?}");
    }
}
