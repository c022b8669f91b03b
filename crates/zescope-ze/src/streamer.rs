//! The time-based metric streamer: a host-visible event pool and notification event, the
//! streamer itself (`zetMetricStreamerOpen`/`ReadData`/`Close`), Calculate, and the device/host
//! clock pair that maps report times onto the host clock.
//!
//! Every one of these calls is optional (`docs/level-zero-calls.md`): an entry point the loader
//! or driver lacks answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE here, like an empty DDI slot. As
//! elsewhere in `ze`, nothing is released on Drop: the sampler's teardown closes the streamer,
//! then destroys the event and the pool (each consumes its value, so none is released twice).

use level_zero_sys::*;

use super::context::Context;
use super::device::Device;
use super::error::{ZeError, check};
use super::loader::Ze;
use super::metric::MetricGroup;

/// The answer for an entry point the `Api` table does not have.
fn missing(call: &'static str) -> ZeError {
    ZeError { call, code: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE }
}

macro_rules! call {
    ($ze:expr, $f:ident) => {
        $ze.api.$f.ok_or_else(|| missing(stringify!($f)))?
    };
}

/// A host-visible event pool of one event. Destroyed (consumed) after its event.
pub struct EventPool {
    ze: Ze,
    handle: ze_event_pool_handle_t,
}

/// The event a streamer signals when reports are ready. Destroyed (consumed) after the streamer
/// is closed and before its pool.
pub struct NotifyEvent {
    ze: Ze,
    handle: ze_event_handle_t,
}

impl EventPool {
    /// A pool of one host-visible event in `ctx`, visible to `device`.
    pub fn create(ctx: &Context, device: &Device) -> Result<EventPool, ZeError> {
        let ze = &device.ze;
        let f = call!(ze, zeEventPoolCreate);
        let desc = ze_event_pool_desc_t { flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE, count: 1, ..Default::default() };
        let mut devices = [device.handle];
        let mut h = std::ptr::null_mut();
        // SAFETY: valid descriptor, a one-element device list and an out-pointer.
        check("zeEventPoolCreate", unsafe { f(ctx.handle, &desc, 1, devices.as_mut_ptr(), &mut h) })?;
        Ok(EventPool { ze: ze.clone(), handle: h })
    }

    /// The pool's one event.
    pub fn event(&self) -> Result<NotifyEvent, ZeError> {
        let f = call!(self.ze, zeEventCreate);
        let desc = ze_event_desc_t {
            index: 0,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
            ..Default::default()
        };
        let mut h = std::ptr::null_mut();
        // SAFETY: our pool, a valid descriptor and out-pointer.
        check("zeEventCreate", unsafe { f(self.handle, &desc, &mut h) })?;
        Ok(NotifyEvent { ze: self.ze.clone(), handle: h })
    }

    /// `zeEventPoolDestroy`, after its event was destroyed.
    pub fn destroy(self) -> Result<(), ZeError> {
        let f = call!(self.ze, zeEventPoolDestroy);
        // SAFETY: our pool, destroyed once (self is consumed).
        check("zeEventPoolDestroy", unsafe { f(self.handle) })
    }
}

impl NotifyEvent {
    /// Is the event signaled? Waits up to `timeout_ns` (0: only asks).
    pub fn wait(&self, timeout_ns: u64) -> Result<bool, ZeError> {
        let f = call!(self.ze, zeEventHostSynchronize);
        // SAFETY: our event.
        match unsafe { f(self.handle, timeout_ns) } {
            ZE_RESULT_SUCCESS => Ok(true),
            ZE_RESULT_NOT_READY => Ok(false),
            code => Err(ZeError { call: "zeEventHostSynchronize", code }),
        }
    }

    /// Back to unsignaled, after the reports it announced were read.
    pub fn reset(&self) -> Result<(), ZeError> {
        let f = call!(self.ze, zeEventHostReset);
        // SAFETY: our event.
        check("zeEventHostReset", unsafe { f(self.handle) })
    }

    /// `zeEventDestroy`, after the streamer that signals it was closed.
    pub fn destroy(self) -> Result<(), ZeError> {
        let f = call!(self.ze, zeEventDestroy);
        // SAFETY: our event, destroyed once (self is consumed).
        check("zeEventDestroy", unsafe { f(self.handle) })
    }
}

