//! Timestamps: the one implementation lives in `protocol::time_fmt` (the gateway stamps
//! connector verifications with it too).

pub use protocol::time_fmt::*;
