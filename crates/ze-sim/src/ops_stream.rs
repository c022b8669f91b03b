//! The time-based metric streamer: `zetMetricStreamerOpen`/`ReadData`/`Close` and Calculate.
//!
//! A streamer makes one report per sampling period while it is open, the way an OA stream does;
//! reports are made lazily (when the application reads, waits or queries), each stamped with the
//! time its period ended, so no thread is needed and a stalled reader sees exactly what a
//! hardware buffer would hold. A report's values are a function of its index alone (its time,
//! the workload then, seeded noise), so the buffer holds indices, and a read writes the reports'
//! words straight into the caller's memory (one pass, nothing copied twice); only a counter's
//! carried fraction runs from one read report to the next. The buffer keeps at most
//! `streamer_buffer_reports` reports: older ones are dropped and the next read answers
//! ZE_RESULT_WARNING_DROPPED_DATA.
//!
//! Period: rounded up to 10 µs × 2^k (k ≤ 16, so 10 µs ..= 655.36 ms) as OA's exponent is, and
//! written back; `notifyEveryNReports` is clamped to 1 ..= half the buffer and written back.
//! One streamer may be open per domain of a device (a second on a group of the same domain gets
//! ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE; per device with the quirk `one_streamer_per_device`),
//! and only on a streamable group activated on that device in that context.
//!
//! Quirks of real drivers ([`crate::config::Quirks`]): a group not activated answers NOT_READY
//! (no handle); a period under a floor is refused; the notification waits for at least a floor
//! of reports; the descriptor is left as the caller wrote it; a size query answers the most the
//! streamer can hold, or is refused (INVALID_ARGUMENT, after the 1.16 deprecation); a read
//! copies no more than the previous size query answered; an event of a counter-based pool is
//! refused (INVALID_ARGUMENT, as since 1.21); one streamer per device.
//!
//! # Raw report format (opaque)
//!
//! The bytes are ze-sim's own and only its Calculate decodes them; clients must not parse them.
//! For the record (tests of the driver itself use it): each report is `16 + 8 × metrics` bytes,
//! little endian: magic `u32` [`REPORT_MAGIC`], metric count `u32`, the group's tag `u64`, then
//! one `u64` per metric in metric order: the timestamp metric as device ns, a counter (EVENT,
//! THROUGHPUT, DURATION) as the count in the report's period, an id or flag as its value, any
//! other as the bits of an `f64`.

use level_zero_sys::*;

use crate::config::Signal;
use crate::instance::Instance;
use crate::ops_driver::R;
use crate::registry::{HandleChanges, Obj, new_handle};
use crate::workload;

/// First word of every raw report ("ZSRP").
pub const REPORT_MAGIC: u32 = 0x5052_535a;
/// The sampling period unit (ns): periods are this × 2^k.
const PERIOD_BASE_NS: u64 = 10_000;
/// Largest exponent k of the period.
const PERIOD_MAX_EXP: u32 = 16;

pub(crate) struct Streamer {
    pub(crate) ctx: usize,
    pub(crate) device: usize,
    pub(crate) group: usize,
    pub(crate) event: Option<usize>,
    pub(crate) period_ns: u64,
    pub(crate) notify_every: u32,
    /// Host time (CLOCK_MONOTONIC ns) the streamer opened: report k ends at
    /// `opened + (k + 1) × period`.
    opened: u64,
    /// Reports made so far (the next one's k).
    made: u64,
    /// The oldest report not yet read: reports `next ..made` wait in the buffer.
    next: u64,
    /// Reports were dropped since the last read.
    dropped: bool,
    /// Per counter metric: the running total (fractional) of the reports read and its whole
    /// part (what the reports so far carried), for whole counts per report.
    totals: Vec<(f64, u64)>,
    /// What the last size query answered (bytes): the most a read copies with
    /// `quirks.streamer_read_limited_to_size_query`.
    learned: usize,
}

impl Streamer {
    /// Whole reports waiting to be read.
    fn reports(&self) -> usize {
        (self.made - self.next) as usize
    }
}

