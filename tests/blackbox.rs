//! Black-box tests: each starts the real `svc` binary on a free port with its own
//! config/data/cache dirs, writes real note folders and calls the HTTP API.
//! One test binary on purpose (link time and memory).

// A test that cannot unwrap has failed: unwrap is the assertion here.
#![allow(clippy::unwrap_used)]

#[path = "blackbox/ask.rs"]
mod ask;
#[path = "blackbox/audit.rs"]
mod audit;
#[path = "blackbox/changes.rs"]
mod changes;
#[path = "blackbox/collections.rs"]
mod collections;
#[path = "blackbox/common.rs"]
mod common;
#[path = "blackbox/content_types.rs"]
mod content_types;
#[path = "blackbox/context.rs"]
mod context;
#[path = "blackbox/convert.rs"]
mod convert;
#[path = "blackbox/faults.rs"]
mod faults;
#[path = "blackbox/folder_rules.rs"]
mod folder_rules;
#[path = "blackbox/hub.rs"]
mod hub;
#[path = "blackbox/indexing.rs"]
mod indexing;
#[path = "blackbox/mcp.rs"]
mod mcp;
#[path = "blackbox/model_server.rs"]
mod model_server;
#[path = "blackbox/models.rs"]
mod models;
#[path = "blackbox/openapi.rs"]
mod openapi;
#[path = "blackbox/pictures.rs"]
mod pictures;
#[path = "blackbox/prepared.rs"]
mod prepared;
#[path = "blackbox/process.rs"]
mod process;
#[path = "blackbox/reads.rs"]
mod reads;
#[path = "blackbox/records.rs"]
mod records;
#[path = "blackbox/recovery.rs"]
mod recovery;
#[path = "blackbox/refactor.rs"]
mod refactor;
#[path = "blackbox/search.rs"]
mod search;
#[path = "blackbox/security.rs"]
mod security;
#[path = "blackbox/setup.rs"]
mod setup;
#[path = "blackbox/skills.rs"]
mod skills;
#[path = "blackbox/team.rs"]
mod team;
#[path = "blackbox/typed.rs"]
mod typed;
#[path = "blackbox/vault.rs"]
mod vault;
#[path = "blackbox/watch.rs"]
mod watch;
#[path = "blackbox/writes.rs"]
mod writes;
