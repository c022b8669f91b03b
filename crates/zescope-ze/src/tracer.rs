//! The metric tracer and its decoder (`ZET_experimental_metric_tracer`): the fourth way to read a
//! metric group, for tracer-based groups whose exported memory the workload writes events into.
//!
//! A [`Tracer`] is created (disabled) on groups activated on a device, enabled, read
//! ([`Tracer::read`]: raw bytes in the driver's own format), disabled and destroyed; a
//! [`Decoder`] of it lists the metrics it can decode and turns raw bytes into [`Entry`]s (value,
//! device timestamp, index of the metric, sub-device).
//!
//! Every entry point is optional: loaders before API 1.10 (Debian's 1.8.12) do not export them.
//! [`available`] says, before anything is created, which one is missing, as a
//! [`TracerError::Unsupported`]; a driver that leaves its slot empty answers
//! ZE_RESULT_ERROR_UNSUPPORTED_FEATURE (or UNINITIALIZED in the loader's intercept mode) at the
//! call, a [`TracerError::Ze`] like any other. As elsewhere in `ze`, nothing is released on Drop:
//! the sampler's teardown disables the tracer, destroys the decoder, then the tracer (each
//! consumes its value, so none is released twice).

use std::cell::Cell;

use level_zero_sys::*;

use super::context::Context;
use super::device::Device;
use super::error::{ZeError, check};
use super::loader::Ze;
use super::metric::{Metric, MetricGroup};

/// Why a tracer call could not be made or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TracerError {
    /// The loader (or simulated driver) has no such entry point: the metric tracer is not
    /// offered at all.
    #[error("the Level Zero loader lacks {call} (the metric tracer needs loader API 1.10 or newer)")]
    Unsupported {
        /// The first missing entry point.
        call: &'static str,
    },
    /// The call was made and failed.
    #[error("{0}")]
    Ze(#[from] ZeError),
}

impl TracerError {
    /// The failure as a [`ZeError`] (an absent entry point as ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).
    pub fn ze(&self) -> ZeError {
        match self {
            TracerError::Unsupported { call } => ZeError { call, code: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE },
            TracerError::Ze(e) => e.clone(),
        }
    }
}

macro_rules! call {
    ($ze:expr, $f:ident) => {
        $ze.api.$f.ok_or(TracerError::Unsupported { call: stringify!($f) })?
    };
}

/// `Ok` when every tracer and decoder entry point is in the table; else the first missing one.
pub fn available(ze: &Ze) -> Result<(), TracerError> {
    let a = &ze.api;
    let entries: [(&'static str, bool); 9] = [
        ("zetMetricTracerCreateExp", a.zetMetricTracerCreateExp.is_some()),
        ("zetMetricTracerEnableExp", a.zetMetricTracerEnableExp.is_some()),
        ("zetMetricTracerReadDataExp", a.zetMetricTracerReadDataExp.is_some()),
        ("zetMetricTracerDisableExp", a.zetMetricTracerDisableExp.is_some()),
        ("zetMetricTracerDestroyExp", a.zetMetricTracerDestroyExp.is_some()),
        ("zetMetricDecoderCreateExp", a.zetMetricDecoderCreateExp.is_some()),
        ("zetMetricDecoderDestroyExp", a.zetMetricDecoderDestroyExp.is_some()),
        ("zetMetricDecoderGetDecodableMetricsExp", a.zetMetricDecoderGetDecodableMetricsExp.is_some()),
        ("zetMetricTracerDecodeExp", a.zetMetricTracerDecodeExp.is_some()),
    ];
    match entries.into_iter().find(|(_, present)| !present) {
        Some((call, _)) => Err(TracerError::Unsupported { call }),
        None => Ok(()),
    }
}

/// The most bytes one read asks for.
pub const MAX_READ_BYTES: usize = 64 << 20;
/// The first read's buffer when the tracer's notification size says less.
const FIRST_READ_BYTES: usize = 64 << 10;
/// Reads in one [`Tracer::read`] at most (each further one only when the last filled its buffer).
const MAX_READS: usize = 8;

/// A metric tracer on groups activated on one device. Created disabled.
pub struct Tracer {
    ze: Ze,
    handle: zet_metric_tracer_exp_handle_t,
    /// Raw bytes per notification the driver uses (written back by the create call).
    pub notify_bytes: u32,
    /// The size of the next read's buffer: grows when a read fills it or is answered "too small".
    room: Cell<usize>,
}

/// What one [`Tracer::read`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TracerRead {
    /// Raw bytes now at the start of the buffer.
    pub bytes: usize,
    /// The driver answered ZE_RESULT_WARNING_DROPPED_DATA: events were lost before these.
    pub dropped: bool,
}

