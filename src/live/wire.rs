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

/// The protocol's newest version, `"protocol"` in the hello: batches packed
/// ([`super::packed`]). A viewer asks for it with `?protocol=2`; one that does not ask gets
/// version 1, whose batches are plain `f64` columns ([`batch`]).
pub const PROTOCOL: u64 = 2;
/// The versions this zescope speaks.
pub const PROTOCOLS: [u64; 2] = [1, 2];
/// The first bytes of a version 1 batch frame.
pub const MAGIC: [u8; 4] = *b"ZSL1";
/// Bytes before a batch's timestamps.
pub const HEADER: usize = 40;
/// The flag bit of a batch whose first row does not connect to the stream's previous one.
pub const GAP_BEFORE: u8 = 1;

/// The hello of version `protocol`: what a viewer needs before the first batch (JSON text).
pub fn hello(feed: &str, info: &RunInfo, inventory: &[DeviceEntry], protocol: u64) -> String {
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
                "groups": super::groups::to_json(e.map_or(&[][..], |d| &d.groups[..])),
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
        "protocol": protocol,
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
            "wakeups": h.wakeups, "latency_ns": u64::try_from(h.latency.as_nanos()).unwrap_or(u64::MAX),
            "batched": h.batched, "samples": h.samples,
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

/// Decodes a binary frame of either version; the error names what is wrong with it.
pub fn decode_batch(bytes: &[u8]) -> Result<Batch, String> {
    if bytes.starts_with(&super::packed::MAGIC) {
        return super::packed::decode(bytes);
    }
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

/// A decoded hello: the run as the server's sampler announced it, and its devices.
#[derive(Clone, Debug)]
pub struct Hello {
    /// The feed's name (`from` counts in it).
    pub feed: String,
    /// The run, as `Event::RunStarted` had it on the server.
    pub info: RunInfo,
    /// The run's devices, as far as the hello describes them (their groups too, from a server
    /// that sends them).
    pub devices: Vec<DeviceEntry>,
}

/// A decoded text frame.
#[derive(Clone, Debug)]
pub enum Text {
    /// The hello.
    Hello(Box<Hello>),
    /// Event `seq`.
    Event(u64, Event),
    /// Events `from..to` are no longer held.
    Gap(u64, u64),
    /// A type this version does not know (ignored, as the protocol says).
    Unknown,
}

fn field<'v>(v: &'v Value, name: &str) -> Result<&'v Value, String> {
    v.get(name).ok_or_else(|| format!("a {} frame without {name:?}", v["type"]))
}

fn u(v: &Value, name: &str) -> Result<u64, String> {
    field(v, name)?.as_u64().ok_or_else(|| format!("{name:?} of a {} frame is not a whole number", v["type"]))
}

fn i(v: &Value, name: &str) -> Result<i64, String> {
    field(v, name)?.as_i64().ok_or_else(|| format!("{name:?} of a {} frame is not a whole number", v["type"]))
}

fn text(v: &Value, name: &str) -> Result<String, String> {
    Ok(field(v, name)?.as_str().ok_or_else(|| format!("{name:?} of a {} frame is not text", v["type"]))?.to_owned())
}

