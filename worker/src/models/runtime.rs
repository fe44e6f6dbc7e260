//! ONNX Runtime, loaded dynamically once per process, and the sessions built on it.
//!
//! The library is found through `ORT_DYLIB_PATH`, else in `<cache>/runtime/`
//! (where `scripts/ort-env` copies it). A missing or unloadable library makes every model
//! unavailable, never the worker.
//!
//! Every model call runs under a deadline ([`with_deadline`], [`with_limit`]): one shared
//! watchdog thread asks ONNX Runtime to terminate a run (`RunOptions::terminate`) once its
//! deadline has passed, and the call then fails with [`ModelError::Timeout`].

use ort::session::{RunOptions, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    #[error("ONNX Runtime is not available: {0}")]
    Runtime(String),
    #[error("model file {0} is missing")]
    Missing(String),
    #[error("model {path} could not be loaded: {reason}")]
    Load { path: String, reason: String },
    #[error("model inference failed: {0}")]
    Inference(String),
    #[error("tokenizer failed: {0}")]
    Tokenizer(String),
    #[error("model gave an unexpected output: {0}")]
    Shape(String),
    #[error("model call exceeded its time limit")]
    Timeout,
    /// A model server that cannot be used now (down, slow, an HTTP error): the reason.
    #[error("{0}")]
    Server(String),
    /// A model server the egress policy does not allow: refused before anything was sent.
    #[error("{0}")]
    Egress(String),
}

impl ModelError {
    /// Whether the model is not there to be used (its file, its runtime, its server, the
    /// policy), which a client hears as 503 `UNAVAILABLE`, rather than a model that failed
    /// while it ran (500).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            ModelError::Missing(_)
                | ModelError::Load { .. }
                | ModelError::Runtime(_)
                | ModelError::Server(_)
                | ModelError::Egress(_)
        )
    }
}

pub type Result<T> = std::result::Result<T, ModelError>;

pub(crate) fn infer<E: std::fmt::Display>(e: E) -> ModelError {
    ModelError::Inference(e.to_string())
}

/// The library file: `ORT_DYLIB_PATH`, else the newest `libonnxruntime.so*` in `<cache>/runtime/`.
pub fn locate_library(cache_dir: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let dir = cache_dir.join("runtime");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libonnxruntime.so")))
        .collect();
    found.sort();
    found.pop()
}

static ENVIRONMENT: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

/// Loads ONNX Runtime once; later calls return the first outcome.
pub fn environment(cache_dir: &Path) -> Result<&'static ort::environment::Environment> {
    let outcome = ENVIRONMENT.get_or_init(|| {
        let lib = locate_library(cache_dir)
            .ok_or_else(|| "libonnxruntime.so not found: set ORT_DYLIB_PATH or run scripts/ort-env".to_string())?;
        if !lib.is_file() {
            return Err(format!("{} does not exist", lib.display()));
        }
        // A library that is not ONNX Runtime may abort inside dlopen'd code; catch what we can.
        let built = std::panic::catch_unwind(|| -> std::result::Result<_, String> {
            ort::init_from(&lib).map_err(|e| e.to_string())?.with_name("svc").build().map_err(|e| e.to_string())
        });
        match built {
            Ok(r) => r.map_err(|e| format!("{}: {e}", lib.display())),
            Err(_) => Err(format!("{}: loading ONNX Runtime panicked", lib.display())),
        }
    });
    outcome.as_ref().map_err(|e| ModelError::Runtime(e.clone()))
}

/// A session on `path` with `threads` intra-op threads.
pub fn session(cache_dir: &Path, path: &Path, threads: usize) -> Result<Session> {
    open_session(cache_dir, path, threads, true)
}

/// A session whose memory goes back to the system after each run: no CPU arena and no memory
/// pattern, for inputs whose size varies by orders of magnitude (OCR's pictures and lines),
/// where an arena keeps the largest run's memory for good.
pub fn session_without_arena(cache_dir: &Path, path: &Path, threads: usize) -> Result<Session> {
    open_session(cache_dir, path, threads, false)
}