impl Tracer {
    /// `zetMetricTracerCreateExp` on `groups` (activated on `device` in `ctx`), asking for a
    /// notification every `notify_bytes`; no notification event (the sampler reads at its tick).
    pub fn create(
        ctx: &Context,
        device: &Device,
        groups: &[&MetricGroup],
        notify_bytes: u32,
    ) -> Result<Tracer, TracerError> {
        let ze = &device.ze;
        let f = call!(ze, zetMetricTracerCreateExp);
        let mut desc = zet_metric_tracer_exp_desc_t { notifyEveryNBytes: notify_bytes, ..Default::default() };
        let mut hs: Vec<zet_metric_group_handle_t> = groups.iter().map(|g| g.handle).collect();
        let mut h = std::ptr::null_mut();
        // SAFETY: live context, device and group handles; `hs` holds `hs.len()` handles; valid
        // descriptor and out-pointer; no event (null).
        check("zetMetricTracerCreateExp", unsafe {
            f(ctx.handle, device.handle, hs.len() as u32, hs.as_mut_ptr(), &mut desc, std::ptr::null_mut(), &mut h)
        })?;
        let room = (desc.notifyEveryNBytes as usize).saturating_mul(4).clamp(FIRST_READ_BYTES, MAX_READ_BYTES);
        Ok(Tracer { ze: ze.clone(), handle: h, notify_bytes: desc.notifyEveryNBytes, room: Cell::new(room) })
    }

    /// `zetMetricTracerEnableExp`, synchronously (collecting from the call on).
    pub fn enable(&self) -> Result<(), TracerError> {
        let f = call!(self.ze, zetMetricTracerEnableExp);
        // SAFETY: our tracer.
        Ok(check("zetMetricTracerEnableExp", unsafe { f(self.handle, 1) })?)
    }

    /// `zetMetricTracerDisableExp`, synchronously; what was collected can still be read.
    pub fn disable(&self) -> Result<(), TracerError> {
        let f = call!(self.ze, zetMetricTracerDisableExp);
        // SAFETY: our tracer.
        Ok(check("zetMetricTracerDisableExp", unsafe { f(self.handle, 1) })?)
    }

    /// Reads what the tracer collected into `buf` (which grows as needed). No size query (the
    /// 1.16 spec deprecates it, and drivers differ in what it answers): each read offers a buffer
    /// of the size the last reads needed; an answer that the buffer is too small
    /// (ZE_RESULT_ERROR_INVALID_SIZE, or INVALID_ARGUMENT for a buffer the driver cannot use)
    /// doubles it and asks again, and a read that fills it is followed by another with a larger
    /// one (at most 8 reads, [`MAX_READ_BYTES`] each). NOT_READY (nothing collected, tracer
    /// disabled) is an empty read.
    pub fn read(&self, buf: &mut Vec<u8>) -> Result<TracerRead, TracerError> {
        let f = call!(self.ze, zetMetricTracerReadDataExp);
        let mut out = TracerRead::default();
        let mut reads = 0;
        while reads < MAX_READS {
            reads += 1;
            let want = self.room.get();
            if buf.len() < out.bytes + want {
                buf.resize(out.bytes + want, 0);
            }
            let mut got = want;
            // SAFETY: our tracer; `buf[out.bytes..]` holds at least `want` writable bytes.
            let r = unsafe { f(self.handle, &mut got, buf[out.bytes..].as_mut_ptr()) };
            match r {
                ZE_RESULT_SUCCESS => {}
                ZE_RESULT_WARNING_DROPPED_DATA => out.dropped = true,
                ZE_RESULT_NOT_READY => break,
                ZE_RESULT_ERROR_INVALID_SIZE | ZE_RESULT_ERROR_INVALID_ARGUMENT if want < MAX_READ_BYTES => {
                    self.room.set((want * 2).min(MAX_READ_BYTES));
                    continue;
                }
                code => return Err(ZeError { call: "zetMetricTracerReadDataExp", code }.into()),
            }
            let got = got.min(want);
            out.bytes += got;
            if got < want || want >= MAX_READ_BYTES {
                break;
            }
            // Filled: more may wait; the next reads offer more room.
            self.room.set((want * 2).min(MAX_READ_BYTES));
        }
        Ok(out)
    }