/// An open metric streamer, with the period and report count the driver wrote back.
pub struct Streamer {
    ze: Ze,
    handle: zet_metric_streamer_handle_t,
    /// The sampling period the driver uses, ns.
    pub period_ns: u32,
    /// Reports per notification the driver uses.
    pub notify_every: u32,
    /// How reads are sized (see [`Streamer::read`]).
    sizing: std::cell::Cell<Sizing>,
    /// When it was opened: reports are due a few periods later.
    opened: std::time::Instant,
}

/// How [`Streamer::read`] sizes its reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sizing {
    /// A buffer of `room` bytes, never a size query (the 1.16 specification deprecates it).
    /// `proven`: a read copied reports; until then each read's buffer is filled with a canary
    /// first, so a driver that answers a size without copying is seen. `empty`: reads in a row
    /// that copied nothing. `asked`: the deprecated query was tried once and did not help.
    Fixed { room: usize, proven: bool, empty: u32, asked: bool },
    /// The driver copies nothing to a read that does not follow a size query (Intel's NPU driver
    /// copies at most what the last query answered): each read follows one.
    Queried,
}

/// The most bytes one read asks for (a driver's size answer is not trusted beyond it).
pub const MAX_READ_BYTES: usize = 64 << 20;

/// The buffer a streamer's reads start with; it doubles after a read that fills it.
pub const FIRST_READ_BYTES: usize = 256 << 10;

/// Reads in one [`Streamer::read`] at most (each further one only when the last filled its
/// buffer, as the spec asks of a reader).
const MAX_READS: usize = 8;

/// Reads in a row that copied nothing, over at least [`SILENT_PERIODS`] periods since the open,
/// before the driver is taken for one that copies only after a size query.
const EMPTY_READS_BEFORE_QUERY: u32 = 3;
const SILENT_PERIODS: u32 = 8;

/// What a read buffer holds before a read while the driver has not been seen to copy.
const CANARY: u8 = 0xa5;

/// Driver calls one read makes at most: [`MAX_READS`] for a whole read, one for a part
/// ([`Streamer::read_at_most`] of fewer than `u32::MAX` reports).
fn calls(max_reports: u32) -> usize {
    if max_reports == u32::MAX { MAX_READS } else { 1 }
}

/// What one read found.
pub struct ReadData {
    /// Bytes of raw reports now in the buffer.
    pub bytes: usize,
    /// The driver answered ZE_RESULT_WARNING_DROPPED_DATA: reports were lost before these.
    pub dropped: bool,
    /// The last call filled all it was given (the buffer, or what a size query answered): the
    /// driver may hold more reports.
    pub more: bool,
}

impl Streamer {
    /// Opens a streamer on `group` (activated on `device` in `ctx`), asking for `period_ns` and a
    /// notification every `notify_every` reports through `event`.
    pub fn open(
        ctx: &Context,
        device: &Device,
        group: &MetricGroup,
        period_ns: u32,
        notify_every: u32,
        event: Option<&NotifyEvent>,
    ) -> Result<Streamer, ZeError> {
        let ze = &device.ze;
        let f = call!(ze, zetMetricStreamerOpen);
        let mut desc = zet_metric_streamer_desc_t {
            samplingPeriod: period_ns,
            notifyEveryNReports: notify_every,
            ..Default::default()
        };
        let ev = event.map_or(std::ptr::null_mut(), |e| e.handle);
        let mut h = std::ptr::null_mut();
        // SAFETY: live context, device, group and event handles; valid descriptor and out-pointer.
        match unsafe { f(ctx.handle, device.handle, group.handle, &mut desc, ev, &mut h) } {
            ZE_RESULT_SUCCESS => {}
            // A success-class code: open when the driver gave a handle. Intel's NPU driver answers
            // it, with no handle, for a group that is not activated: then it is an error whose
            // hint says so.
            ZE_RESULT_NOT_READY if !h.is_null() => {}
            code => return Err(ZeError { call: "zetMetricStreamerOpen", code }),
        }
        Ok(Streamer {
            ze: ze.clone(),
            handle: h,
            period_ns: desc.samplingPeriod,
            notify_every: desc.notifyEveryNReports,
            sizing: std::cell::Cell::new(Sizing::Fixed {
                room: FIRST_READ_BYTES,
                proven: false,
                empty: 0,
                asked: false,
            }),
            opened: std::time::Instant::now(),
        })
    }

