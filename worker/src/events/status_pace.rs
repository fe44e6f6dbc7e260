//! How statuses are written when many ask: in order (a snapshot counted later is never
//! overwritten by one counted before it), and for background work paced by one thread that
//! rests a multiple of what the last snapshot cost, so that counting a large catalog never
//! takes more than a share of a core however fast changes come.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// After a paced status that took `t`, the next one waits `REST_FACTOR * t`: a fifth of a
/// core at most goes to counting (a fifth of a second at 50,000 notes; a few ms at 2,000).
const REST_FACTOR: u32 = 4;
/// The longest rest, however slow the last snapshot was. A snapshot counts every active row
/// (8 s at a million notes): with a 2 s cap, the status thread took four fifths of a core all
/// through a sync of that vault.
const MAX_REST: Duration = Duration::from_secs(30);

/// Tickets taken before a snapshot is counted; a write goes through only when no snapshot
/// with a later ticket was written already.
#[derive(Default)]
pub struct StatusOrder {
    counted: AtomicU64,
    written: Mutex<u64>,
}

impl StatusOrder {
    /// Taken before anything of the snapshot is read.
    pub fn ticket(&self) -> u64 {
        self.counted.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Runs `write` unless a snapshot counted after `ticket` was written first (its state is
    /// newer than this one's).
    pub fn write_if_newest(&self, ticket: u64, write: impl FnOnce()) {
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        if ticket > *written {
            write();
            *written = ticket;
        }
    }
}

#[derive(Default)]
struct Asks {
    /// A pacing thread runs; without one, an ask is the caller's to publish.
    running: bool,
    asked: bool,
}

/// Statuses asked for by background work (a watcher's change, a replica's batch, an
/// embedding round), coalesced: however many ask while one is counted or the pacer rests,
/// one more is published after.
#[derive(Default)]
pub struct StatusPacer {
    asks: Mutex<Asks>,
    cv: Condvar,
}

impl StatusPacer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Asks> {
        self.asks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks for a status; false when no pacing thread runs (the caller publishes it).
    pub fn ask(&self) -> bool {
        let mut asks = self.lock();
        if !asks.running {
            return false;
        }
        asks.asked = true;
        self.cv.notify_all();
        true
    }

    /// Before the pacing thread is spawned: from now on asks are left to it.
    pub fn start(&self) {
        self.lock().running = true;
    }

    /// No more pacing: later asks are their callers' to publish. True when one was pending.
    pub fn stop(&self) -> bool {
        let mut asks = self.lock();
        asks.running = false;
        std::mem::take(&mut asks.asked)
    }

    /// Waits up to `timeout` for an ask; true when one came (it is taken).
    pub fn take(&self, timeout: Duration) -> bool {
        let asks = self.lock();
        let (mut asks, _) = self.cv.wait_timeout_while(asks, timeout, |a| !a.asked).unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut asks.asked)
    }

    /// How long the pacer rests after a status that took `took`.
    pub fn rest_after(took: Duration) -> Duration {
        took.saturating_mul(REST_FACTOR).min(MAX_REST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_counted_earlier_never_overwrites_a_later_one() {
        let order = StatusOrder::default();
        let (early, late) = (order.ticket(), order.ticket());
        let mut written = Vec::new();
        order.write_if_newest(late, || written.push("late"));
        order.write_if_newest(early, || written.push("early"));
        assert_eq!(written, vec!["late"]);
        let next = order.ticket();
        order.write_if_newest(next, || written.push("next"));
        assert_eq!(written, vec!["late", "next"]);
    }

    #[test]
    fn asks_coalesce_and_without_a_pacer_are_the_callers() {
        let pacer = StatusPacer::default();
        assert!(!pacer.ask(), "no pacer runs: the caller publishes");
        pacer.start();
        assert!(pacer.ask());
        assert!(pacer.ask());
        assert!(pacer.take(Duration::ZERO), "two asks, one status");
        assert!(!pacer.take(Duration::from_millis(10)));
        assert!(pacer.ask());
        assert!(pacer.stop(), "the ask pending at the stop is said");
        assert!(!pacer.ask());
    }

    #[test]
    fn the_rest_is_a_multiple_of_the_cost_and_bounded() {
        assert_eq!(StatusPacer::rest_after(Duration::from_millis(5)), Duration::from_millis(20));
        assert_eq!(StatusPacer::rest_after(Duration::from_secs(10)), MAX_REST);
    }
}
