//! The gateway as a process: what `svc-server internal gateway` (or `svc internal gateway`
//! when `svc-server` is not installed) runs after the supervisor started it.

use protocol::Dirs;
use std::path::PathBuf;

/// Runs the gateway on the listening socket the supervisor placed at `listen_fd`, until
/// SIGTERM or SIGINT.
#[allow(unsafe_code)] // see the SAFETY comment inside
pub fn run_inherited(dirs: Dirs, port: u16, listen_fd: i32) -> std::io::Result<()> {
    use std::os::fd::FromRawFd;
    // SAFETY: the supervisor placed a listening TCP socket at this fd before exec; this
    // process owns it from here on.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(listen_fd) };
    // The supervisor cleared close-on-exec so the socket survives the exec into this role;
    // set it again, or every command this process starts (a connector probe) would inherit
    // the port.
    nix::fcntl::fcntl(&listener, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC))?;
    let token = std::env::var("SVC_API_TOKEN").ok();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let pdfjs_dir = pdfjs_dir();
    if pdfjs_dir.is_none() {
        tracing::warn!("pdfjs-dist not found (set SVC_PDFJS_DIR or run `npm ci`); /vendor/pdfjs/* answers 404");
    }
    let mcp_writes = std::env::var("SVC_MCP_ENABLE_WRITE").is_ok_and(|v| v == "1" || v == "true");
    rt.block_on(crate::run(crate::GatewayOptions { listener, port, dirs, token, pdfjs_dir, mcp_writes }))
}

/// The `pdfjs-dist` package: `SVC_PDFJS_DIR`, else `node_modules/pdfjs-dist` next to the
/// repository the binary was built in (`target/<profile>/svc-server`), else in the working dir.
fn pdfjs_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("SVC_PDFJS_DIR") {
        candidates.push(d.into());
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(repo) = exe.parent().and_then(|p| p.parent()).and_then(|p| p.parent()) {
            candidates.push(repo.join("node_modules/pdfjs-dist"));
        }
    }
    candidates.push("node_modules/pdfjs-dist".into());
    candidates.into_iter().find(|c| c.join("build/pdf.worker.min.mjs").is_file())
}
