//! The exported memory of a tracer-based metric group: a ring of kernel events that the workload
//! writes and the metric tracer reads.
//!
//! # Byte layout (version 1, little-endian)
//!
//! A 64-byte header, then `capacity` records of [`RECORD_BYTES`] bytes; the memfd is page-aligned
//! and sealed like every exported buffer (`crate::export`).
//!
//! | offset | type | header field                                                         |
//! |-------:|------|----------------------------------------------------------------------|
//! | 0      | u32  | magic [`RING_MAGIC`] ("ZSTR")                                        |
//! | 4      | u32  | layout version [`RING_VERSION`]                                      |
//! | 8      | u64  | write index: events written since the buffer was created             |
//! | 16     | u32  | capacity: records in the ring                                        |
//! | 20     | u32  | record size, [`RECORD_BYTES`]                                        |
//! | 24     | u32  | metric count of the group                                            |
//! | 28     | u32  | flags: bit 0 = device lost (as in counter buffers)                   |
//! | 32     | u32  | the group's tag (every record carries it)                            |
//! | 36     | u32  | sub-devices the events are spread over (1 for a device without)      |
//!
//! Event `n` (0, 1, 2, …) lives in record `n % capacity`:
//!
//! | offset | type | record field                                                         |
//! |-------:|------|----------------------------------------------------------------------|
//! | 0      | u64  | sequence `n` (`u64::MAX` while the record is being written)          |
//! | 8      | u64  | device timestamp, ns                                                 |
//! | 16     | u64  | value (a u32 metric's value zero-extended)                           |
//! | 24     | u16  | metric index in the group                                            |
//! | 26     | u16  | sub-device the event happened on                                     |
//! | 28     | u32  | the group's tag                                                      |
//!
//! The writer fills a record (sequence first set to `u64::MAX`, then the fields, then the
//! sequence `n`) and publishes the write index after the records it wrote. A reader of the
//! mapping takes the write index `W`, reads events `max(W − capacity, from) .. W`, and keeps a
//! record only if its sequence reads `n` both before and after its fields. The tracer itself
//! reads under the writer's lock and never sees a torn record.
//!
//! `zetMetricTracerReadDataExp` hands out these same 32-byte records (its raw format);
//! `zetMetricTracerDecodeExp` turns each into a `zet_metric_entry_exp_t`.
//!
//! # The workload
//!
//! While the group is activated, every simulation tick appends `tracer_events_per_tick` events,
//! stamped evenly across the tick. They follow kernels: kernel `k` (ids from 1) is the `L` events
//! `k·L .. (k+1)·L` for the group's `L` metrics in metric order, and runs on sub-device
//! `k % sub-devices`. Values ([`expected`]): `KernelStart`/`KernelEnd` the kernel id,
//! `KernelBytes` a running byte total that only grows and wraps at 2^32 (4096 to 8191 more per
//! event, from the seed), `KernelMarker` 0. So event `n` is a pure function of the seed, the
//! group and `n`: the same seed gives the same events.

use crate::config::Signal;
use crate::workload;

/// The u32 at offset 0 of a ring: "ZSTR" read as little-endian bytes.
pub const RING_MAGIC: u32 = 0x5254_535a;
/// The u32 at offset 4: the version of the ring layout.
pub const RING_VERSION: u32 = 1;
/// Bytes of the ring header; record 0 starts here.
pub const RING_HEADER: usize = 64;
/// Byte offset of the u64 write index.
pub const OFFSET_WRITE_INDEX: usize = 8;
/// Byte offset of the u32 capacity.
pub const OFFSET_CAPACITY: usize = 16;
/// Byte offset of the u32 record size.
pub const OFFSET_RECORD_BYTES: usize = 20;
/// Byte offset of the u32 metric count.
pub const OFFSET_METRICS: usize = 24;
/// Byte offset of the u32 tag.
pub const OFFSET_TAG: usize = 32;
/// Byte offset of the u32 sub-device count.
pub const OFFSET_SUB_DEVICES: usize = 36;
/// Bytes of one event record, in the ring and in the tracer's raw data.
pub const RECORD_BYTES: usize = 32;
/// The sequence of a record being written.
const WRITING: u64 = u64::MAX;

/// One kernel event, as a record holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Its number `n` since the ring was created.
    pub seq: u64,
    /// Device time, ns.
    pub timestamp_ns: u64,
    /// The value (see the module docs).
    pub value: u64,
    /// Index of its metric in the group.
    pub metric: u16,
    /// The sub-device it happened on.
    pub sub_device: u16,
    /// The tag of its group.
    pub tag: u32,
}