/// How `streamer_advance` makes one metric's word of a report.
#[derive(Clone, Copy)]
enum Make {
    /// The report's timestamp (device ns).
    Time,
    /// The workload's level of `sig` (noise stream `stream`, the metric's `index` in its family),
    /// written as `word` says.
    Level { sig: Signal, stream: u64, index: usize, word: Word },
}

/// How a level becomes a report's word.
#[derive(Clone, Copy)]
enum Word {
    /// A counter: the whole counts of the report's period (the fraction carried to the next).
    Count,
    /// An id or flag: the integer.
    Integer,
    /// Any other level: the bits of the `f64`.
    Float,
}

/// `x as u64` (saturating, NaN 0), through i64 where that is exact: one instruction where u64's
/// conversion is several on the baseline x86-64, and a streamer converts every count it makes.
fn to_u64(x: f64) -> u64 {
    if (0.0..9.2e18).contains(&x) {
        // SAFETY: `x` is finite and within 0..9.2e18, so its truncation fits an i64.
        unsafe { x.to_int_unchecked::<i64>() as u64 }
    } else {
        to_u64_beyond(x)
    }
}

/// [`to_u64`] of a value outside 0..9.2e18 (a saturating conversion; kept out of the loop that
/// makes reports, so the common case is one instruction, not both paths and their selects).
#[cold]
#[inline(never)]
fn to_u64_beyond(x: f64) -> u64 {
    x as u64
}

/// The sampling period the driver uses for a requested one (ns).
pub(crate) fn rounded_period(requested: u32) -> u64 {
    let mut p = PERIOD_BASE_NS;
    let mut k = 0;
    while p < requested as u64 && k < PERIOD_MAX_EXP {
        p *= 2;
        k += 1;
    }
    p
}

pub(crate) fn report_words(metrics: usize) -> usize {
    2 + metrics
}

