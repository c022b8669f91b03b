//! Small OS services for the sampler thread.

/// CLOCK_MONOTONIC in ns: the clock sample times are on (and the clock a Level Zero device's
/// times are mapped onto).
pub fn monotonic_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// CPU time (user + system) the calling thread has used.
pub fn thread_cpu_time() -> std::time::Duration {
    // SAFETY: getrusage writes into a zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return std::time::Duration::ZERO;
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    std::time::Duration::from_micros(us(ru.ru_utime) + us(ru.ru_stime))
}

/// Asks for precise timer wakeups on this thread (1 µs slack instead of the default 50 µs), so
/// 100 µs sampling intervals are kept.
pub fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
}

/// CPU time (user + system) the whole process has used: every thread, the window's included.
pub fn process_cpu_time() -> std::time::Duration {
    // SAFETY: getrusage writes into a zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return std::time::Duration::ZERO;
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    std::time::Duration::from_micros(us(ru.ru_utime) + us(ru.ru_stime))
}
