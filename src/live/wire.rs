//! The live feed's frames, version [`PROTOCOL`] (`docs/live-protocol.md` is the definition; this
//! module encodes and decodes exactly that).
//!
//! - Text frames are JSON objects with a `"type"`: `hello` (the run's metadata, first), `gap`
//!   (events the server no longer holds), and the events `marker`, `firing`, `notice`, `error`,
//!   `health`, `stopped`, each with its `seq`.
//! - Binary frames are sample batches: a 40-byte little-endian header ([`MAGIC`], `seq`, stream,
//!   ordinal of the first row, rows, series, flags), then the rows' timestamps (`i64`), then one
//!   column of `f64` per series.
//!
//! `seq` numbers every event of a feed (batches included) from 0 without holes: a viewer that
//! holds `seq` up to `n` resumes with `?from=n+1` and misses nothing the server still holds.

use serde_json::{Value, json};
use zescope_sampler::{DeviceEntry, Health, RunInfo, SampleBatch, StopReason};

/// The protocol's version, `"protocol"` in the hello.
pub const PROTOCOL: u64 = 1;
/// The first bytes of a batch frame.
pub const MAGIC: [u8; 4] = *b"ZSL1";
/// Bytes before a batch's timestamps.
pub const HEADER: usize = 40;
/// The flag bit of a batch whose first row does not connect to the stream's previous one.
pub const GAP_BEFORE: u8 = 1;

/// The hello: what a viewer needs before the first batch (JSON text).
pub fn hello(feed: &str, info: &RunInfo, inventory: &[DeviceEntry]) -> String {
    let devices: Vec<Value> = info
        .config
        .targets
        .iter()
        .zip(&info.devices)
        .map(|(t, name)| {
            let e = inventory.iter().find(|d| d.path == t.device);
            json!({
                "name": name,
                "path": t.device,
                "kind": e.map(|d| format!("{:?}", d.kind)),
                "uuid": e.map(|d| d.uuid.clone()),
                "vendor_id": e.map(|d| d.vendor_id),
                "device_id": e.map(|d| d.device_id),
                "pci": e.and_then(|d| d.pci_bdf.clone()),
                "driver_version": e.map(|d| d.driver_version),
                "simulated": e.is_some_and(|d| d.simulated),
            })
        })
        .collect();
    let streams: Vec<Value> = info
        .streams
        .iter()
        .map(|s| {
            json!({
                "index": s.index,
                "target": s.target,
                "device": s.device,
                "group": s.group,
                "layout": s.layout,
                "read_path": s.read_path.name(),
                "series": s.series,
            })
        })
        .collect();
    json!({
        "type": "hello",
        "protocol": PROTOCOL,
        "server": concat!("zescope ", env!("CARGO_PKG_VERSION")),
        "feed": feed,
        "run": info.run,
        "interval_ns": u64::try_from(info.config.interval.as_nanos()).unwrap_or(u64::MAX),
        "config": info.config,
        "simulated": info.simulated,
        "imports": info.imports,
        "devices": devices,
        "streams": streams,
        "notices": info.notices,
    })
    .to_string()
}

/// An event of the feed other than a batch.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A workload's marker.
    Marker {
        /// `instant`, `begin` or `end`.
        kind: zescope_markers::Kind,
        /// On the samples' clock.
        t_ns: i64,
        /// Its name.
        name: String,
    },
    /// A trigger of the server's `--trigger` fired.
    Firing {
        /// The trigger's text.
        trigger: String,
        /// When.
        t_ns: i64,
        /// What fired it.
        series: String,
        /// The value that fired it (NaN for a marker: sent as `null`).
        value: f64,
    },
    /// An optional feature was turned off during the run.
    Notice(String),
    /// An error of the sampler, with its hint.
    Error(String),
    /// The sampler's health report.
    Health(Health),
    /// The run ended (no batch follows).
    Stopped(StopReason),
}

fn marker_kind(k: zescope_markers::Kind) -> &'static str {
    match k {
        zescope_markers::Kind::Instant => "instant",
        zescope_markers::Kind::Begin => "begin",
        zescope_markers::Kind::End => "end",
    }
}

fn stop_reason(r: &StopReason) -> &'static str {
    match r {
        StopReason::Requested => "requested",
        StopReason::Replaced => "replaced",
        StopReason::Error => "error",
        StopReason::Shutdown => "shutdown",
    }
}

