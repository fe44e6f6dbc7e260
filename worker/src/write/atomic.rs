//! Atomic file writes for notes: the one implementation lives in `protocol::dirs`
//! (temp file in the same folder, fsync, rename or link, fsync the folder).

pub use protocol::write_file;
