//! Evidence an agent can re-check: Context Capsules (`compile`), their verification
//! (`verify`), saved capsules re-verified after changes (`saved`), and what they rest on: the
//! retrieval (`gather`), passages and hashes (`identity`), the goal's facets
//! (`facets`), the payload budget (`budget`) and fingerprints (`fingerprint`).

mod budget;
pub mod compile;
pub(crate) mod facets;
mod fingerprint;
mod gather;
mod identity;
pub mod saved;
pub mod verify;
