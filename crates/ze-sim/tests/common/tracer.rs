//! Raw helpers for the metric tracer and decoder, and the check that decoded entries are what
//! the workload wrote.

use level_zero_sys::*;
use ze_sim::ring::{self, TraceEvent};

use super::{R, Raw, ok};

/// Capacity of the decodable-metric array passed to every query: through a loader in intercept
/// mode the count query must pass a buffer (the validation layer refuses null) that holds the
/// count, because the loader rewrites `*pCount` handles of it after the driver answers.
pub const DECODABLE_ROOM: usize = 64;

/// What one decode call gave back.
pub struct Entries {
    pub sets: u32,
    pub per_set: Vec<u32>,
    pub entries: Vec<zet_metric_entry_exp_t>,
}

fn f<T>(f: Option<T>) -> T {
    f.expect("the tracer entry points are in the Api")
}

impl Raw {
    /// The device's first group that is tracer-based and exports DMA-BUF, selected as Intel's
    /// conformance suite does (sampling type and group type each exactly that).
    pub fn tracer_group(&self, d: ze_device_handle_t) -> R<zet_metric_group_handle_t> {
        for g in self.groups(d)? {
            let i = self.group(g)?;
            if i.sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED
                && i.type_flags == ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF
            {
                return Ok(g);
            }
        }
        Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    /// A tracer on `groups`; returns it and the `notifyEveryNBytes` the driver wrote back.
    pub fn tracer_create(
        &self,
        c: ze_context_handle_t,
        d: ze_device_handle_t,
        groups: &[zet_metric_group_handle_t],
        notify: u32,
        event: ze_event_handle_t,
    ) -> R<(zet_metric_tracer_exp_handle_t, u32)> {
        let mut desc = zet_metric_tracer_exp_desc_t { notifyEveryNBytes: notify, ..Default::default() };
        let mut gs = groups.to_vec();
        let mut t = std::ptr::null_mut();
        // SAFETY: valid descriptor, group array and out-pointer for the call.
        ok(unsafe {
            f(self.api.zetMetricTracerCreateExp)(c, d, gs.len() as u32, gs.as_mut_ptr(), &mut desc, event, &mut t)
        })?;
        Ok((t, desc.notifyEveryNBytes))
    }

    pub fn tracer_enable(&self, t: zet_metric_tracer_exp_handle_t, synchronous: bool) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { f(self.api.zetMetricTracerEnableExp)(t, synchronous as ze_bool_t) })
    }

    pub fn tracer_disable(&self, t: zet_metric_tracer_exp_handle_t, synchronous: bool) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { f(self.api.zetMetricTracerDisableExp)(t, synchronous as ze_bool_t) })
    }

    pub fn tracer_destroy(&self, t: zet_metric_tracer_exp_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { f(self.api.zetMetricTracerDestroyExp)(t) })
    }

    /// One read into a buffer of `room` bytes: (result, the bytes read).
    pub fn tracer_read_into(&self, t: zet_metric_tracer_exp_handle_t, room: usize) -> (ze_result_t, Vec<u8>) {
        let mut buf = vec![0u8; room];
        let mut size = room;
        // SAFETY: `buf` holds `size` bytes.
        let r = unsafe { f(self.api.zetMetricTracerReadDataExp)(t, &mut size, buf.as_mut_ptr()) };
        buf.truncate(size.min(room));
        (r, buf)
    }

    /// The size query (`*pRawDataSize == 0`, no buffer): (result, bytes available).
    pub fn tracer_available(&self, t: zet_metric_tracer_exp_handle_t) -> (ze_result_t, usize) {
        let mut size = 0;
        // SAFETY: valid out-pointer, no buffer.
        let r = unsafe { f(self.api.zetMetricTracerReadDataExp)(t, &mut size, std::ptr::null_mut()) };
        (r, size)
    }

    /// A read into a buffer of 4 MiB (no size query: the driver refuses it by default): (result
    /// of the read, the bytes); Err for a result other than SUCCESS.
    pub fn tracer_read(&self, t: zet_metric_tracer_exp_handle_t) -> R<(ze_result_t, Vec<u8>)> {
        let (r, raw) = self.tracer_read_into(t, 4 << 20);
        if r != ZE_RESULT_SUCCESS {
            return Err(r);
        }
        Ok((r, raw))
    }

    pub fn decoder_create(&self, t: zet_metric_tracer_exp_handle_t) -> R<zet_metric_decoder_exp_handle_t> {
        let mut dec = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { f(self.api.zetMetricDecoderCreateExp)(t, &mut dec) })?;
        Ok(dec)
    }

    pub fn decoder_destroy(&self, dec: zet_metric_decoder_exp_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { f(self.api.zetMetricDecoderDestroyExp)(dec) })
    }

    /// The decodable metrics: a count query, then the handles (both with a zeroed buffer of
    /// [`DECODABLE_ROOM`], see there).
    pub fn decodable(&self, dec: zet_metric_decoder_exp_handle_t) -> R<Vec<zet_metric_handle_t>> {
        let mut v = vec![std::ptr::null_mut(); DECODABLE_ROOM];
        let mut n = 0;
        // SAFETY: `v` holds DECODABLE_ROOM handles, more than any decoder here lists.
        ok(unsafe { f(self.api.zetMetricDecoderGetDecodableMetricsExp)(dec, &mut n, v.as_mut_ptr()) })?;
        assert!(n > 0 && n as usize <= DECODABLE_ROOM, "decodable metric count {n}");
        let want = n;
        v.iter_mut().for_each(|h| *h = std::ptr::null_mut());
        // SAFETY: as above; `n` ≤ DECODABLE_ROOM.
        ok(unsafe { f(self.api.zetMetricDecoderGetDecodableMetricsExp)(dec, &mut n, v.as_mut_ptr()) })?;
        assert_eq!(n, want, "the count query and the listing agree");
        v.truncate(n as usize);
        Ok(v)
    }

    /// Decodes `raw` for `metrics`: a count pass, then the entries.
    pub fn decode(
        &self,
        dec: zet_metric_decoder_exp_handle_t,
        raw: &[u8],
        metrics: &[zet_metric_handle_t],
    ) -> R<Entries> {
        let mut raw = raw.to_vec();
        let mut ms = metrics.to_vec();
        let (mut size, mut sets, mut count) = (raw.len(), 0u32, 0u32);
        let decode = f(self.api.zetMetricTracerDecodeExp);
        // SAFETY: every pointer is valid for the sizes passed; the count pass writes no entries.
        ok(unsafe {
            decode(
                dec,
                &mut size,
                raw.as_mut_ptr(),
                ms.len() as u32,
                ms.as_mut_ptr(),
                &mut sets,
                std::ptr::null_mut(),
                &mut count,
                std::ptr::null_mut(),
            )
        })?;
        let mut per_set = vec![0u32; sets as usize];
        let mut entries = vec![zet_metric_entry_exp_t::default(); count as usize];
        if count > 0 {
            // SAFETY: `per_set` holds `sets` counts and `entries` `count` entries.
            ok(unsafe {
                decode(
                    dec,
                    &mut size,
                    raw.as_mut_ptr(),
                    ms.len() as u32,
                    ms.as_mut_ptr(),
                    &mut sets,
                    per_set.as_mut_ptr(),
                    &mut count,
                    entries.as_mut_ptr(),
                )
            })?;
        }
        entries.truncate(count as usize);
        Ok(Entries { sets, per_set, entries })
    }

    /// One decode call asking for `room` entries, into a buffer of `room + 2` filled with `fill`
    /// (so a write past the count shows), with `sets` per-set counts (0: none asked): the
    /// result, the count and raw size it wrote back, and both buffers as they are afterwards.
    pub fn decode_once(
        &self,
        dec: zet_metric_decoder_exp_handle_t,
        raw: &[u8],
        metrics: &[zet_metric_handle_t],
        room: usize,
        sets: usize,
        fill: zet_metric_entry_exp_t,
    ) -> Once {
        let (mut raw, mut ms) = (raw.to_vec(), metrics.to_vec());
        let mut o = Once {
            result: 0,
            count: room as u32,
            size: raw.len(),
            per_set: vec![0; sets],
            entries: vec![fill; room + 2],
        };
        let mut set_count = sets as u32;
        let per_set = if sets == 0 { std::ptr::null_mut() } else { o.per_set.as_mut_ptr() };
        // SAFETY: `raw`, `ms`, `per_set` and `entries` hold what the counts passed say.
        o.result = unsafe {
            f(self.api.zetMetricTracerDecodeExp)(
                dec,
                &mut o.size,
                raw.as_mut_ptr(),
                ms.len() as u32,
                ms.as_mut_ptr(),
                &mut set_count,
                per_set,
                &mut o.count,
                o.entries.as_mut_ptr(),
            )
        };
        o
    }
}