impl TraceEvent {
    /// The record's 32 bytes.
    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.seq.to_le_bytes());
        b[8..16].copy_from_slice(&self.timestamp_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.value.to_le_bytes());
        b[24..26].copy_from_slice(&self.metric.to_le_bytes());
        b[26..28].copy_from_slice(&self.sub_device.to_le_bytes());
        b[28..32].copy_from_slice(&self.tag.to_le_bytes());
        b
    }

    /// A record read back from its 32 bytes.
    pub fn from_bytes(b: &[u8; RECORD_BYTES]) -> TraceEvent {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        TraceEvent {
            seq: u64_at(0),
            timestamp_ns: u64_at(8),
            value: u64_at(16),
            metric: u16::from_le_bytes([b[24], b[25]]),
            sub_device: u16::from_le_bytes([b[26], b[27]]),
            tag: u32::from_le_bytes([b[28], b[29], b[30], b[31]]),
        }
    }

    /// The record as four u64 words (how the ring stores it).
    fn words(&self) -> [u64; 4] {
        let tail = u64::from(self.metric) | u64::from(self.sub_device) << 16 | u64::from(self.tag) << 32;
        [self.seq, self.timestamp_ns, self.value, tail]
    }
}

/// Raw tracer data as records; `None` unless it is whole records.
pub fn parse(raw: &[u8]) -> Option<Vec<TraceEvent>> {
    if !raw.len().is_multiple_of(RECORD_BYTES) {
        return None;
    }
    Some(raw.chunks_exact(RECORD_BYTES).map(|c| TraceEvent::from_bytes(c.try_into().expect("32 bytes"))).collect())
}

/// What event `n` of a group carries: (metric index, sub-device, value), for the group's metric
/// `signals`, its `tag`, and `sub_devices` (≥ 1) sub-devices. See the module docs.
pub fn expected(seed: u64, tag: u32, signals: &[Signal], sub_devices: u16, n: u64) -> (u16, u16, u64) {
    let len = signals.len().max(1) as u64;
    let (kernel, i) = (n / len, (n % len) as usize);
    let sub = (kernel % u64::from(sub_devices.max(1))) as u16;
    let value = match signals.get(i) {
        Some(Signal::KernelStart | Signal::KernelEnd) => kernel + 1,
        Some(Signal::KernelBytes) => {
            let jitter = ((workload::noise(seed, 0x7472_6163_0000 | u64::from(tag), n) + 1.0) * 2048.0) as u64;
            (n.wrapping_mul(4096).wrapping_add(jitter.min(4095))) & 0xffff_ffff
        }
        _ => 0,
    };
    (i as u16, sub, value)
}

/// The tag of the ring of group `g` (its index in the driver instance, from 1).
pub(crate) fn tag_of(g: usize) -> u32 {
    g as u32 + 1
}

/// What a ring holds: the group it belongs to and its size.
#[derive(Clone, Debug)]
pub(crate) struct RingSpec {
    pub(crate) tag: u32,
    pub(crate) signals: Vec<Signal>,
    pub(crate) sub_devices: u16,
    pub(crate) capacity: usize,
    pub(crate) per_tick: u32,
}

impl RingSpec {
    /// Bytes the header and records use.
    pub(crate) fn bytes(&self) -> usize {
        RING_HEADER + self.capacity * RECORD_BYTES
    }

    /// The header words to write once at creation: (offset, u32 value).
    pub(crate) fn header(&self) -> [(usize, u32); 7] {
        [
            (0, RING_MAGIC),
            (4, RING_VERSION),
            (OFFSET_CAPACITY, self.capacity as u32),
            (OFFSET_RECORD_BYTES, RECORD_BYTES as u32),
            (OFFSET_METRICS, self.signals.len() as u32),
            (OFFSET_TAG, self.tag),
            (OFFSET_SUB_DEVICES, u32::from(self.sub_devices.max(1))),
        ]
    }

    fn slot(&self, n: u64) -> usize {
        RING_HEADER + (n % self.capacity as u64) as usize * RECORD_BYTES
    }
}

/// The writer's position in a ring.
#[derive(Default)]
pub(crate) struct Cursor {
    /// Events written so far (the next one's `n`).
    pub(crate) next: u64,
    /// The timestamp of the last event written.
    last_ts: Option<u64>,
}

/// Appends one tick's events at device time `ts` through `put(offset, word)` (8-byte aligned
/// writes into the mapping), then publishes the write index.
pub(crate) fn write_tick(spec: &RingSpec, cur: &mut Cursor, seed: u64, ts: u64, mut put: impl FnMut(usize, u64)) {
    let k = u64::from(spec.per_tick);
    if k == 0 {
        return;
    }
    // Spread over the tick since the last event; after a clock step backwards, all at `ts`.
    let from = cur.last_ts.filter(|&l| l <= ts).unwrap_or(ts);
    for j in 1..=k {
        let n = cur.next;
        let t = from + ((u128::from(ts - from) * u128::from(j)) / u128::from(k)) as u64;
        let (metric, sub_device, value) = expected(seed, spec.tag, &spec.signals, spec.sub_devices, n);
        let e = TraceEvent { seq: n, timestamp_ns: t, value, metric, sub_device, tag: spec.tag };
        let at = spec.slot(n);
        put(at, WRITING);
        let w = e.words();
        for (i, word) in w.iter().enumerate().skip(1) {
            put(at + 8 * i, *word);
        }
        put(at, n);
        cur.next += 1;
    }
    cur.last_ts = Some(ts);
    put(OFFSET_WRITE_INDEX, cur.next);
}

