//! The clock markers are stamped with: `CLOCK_MONOTONIC`, the clock zescope stamps samples with.

use rustix::time::{ClockId, clock_gettime};

/// Now, in ns of `CLOCK_MONOTONIC` (never negative on Linux: it counts from boot).
pub fn monotonic_ns() -> u64 {
    let ts = clock_gettime(ClockId::Monotonic);
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}
