//! The safe metric tracer and decoder against a private simulated driver: reads never use the
//! deprecated size query (a driver that refuses it, as compute-runtime does, reads the same), a
//! read larger than the buffer grows it and takes everything collected, decoded entries are the
//! events the workload wrote (also when the data takes several decode calls, or exactly fills the
//! decoder's buffer), and an absent entry point is a typed "unsupported" answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};
use zescope_ze::tracer::{Decoder, Tracer, TracerError, available};
use zescope_ze::{Context, Device, Loader, MetricGroup};

fn loader(tweak: impl FnOnce(&mut SimConfig)) -> (Arc<Sim>, Loader) {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, ..Default::default() };
    tweak(&mut cfg);
    let sim = Arc::new(Sim::new(cfg));
    let l = Loader::in_process(sim.in_process()).expect("open the simulated driver");
    (sim, l)
}

/// The first device's tracer-based group activated in a new context, with its tracer (4 KiB
/// notification) and decoder; the tracer enabled.
struct Traced {
    device: Device,
    group: MetricGroup,
    ctx: Context,
    tracer: Tracer,
    decoder: Decoder,
}

fn traced(l: &Loader) -> Traced {
    let driver = &l.drivers[0];
    let device = driver.devices().unwrap().remove(0);
    let group = device.metric_groups().unwrap().into_iter().find(|g| g.info.tracer_based()).unwrap();
    let ctx = Context::create(driver).unwrap();
    ctx.activate(&device, &[&group]).unwrap();
    let tracer = Tracer::create(&ctx, &device, &[&group], 4096).unwrap();
    let decoder = Decoder::create(&tracer).unwrap();
    tracer.enable().unwrap();
    Traced { device, group, ctx, tracer, decoder }
}

impl Traced {
    /// What the group's ring holds now: (timestamp, metric) → value.
    fn written(&self, sim: &Sim) -> HashMap<(u64, u32), u64> {
        sim.trace_events(&self.group.info.name)
            .into_iter()
            .map(|w| ((w.timestamp_ns, u32::from(w.metric)), w.value))
            .collect()
    }

    /// Disable, destroy decoder and tracer, deactivate, destroy the context; the report clean.
    fn close(self, sim: &Sim) {
        self.tracer.disable().unwrap();
        self.decoder.destroy().unwrap();
        self.tracer.destroy().unwrap();
        self.ctx.activate(&self.device, &[]).unwrap();
        self.ctx.destroy().unwrap();
        assert!(sim.report().is_clean(), "{:?}", sim.report());
    }
}

#[test]
fn reads_grow_past_the_first_buffer_without_a_size_query_and_decode_what_was_written() {
    // 800 events a tick at 200 µs (4·10^6/s, the fastest the workload writes): far more than the
    // first 64 KiB (2048 records) between reads; the driver refuses the size query (its default,
    // as the specification and compute-runtime), so a read that used it would fail.
    let (sim, l) = loader(|c| {
        c.update_period_us = 200;
        c.tracer_events_per_tick = 800;
        c.tracer_ring_events = 1 << 22;
    });
    let mut t = traced(&l);
    let names: Vec<&str> = t.decoder.metrics.iter().map(|m| m.info.name.as_str()).collect();
    assert_eq!(names, ["KernelStart", "KernelBytes", "KernelMarker", "KernelEnd"]);
    let first_room = t.tracer.read_room();
    std::thread::sleep(Duration::from_millis(30));
    let mut buf = Vec::new();
    let r = t.tracer.read(&mut buf).unwrap();
    // What the ring holds now, before the workload writes much more.
    let written = t.written(&sim);
    assert!(!r.dropped);
    assert!(r.bytes > first_room, "{} bytes read with a first buffer of {first_room}", r.bytes);
    assert!(t.tracer.read_room() > first_room, "the buffer grew for the next reads");
    let mut entries = Vec::new();
    t.decoder.decode(&mut buf[..r.bytes], &mut entries).unwrap();
    assert_eq!(entries.len(), r.bytes / 32, "one entry per 32-byte record");
    for e in &entries {
        let w = written.get(&(e.timestamp, e.metric)).unwrap_or_else(|| panic!("no written event for {e:?}"));
        assert_eq!(e.value, *w as f64, "{e:?}");
    }
    t.close(&sim);
}

#[test]
fn an_absent_entry_point_is_unsupported_before_anything_is_created() {
    let (sim, l) = loader(|c| c.empty_entry_points = vec!["zetMetricTracerReadDataExp".into()]);
    let driver = &l.drivers[0];
    assert_eq!(available(&driver.ze), Err(TracerError::Unsupported { call: "zetMetricTracerReadDataExp" }));
    let e = TracerError::Unsupported { call: "zetMetricTracerReadDataExp" };
    assert_eq!(e.ze().code, level_zero_sys::ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    assert!(e.to_string().contains("loader lacks zetMetricTracerReadDataExp"), "{e}");
    assert!(sim.report().is_clean());
}

#[test]
fn data_that_fills_the_entry_buffer_exactly_or_needs_several_calls_decodes_whole() {
    decodes_whole(false);
}

#[test]
fn a_driver_that_does_not_say_how_much_it_decoded_still_gives_every_entry() {
    decodes_whole(true);
}

/// Raw data of 4096, 8192 + 16384 + 5 and 4096 records decodes into one entry per record, in
/// raw order, with the values the workload wrote; `keeps_size`: the driver does not lower
/// `*pRawDataSize` after a short buffer (ze-sim's `tracer_decode_keeps_size`).
fn decodes_whole(keeps_size: bool) {
    let (sim, l) = loader(|c| {
        c.tracer_events_per_tick = 400;
        c.tracer_ring_events = 1 << 20;
        c.quirks.tracer_decode_keeps_size = keeps_size;
    });
    let mut t = traced(&l);
    let (mut raw, mut buf) = (Vec::new(), Vec::new());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while raw.len() < 25_000 * 32 {
        assert!(std::time::Instant::now() < deadline, "only {} bytes traced in 30 s", raw.len());
        std::thread::sleep(Duration::from_millis(5));
        let r = t.tracer.read(&mut buf).unwrap();
        raw.extend_from_slice(&buf[..r.bytes]);
    }
    // What the ring holds now (4·10^5 events/s into 2^20 slots: 2.6 s before it wraps).
    let written = t.written(&sim);
    // 4096 records fill the first buffer (4096 entries) exactly; then 8192 + 16384 + 5 records
    // take three calls (the buffer doubles after each full one); then one call for 4096.
    for records in [4096, 8192 + 16384 + 5, 4096] {
        let mut part = raw[..records * 32].to_vec();
        let mut entries = Vec::new();
        t.decoder.decode(&mut part, &mut entries).unwrap();
        assert_eq!(entries.len(), records, "one entry per record");
        for (k, e) in entries.iter().enumerate() {
            let at = k * 32;
            let ts = u64::from_le_bytes(raw[at + 8..at + 16].try_into().unwrap());
            assert_eq!(e.timestamp, ts, "entry {k} of {records}: raw order");
            assert_eq!(e.value, written[&(e.timestamp, e.metric)] as f64, "{e:?}");
        }
    }
    t.close(&sim);
}