    /// The size the next read offers (grows, never shrinks).
    pub fn read_room(&self) -> usize {
        self.room.get()
    }

    /// `zetMetricTracerDestroyExp`, after it was disabled and its decoders destroyed.
    pub fn destroy(self) -> Result<(), TracerError> {
        let f = call!(self.ze, zetMetricTracerDestroyExp);
        // SAFETY: our tracer, destroyed once (self is consumed).
        Ok(check("zetMetricTracerDestroyExp", unsafe { f(self.handle) })?)
    }
}

/// One decoded event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    /// The value, as its decodable metric's result type says.
    pub value: f64,
    /// When it happened, in device time (ns of the device's global timer, as a streamer
    /// report's timestamp metric).
    pub timestamp: u64,
    /// Index of its metric in [`Decoder::metrics`].
    pub metric: u32,
    /// The sub-device it happened on, when the tracer's device has sub-devices.
    pub sub_device: Option<u32>,
}

/// A decoder of one tracer's raw data, with the metrics it decodes.
pub struct Decoder {
    ze: Ze,
    handle: zet_metric_decoder_exp_handle_t,
    /// The decodable metrics, in the driver's order (entries name them by index).
    pub metrics: Vec<Metric>,
    /// The entry buffer handed to the driver, kept (and grown) between decodes.
    entries: Vec<zet_metric_entry_exp_t>,
    /// Handles of `metrics`, as the driver takes them.
    handles: Vec<zet_metric_handle_t>,
}

/// Entries the first decode makes room for.
const FIRST_ENTRIES: usize = 4096;
/// Entries a decode call makes room for at most (32 MiB of entries); more data is decoded in
/// several calls.
pub const MAX_ENTRIES: usize = 1 << 20;

/// Room for the decodable-metric array of the count query: the loader in intercept mode
/// rewrites `*pCount` handles of it after the driver answers, and its validation layer refuses
/// a null array.
const DECODABLE_ROOM: usize = 4096;

impl Decoder {
    /// `zetMetricDecoderCreateExp` on `tracer`, then its decodable metrics (a count query, then
    /// the handles). A decoder made before a failure of the listing is destroyed again.
    pub fn create(tracer: &Tracer) -> Result<Decoder, TracerError> {
        let f = call!(tracer.ze, zetMetricDecoderCreateExp);
        let list = call!(tracer.ze, zetMetricDecoderGetDecodableMetricsExp);
        let mut h = std::ptr::null_mut();
        // SAFETY: our tracer and a valid out-pointer.
        check("zetMetricDecoderCreateExp", unsafe { f(tracer.handle, &mut h) })?;
        let mut d =
            Decoder { ze: tracer.ze.clone(), handle: h, metrics: Vec::new(), entries: Vec::new(), handles: Vec::new() };
        let listed = (|| {
            let mut v: Vec<zet_metric_handle_t> = vec![std::ptr::null_mut(); DECODABLE_ROOM];
            let mut n = 0u32;
            // SAFETY: our decoder; `v` holds DECODABLE_ROOM handles (see there).
            check("zetMetricDecoderGetDecodableMetricsExp", unsafe { list(h, &mut n, v.as_mut_ptr()) })?;
            n = n.min(DECODABLE_ROOM as u32);
            v.iter_mut().for_each(|x| *x = std::ptr::null_mut());
            // SAFETY: as above; `n` ≤ DECODABLE_ROOM.
            check("zetMetricDecoderGetDecodableMetricsExp", unsafe { list(h, &mut n, v.as_mut_ptr()) })?;
            v.truncate((n as usize).min(DECODABLE_ROOM));
            // SAFETY: handles just listed by the driver for this decoder.
            v.into_iter().map(|m| unsafe { Metric::new(d.ze.clone(), m) }).collect::<Result<Vec<_>, ZeError>>()
        })();
        match listed {
            Ok(m) => {
                d.metrics = m;
                Ok(d)
            }
            Err(e) => {
                let _ = d.destroy();
                Err(e.into())
            }
        }
    }