/// What [`Raw::decode_once`] gave back.
pub struct Once {
    pub result: ze_result_t,
    pub count: u32,
    pub size: usize,
    pub per_set: Vec<u32>,
    pub entries: Vec<zet_metric_entry_exp_t>,
}

/// Checks that `entries` (decoded from `raw` with every decodable metric, in decodable order, on
/// a device with one sub-device) are exactly what the workload wrote: each raw record is event
/// `seq` of the group as `ring::expected` gives it for `seed` and `signals`, and equals the
/// event in the exported ring (`written`, read from the exported memory) with that sequence,
/// timestamp included; each entry carries its record's value, timestamp and metric. Returns the
/// number of entries checked.
pub fn check_entries(
    raw: &[u8],
    entries: &[zet_metric_entry_exp_t],
    written: &[TraceEvent],
    seed: u64,
    signals: &[ze_sim::config::Signal],
) -> usize {
    let records = ring::parse(raw).expect("whole records");
    assert_eq!(records.len(), entries.len(), "one entry per record");
    for (r, e) in records.iter().zip(entries) {
        let (metric, sub, value) = ring::expected(seed, r.tag, signals, 1, r.seq);
        assert_eq!((r.metric, r.sub_device, r.value), (metric, sub, value), "record {r:?} is event {}", r.seq);
        let w = written.iter().find(|w| w.seq == r.seq).unwrap_or_else(|| panic!("event {} not in the ring", r.seq));
        assert_eq!(w, r, "the raw record is the event the workload wrote");
        // SAFETY: every member of the value union is plain data; ui64 covers it all.
        let v = unsafe { e.value.ui64 };
        assert_eq!((v, e.timeStamp, e.metricIndex), (r.value, r.timestamp_ns, u32::from(r.metric)));
        assert_eq!((e.onSubdevice, e.subdeviceId), (1, 0), "the GPU has one sub-device: set 0");
    }
    assert!(records.windows(2).all(|w| w[1].seq > w[0].seq && w[1].timestamp_ns >= w[0].timestamp_ns));
    entries.len()
}

