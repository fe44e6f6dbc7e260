//! Keeping the gateway and the worker alive.

use crate::probe::{self, Probe};
use crate::{ServeOptions, SupervisorError};
use protocol::api::WorkerFailure;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

/// The fd number at which the gateway finds the listening socket.
pub const LISTEN_FD: i32 = 3;
const HEARTBEAT: Duration = Duration::from_secs(2);
const MISSES_BEFORE_HUNG: u32 = 3;
/// A child that is not listening yet is not counted as hung before this (a worker that
/// listens but does not answer is counted at once).
const START_GRACE: Duration = Duration::from_secs(60);
const BACKOFF_START: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// A run this long was a healthy one: the next restart pauses [`BACKOFF_START`] again. The
/// soak kills the worker every 15 s; with a minute here, its restarts paused 5 s each.
const HEALTHY_RESET: Duration = Duration::from_secs(10);
/// How long a child gets to stop after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(8);
/// Starts in a row that never answered before the worker counts as failed (it is still
/// tried again at the backoff's pace: the cause may go away by itself, as an index another
/// process holds does).
const START_LIMIT: u32 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Gateway,
    Worker,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Gateway => "gateway",
            Kind::Worker => "worker",
        }
    }

    fn rss_limit_bytes(self) -> u64 {
        let (var, default_mb) = match self {
            Kind::Gateway => ("SVC_GATEWAY_MAX_RSS_MB", 1024),
            Kind::Worker => ("SVC_WORKER_MAX_RSS_MB", 8192),
        };
        limit_bytes(std::env::var(var).ok().as_deref(), default_mb)
    }
}

/// A memory ceiling in bytes: the variable's MB when it is a number, else the default.
fn limit_bytes(var: Option<&str>, default_mb: u64) -> u64 {
    var.and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(default_mb) * 1024 * 1024
}

/// What the heartbeats of one child have found so far.
#[derive(Debug, Default)]
struct Heartbeat {
    misses: u32,
    /// The child answered at least once.
    answered: bool,
}

impl Heartbeat {
    /// Takes one probe `since_start` after the spawn; true when the child counts as hung.
    /// A child that is not listening yet gets [`START_GRACE`]; one that listens but does not
    /// answer, or stops answering after it did, misses a beat; [`MISSES_BEFORE_HUNG`] in a
    /// row is a hang. An answer forgives the misses.
    fn observe(&mut self, found: Probe, since_start: Duration) -> bool {
        if found == Probe::Alive {
            self.misses = 0;
            self.answered = true;
        } else if self.answered || found == Probe::Unresponsive || since_start > START_GRACE {
            self.misses += 1;
        }
        self.misses >= MISSES_BEFORE_HUNG
    }
}

/// The pause before a restart: doubling from [`BACKOFF_START`] to [`BACKOFF_MAX`], back to
/// the start after a run that lasted [`HEALTHY_RESET`].
#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Backoff(BACKOFF_START)
    }

    /// The pause after a run of `ran`; the next one doubles.
    fn after(&mut self, ran: Duration) -> Duration {
        if ran > HEALTHY_RESET {
            self.0 = BACKOFF_START;
        }
        let pause = self.0;
        self.0 = (self.0 * 2).min(BACKOFF_MAX);
        pause
    }
}

/// Starts in a row whose child never answered.
#[derive(Debug, Default)]
struct StartFailures(u32);

impl StartFailures {
    /// Counts one run (`answered`: the child answered a heartbeat, which resets the count);
    /// whether the child now counts as failed.
    fn after(&mut self, answered: bool) -> bool {
        self.0 = if answered { 0 } else { self.0 + 1 };
        self.0 >= START_LIMIT
    }
}

/// Where a worker that keeps failing to start is recorded for the gateway (`/api/status`, the
/// 503 message): the worker's own last words, and the supervisor's record.
struct FailureRecord {
    start_error: PathBuf,
    record: PathBuf,
}

impl FailureRecord {
    fn write(&self, attempts: u32, exit: &str, retry: Duration) {
        let reason = std::fs::read_to_string(&self.start_error)
            .ok()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| exit.to_string());
        let failure = WorkerFailure { reason, attempts, retry_interval_ms: retry.as_millis() as u64 };
        if let Ok(bytes) = serde_json::to_vec(&failure) {
            if let Err(e) = protocol::write_atomic(&self.record, &bytes) {
                tracing::warn!("could not record the worker's failure: {e}");
            }
        }
    }

    fn clear(&self) {
        let _ = std::fs::remove_file(&self.record);
    }
}

