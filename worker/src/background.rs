//! Background work's priority: threads that do only background work (a job, a sync's side
//! lane, the keyword index's writer) run at a lower priority than the ones that answer, so a
//! search or a read that needs a core while a sync runs gets it first.

/// The nice value of background work: a job's thread, the side lane of a sync and the keyword
/// index's writer threads, faster only where a core is idle. A search or a read that needs a
/// core while a sync runs gets it first (CFS weighs a thread at nice 0 about nine times one at
/// nice 10). A thread made by one at this value starts at it too.
const BACKGROUND_NICE: i32 = 10;

/// Lowers the calling thread's priority to [`BACKGROUND_NICE`] for good (Linux: a nice value
/// is per thread, and raising it again needs a privilege); elsewhere a no-op. For threads that
/// do only background work.
pub fn yield_to_readers() {
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)] // see the SAFETY comment inside
    {
        // SAFETY: gettid and setpriority take and return plain integers and touch no memory of
        // ours; on Linux a nice value is the calling thread's own, so only this thread's changes.
        // A refusal leaves the thread as it was.
        unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, BACKGROUND_NICE);
        }
    }
}

/// `f` run to its end on a thread of its own at the background priority, so the threads it
/// makes start there too (a nice value is inherited); on this thread when the system refuses
/// one. A panic in `f` goes on here.
pub fn run_at_background_priority<R: Send>(name: &str, f: impl Fn() -> R + Sync) -> R {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new().name(name.to_string()).spawn_scoped(scope, || {
            yield_to_readers();
            f()
        });
        match spawned {
            Ok(t) => t.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => f(),
        }
    })
}