impl Instance {
    pub(crate) fn streamer_open(
        &mut self,
        ctx: usize,
        d: usize,
        g: usize,
        desc: &mut zet_metric_streamer_desc_t,
        event: Option<usize>,
        ch: &mut HandleChanges,
    ) -> R<usize> {
        self.device_status()?;
        if desc.stype != ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC {
            self.violation("wrong_stype", ctx, format!("zetMetricStreamerOpen given stype {:#x}", desc.stype));
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let grp = &self.groups[g];
        let q = &self.config.quirks;
        if grp.device != d || !grp.stream {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if grp.active_in != Some(ctx) {
            return Err(if q.streamer_not_ready_when_inactive {
                ZE_RESULT_NOT_READY
            } else {
                ZE_RESULT_ERROR_INVALID_ARGUMENT
            });
        }
        if q.streamer_min_period_ns.is_some_and(|min| desc.samplingPeriod < min) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if let Some(e) = event
            && !self.event_is_host_visible(e)
        {
            return Err(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
        }
        if self.config.faults.streamer_open_denied {
            return Err(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS);
        }
        if let Some(e) = event
            && self.config.quirks.counter_based_events_refused
            && self.event_is_counter_based(e)
        {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        // One stream per domain of a device (per device with `one_streamer_per_device`).
        let per_device = self.config.quirks.one_streamer_per_device;
        let domain = self.groups[g].domain;
        let busy =
            self.streamers.values().any(|s| s.device == d && (per_device || self.groups[s.group].domain == domain));
        if self.config.faults.streamer_open_busy || busy {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        if let Some(e) = event
            && self.streamers.values().any(|s| s.event == Some(e))
        {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let q = &self.config.quirks;
        let cap = self.config.streamer_buffer_reports;
        let asked = desc.notifyEveryNReports.clamp(1, cap / 2);
        // The event's threshold: what was asked, raised to the driver's floor (within the buffer).
        let notify_every = q.streamer_notify_floor.map_or(asked, |f| asked.max(f).min(cap));
        let period_ns = if q.streamer_desc_untouched {
            (desc.samplingPeriod as u64).max(1_000)
        } else {
            desc.samplingPeriod = rounded_period(desc.samplingPeriod) as u32;
            desc.notifyEveryNReports = asked;
            desc.samplingPeriod as u64
        };
        let h = new_handle();
        let metrics = self.groups[g].metrics.len();
        self.streamers.insert(
            h,
            Streamer {
                ctx,
                device: d,
                group: g,
                event,
                period_ns,
                notify_every,
                opened: crate::writer::monotonic_ns(),
                made: 0,
                next: 0,
                dropped: false,
                totals: vec![(0.0, 0); metrics],
                learned: 0,
            },
        );
        ch.added.push((h, Obj::Streamer));
        Ok(h)
    }

    /// Makes every report whose period has ended by host time `now` (counts it into the buffer);
    /// drops the oldest beyond the buffer.
    pub(crate) fn streamer_advance(&mut self, h: usize, now: u64) -> R<()> {
        let cap = self.config.streamer_buffer_reports as u64;
        let lost_after = self.config.faults.device_lost_after_reports;
        let Some(s) = self.streamers.get_mut(&h) else {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        };
        if self.shared.is_lost() {
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        let due = now.saturating_sub(s.opened) / s.period_ns;
        if due <= s.made {
            return Ok(());
        }
        // Reports that would be dropped at once are not counted as made.
        let new = (due - s.made).min(cap);
        // The report that brings the device's count to `lost_after` is its last: of the new ones,
        // those up to it are made.
        let fatal =
            lost_after.map(|n| n.saturating_sub(self.shared.streamer_reports_made()).max(1)).filter(|&f| f <= new);
        let made_now = fatal.unwrap_or(new);
        s.made = due - new + made_now;
        if s.made - s.next > cap {
            s.next = s.made - cap;
            s.dropped = true;
        }
        self.shared.count_streamer_reports(made_now);
        if fatal.is_some() {
            self.shared.lose_device();
            return Err(ZE_RESULT_ERROR_DEVICE_LOST);
        }
        Ok(())
    }

    /// Writes reports `next ..next + out.len() / report bytes` of streamer `h` into `out`, word
    /// after word, little endian (the format in the module's docs), and marks them read.
    fn streamer_write(&mut self, h: usize, out: &mut [u8]) {
        let Some(s) = self.streamers.get_mut(&h) else { return };
        let grp = &self.groups[s.group];
        let dev = &self.devices[grp.device].cfg;
        let seed = self.shared.seed();
        let period_s = s.period_ns as f64 / 1e9;
        // How each metric's word is made, decided once a read rather than once a report.
        let makes: Vec<Make> = grp
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| match m.cfg.signal {
                Signal::Timestamp => Make::Time,
                sig => {
                    let word = if sig.is_cumulative() {
                        Word::Count
                    } else if sig.is_integer_level() {
                        Word::Integer
                    } else {
                        Word::Float
                    };
                    Make::Level { sig, stream: (s.group as u64 + 1) * 4096 + i as u64, index: m.index, word }
                }
            })
            .collect();
        let head = REPORT_MAGIC as u64 | ((grp.metrics.len() as u64) << 32);
        let tag = s.group as u64 + 1;
        let report_bytes = 8 * report_words(makes.len());
        for report in out.chunks_exact_mut(report_bytes) {
            let k = s.next;
            let end = s.opened + (k + 1) * s.period_ns;
            let at = workload::Moment::at_ns(self.shared.since_start_ns(end));
            let (front, words) = report.split_at_mut(16);
            front[..8].copy_from_slice(&head.to_le_bytes());
            front[8..].copy_from_slice(&tag.to_le_bytes());
            for ((make, total), w) in makes.iter().zip(&mut s.totals).zip(words.chunks_exact_mut(8)) {
                let word = match *make {
                    Make::Time => self.shared.report_time_at(end),
                    Make::Level { sig, stream, index, word } => {
                        let n = workload::noise(seed, stream, k);
                        let level = workload::level(sig, dev.kind, dev.core_clock_mhz as f64, at, n, index);
                        match word {
                            Word::Count => {
                                let (sum, whole) = total;
                                *sum += level * period_s;
                                let before = std::mem::replace(whole, to_u64(*sum));
                                *whole - before
                            }
                            Word::Integer => to_u64(level),
                            Word::Float => level.to_bits(),
                        }
                    }
                };
                w.copy_from_slice(&word.to_le_bytes());
            }
            s.next += 1;
        }
    }

    /// Unread reports of streamer `h` (after making the due ones).
    pub(crate) fn streamer_pending(&mut self, h: usize) -> R<usize> {
        self.streamer_advance(h, crate::writer::monotonic_ns())?;
        Ok(self.streamers.get(&h).map_or(0, Streamer::reports))
    }

    /// Host time at which streamer `h` will hold `n` unread reports.
    pub(crate) fn streamer_ready_at(&self, h: usize, n: usize) -> Option<u64> {
        let s = self.streamers.get(&h)?;
        let missing = n.saturating_sub(s.reports()) as u64;
        Some(s.opened + (s.made + missing) * s.period_ns)
    }

    /// `zetMetricStreamerReadData`: size query (`data` None) or copy out whole reports.
    pub(crate) fn streamer_read(
        &mut self,
        h: usize,
        max_reports: u32,
        size: &mut usize,
        data: Option<&mut [u8]>,
    ) -> R<()> {
        if let Some(n) = self.config.faults.streamer_read_fails_after
            && self.streamer_reads >= n
        {
            return Err(ZE_RESULT_ERROR_UNKNOWN);
        }
        self.streamer_advance(h, crate::writer::monotonic_ns())?;
        let q = &self.config.quirks;
        let (maximum, limited) = (!q.streamer_size_query_available, q.streamer_read_limited_to_size_query);
        let cap = self.config.streamer_buffer_reports as usize;
        let s = self.streamers.get_mut(&h).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        let report_bytes = 8 * report_words(self.groups[s.group].metrics.len());
        let available = s.reports().min(max_reports as usize);
        let Some(buf) = data.filter(|_| *size > 0) else {
            self.size_queries += 1;
            if q.streamer_no_size_query {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            *size = if maximum { cap.min(max_reports as usize) * report_bytes } else { available * report_bytes };
            s.learned = *size;
            return Ok(());
        };
        let room = if limited { buf.len().min(s.learned) } else { buf.len() };
        let n = available.min(room / report_bytes);
        let dropped = std::mem::take(&mut s.dropped);
        self.streamer_write(h, &mut buf[..n * report_bytes]);
        *size = n * report_bytes;
        self.streamer_reads += 1;
        self.most_reports_read = self.most_reports_read.max(n);
        if dropped {
            return Err(ZE_RESULT_WARNING_DROPPED_DATA);
        }
        Ok(())
    }

    pub(crate) fn streamer_close(&mut self, h: usize, ch: &mut HandleChanges) -> R<()> {
        self.streamers.remove(&h).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        ch.removed.push(h);
        self.teardown_step();
        Ok(())
    }

    /// Records a violation and refuses if a streamer is open on one of `groups` (or, with
    /// `ctx`, in that context): `what` is the teardown step attempted.
    pub(crate) fn refuse_with_open_streamer(
        &mut self,
        groups: &[usize],
        ctx: Option<usize>,
        what: &str,
        h: usize,
    ) -> R<()> {
        let open: Vec<String> = self
            .streamers
            .values()
            .filter(|s| groups.contains(&s.group) || Some(s.ctx) == ctx)
            .map(|s| self.groups[s.group].name.clone())
            .collect();
        if open.is_empty() {
            return Ok(());
        }
        self.violation(
            "teardown_with_open_streamer",
            h,
            format!("{what} while a metric streamer is open on metric group(s) {} (close it first)", open.join(", ")),
        );
        Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_convert_as_u64_does() {
        let edges = [0.0, -0.0, 0.5, 1.0, 2.5, 1e15, 9.2e18, 9.3e18, 1.8e19, 2e19, -1.0, f64::INFINITY];
        for x in edges.into_iter().chain([f64::NEG_INFINITY, f64::NAN, (1u64 << 63) as f64]) {
            assert_eq!(to_u64(x), x as u64, "{x}");
        }
    }

    #[test]
    fn periods_round_up_to_a_power_of_two_of_the_base_and_clamp() {
        assert_eq!(rounded_period(0), 10_000);
        assert_eq!(rounded_period(10_000), 10_000);
        assert_eq!(rounded_period(10_001), 20_000);
        assert_eq!(rounded_period(1_000_000), 1_280_000);
        assert_eq!(rounded_period(u32::MAX), 10_000 << 16);
    }
}