/// The worker's glibc malloc heaps (`MALLOC_ARENA_MAX`, unless the user set it). By default
/// glibc gives threads that allocate at once heaps of their own, up to eight per core, and a
/// heap keeps much of what was freed in it: with OCR reading a picture's lines on a thread per
/// core, the worker held 1.2-1.3 GB after 50 pictures against 0.6 GB with one thread, and
/// with two heaps 0.4-0.6 GB at the same speed (docs/ocr.md).
const WORKER_MALLOC_ARENAS: &str = "2";

struct Spec {
    kind: Kind,
    exe: PathBuf,
    port: u16,
    socket: PathBuf,
    listen_fd: i32,
    /// The worker's: a start limit with a recorded failed state.
    failure: Option<FailureRecord>,
}

impl Spec {
    #[allow(unsafe_code)] // see the SAFETY comment inside
    fn spawn(&self) -> std::io::Result<Child> {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("internal").arg(self.kind.name()).kill_on_drop(true);
        let listen_fd = self.listen_fd;
        let is_gateway = self.kind == Kind::Gateway;
        if is_gateway {
            cmd.arg("--port").arg(self.port.to_string()).arg("--listen-fd").arg(LISTEN_FD.to_string());
        }
        if self.kind == Kind::Worker && std::env::var_os("MALLOC_ARENA_MAX").is_none() {
            cmd.env("MALLOC_ARENA_MAX", WORKER_MALLOC_ARENAS);
        }
        // SAFETY: only async-signal-safe calls (dup2, prctl) run between fork and exec.
        unsafe {
            cmd.as_std_mut().pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // dup2 clears close-on-exec on the copy; when the fd already is 3, clear it by hand.
                if is_gateway && (libc::dup2(listen_fd, LISTEN_FD) < 0 || libc::fcntl(LISTEN_FD, libc::F_SETFD, 0) < 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn()
    }

    async fn probe(&self) -> Probe {
        match self.kind {
            Kind::Gateway => probe::gateway(self.port).await,
            Kind::Worker => probe::worker(&self.socket).await,
        }
    }
}

fn rss_bytes(sys: &mut sysinfo::System, pid: u32) -> u64 {
    let pid = sysinfo::Pid::from_u32(pid);
    sys.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[pid]), true);
    sys.process(pid).map(|p| p.memory()).unwrap_or(0)
}

/// Sends SIGTERM, waits up to [`STOP_GRACE`], then SIGKILL.
async fn stop(child: &mut Child) {
    if let Some(pid) = child.id().and_then(crate::signal_target) {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    }
    if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}

/// Runs one child forever: spawn, watch, restart with backoff. Returns at shutdown.
async fn keep_alive(spec: Spec, mut shutdown: watch::Receiver<bool>) {
    let mut backoff = Backoff::new();
    let mut failures = StartFailures::default();
    let mut sys = sysinfo::System::new().ok();
    let name = spec.kind.name();
    if let Some(f) = &spec.failure {
        f.clear();
    }
    loop {
        if *shutdown.borrow() {
            return;
        }
        let started = Instant::now();
        let (reason, answered) = match spec.spawn() {
            Err(e) => (format!("could not start: {e}"), false),
            Ok(mut child) => {
                let pid = child.id().unwrap_or(0);
                tracing::info!("{name} started (pid {pid})");
                let mut tick = tokio::time::interval(HEARTBEAT);
                tick.tick().await;
                let mut beats = Heartbeat::default();
                let reason = loop {
                    tokio::select! {
                        status = child.wait() => break format!("exited ({})", status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string())),
                        _ = tick.tick() => {
                            // (A worker that starts removes the failure record itself.)
                            if beats.observe(spec.probe().await, started.elapsed()) {
                                break "hung (missed 3 heartbeats)".to_string();
                            }
                            let rss = sys.as_mut().map(|s| rss_bytes(s, pid)).unwrap_or(0);
                            if rss > spec.kind.rss_limit_bytes() {
                                break format!("over its memory ceiling ({} MB)", rss / 1024 / 1024);
                            }
                        }
                        _ = shutdown.changed() => {
                            stop(&mut child).await;
                            tracing::info!("{name} stopped");
                            return;
                        }
                    }
                };
                let _ = child.kill().await;
                let _ = child.wait().await;
                (reason, beats.answered)
            }
        };
        let failed = failures.after(answered);
        let pause = backoff.after(started.elapsed());
        match &spec.failure {
            Some(record) if failed => {
                record.write(failures.0, &reason, BACKOFF_MAX);
                tracing::error!(
                    "{name} {reason}: it failed to start {} times in a row; trying again in {} ms",
                    failures.0,
                    pause.as_millis()
                );
            }
            _ => tracing::warn!("{name} {reason}; restarting in {} ms", pause.as_millis()),
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {},
            _ = shutdown.changed() => return,
        }
    }
}

