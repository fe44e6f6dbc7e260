//! What `scripts/test` prepares for the tests of local models, found without variables: the
//! test models in `$SVC_TEST_MODELS`, else this checkout's `target/test-models`; ONNX Runtime
//! from `$ORT_DYLIB_PATH`, else this checkout's `.venv`; llama.cpp's server from
//! `$SVC_LLAMA_SERVER`, else `target/llama-tools/bin/llama-server`; `svc-server` beside `svc`.
//!
//! A test that needs one of them that is not there (a fresh clone where only `cargo test` ran)
//! writes one line saying so to the terminal, past the test harness's capture, and stops.
//! `scripts/test` prepares them all and sets `SVC_TEST_REQUIRE_MODELS`: there a missing one
//! fails the test instead, so the suite never passes without them.

use std::io::Write;
use std::path::{Path, PathBuf};

/// This checkout.
fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `$var`, else `fallback` when it exists.
fn found(var: &str, fallback: Option<PathBuf>) -> Option<PathBuf> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(v) => Some(PathBuf::from(v)),
        None => fallback.filter(|p| p.exists()),
    }
}

/// The test models' folder (its `tiny/`, `cache/`, `real-embed/`).
pub fn test_models_dir() -> Option<PathBuf> {
    found("SVC_TEST_MODELS", Some(checkout().join("target/test-models")))
        .filter(|d| d.join("tiny/embed/model.onnx").is_file())
}

/// ONNX Runtime's library, as `scripts/ort-env` installs it.
pub fn ort_library() -> Option<PathBuf> {
    let venv = std::fs::read_dir(checkout().join(".venv/lib")).ok().and_then(|pythons| {
        pythons.flatten().find_map(|python| {
            let capi = python.path().join("site-packages/onnxruntime/capi");
            let mut libs: Vec<PathBuf> = std::fs::read_dir(capi)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so.")))
                .collect();
            libs.sort();
            libs.pop()
        })
    });
    found("ORT_DYLIB_PATH", venv)
}

/// llama.cpp's own server, as `scripts/llama-tools` builds it.
pub fn llama_server() -> Option<PathBuf> {
    found("SVC_LLAMA_SERVER", Some(checkout().join("target/llama-tools/bin/llama-server")))
}

/// Whether the test models and ONNX Runtime are prepared. When not, says why the test `test`
/// stops (or fails it, under `scripts/test`).
pub fn models(test: &str) -> bool {
    prepared(test, &[("the test models", test_models_dir()), ("ONNX Runtime", ort_library())])
}

/// [`models`], and llama.cpp's server too.
pub fn models_and_llama_server(test: &str) -> bool {
    prepared(
        test,
        &[("the test models", test_models_dir()), ("ONNX Runtime", ort_library()), ("llama-server", llama_server())],
    )
}

/// Whether `svc-server` was built beside `svc` (`cargo build --workspace --bins`, as
/// `scripts/test` does: `cargo test` builds a package's own binaries only).
pub fn lean_server(test: &str) -> bool {
    let lean = Path::new(crate::common::BIN).with_file_name("svc-server");
    prepared(test, &[("svc-server beside svc", lean.is_file().then_some(lean))])
}

fn prepared(test: &str, needs: &[(&str, Option<PathBuf>)]) -> bool {
    let missing: Vec<&str> = needs.iter().filter(|(_, p)| p.is_none()).map(|(what, _)| *what).collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!("{}: not prepared (scripts/test prepares them)", missing.join(", "));
    assert!(std::env::var_os("SVC_TEST_REQUIRE_MODELS").is_none(), "{test}: {why}");
    // Past the harness's capture: a skipped test is seen, never a silent pass.
    let _ = writeln!(std::io::stderr(), "skipped {test}: {why}");
    false
}