    /// `zetMetricStreamerReadData` of up to `max_reports` reports and `*size` bytes into `data`
    /// (null: a size query); Ok(true) when the driver said reports were dropped.
    fn read_call(&self, max_reports: u32, size: &mut usize, data: *mut u8) -> Result<bool, ZeError> {
        let f = call!(self.ze, zetMetricStreamerReadData);
        // SAFETY: our streamer; `data` is null (a size query) or holds `*size` writable bytes.
        match unsafe { f(self.handle, max_reports, size, data) } {
            ZE_RESULT_SUCCESS => Ok(false),
            ZE_RESULT_WARNING_DROPPED_DATA => Ok(true),
            code => Err(ZeError { call: "zetMetricStreamerReadData", code }),
        }
    }

    /// Reads the available reports into `buf`, the caller's buffer kept between reads. As the
    /// 1.16 specification asks: no size query (`*pRawDataSize == 0`, deprecated), a buffer of a
    /// fixed size (256 KiB at first), and while a read fills it, another read with a buffer twice
    /// the size, which is kept (at most 8 reads, [`MAX_READ_BYTES`] each).
    ///
    /// One driver needs otherwise: Intel's NPU driver copies no more than its last size query
    /// answered (nothing before the first), by its public source. When reads have copied nothing
    /// three times in a row, eight periods and more after the open (each read's buffer holds a
    /// canary until a read copies, so a driver that answers a size without copying is seen), the
    /// size query is tried ONCE; if it answers a size, this streamer's reads follow a size query
    /// from then on. A driver that refuses the query (INVALID_ARGUMENT, the newer specification)
    /// or answers nothing keeps its fixed reads.
    pub fn read(&self, buf: &mut Vec<u8>) -> Result<ReadData, ZeError> {
        self.read_at_most(buf, u32::MAX)
    }

    /// One call of [`Streamer::read`] asking the driver for at most `max_reports` reports (its
    /// `maxReportCount`; `u32::MAX`: the whole read): a reader that takes a full buffer in parts,
    /// each decoded before the next is read, keeps its working set small. A driver may give fewer
    /// (or, ignoring the count, more); the reports left wait for the next part, which
    /// [`ReadData::more`] says may be worth asking for.
    pub fn read_at_most(&self, buf: &mut Vec<u8>, max_reports: u32) -> Result<ReadData, ZeError> {
        match self.sizing.get() {
            Sizing::Queried => self.read_queried(buf, max_reports),
            Sizing::Fixed { .. } => self.read_fixed(buf, max_reports),
        }
    }

    fn read_fixed(&self, buf: &mut Vec<u8>, max_reports: u32) -> Result<ReadData, ZeError> {
        let (mut total, mut dropped, mut more) = (0usize, false, false);
        for _ in 0..calls(max_reports) {
            let Sizing::Fixed { room, proven, empty, asked } = self.sizing.get() else { break };
            if buf.len() < total + room {
                buf.resize(total + room, 0);
            }
            let region = &mut buf[total..total + room];
            if !proven {
                region.fill(CANARY);
            }
            let mut got = room;
            dropped |= self.read_call(max_reports, &mut got, region.as_mut_ptr())?;
            let mut got = got.min(room);
            if !proven && got > 0 && region[..got].iter().all(|&b| b == CANARY) {
                got = 0; // a size answered, nothing copied
            }
            total += got;
            more = got == room;
            let full = more && room < MAX_READ_BYTES;
            let grown = if full { (room * 2).min(MAX_READ_BYTES) } else { room };
            let empty = if total == 0 && !proven { empty + 1 } else { 0 };
            self.sizing.set(Sizing::Fixed { room: grown, proven: proven || got > 0, empty, asked });
            if !full {
                break;
            }
        }
        if let Sizing::Fixed { proven: false, empty, asked: false, room } = self.sizing.get()
            && empty >= EMPTY_READS_BEFORE_QUERY
            && self.opened.elapsed().as_nanos() >= u128::from(self.period_ns) * u128::from(SILENT_PERIODS)
        {
            self.sizing.set(Sizing::Fixed { room, proven: false, empty, asked: true });
            let mut size = 0usize;
            if self.read_call(max_reports, &mut size, std::ptr::null_mut()).is_ok_and(|_| size > 0) {
                log::warn!(
                    "the metric streamer's driver copies reports only after the size query the 1.16 specification \
                     deprecated (it copied nothing to {empty} reads of a fixed buffer): its reads follow one"
                );
                self.sizing.set(Sizing::Queried);
                return self.read_queried(buf, max_reports);
            }
        }
        Ok(ReadData { bytes: total, dropped, more })
    }