pub async fn supervise(opts: ServeOptions, listener: TcpListener, port: u16) -> Result<(), SupervisorError> {
    let (tx, rx) = watch::channel(false);
    let socket = opts.dirs.worker_socket();
    let listen_fd = listener.as_raw_fd();
    let failure =
        FailureRecord { start_error: opts.dirs.worker_start_error_file(), record: opts.dirs.worker_failure_file() };
    let worker = tokio::spawn(keep_alive(
        Spec {
            kind: Kind::Worker,
            exe: opts.worker_exe,
            port,
            socket: socket.clone(),
            listen_fd,
            failure: Some(failure),
        },
        rx.clone(),
    ));
    let gateway = tokio::spawn(keep_alive(
        Spec { kind: Kind::Gateway, exe: opts.gateway_exe, port, socket, listen_fd, failure: None },
        rx,
    ));
    let mut term = signal(SignalKind::terminate()).map_err(|e| SupervisorError::Sys(e.to_string()))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| SupervisorError::Sys(e.to_string()))?;
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
    tracing::info!("stopping");
    let _ = tx.send(true);
    let _ = tokio::join!(worker, gateway);
    drop(listener);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOON: Duration = Duration::from_secs(1);

    #[test]
    fn a_child_still_starting_is_not_hung_within_its_grace() {
        let mut hb = Heartbeat::default();
        for _ in 0..10 {
            assert!(!hb.observe(Probe::NotListening, SOON));
        }
        let late = START_GRACE + SOON;
        assert!(!hb.observe(Probe::NotListening, late));
        assert!(!hb.observe(Probe::NotListening, late));
        assert!(hb.observe(Probe::NotListening, late), "three misses after the grace are a hang");
    }

    #[test]
    fn a_listening_child_that_does_not_answer_misses_at_once() {
        let mut hb = Heartbeat::default();
        assert!(!hb.observe(Probe::Unresponsive, SOON));
        assert!(!hb.observe(Probe::Unresponsive, SOON));
        assert!(hb.observe(Probe::Unresponsive, SOON));
    }

    #[test]
    fn an_answer_forgives_misses_and_a_child_that_answered_may_not_go_quiet() {
        let mut hb = Heartbeat::default();
        assert!(!hb.observe(Probe::Unresponsive, SOON));
        assert!(!hb.observe(Probe::Unresponsive, SOON));
        assert!(!hb.observe(Probe::Alive, SOON));
        assert_eq!(hb.misses, 0);
        // Once it answered, "not listening" (the socket went away) counts within the grace too.
        assert!(!hb.observe(Probe::NotListening, SOON));
        assert!(!hb.observe(Probe::NotListening, SOON));
        assert!(hb.observe(Probe::NotListening, SOON));
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_resets_after_a_healthy_run() {
        let mut b = Backoff::new();
        let quick = Duration::from_millis(10);
        let pauses: Vec<u128> = (0..8).map(|_| b.after(quick).as_millis()).collect();
        assert_eq!(pauses, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(b.after(HEALTHY_RESET + SOON), BACKOFF_START);
        assert_eq!(b.after(quick), BACKOFF_START * 2);
    }

    #[test]
    fn a_worker_fails_after_five_starts_in_a_row_that_never_answered() {
        let mut f = StartFailures::default();
        assert!(!(0..START_LIMIT - 1).any(|_| f.after(false)));
        assert!(f.after(false), "the fifth");
        assert!(f.after(false), "and it stays failed");
        assert!(!f.after(true), "a start that answered resets the count");
        assert!(!f.after(false));
    }

    #[test]
    fn the_failure_record_carries_the_workers_own_reason() {
        let dir = tempfile::tempdir().unwrap();
        let record =
            FailureRecord { start_error: dir.path().join("start-error.txt"), record: dir.path().join("failure.json") };
        record.write(5, "exited (exit status: 1)", Duration::from_secs(30));
        let f = WorkerFailure::read(&record.record).unwrap();
        assert_eq!((f.reason.as_str(), f.attempts, f.retry_interval_ms), ("exited (exit status: 1)", 5, 30_000));
        std::fs::write(&record.start_error, "index.yml: invalid YAML at line 3\n").unwrap();
        record.write(6, "exited (exit status: 1)", Duration::from_secs(30));
        assert_eq!(WorkerFailure::read(&record.record).unwrap().reason, "index.yml: invalid YAML at line 3");
        record.clear();
        assert!(WorkerFailure::read(&record.record).is_none());
    }

    #[test]
    fn memory_ceilings_come_from_the_environment_in_mb() {
        assert_eq!(limit_bytes(None, 1024), 1024 * 1024 * 1024);
        assert_eq!(limit_bytes(Some(" 64 "), 1024), 64 * 1024 * 1024);
        assert_eq!(limit_bytes(Some("lots"), 8), 8 * 1024 * 1024);
    }
}