/// The events of a ring read from a mapping of its exported memory, as an application would
/// (see `ze_sim::ring`): header checked, records whose sequence is stable.
pub fn events_in_mapping(fd: i32, size: usize) -> Vec<TraceEvent> {
    // SAFETY: a fresh read-only shared mapping of the exported fd, unmapped below.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ, libc::MAP_SHARED, fd, 0);
        assert_ne!(p, libc::MAP_FAILED, "mmap of the exported fd failed");
        let base = p.cast::<u8>();
        let u32_at = |o: usize| std::ptr::read_volatile(base.add(o).cast::<u32>());
        let u64_at = |o: usize| std::ptr::read_volatile(base.add(o).cast::<u64>());
        assert_eq!(u32_at(0), ring::RING_MAGIC);
        let cap = u32_at(ring::OFFSET_CAPACITY) as u64;
        let written = u64_at(ring::OFFSET_WRITE_INDEX);
        let mut out = Vec::new();
        for n in written.saturating_sub(cap)..written {
            let at = ring::RING_HEADER + (n % cap) as usize * ring::RECORD_BYTES;
            let mut bytes = [0u8; ring::RECORD_BYTES];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = std::ptr::read_volatile(base.add(at + i));
            }
            let e = TraceEvent::from_bytes(&bytes);
            if e.seq == n && u64_at(at) == n {
                out.push(e);
            }
        }
        libc::munmap(p, size);
        out
    }
}
