//! Link options for the `svc` binary that make it smaller without changing its code
//! (docs/dependencies.md, "The binary's size"):
//!
//! - `--icf=all`: the linker folds functions whose machine code is identical into one. Generic
//!   code instantiated for many types (LanceDB's and DataFusion's async state machines, their
//!   `drop_in_place`s) often compiles to the same bytes; Rust promises nothing about two
//!   functions' addresses being distinct, so folding them is sound.
//! - `-z pack-relative-relocs` (RELR): the loader's table of pointers to adjust at start, packed
//!   as bitmaps instead of 24 bytes per pointer. Needs glibc 2.36 or newer at run time, so it is
//!   asked for only when the glibc the binary is built against is that new.
//!
//! Both are options of LLVM's linker, which rustc uses for x86-64 Linux since 1.90 (before, it
//! called the system's `cc`, whose GNU ld has no `--icf`). Anything else (another target, an
//! older rustc, a linker chosen in RUSTFLAGS, a cross build) links as before.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if !links_with_rust_lld() {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    if glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this build links through rustc's own LLVM linker (rust-lld).
fn links_with_rust_lld() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native_x86_64_gnu_linux = var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("HOST") == var("TARGET");
    let linker_chosen = var("CARGO_ENCODED_RUSTFLAGS").contains("linker");
    native_x86_64_gnu_linux && !linker_chosen && rustc_minor_version().is_some_and(|minor| minor >= 90)
}

/// The minor version of the rustc building this crate (`rustc 1.95.0 (…)` → 95).
fn rustc_minor_version() -> Option<u32> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

/// Whether the build host's glibc (the one a native build links against) is at least
/// `major.minor`; `getconf GNU_LIBC_VERSION` prints `glibc 2.36`.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|part| part.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}