    /// Reads each after a size query (drivers that copy nothing otherwise, see [`Streamer::read`]).
    fn read_queried(&self, buf: &mut Vec<u8>, max_reports: u32) -> Result<ReadData, ZeError> {
        let (mut total, mut dropped, mut more) = (0usize, false, false);
        for _ in 0..calls(max_reports) {
            let mut want = 0usize;
            dropped |= self.read_call(max_reports, &mut want, std::ptr::null_mut())?;
            let want = want.min(MAX_READ_BYTES);
            if want == 0 {
                break;
            }
            if buf.len() < total + want {
                buf.resize(total + want, 0);
            }
            let mut got = want;
            dropped |= self.read_call(max_reports, &mut got, buf[total..].as_mut_ptr())?;
            let got = got.min(want);
            total += got;
            more = got == want;
            if got < want || total >= MAX_READ_BYTES {
                break;
            }
        }
        Ok(ReadData { bytes: total, dropped, more })
    }

    /// Whether reads go without a size query: always, except on a driver that copies nothing
    /// otherwise (see [`Streamer::read`]).
    pub fn reads_without_size_query(&self) -> bool {
        self.sizing.get() != Sizing::Queried
    }

    /// `zetMetricStreamerClose`: first in every teardown.
    pub fn close(self) -> Result<(), ZeError> {
        let f = call!(self.ze, zetMetricStreamerClose);
        // SAFETY: our streamer, closed once (self is consumed).
        check("zetMetricStreamerClose", unsafe { f(self.handle) })
    }
}

/// Decodes raw reports of `group` into `out` (values of every set, set after set) and the value
/// count of each set into `counts`. Uses `zetMetricGroupCalculateMultipleMetricValuesExp` and
/// falls back to `zetMetricGroupCalculateMetricValues` (one set) where the driver lacks it. Both
/// buffers are the caller's, kept from call to call (a read allocates nothing once they are as
/// large as it needs, and not filled anew: only what a call needs beyond the last one's length).
pub fn calculate(
    group: &MetricGroup,
    raw: &[u8],
    out: &mut Vec<zet_typed_value_t>,
    counts: &mut Vec<u32>,
) -> Result<(), ZeError> {
    if raw.is_empty() {
        out.clear();
        counts.clear();
        return Ok(());
    }
    let ty = ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES;
    if let Some(f) = group.ze.api.zetMetricGroupCalculateMultipleMetricValuesExp {
        let (mut sets, mut total) = (0u32, 0u32);
        let null = std::ptr::null_mut();
        // SAFETY: count query over `raw`.
        let r = unsafe { f(group.handle, ty, raw.len(), raw.as_ptr(), &mut sets, &mut total, null, null.cast()) };
        if r == ZE_RESULT_SUCCESS {
            fit(counts, sets as usize);
            fit(out, total as usize);
            // SAFETY: buffers of the sizes the driver asked for.
            check("zetMetricGroupCalculateMultipleMetricValuesExp", unsafe {
                f(
                    group.handle,
                    ty,
                    raw.len(),
                    raw.as_ptr(),
                    &mut sets,
                    &mut total,
                    counts.as_mut_ptr(),
                    out.as_mut_ptr(),
                )
            })?;
            out.truncate(total as usize);
            counts.truncate(sets as usize);
            return Ok(());
        }
        if r != ZE_RESULT_ERROR_UNSUPPORTED_FEATURE && r != ZE_RESULT_ERROR_UNINITIALIZED {
            return Err(ZeError { call: "zetMetricGroupCalculateMultipleMetricValuesExp", code: r });
        }
    }
    let f = call!(group.ze, zetMetricGroupCalculateMetricValues);
    let mut n = 0u32;
    // SAFETY: count query over `raw`.
    check("zetMetricGroupCalculateMetricValues", unsafe {
        f(group.handle, ty, raw.len(), raw.as_ptr(), &mut n, std::ptr::null_mut())
    })?;
    fit(out, n as usize);
    counts.clear();
    // SAFETY: a buffer of `n` values.
    check("zetMetricGroupCalculateMetricValues", unsafe {
        f(group.handle, ty, raw.len(), raw.as_ptr(), &mut n, out.as_mut_ptr())
    })?;
    out.truncate(n as usize);
    counts.push(n);
    Ok(())
}