fn float(v: &Value, name: &str) -> f64 {
    v.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn from<T: serde::de::DeserializeOwned>(v: &Value, name: &str) -> Result<T, String> {
    T::deserialize(field(v, name)?).map_err(|e| format!("{name:?} of a {} frame: {e}", v["type"]))
}

fn decode_hello(v: &Value) -> Result<Hello, String> {
    let protocol = u(v, "protocol")?;
    if !PROTOCOLS.contains(&protocol) {
        return Err(format!("the server speaks live protocol {protocol}; this zescope reads 1 and 2"));
    }
    let config: zescope_sampler::RunConfig = from(v, "config")?;
    let mut devices = Vec::new();
    let mut names = Vec::new();
    for d in field(v, "devices")?.as_array().ok_or("the hello's devices are not a list")? {
        let kind = match d.get("kind").and_then(Value::as_str) {
            Some("Gpu") => zescope_ze::DeviceKind::Gpu,
            Some("Npu") => zescope_ze::DeviceKind::Npu,
            Some("Cpu") => zescope_ze::DeviceKind::Cpu,
            Some("Fpga") => zescope_ze::DeviceKind::Fpga,
            _ => zescope_ze::DeviceKind::Other,
        };
        let name = text(d, "name")?;
        names.push(name.clone());
        devices.push(DeviceEntry {
            path: from(d, "path")?,
            name,
            kind,
            uuid: d.get("uuid").and_then(Value::as_str).unwrap_or_default().to_owned(),
            vendor_id: d.get("vendor_id").and_then(Value::as_u64).unwrap_or(0) as u32,
            device_id: d.get("device_id").and_then(Value::as_u64).unwrap_or(0) as u32,
            pci_bdf: d.get("pci").and_then(Value::as_str).map(str::to_owned),
            driver_version: d.get("driver_version").and_then(Value::as_u64).unwrap_or(0) as u32,
            simulated: d.get("simulated").and_then(Value::as_bool).unwrap_or(false),
            groups: super::groups::from_json(d)?,
            error: None,
        });
    }
    let mut streams = Vec::new();
    for s in field(v, "streams")?.as_array().ok_or("the hello's streams are not a list")? {
        let index = u(s, "index")? as usize;
        if index != streams.len() {
            return Err(format!("the hello's stream {index} is not in its place"));
        }
        let read_path = text(s, "read_path")?;
        streams.push(zescope_sampler::StreamInfo {
            index,
            target: u(s, "target")? as usize,
            device: text(s, "device")?,
            group: text(s, "group")?,
            layout: text(s, "layout")?,
            series: from(s, "series")?,
            read_path: zescope_sampler::ReadPath::from_name(&read_path)
                .ok_or_else(|| format!("the hello names an unknown read path {read_path:?}"))?,
        });
    }
    let info = RunInfo {
        run: u(v, "run")?,
        config,
        devices: names,
        simulated: v.get("simulated").and_then(Value::as_bool).unwrap_or(false),
        streams,
        imports: v.get("imports").and_then(Value::as_u64).unwrap_or(0) as usize,
        notices: from(v, "notices").unwrap_or_default(),
    };
    Ok(Hello { feed: text(v, "feed")?, info, devices })
}

/// Decodes a text frame; the error names what is wrong with it.
pub fn decode_text(frame: &str) -> Result<Text, String> {
    let v: Value = serde_json::from_str(frame).map_err(|e| format!("a text frame that is not JSON: {e}"))?;
    let kind = v.get("type").and_then(Value::as_str).ok_or("a text frame without a \"type\"")?;
    let event = match kind {
        "hello" => return Ok(Text::Hello(Box::new(decode_hello(&v)?))),
        "gap" => return Ok(Text::Gap(u(&v, "from")?, u(&v, "to")?)),
        "marker" => Event::Marker {
            kind: match text(&v, "kind")?.as_str() {
                "begin" => zescope_markers::Kind::Begin,
                "end" => zescope_markers::Kind::End,
                _ => zescope_markers::Kind::Instant,
            },
            t_ns: i(&v, "t_ns")?,
            name: text(&v, "name")?,
        },
        "firing" => Event::Firing {
            trigger: text(&v, "trigger")?,
            t_ns: i(&v, "t_ns")?,
            series: text(&v, "series")?,
            value: float(&v, "value"),
        },
        "notice" => Event::Notice(text(&v, "message")?),
        "error" => Event::Error(text(&v, "message")?),
        "health" => Event::Health(Health {
            run: u(&v, "run")?,
            requested_hz: float(&v, "requested_hz"),
            achieved_hz: float(&v, "achieved_hz"),
            ticks: u(&v, "ticks")?,
            ticked_for: std::time::Duration::from_nanos(u(&v, "ticked_for_ns")?),
            late_ticks: u(&v, "late_ticks")?,
            skipped_ticks: u(&v, "skipped_ticks")?,
            torn_reads: u(&v, "torn_reads")?,
            unchanged_reads: u(&v, "unchanged_reads")?,
            clock_resets: u(&v, "clock_resets")?,
            dropped_reports: u(&v, "dropped_reports")?,
            dropped_samples: u(&v, "dropped_samples")?,
            dropped_batches: u(&v, "dropped_batches")?,
            cpu_percent: float(&v, "cpu_percent"),
            // Later in version 1: a server before them leaves them out.
            wakeups: v.get("wakeups").and_then(Value::as_u64).unwrap_or(0),
            latency: std::time::Duration::from_nanos(v.get("latency_ns").and_then(Value::as_u64).unwrap_or(0)),
            batched: v.get("batched").and_then(Value::as_bool).unwrap_or(false),
            samples: v.get("samples").and_then(Value::as_u64).unwrap_or(0),
        }),
        "stopped" => Event::Stopped(match text(&v, "reason")?.as_str() {
            "requested" => StopReason::Requested,
            "replaced" => StopReason::Replaced,
            "error" => StopReason::Error,
            _ => StopReason::Shutdown,
        }),
        _ => return Ok(Text::Unknown),
    };
    Ok(Text::Event(u(&v, "seq")?, event))
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
    fn the_hello_gives_back_the_run_the_server_announced() {
        use zescope_sampler::{DevicePath, RunConfig, SeriesInfo, StreamInfo, Target, layout::Kind};
        let path = DevicePath { driver: 0, device: 1, sub_device: Some(0) };
        let series = SeriesInfo {
            name: "x".into(),
            description: "d".into(),
            unit: "ns".into(),
            kind: Kind::Busy,
            wrap: Some(4.0),
        };
        let info = RunInfo {
            run: 3,
            config: RunConfig {
                targets: vec![Target::new(path, vec!["G".into()])],
                interval: std::time::Duration::from_micros(500),
                via: zescope_sampler::Via::Auto,
                telemetry: true,
            },
            devices: vec!["dev".into()],
            simulated: true,
            streams: vec![StreamInfo {
                index: 0,
                target: 0,
                device: "dev".into(),
                group: "G".into(),
                layout: "l".into(),
                series: vec![series],
                read_path: zescope_sampler::ReadPath::Streamer,
            }],
            imports: 2,
            notices: vec!["n".into()],
        };
        let Text::Hello(h) = decode_text(&hello("f", &info, &[], PROTOCOL)).unwrap() else { panic!("not a hello") };
        assert_eq!((h.feed.as_str(), &h.info), ("f", &info));
        assert_eq!((h.devices[0].path, h.devices[0].name.as_str()), (path, "dev"));
        assert!(h.devices[0].groups.is_empty(), "no inventory entry, no groups");
        // The server's catalogue of the device goes with it: the window lists it as a local one.
        let g = zescope_sampler::GroupEntry {
            name: "G".into(),
            description: "g".into(),
            domain: 1,
            exports: zescope_sampler::GroupExportKind::Group,
            streamable: true,
            tracer: false,
            metrics: Vec::new(),
            unavailable: None,
            export_unavailable: None,
            ways: vec![zescope_sampler::Via::Export],
        };
        let device = zescope_sampler::testing::gpu_entry(path, "dev", vec![g]);
        let Text::Hello(h) = decode_text(&hello("f", &info, &[device], PROTOCOL)).unwrap() else {
            panic!("not a hello")
        };
        let names: Vec<&str> = h.devices[0].groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["G"]);
    }

    #[test]
    fn every_text_frame_reads_back() {
        let h = Health {
            run: 1,
            requested_hz: 1000.0,
            achieved_hz: 999.5,
            ticks: 7,
            dropped_samples: 2,
            wakeups: 40,
            latency: std::time::Duration::from_millis(20),
            batched: true,
            samples: 123_456,
            ..Health::default()
        };
        let events = [
            Event::Marker { kind: zescope_markers::Kind::Begin, t_ns: -5, name: "phase \"1\"".into() },
            Event::Notice("n".into()),
            Event::Error("e".into()),
            Event::Health(h),
            Event::Stopped(StopReason::Error),
        ];
        for (seq, e) in events.iter().enumerate() {
            match decode_text(&event(seq as u64, e)).unwrap() {
                Text::Event(s, got) => assert_eq!((s, &got), (seq as u64, e)),
                other => panic!("{other:?}"),
            }
        }
        let f = Event::Firing { trigger: "t".into(), t_ns: 3, series: "marker m".into(), value: f64::NAN };
        assert!(
            matches!(decode_text(&event(9, &f)).unwrap(), Text::Event(9, Event::Firing { value, .. }) if value.is_nan())
        );
        assert!(matches!(decode_text(&gap(3, 9)).unwrap(), Text::Gap(3, 9)));
        assert!(matches!(decode_text(r#"{"type":"later","seq":1}"#).unwrap(), Text::Unknown));
        assert!(decode_text("[1]").is_err());
        assert!(decode_text(r#"{"type":"notice","message":"m"}"#).unwrap_err().contains("seq"));
        let newer = r#"{"type":"hello","protocol":3}"#;
        assert!(decode_text(newer).unwrap_err().contains("protocol 3"));
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