fn finite(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// The text frame of event `seq`.
pub fn event(seq: u64, e: &Event) -> String {
    let v = match e {
        Event::Marker { kind, t_ns, name } => {
            json!({"type": "marker", "seq": seq, "kind": marker_kind(*kind), "t_ns": t_ns, "name": name})
        }
        Event::Firing { trigger, t_ns, series, value } => json!({
            "type": "firing", "seq": seq, "trigger": trigger, "t_ns": t_ns, "series": series, "value": finite(*value),
        }),
        Event::Notice(m) => json!({"type": "notice", "seq": seq, "message": m}),
        Event::Error(m) => json!({"type": "error", "seq": seq, "message": m}),
        Event::Health(h) => json!({
            "type": "health", "seq": seq, "run": h.run,
            "requested_hz": finite(h.requested_hz), "achieved_hz": finite(h.achieved_hz),
            "ticks": h.ticks, "ticked_for_ns": u64::try_from(h.ticked_for.as_nanos()).unwrap_or(u64::MAX),
            "late_ticks": h.late_ticks, "skipped_ticks": h.skipped_ticks, "torn_reads": h.torn_reads,
            "unchanged_reads": h.unchanged_reads, "clock_resets": h.clock_resets,
            "dropped_reports": h.dropped_reports, "dropped_samples": h.dropped_samples,
            "dropped_batches": h.dropped_batches, "cpu_percent": finite(h.cpu_percent),
        }),
        Event::Stopped(r) => json!({"type": "stopped", "seq": seq, "reason": stop_reason(r)}),
    };
    v.to_string()
}

/// The text frame saying that events `from..to` are no longer held (a viewer that asked for them
/// gets the events from `to` on).
pub fn gap(from: u64, to: u64) -> String {
    json!({"type": "gap", "from": from, "to": to}).to_string()
}

/// The binary frame of batch `seq`: `b`'s rows, the first being ordinal `first` of its stream.
pub fn batch(seq: u64, first: u64, b: &SampleBatch) -> Vec<u8> {
    let rows = b.timestamps.len();
    let k = b.values.len().checked_div(rows).unwrap_or(0);
    let mut out = Vec::with_capacity(HEADER + rows * 8 * (1 + k));
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&u32::try_from(b.stream).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&u32::try_from(rows).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&u32::try_from(k).unwrap_or(u32::MAX).to_le_bytes());
    out.push(if b.gap_before { GAP_BEFORE } else { 0 });
    out.resize(HEADER, 0);
    for t in &b.timestamps {
        out.extend_from_slice(&t.to_le_bytes());
    }
    for col in 0..k {
        for row in b.values.chunks_exact(k) {
            out.extend_from_slice(&row[col].to_le_bytes());
        }
    }
    out
}

/// A decoded batch frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// Its place in the feed.
    pub seq: u64,
    /// Ordinal of its first row in its stream.
    pub first: u64,
    /// Its samples, row-major as the sampler hands them (`run` is 0: the hello names the run).
    pub samples: SampleBatch,
}

fn le<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[at..at + N]);
    a
}

/// Decodes a binary frame; the error names what is wrong with it.
pub fn decode_batch(bytes: &[u8]) -> Result<Batch, String> {
    if bytes.len() < HEADER || bytes[..4] != MAGIC {
        return Err(format!("a binary frame of {} bytes is not a batch (no {HEADER}-byte ZSL1 header)", bytes.len()));
    }
    let seq = u64::from_le_bytes(le(bytes, 4));
    let stream = u32::from_le_bytes(le(bytes, 12)) as usize;
    let first = u64::from_le_bytes(le(bytes, 16));
    let rows = u32::from_le_bytes(le(bytes, 24)) as usize;
    let k = u32::from_le_bytes(le(bytes, 28)) as usize;
    let flags = bytes[32];
    let want = rows.checked_mul(k + 1).and_then(|n| n.checked_mul(8)).and_then(|n| n.checked_add(HEADER));
    if want != Some(bytes.len()) {
        return Err(format!("batch {seq}: {rows} rows of {k} series do not fit its {} bytes", bytes.len()));
    }
    let body = &bytes[HEADER..];
    let timestamps: Vec<i64> = body[..rows * 8].chunks_exact(8).map(|c| i64::from_le_bytes(le(c, 0))).collect();
    let columns = &body[rows * 8..];
    let mut values = vec![0.0; rows * k];
    for (i, c) in columns.chunks_exact(8).enumerate() {
        let (col, row) = (i / rows.max(1), i % rows.max(1));
        values[row * k + col] = f64::from_le_bytes(le(c, 0));
    }
    let samples = SampleBatch { run: 0, stream, timestamps, values, gap_before: flags & GAP_BEFORE != 0 };
    Ok(Batch { seq, first, samples })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reads_back_as_written_nan_and_gap_included() {
        let b = SampleBatch {
            run: 0,
            stream: 3,
            timestamps: vec![10, 20, 35],
            values: vec![1.0, -2.5, f64::NAN, 4.0, 5.0, 6.25],
            gap_before: true,
        };
        let bytes = batch(7, 41, &b);
        assert_eq!(bytes.len(), HEADER + 3 * 8 * 3);
        // Column-major after the timestamps: series 0's rows first.
        assert_eq!(f64::from_le_bytes(le(&bytes, HEADER + 24)), 1.0);
        assert!(f64::from_le_bytes(le(&bytes, HEADER + 32)).is_nan());
        assert_eq!(f64::from_le_bytes(le(&bytes, HEADER + 48)), -2.5);
        let got = decode_batch(&bytes).unwrap();
        assert_eq!((got.seq, got.first, got.samples.stream, got.samples.gap_before), (7, 41, 3, true));
        assert_eq!(got.samples.timestamps, b.timestamps);
        let same = got.samples.values.iter().zip(&b.values).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{:?}", got.samples.values);
    }

    #[test]
    fn malformed_batches_are_named_not_panicked_on() {
        assert!(decode_batch(b"ZSL1").unwrap_err().contains("not a batch"));
        let mut bytes =
            batch(1, 0, &SampleBatch { run: 0, stream: 0, timestamps: vec![1], values: vec![2.0], gap_before: false });
        bytes.pop();
        assert!(decode_batch(&bytes).unwrap_err().contains("do not fit"));
        bytes[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_batch(&bytes).is_err());
    }
}
