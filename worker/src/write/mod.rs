//! Writing notes safely. Every write goes through here: the target path is planned and
//! contained (after symlink resolution), the bytes go to a temp file that is fsynced and
//! renamed into place, and then just that file is synced (journal entry, BM25, event), so
//! the note is searchable when the request returns.

pub(crate) mod atomic;
mod capture;
pub(crate) mod docs;
mod front_matter_edit;
mod note;
pub mod note_presets;
pub mod refactor;

pub use capture::capture;
pub use docs::{create_doc, create_folder, deactivate_doc, resolve_asset, update_doc};
