//! The one parallel helper: a two-way fork-join for the work of one frame ([`join`]), and a
//! weighted map over all cores for batch work such as encoding or decoding a session's chunks
//! ([`map_weighted`]).
//!
//! A frame's store queries and band meshes split cleanly by series; [`join`] runs the two
//! halves at once, one on the calling thread and one on a worker thread of a rayon pool, when
//! the machine has a second core and the work is worth a hand-over between threads (the caller
//! decides that: [`worth_it`]); else, or when no thread can be started, both run on the
//! calling thread. The result is the same either way. The worker lives as long as the process,
//! so its allocator heap and stack stay warm from frame to frame (a thread started per frame
//! made the zoomed frame slower, not faster: its fresh heap faulted in new pages).

use std::sync::OnceLock;

/// Work below this many units (pixel columns, drawn or queried) stays on the calling thread:
/// handing work over costs about as much as a few thousand columns.
const MIN_WORK: usize = 8192;

/// Cores this process may use (1 when unknown).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Is `work` units (pixel columns) worth splitting over two threads?
pub fn worth_it(work: usize) -> bool {
    work >= MIN_WORK && cores() > 1
}

/// The one worker thread `b` halves go to (a pool of one: the caller's thread runs the other
/// half). `None` when no thread could be started: then everything runs on the caller's.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "zescope-draw".into()).build().ok()
    })
    .as_ref()
}

/// Runs `a` and `b`, at once on two threads when `split` (else one after the other, here);
/// returns both results. A panic in either goes on in the caller.
///
/// `a` runs on the calling thread and only `b` goes to the worker (`rayon::join` from outside
/// a pool would hand both over and put the caller to sleep): on a virtual machine each wake-up
/// of an idle core costs tens of microseconds.
pub fn join<A: Send, B: Send>(split: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    let Some(pool) = pool().filter(|_| split) else {
        return (a(), b());
    };
    let mut rb = None;
    let ra = pool.in_place_scope(|s| {
        s.spawn(|_| rb = Some(b()));
        a()
    });
    match rb {
        Some(rb) => (ra, rb),
        // The scope ends only when `b` has run (or re-raises its panic).
        None => unreachable!("a rayon scope returned before its job ran"),
    }
}

/// Runs `f` over `jobs` on up to eight scoped threads (one per core), the jobs split into runs
/// of about equal total weight (`jobs[i].0`); the results come back in job order. With one core
/// everything runs on one thread. A panic in `f` goes on in the caller.
pub fn map_weighted<J: Send, R: Send>(jobs: Vec<(u64, J)>, f: impl Fn(J) -> R + Sync) -> Vec<R> {
    let total: u64 = jobs.iter().map(|j| j.0).sum();
    let per = total / cores().clamp(1, 8) as u64 + 1;
    let mut groups: Vec<Vec<J>> = vec![Vec::new()];
    let mut weight = 0;
    for (w, j) in jobs {
        if weight >= per {
            groups.push(Vec::new());
            weight = 0;
        }
        weight += w;
        groups.last_mut().expect("one group at least").push(j);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> =
            groups.into_iter().map(|g| s.spawn(|| g.into_iter().map(&f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_weighted_keeps_job_order_whatever_the_weights() {
        let jobs: Vec<(u64, usize)> = (0..100).map(|i| (if i % 7 == 0 { 1000 } else { 1 }, i)).collect();
        let out = map_weighted(jobs, |i| i * 2);
        assert_eq!(out, (0..100).map(|i| i * 2).collect::<Vec<_>>());
        assert!(map_weighted(Vec::<(u64, u8)>::new(), |x| x).is_empty());
    }

    #[test]
    fn join_gives_both_results_split_or_not() {
        assert_eq!(join(true, || 1, || "b"), (1, "b"));
        assert_eq!(join(false, || 1, || "b"), (1, "b"));
    }
}
