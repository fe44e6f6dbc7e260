//! The gateway as a process: what `svc-server internal gateway` (or `svc internal gateway`
//! when `svc-server` is not installed) runs after the supervisor started it.

use protocol::Dirs;

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
    let mcp_writes = std::env::var("SVC_MCP_ENABLE_WRITE").is_ok_and(|v| v == "1" || v == "true");
    rt.block_on(crate::run(crate::GatewayOptions { listener, port, dirs, token, mcp_writes }))
}