fn open_session(cache_dir: &Path, path: &Path, threads: usize, arena: bool) -> Result<Session> {
    let env = environment(cache_dir)?;
    if !path.is_file() {
        return Err(ModelError::Missing(path.display().to_string()));
    }
    let load = |reason: String| ModelError::Load { path: path.display().to_string(), reason };
    let builder = Session::builder(env).map_err(|e| load(e.to_string()))?;
    let mut builder = builder.with_intra_threads(threads.max(1)).map_err(|e| load(e.to_string()))?;
    if !arena {
        let cpu = ort::ep::CPU::default().with_arena_allocator(false).build();
        builder = builder.with_execution_providers([cpu]).map_err(|e| load(e.to_string()))?;
        builder = builder.with_memory_pattern(false).map_err(|e| load(e.to_string()))?;
    }
    builder.commit_from_file(path).map_err(|e| load(e.to_string()))
}

/// Runs `f`, turning a panic inside the model code into an error of this call only.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(ModelError::Inference(format!("{what} panicked"))),
    }
}

/// Something the watchdog can stop once its deadline has passed.
pub trait Stoppable: Send + Sync {
    fn stop(&self);
}

impl Stoppable for RunOptions {
    /// Sets ONNX Runtime's terminate flag: the run under these options (and any later run
    /// with them) fails as soon as ONNX Runtime checks the flag.
    fn stop(&self) {
        if let Err(e) = self.terminate() {
            tracing::warn!("could not stop a model call at its time limit: {e}");
        }
    }
}

/// Runs `f` with fresh run options that are terminated `limit` from now (see [`with_deadline`]).
pub fn with_limit<T>(limit: Duration, f: impl FnOnce(&RunOptions) -> Result<T>) -> Result<T> {
    let deadline = Instant::now()
        .checked_add(limit)
        .ok_or_else(|| ModelError::Inference(format!("time limit {limit:?} is out of range")))?;
    with_deadline(deadline, f)
}

/// Runs `f` with fresh run options that the watchdog terminates at `deadline`; pass them to
/// every `Session::run_with_options` of the call. A failure once the deadline has fired is
/// reported as [`ModelError::Timeout`].
pub fn with_deadline<T>(deadline: Instant, f: impl FnOnce(&RunOptions) -> Result<T>) -> Result<T> {
    let options = Arc::new(RunOptions::new().map_err(infer)?);
    watched(options, deadline, f)
}

/// Runs `f` with `target`, which the shared watchdog stops at `deadline`. An error returned
/// after the watchdog fired becomes [`ModelError::Timeout`]; a result that made it in time is
/// returned as is.
pub fn watched<S: Stoppable + 'static, T>(
    target: Arc<S>,
    deadline: Instant,
    f: impl FnOnce(&S) -> Result<T>,
) -> Result<T> {
    let ticket = arm(deadline, Arc::clone(&target) as Arc<dyn Stoppable>);
    let result = f(&*target);
    let fired = ticket.as_ref().is_some_and(Ticket::fired);
    drop(ticket);
    match result {
        Err(_) if fired => Err(ModelError::Timeout),
        other => other,
    }
}

/// One armed deadline.
struct Armed {
    deadline: Instant,
    target: Arc<dyn Stoppable>,
    fired: Arc<AtomicBool>,
}

struct WatchState {
    next_id: u64,
    armed: BTreeMap<u64, Armed>,
}

/// The process's one watchdog: a thread that sleeps until the earliest armed deadline and
/// stops what is due. Calls take ~ms to seconds, so one shared thread (instead of a thread
/// per call) keeps the cost of a deadline to a lock, a map insert and a condvar signal.
struct Watchdog {
    state: Mutex<WatchState>,
    wake: Condvar,
}

