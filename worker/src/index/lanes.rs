//! A batch's work shared by two lanes: the sync's thread and one scoped thread beside it.
//! A first index spends most of its time on work that is the same for each file of a batch
//! and independent of the others (a note's languages told, its words stemmed); a second lane
//! takes the next item until none is left while the sync's own thread does what must stay in
//! order (the catalog's transaction), then joins in. The results come back in the items'
//! order, so nothing downstream depends on which lane did what. The side lane runs at a
//! lower priority, so a sync's second lane takes only a core that reads leave idle.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Fewer items than this are mapped on the calling thread alone (a file written through the
/// API, a watcher's few): a thread would cost more than it saves.
const MIN_ITEMS: usize = 16;

/// `f` of each item, in the items' order, and `first()`'s result: a scoped thread starts on
/// the items while this thread runs `first`, then this thread takes items too (fewer than
/// [`MIN_ITEMS`]: `first`, then the items, on this thread). A panic in either goes on here,
/// as if everything had run on this thread.
pub fn map_beside<T: Sync, R: Send, B>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    first: impl FnOnce() -> B,
) -> (B, Vec<R>) {
    if items.len() < MIN_ITEMS {
        let b = first();
        return (b, items.iter().map(f).collect());
    }
    let next = AtomicUsize::new(0);
    let lane = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { return done };
            done.push((i, f(item)));
        }
    };
    std::thread::scope(|scope| {
        // Without a thread (the system refuses one), this thread takes every item.
        let side = std::thread::Builder::new().name("sync-lane".into()).spawn_scoped(scope, || {
            crate::background::yield_to_readers();
            lane()
        });
        let b = first();
        let mut all = lane();
        if let Ok(side) = side {
            all.extend(side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        all.sort_unstable_by_key(|(i, _)| *i);
        (b, all.into_iter().map(|(_, r)| r).collect())
    })
}

/// `f` of each item, in the items' order, in two lanes ([`map_beside`] with nothing first).
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_beside(items, f, || ()).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_item_is_mapped_once_in_order_beside_the_first_task() {
        let items: Vec<u32> = (0..1_000).collect();
        let calls = AtomicUsize::new(0);
        let (first, squares) = map_beside(
            &items,
            |n| {
                calls.fetch_add(1, Ordering::Relaxed);
                n * n
            },
            || "first",
        );
        assert_eq!(first, "first");
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
        assert_eq!(calls.load(Ordering::Relaxed), items.len());
        let (_, none) = map_beside(&[] as &[u32], |n| *n, || ());
        assert!(none.is_empty());
    }

    #[test]
    fn a_panic_in_a_lane_goes_on_in_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            map_beside(&[1, 2, 3], |n| if *n == 2 { panic!("two") } else { *n }, || ());
        });
        assert!(caught.is_err());
    }
}
