//! Evidence an agent can re-check: Context Capsules (`compile`), their verification
//! (`verify`), saved capsules re-verified after changes (`saved`), and what they rest on: the
//! retrieval (`gather`), passages and hashes (`identity`), the payload budget (`budget`) and
//! fingerprints (`fingerprint`). The goal's facets are the goal read as a question
//! (`crate::question`).

mod budget;
pub mod compile;
mod fingerprint;
mod gather;
mod identity;
pub mod saved;
pub mod verify;