static WATCHDOG: Watchdog =
    Watchdog { state: Mutex::new(WatchState { next_id: 0, armed: BTreeMap::new() }), wake: Condvar::new() };

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl WatchState {
    /// Stops every target whose deadline is at or before `now` and forgets it. The fired flag
    /// is set before the stop, so the stopped call sees it when its run fails.
    fn fire_due(&mut self, now: Instant) {
        let due: Vec<u64> = self.armed.iter().filter(|(_, a)| a.deadline <= now).map(|(id, _)| *id).collect();
        for id in due {
            if let Some(a) = self.armed.remove(&id) {
                a.fired.store(true, Ordering::SeqCst);
                a.target.stop();
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.armed.values().map(|a| a.deadline).min()
    }
}

impl Watchdog {
    fn watch(&self) {
        let mut state = lock(&self.state);
        loop {
            let now = Instant::now();
            state.fire_due(now);
            state = match state.next_deadline() {
                Some(d) => {
                    self.wake.wait_timeout(state, d.saturating_duration_since(now)).unwrap_or_else(|p| p.into_inner()).0
                }
                None => self.wake.wait(state).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }
}

/// Starts the watchdog thread on first use; false (and a warning) when it cannot start, in
/// which case the next call tries again.
fn ensure_watchdog() -> bool {
    static STARTED: Mutex<bool> = Mutex::new(false);
    let mut started = lock(&STARTED);
    if !*started {
        match std::thread::Builder::new().name("model-watchdog".into()).spawn(|| WATCHDOG.watch()) {
            Ok(_) => *started = true,
            Err(e) => tracing::warn!("model calls run without a time limit: the watchdog thread did not start: {e}"),
        }
    }
    *started
}

/// A deadline armed for one call; dropping it disarms the deadline.
struct Ticket {
    id: u64,
    fired: Arc<AtomicBool>,
}

impl Ticket {
    fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        lock(&WATCHDOG.state).armed.remove(&self.id);
    }
}

/// Arms `deadline` for `target`; `None` when the watchdog is not running.
fn arm(deadline: Instant, target: Arc<dyn Stoppable>) -> Option<Ticket> {
    if !ensure_watchdog() {
        return None;
    }
    let fired = Arc::new(AtomicBool::new(false));
    let mut state = lock(&WATCHDOG.state);
    let id = state.next_id;
    state.next_id += 1;
    state.armed.insert(id, Armed { deadline, target, fired: Arc::clone(&fired) });
    drop(state);
    WATCHDOG.wake.notify_one();
    Some(Ticket { id, fired })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for run options: a flag the "model" polls.
    #[derive(Default)]
    struct Flag(AtomicBool);

    impl Stoppable for Flag {
        fn stop(&self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// A call that works until it is stopped (at most `cap`), then fails like a terminated run.
    fn busy_until_stopped(flag: &Flag, cap: Duration) -> Result<&'static str> {
        let started = Instant::now();
        while !flag.0.load(Ordering::SeqCst) {
            if started.elapsed() > cap {
                return Ok("never stopped");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Err(ModelError::Inference("Exiting due to terminate flag being set to true.".into()))
    }

    #[test]
    fn a_call_past_its_deadline_is_stopped_and_times_out() {
        let started = Instant::now();
        let r = watched(Arc::new(Flag::default()), Instant::now() + Duration::from_millis(50), |f| {
            busy_until_stopped(f, Duration::from_secs(2))
        });
        assert!(matches!(r, Err(ModelError::Timeout)), "{r:?}");
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(50) && took < Duration::from_secs(1), "{took:?}");
    }

    #[test]
    fn a_call_in_time_keeps_its_result_and_is_disarmed() {
        let flag = Arc::new(Flag::default());
        let r = watched(Arc::clone(&flag), Instant::now() + Duration::from_millis(300), |_| Ok(7));
        assert!(matches!(r, Ok(7)), "{r:?}");
        let r: Result<()> = watched(Arc::clone(&flag), Instant::now() + Duration::from_millis(300), |_| {
            Err(ModelError::Shape("bad".into()))
        });
        assert!(matches!(r, Err(ModelError::Shape(_))), "an error before the deadline stays itself: {r:?}");
        std::thread::sleep(Duration::from_millis(400));
        assert!(!flag.0.load(Ordering::SeqCst), "a finished call is never stopped later");
    }

    #[test]
    fn concurrent_calls_share_the_watchdog_and_keep_their_own_deadlines() {
        let calls: Vec<_> = [40u64, 10_000, 80, 10_000]
            .into_iter()
            .map(|ms| {
                std::thread::spawn(move || {
                    let deadline = Instant::now() + Duration::from_millis(ms);
                    let cap = Duration::from_millis(if ms > 1000 { 150 } else { 2000 });
                    watched(Arc::new(Flag::default()), deadline, |f| busy_until_stopped(f, cap))
                })
            })
            .collect();
        let results: Vec<_> = calls.into_iter().map(|c| c.join().expect("call thread")).collect();
        assert!(matches!(results[0], Err(ModelError::Timeout)), "{:?}", results[0]);
        assert!(matches!(results[1], Ok("never stopped")), "{:?}", results[1]);
        assert!(matches!(results[2], Err(ModelError::Timeout)), "{:?}", results[2]);
        assert!(matches!(results[3], Ok("never stopped")), "{:?}", results[3]);
    }
}
