//! The worker: owns the catalog, the BM25 index and the jobs, and answers the gateway's
//! requests over the local socket. Nothing else opens the stores.

// The layers, from the ground up (docs/architecture.md draws them): plain helpers and the
// question as read (`question`); the stores; the settings
// and the events; the models; what the layers share (`shared`); the index; retrieval; the
// reads and the evidence; answers and writes. `app` is the composition root: it builds each
// layer's state and wires them, and with `dispatch` (each request to its handler), `status`
// and `server` it is the only code that sees the whole worker.
mod answer;
mod app;
mod background;
mod config;
mod digest;
mod dispatch;
mod errors;
mod events;
mod evidence;
pub mod index;
#[cfg(test)]
mod journal_tests;
mod model_api;
pub mod models;
mod paths;
mod question;
mod reads;
#[cfg(test)]
mod redaction_tests;
#[cfg(test)]
mod relink_tests;
#[cfg(test)]
mod reply_tests;
mod retrieval;
mod server;
mod shared;
mod status;
mod stores;
mod time_fmt;
mod uri;
mod write;

pub use app::{Worker, WorkerError};
pub use models::generator::Flow;
pub use server::serve;

#[cfg(test)]
pub(crate) use app::{test_hits, test_worker, test_worker_with_notes};