/// Events `from ..` of the ring (at most `max`), read through `get(offset)`, with the oldest
/// event the ring still holds. Callers hold the writer's lock, so records are whole.
pub(crate) fn read(
    spec: &RingSpec,
    cur: &Cursor,
    from: u64,
    end: u64,
    max: usize,
    get: impl Fn(usize) -> u64,
) -> (Vec<TraceEvent>, u64) {
    let oldest = cur.next.saturating_sub(spec.capacity as u64);
    let start = from.max(oldest);
    let stop = end.min(cur.next).min(start.saturating_add(max as u64));
    let events = (start..stop)
        .map(|n| {
            let at = spec.slot(n);
            let tail = get(at + 24);
            TraceEvent {
                seq: get(at),
                timestamp_ns: get(at + 8),
                value: get(at + 16),
                metric: tail as u16,
                sub_device: (tail >> 16) as u16,
                tag: (tail >> 32) as u32,
            }
        })
        .collect();
    (events, oldest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNALS: [Signal; 4] = [Signal::KernelStart, Signal::KernelBytes, Signal::KernelMarker, Signal::KernelEnd];

    #[test]
    fn records_round_trip_through_their_bytes() {
        let e = TraceEvent { seq: 7, timestamp_ns: 1 << 40, value: 0xdead_beef, metric: 3, sub_device: 1, tag: 9 };
        assert_eq!(TraceEvent::from_bytes(&e.to_bytes()), e);
        assert_eq!(parse(&e.to_bytes()), Some(vec![e]));
        assert_eq!(parse(&[0u8; 31]), None);
    }

    #[test]
    fn events_follow_kernels_and_bytes_only_grow_until_they_wrap() {
        let ev: Vec<_> = (0..8).map(|n| expected(5, 1, &SIGNALS, 2, n)).collect();
        assert_eq!(ev[0], (0, 0, 1), "kernel 1 starts on sub-device 0");
        assert_eq!((ev[2].0, ev[2].2), (2, 0), "a marker carries no value");
        assert_eq!(ev[3], (3, 0, 1), "kernel 1 ends");
        assert_eq!(ev[4], (0, 1, 2), "kernel 2 runs on sub-device 1");
        let bytes: Vec<u64> = (0..1000).map(|n| expected(5, 1, &SIGNALS, 1, 4 * n + 1).2).collect();
        assert!(bytes.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] < 4 * 8192), "{:?}", &bytes[..4]);
        let late = expected(5, 1, &SIGNALS, 1, 4 * 1_100_000 + 1).2;
        assert!(late < 1 << 32, "wraps at 2^32");
        assert_ne!(expected(5, 1, &SIGNALS, 1, 1), expected(6, 1, &SIGNALS, 1, 1), "the seed matters");
    }

    #[test]
    fn a_tick_writes_whole_records_and_the_ring_keeps_the_newest() {
        let spec = RingSpec { tag: 3, signals: SIGNALS.to_vec(), sub_devices: 1, capacity: 4, per_tick: 3 };
        let mut mem = vec![0u64; spec.bytes() / 8];
        let mut cur = Cursor::default();
        write_tick(&spec, &mut cur, 1, 1000, |at, w| mem[at / 8] = w);
        write_tick(&spec, &mut cur, 1, 1600, |at, w| mem[at / 8] = w);
        assert_eq!(mem[OFFSET_WRITE_INDEX / 8], 6);
        let (events, oldest) = read(&spec, &cur, 0, u64::MAX, 10, |at| mem[at / 8]);
        assert_eq!(oldest, 2);
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [2, 3, 4, 5]);
        let times: Vec<u64> = events.iter().map(|e| e.timestamp_ns).collect();
        assert_eq!(times, [1000, 1200, 1400, 1600], "spread evenly over the second tick");
        assert!(
            events
                .iter()
                .all(|e| e.tag == 3 && (e.metric, e.sub_device, e.value) == expected(1, 3, &SIGNALS, 1, e.seq))
        );
        let (some, _) = read(&spec, &cur, 4, 5, 10, |at| mem[at / 8]);
        assert_eq!(some.len(), 1, "the end bound is exclusive");
    }
}
