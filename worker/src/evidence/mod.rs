//! Evidence an agent can re-check: Context Capsules (`compile`), their verification
//! (`verify`), saved capsules re-verified after changes (`saved`), and what both rest on: passages and hashes (`identity`), the goal's facets
//! (`facets`), the payload budget (`budget`) and fingerprints (`fingerprint`).

mod budget;
pub mod compile;
pub(crate) mod facets;
mod fingerprint;
mod identity;
pub mod saved;
pub mod verify;