    /// Decodes `raw` (whole reads of the tracer) for every decodable metric into `out` (cleared
    /// first). `raw` is handed to the driver as is (the API's raw data is in/out, so the driver
    /// may write to it); its contents afterwards are unspecified.
    ///
    /// No count pass: the entry buffer kept from the last call is filled, and while the driver
    /// says it processed only part of the data (a full buffer, `*pRawDataSize` lowered, as the
    /// API documents), the rest is decoded in the next call with a buffer twice the size (up to
    /// [`MAX_ENTRIES`]). A buffer filled exactly with every byte processed is decoded once more
    /// with the larger buffer, for drivers that leave `*pRawDataSize` alone (no count query: no
    /// call of size 0). Entries come set after set within each call; across calls, in raw order
    /// of the calls.
    pub fn decode(&mut self, raw: &mut [u8], out: &mut Vec<Entry>) -> Result<(), TracerError> {
        out.clear();
        if raw.is_empty() || self.metrics.is_empty() {
            return Ok(());
        }
        let f = call!(self.ze, zetMetricTracerDecodeExp);
        self.handles.clear();
        self.handles.extend(self.metrics.iter().map(|m| m.handle));
        if self.entries.is_empty() {
            self.entries = vec![zet_metric_entry_exp_t::default(); FIRST_ENTRIES];
        }
        let mut at = 0;
        while at < raw.len() {
            let rest = &mut raw[at..];
            let (mut size, mut sets, mut count) = (rest.len(), 0u32, self.entries.len() as u32);
            let hs = &mut self.handles;
            // SAFETY: our decoder; `rest` holds `size` bytes, `hs` its handles and `entries`
            // `count` entries; the per-set counts are optional (null).
            check("zetMetricTracerDecodeExp", unsafe {
                f(
                    self.handle,
                    &mut size,
                    rest.as_mut_ptr(),
                    hs.len() as u32,
                    hs.as_mut_ptr(),
                    &mut sets,
                    std::ptr::null_mut(),
                    &mut count,
                    self.entries.as_mut_ptr(),
                )
            })?;
            let n = (count as usize).min(self.entries.len());
            let metrics = &self.metrics;
            let before = out.len();
            out.extend(self.entries[..n].iter().map(|e| Entry {
                value: value_of(e, metrics.get(e.metricIndex as usize).map(|m| m.info.value_type)),
                timestamp: e.timeStamp,
                metric: e.metricIndex,
                sub_device: (e.onSubdevice != 0).then_some(e.subdeviceId),
            }));
            let full = n == self.entries.len();
            if full && self.entries.len() < MAX_ENTRIES {
                let grown = (self.entries.len() * 2).min(MAX_ENTRIES);
                self.entries.resize(grown, zet_metric_entry_exp_t::default());
            }
            if !full {
                break;
            }
            if size < rest.len() {
                if size == 0 {
                    return Err(ZeError { call: "zetMetricTracerDecodeExp", code: ZE_RESULT_ERROR_INVALID_SIZE }.into());
                }
                at += size;
                continue;
            }
            // A full buffer and every byte processed: everything, unless the driver does not
            // lower `*pRawDataSize`. No count query (no call of size 0): the rest is decoded
            // again with the buffer grown above; a decode that does not fill it is the whole.
            if n == self.entries.len() {
                break;
            }
            out.truncate(before);
        }
        Ok(())
    }

    /// `zetMetricDecoderDestroyExp`, after its tracer was disabled and before the tracer is
    /// destroyed.
    pub fn destroy(self) -> Result<(), TracerError> {
        let f = call!(self.ze, zetMetricDecoderDestroyExp);
        // SAFETY: our decoder, destroyed once (self is consumed).
        Ok(check("zetMetricDecoderDestroyExp", unsafe { f(self.handle) })?)
    }
}

/// An entry's value as `f64`, read as its metric's result type (NaN for an unknown type or
/// metric).
fn value_of(e: &zet_metric_entry_exp_t, ty: Option<zet_value_type_t>) -> f64 {
    match ty {
        Some(t) => zet_typed_value_t { r#type: t, value: e.value }.as_f64().unwrap_or(f64::NAN),
        None => f64::NAN,
    }
}
