//! The host's clocks and timers as the sampler uses them: `CLOCK_MONOTONIC` (the one timeline
//! of every sample), the CPU time of a thread and of the process (the sampler's own cost), and
//! precise timer wake-ups. Safe calls through rustix; nothing here touches exported memory.

use std::num::NonZeroU64;
use std::time::Duration;

use rustix::time::{ClockId, clock_gettime};

/// CLOCK_MONOTONIC in ns: the clock sample times are on (and the clock a Level Zero device's
/// times are mapped onto).
pub fn monotonic_ns() -> i64 {
    let ts = clock_gettime(ClockId::Monotonic);
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// CPU time (user + system) the calling thread has used.
pub fn thread_cpu_time() -> Duration {
    duration(clock_gettime(ClockId::ThreadCPUTime))
}

/// CPU time (user + system) the whole process has used: every thread, the window's included.
pub fn process_cpu_time() -> Duration {
    duration(clock_gettime(ClockId::ProcessCPUTime))
}

/// Asks for precise timer wakeups on this thread (1 µs slack instead of the default 50 µs), so
/// 100 µs sampling intervals are kept. A kernel that refuses leaves the default slack.
pub(crate) fn precise_timers() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1000));
}

fn duration(ts: rustix::time::Timespec) -> Duration {
    Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.clamp(0, 999_999_999) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_move_forward_and_cpu_time_grows_with_work() {
        let (t0, c0, p0) = (monotonic_ns(), thread_cpu_time(), process_cpu_time());
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(monotonic_ns() > t0);
        assert!(thread_cpu_time() > c0, "a busy loop shows as thread CPU time");
        assert!(process_cpu_time() >= p0 + (thread_cpu_time() - c0) / 2);
        std::hint::black_box(x);
    }
}
