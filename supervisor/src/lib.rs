//! The supervisor: a tiny process that owns the listening port and the pidfile, spawns the
//! gateway and the worker, and restarts either one when it dies, hangs or bloats.

mod children;
mod pidfile;
mod probe;

pub use pidfile::{read_running, signal_target, PidInfo};

use protocol::Dirs;
use std::net::TcpListener;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    #[error("svc is already running for data dir {dir} (pid {pid})")]
    AlreadyRunning { dir: String, pid: String },
    #[error("port {0} is already in use on 127.0.0.1")]
    PortInUse(u16),
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("the server did not become healthy; see {0}")]
    NotHealthy(String),
    #[error("{0}")]
    Sys(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SupervisorError {
    let what = what.into();
    move |source| SupervisorError::Io { what, source }
}

pub struct ServeOptions {
    pub port: u16,
    pub detach: bool,
    pub dirs: Dirs,
    /// The binary started as `<exe> internal gateway`: `svc-server`, which links no index
    /// code, or `svc` itself when `svc-server` is not installed beside it.
    pub gateway_exe: PathBuf,
    /// The binary started as `<exe> internal worker`: `svc`.
    pub worker_exe: PathBuf,
}

/// The lean binary of the supervisor and the gateway, installed beside `svc`.
pub const SERVER_BIN: &str = "svc-server";

/// Logs to stderr at `default` level unless `SVC_LOG` says otherwise (every role). LanceDB's
/// own `info` lines (a query plan per vector search) are left out by default.
pub fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SVC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("{default},lance=warn,lancedb=warn")));
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs `svc serve`. Returns once the server has stopped (or, with `detach`, once it
/// answers `/api/health` in the background).
pub fn serve(opts: ServeOptions) -> Result<(), SupervisorError> {
    std::fs::create_dir_all(opts.dirs.index_dir()).map_err(io("cannot create the data dir"))?;
    let lock = pidfile::acquire(&opts.dirs)?;
    let listener = TcpListener::bind(("127.0.0.1", opts.port)).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => SupervisorError::PortInUse(opts.port),
        _ => SupervisorError::Bind { port: opts.port, source: e },
    })?;
    let port = listener.local_addr().map_err(io("cannot read the bound port"))?.port();
    let url = format!("http://127.0.0.1:{port}");

    if opts.detach {
        let log = opts.dirs.log_dir().join("svc.log");
        match daemonize(&opts.dirs)? {
            Fork::Parent(child) => {
                drop(listener);
                // Dropping a `Flock` unlocks the file description the child shares; the
                // parent only closes its copy of the fd, so the child keeps the lock.
                std::mem::forget(lock);
                if probe::wait_ready(port, std::time::Duration::from_secs(60)) {
                    println!("svc is serving {url} (pid {child})");
                    println!("logs: {}", log.display());
                    return Ok(());
                }
                return Err(SupervisorError::NotHealthy(log.display().to_string()));
            }
            Fork::Child => {}
        }
    }
    let mut lock = lock;
    pidfile::write(&mut lock, &PidInfo { pid: std::process::id(), port, url: url.clone() })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("cannot start the supervisor runtime"))?;
    if !opts.detach {
        eprintln!("svc serving {url} (data: {})", opts.dirs.index_dir().display());
    }
    let result = rt.block_on(children::supervise(opts, listener, port));
    pidfile::clear(&mut lock);
    result
}

enum Fork {
    Parent(i32),
    Child,
}

/// Forks; the child starts a new session and writes its output to `<data>/logs/svc.log`.
#[allow(unsafe_code)] // see the SAFETY comment inside
fn daemonize(dirs: &Dirs) -> Result<Fork, SupervisorError> {
    use nix::unistd::{dup2_stderr, dup2_stdin, dup2_stdout, fork, setsid, ForkResult};
    std::fs::create_dir_all(dirs.log_dir()).map_err(io("cannot create the log dir"))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dirs.log_dir().join("svc.log"))
        .map_err(io("cannot open the log file"))?;
    let null = std::fs::File::open("/dev/null").map_err(io("cannot open /dev/null"))?;
    // SAFETY: no threads exist yet (the runtime starts after this), so fork is sound.
    match unsafe { fork() }.map_err(|e| SupervisorError::Sys(format!("fork failed: {e}")))? {
        ForkResult::Parent { child } => Ok(Fork::Parent(child.as_raw())),
        ForkResult::Child => {
            let _ = setsid();
            let _ = dup2_stdin(&null);
            let _ = dup2_stdout(&log);
            let _ = dup2_stderr(&log);
            Ok(Fork::Child)
        }
    }
}
