//! Types and framing shared by the gateway and the worker.
//!
//! Requests travel as typed `postcard` frames. Replies carry the JSON body that the
//! gateway returns to the HTTP client: the contract distinguishes absent fields from
//! `null`, which a non-self-describing format cannot round-trip, so the worker
//! serializes the typed response structs of [`api`] to JSON once and the gateway
//! passes the bytes through untouched. [`Call`] pairs each request type with its reply type,
//! and [`Typed`] carries a reply's bytes with that type.

pub mod anchor;
pub mod api;
mod call;
mod cursor;
pub mod dirs;
mod error;
mod frame;
mod ids;
mod messages;
mod requests;
pub mod socket;
pub mod source_kind;
mod tag;
pub mod time_fmt;
pub mod uri;
#[cfg(test)]
mod wire_fingerprint;

pub use call::{Call, Typed};
pub use cursor::ChangeCursor;
pub use dirs::{write_atomic, write_atomic_keeping_permissions, write_file, write_file_unsynced, Dirs};
pub use error::{ApiError, ErrorBody, ErrorCode, ErrorEnvelope, ErrorFamily, InternalErrorDetails};
pub use frame::{read_frame, write_frame, ClientFrame, Event, FrameError, JsonBody, ServerFrame, MAX_FRAME_BYTES};
pub use ids::{CollectionName, InvalidName};
pub use messages::*;
pub use requests::*;
pub use tag::{InvalidTag, Tag};

/// Bumped whenever a frame type changes shape. Both sides refuse a peer with another version.
pub const PROTOCOL_VERSION: u32 = 15;