/// `v` at length `n` for a driver to write: grown with defaults where it is shorter, else cut.
/// Not cleared first: a read of thousands of reports re-zeroed every value before the driver
/// wrote it (a memset of ~100 bytes a report at 100k reports a second).
fn fit<T: Clone + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    } else {
        v.truncate(n);
    }
}

/// The device's global timer: how fast it counts and how many of its bits are valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    /// Ticks per second.
    pub hz: u64,
    /// Valid low bits of a tick count (64: it does not wrap in practice).
    pub valid_bits: u32,
}

impl Timer {
    /// A timer counting ns over 64 bits: what is assumed when the driver says nothing usable.
    pub const NS: Timer = Timer { hz: 1_000_000_000, valid_bits: 64 };

    /// The timer from the two answers of `zeDeviceGetProperties`: `timerResolution` is ns per
    /// tick (an integer: 52 for a 19.2 MHz timer) to the 1.0 query and ticks per second to the
    /// 1.2 one. The exact 1.2 figure is taken only when it agrees with the 1.0 one (a driver
    /// that ignores the 1.2 type answers the 1.0 field there); else the 1.0 figure, else ns.
    pub fn from_resolutions(ns_per_tick: u64, ticks_per_s: Option<u64>, valid_bits: u32) -> Timer {
        let valid_bits = if valid_bits == 0 || valid_bits > 64 { 64 } else { valid_bits };
        let agrees =
            |hz: u64| (1_000..=100_000_000_000).contains(&hz) && (1e9 / hz as f64 - ns_per_tick as f64).abs() <= 1.0;
        let hz = match ticks_per_s {
            Some(hz) if ns_per_tick > 0 && agrees(hz) => hz,
            _ if ns_per_tick > 0 => 1_000_000_000 / ns_per_tick,
            _ => 1_000_000_000,
        };
        Timer { hz, valid_bits }
    }

    /// Ticks in ns (exact to the ns for any 64-bit count).
    pub fn ticks_to_ns(self, ticks: u64) -> i128 {
        i128::from(ticks) * 1_000_000_000 / i128::from(self.hz.max(1))
    }

    /// How long the tick count takes to wrap, in ns; `None` for 64 valid bits.
    pub fn wrap_ns(self) -> Option<i128> {
        (self.valid_bits < 64).then(|| (1i128 << self.valid_bits) * 1_000_000_000 / i128::from(self.hz.max(1)))
    }
}

impl Device {
    /// The device's global timer (see [`Timer::from_resolutions`]); [`Timer::NS`] when the
    /// driver answers neither query.
    pub fn timer(&self) -> Timer {
        let query = |stype| {
            let mut p = ze_device_properties_t { stype, ..Default::default() };
            // SAFETY: our device; a valid properties struct with a null chain.
            let r = unsafe { (self.ze.api.zeDeviceGetProperties)(self.handle, &mut p) };
            (r == ZE_RESULT_SUCCESS).then_some((p.timerResolution, p.timestampValidBits))
        };
        let Some((ns_per_tick, bits)) = query(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES) else { return Timer::NS };
        let hz = query(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2).map(|(hz, _)| hz);
        Timer::from_resolutions(ns_per_tick, hz, bits)
    }

    /// `zeDeviceGetGlobalTimestamps`: (host ns, device ticks) read together.
    pub fn global_timestamps(&self) -> Result<(u64, u64), ZeError> {
        let (mut host, mut dev) = (0u64, 0u64);
        // SAFETY: our device; valid out-pointers.
        check("zeDeviceGetGlobalTimestamps", unsafe {
            (self.ze.api.zeDeviceGetGlobalTimestamps)(self.handle, &mut host, &mut dev)
        })?;
        Ok((host, dev))
    }
}
