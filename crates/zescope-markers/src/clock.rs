//! The clock markers are stamped with: `CLOCK_MONOTONIC`, the clock zescope stamps samples with.

/// Now, in ns of `CLOCK_MONOTONIC` (never negative on Linux: it counts from boot).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec we pass, which lives for the call; with a
    // valid clock id and pointer it cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}
