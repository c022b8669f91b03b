//! The safe Level Zero layer against private simulated-driver instances: enumeration, and how it
//! copes with drivers that mishandle `pNext` chains.

use std::sync::Arc;

use ze_sim::Sim;
use ze_sim::config::{MetricsEnable, SimConfig};
use zescope_ze::{ExportQueryError, GroupExport, Loader, Origin};

fn loader(tweak: impl FnOnce(&mut SimConfig)) -> (Arc<Sim>, Loader) {
    let mut cfg = SimConfig { metrics: MetricsEnable::Always, ..Default::default() };
    tweak(&mut cfg);
    let sim = Arc::new(Sim::new(cfg));
    let l = Loader::in_process(sim.in_process()).expect("open the simulated driver");
    (sim, l)
}

#[test]
fn enumerates_devices_sub_devices_groups_and_metrics() {
    let (sim, l) = loader(|_| {});
    assert_eq!(l.origin, Origin::BuiltInSim);
    assert!(l.drivers[0].info.simulated, "ze-sim is recognised by its driver UUID");
    let devs = l.drivers[0].devices().unwrap();
    assert_eq!(devs.len(), 2);
    assert_eq!(devs[0].sub_devices().unwrap()[0].info.sub_device, Some(0));
    let groups = devs[0].metric_groups().unwrap();
    assert_eq!(groups[0].info.export, GroupExport::DmaBuf);
    assert_eq!(groups[1].info.export, GroupExport::No);
    // Exported per metric: every counter reports the buffer; the streamer's timestamp metric of a
    // group that is also time-based is no counter and exports nothing.
    let metrics = groups[1].metrics().unwrap();
    let (stamps, counters): (Vec<_>, Vec<_>) =
        metrics.iter().partition(|m| m.info.metric_type == level_zero_sys::ZET_METRIC_TYPE_TIMESTAMP);
    assert!(!counters.is_empty() && counters.iter().all(|m| m.info.exports_dma_buf()), "every counter exports");
    assert!(stamps.iter().all(|m| !m.info.exports_dma_buf()), "the timestamp exports nothing");
    assert_eq!(groups[0].metrics().unwrap()[0].info.units, "ns");
    assert!(l.has_metrics());
    assert!(sim.report().is_clean());
}

#[test]
fn groups_hidden_until_metrics_are_enabled_list_as_none_then_appear() {
    // Metrics never enabled: the simulated driver answers the count query
    // ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, as compute-runtime does; zescope lists no groups
    // (and enables metrics at run time) instead of failing.
    let (sim, l) = loader(|c| c.metrics = MetricsEnable::RuntimeOnly);
    let dev = &l.drivers[0].devices().unwrap()[0];
    let mut n = 0;
    // SAFETY: the simulated driver's table; a device handle it gave, a count and no array.
    let r = unsafe { (sim.api().zetMetricGroupGet)(dev.handle, &mut n, std::ptr::null_mut()) };
    assert_eq!(r, level_zero_sys::ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, "what the driver says");
    assert!(dev.metric_groups().unwrap().is_empty());
    assert!(!l.has_metrics());
    assert!(dev.enable_metrics().unwrap());
    assert_eq!(dev.metric_groups().unwrap().len(), 5);
    dev.disable_metrics().unwrap();
    assert!(dev.metric_groups().unwrap().is_empty(), "disabled again: no groups, no error");
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

#[test]
fn devices_carry_their_pci_address_where_the_driver_offers_it() {
    let (_sim, l) = loader(|c| c.devices[0].pci_bdf = Some("0001:0a:00.0".into()));
    let devs = l.drivers[0].devices().unwrap();
    let tile = &devs[0].sub_devices().unwrap()[0];
    assert_eq!(devs[0].info.pci_bdf.as_deref(), Some("0001:0a:00.0"));
    assert_eq!(tile.info.pci_bdf.as_deref(), Some("0001:0a:00.0"), "a tile has its root's address");
    assert_eq!(devs[1].info.pci_bdf.as_deref(), Some("0000:00:0b.0"));
    // A driver without the extension: no address, and nothing else lost.
    let (_sim, l) = loader(|c| c.empty_entry_points = vec!["zeDevicePciGetPropertiesExt".into()]);
    let devs = l.drivers[0].devices().unwrap();
    assert!(devs.iter().all(|d| d.info.pci_bdf.is_none()));
    assert_eq!(devs[0].info.name, "ze-sim GPU");
}

#[test]
fn a_driver_that_overwrites_pnext_is_detected_and_not_followed() {
    let (sim, l) = loader(|c| c.quirks.overwrite_pnext = true);
    let dev = &l.drivers[0].devices().unwrap()[0];
    let g = &dev.metric_groups().unwrap()[0];
    assert!(matches!(g.info.export, GroupExport::Unknown(_)), "{:?}", g.info.export);
    assert_eq!(g.query_export(), Err(ExportQueryError::ChainClobbered));
    assert!(sim.report().violations.is_empty());
}

#[test]
fn a_driver_rejecting_unknown_chains_is_retried_without_the_chain() {
    // An older driver that knows no export struct and rejects chains of unknown structs.
    let (sim, l) = loader(|c| {
        c.quirks.invalid_argument_on_unknown_chain = true;
        c.quirks.no_export_extension = true;
    });
    let dev = &l.drivers[0].devices().unwrap()[0];
    let groups = dev.metric_groups().unwrap();
    assert_eq!(groups[0].info.name, "ComputeBasic", "properties still read, without the chain");
    assert_eq!(groups[0].info.export, GroupExport::No, "marked as not exporting");
    assert_eq!(groups[0].query_export(), Err(ExportQueryError::Unsupported));
    assert!(sim.report().violations.is_empty());
    // The same driver without the quirk answers the chain.
    let (_sim, l) = loader(|c| c.quirks.invalid_argument_on_unknown_chain = true);
    let g = &l.drivers[0].devices().unwrap()[0].metric_groups().unwrap()[0];
    assert_eq!(g.info.export, GroupExport::DmaBuf);
}

#[test]
fn errors_name_the_call_the_result_and_what_to_do() {
    let (_sim, l) = loader(|c| c.faults.group_properties_fail = true);
    let dev = &l.drivers[0].devices().unwrap()[0];
    let msg = dev.metric_groups().err().expect("fault injected").to_string();
    assert!(msg.starts_with("zetMetricGroupGetProperties failed with ZE_RESULT_ERROR_UNKNOWN"), "{msg}");
    let e = zescope_ze::ZeError { call: "zeInit", code: level_zero_sys::ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS };
    let msg = e.to_string();
    assert!(msg.contains("ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS") && msg.contains("render"), "{msg}");
}

#[test]
fn a_driver_without_devices_or_init_fails_clearly() {
    let (_sim, l) = loader(|c| c.faults.no_devices = true);
    assert!(l.drivers[0].devices().unwrap().is_empty());
    assert!(!l.has_metrics());
    let sim = Arc::new(Sim::new(SimConfig {
        faults: ze_sim::config::Faults { init_fails: true, ..Default::default() },
        ..Default::default()
    }));
    let msg = Loader::in_process(sim.in_process()).err().expect("init fails").to_string();
    assert!(
        msg.contains("no Level Zero driver was found") && msg.contains("ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"),
        "{msg}"
    );
}

/// A loader on a driver of `profile`, its first device, the device's streamable group `group`,
/// and a context.
fn on_profile(
    profile: ze_sim::config::Profile,
    group: &str,
) -> (Arc<Sim>, Loader, zescope_ze::Device, zescope_ze::MetricGroup, zescope_ze::Context) {
    let sim = Arc::new(Sim::new(SimConfig { metrics: MetricsEnable::Always, ..profile.config() }));
    let l = Loader::in_process(sim.in_process()).expect("open the simulated driver");
    let dev = l.drivers[0].devices().unwrap().remove(0);
    let g = dev.metric_groups().unwrap().into_iter().find(|g| g.info.name == group).unwrap();
    let ctx = zescope_ze::Context::create(&l.drivers[0]).unwrap();
    (sim, l, dev, g, ctx)
}

/// When a streamer was opened, bracketed: the driver's clock for it started between the two.
struct Opening(std::time::Instant);

/// An [`Opening`] once the open returned.
struct Opened(std::time::Instant, std::time::Instant);

impl Opening {
    fn start() -> Self {
        Self(std::time::Instant::now())
    }
    fn done(self) -> Opened {
        Opened(self.0, std::time::Instant::now())
    }
}

impl Opened {
    /// How many reports a streamer of `period_ns` can have made by a read that ran from `read.0`
    /// to `read.1`: at least those due before the read began (counted from the open's end, less
    /// one for the period's phase), at most those due by its end (counted from the open's start).
    /// Timing from after the read instead counts whatever a busy machine's scheduler adds there.
    fn made_by(
        &self,
        read: (std::time::Instant, std::time::Instant),
        period_ns: u32,
    ) -> std::ops::RangeInclusive<usize> {
        let periods = |from: std::time::Instant, to: std::time::Instant| {
            (to.saturating_duration_since(from).as_nanos() / u128::from(period_ns)) as usize
        };
        periods(self.1, read.0).saturating_sub(1)..=periods(self.0, read.1)
    }
}

#[test]
fn streamer_reads_work_whatever_a_size_query_answers() {
    use ze_sim::config::Profile;
    use zescope_ze::streamer::{Streamer, calculate};
    // The NPU driver answers what is there and copies no more; compute-runtime answers the most
    // the streamer holds. Reads go without the query only once it is seen to be the maximum.
    for (profile, group, without_query) in
        [(Profile::NpuDriverLike, "NocTraffic", false), (Profile::ComputeRuntimeLike, "RenderBasic", true)]
    {
        let (sim, _l, dev, g, ctx) = on_profile(profile, group);
        ctx.activate(&dev, &[&g]).unwrap();
        let opening = Opening::start();
        let s = Streamer::open(&ctx, &dev, &g, 1_000_000, 1, None).unwrap();
        let opened = opening.done();
        let (mut buf, mut values, mut reports, mut last) = (Vec::new(), Vec::new(), 0, None);
        for _ in 0..4 {
            std::thread::sleep(std::time::Duration::from_millis(25));
            let before = std::time::Instant::now();
            let data = s.read(&mut buf).unwrap();
            last = Some((before, std::time::Instant::now()));
            let mut counts = Vec::new();
            calculate(&g, &buf[..data.bytes], &mut values, &mut counts).unwrap();
            let per_report = g.metrics().unwrap().len();
            reports += counts.first().map_or(0, |&n| n as usize / per_report);
        }
        // Every report made by the last read was read (none left behind a short read).
        let made = opened.made_by(last.unwrap(), s.period_ns);
        assert!(made.contains(&reports), "{}: {reports} reports, made {made:?}", profile.name());
        assert_eq!(s.reads_without_size_query(), without_query, "{}", profile.name());
        s.close().unwrap();
        ctx.activate(&dev, &[]).unwrap();
        ctx.destroy().unwrap();
        assert!(sim.report().is_clean(), "{:?}", sim.report());
    }
}

#[test]
fn a_streamer_read_in_parts_gives_every_report_once_whatever_a_size_query_answers() {
    use ze_sim::config::Profile;
    use zescope_ze::streamer::{Streamer, calculate};
    for (profile, group) in [(Profile::NpuDriverLike, "NocTraffic"), (Profile::ComputeRuntimeLike, "RenderBasic")] {
        let (sim, _l, dev, g, ctx) = on_profile(profile, group);
        ctx.activate(&dev, &[&g]).unwrap();
        let opening = Opening::start();
        let s = Streamer::open(&ctx, &dev, &g, 1_000_000, 1, None).unwrap();
        let opened = opening.done();
        let per_report = g.metrics().unwrap().len();
        let (mut buf, mut values, mut counts, mut reports, mut most) = (Vec::new(), Vec::new(), Vec::new(), 0, 0);
        let mut last = None;
        for _ in 0..4 {
            std::thread::sleep(std::time::Duration::from_millis(25));
            // Parts of at most 8 reports until the streamer holds none.
            for _ in 0..1_000 {
                let before = std::time::Instant::now();
                let data = s.read_at_most(&mut buf, 8).unwrap();
                last = Some((before, std::time::Instant::now()));
                calculate(&g, &buf[..data.bytes], &mut values, &mut counts).unwrap();
                let got = counts.first().map_or(0, |&n| n as usize / per_report);
                (reports, most) = (reports + got, most.max(got));
                if got == 0 {
                    break;
                }
            }
        }
        // The last read found none left: every report made before it was read, once.
        let made = opened.made_by(last.unwrap(), s.period_ns);
        assert!(made.contains(&reports), "{}: {reports} reports, made {made:?}", profile.name());
        assert!((1..=8).contains(&most), "{}: {most} reports in one part", profile.name());
        s.close().unwrap();
        ctx.activate(&dev, &[]).unwrap();
        ctx.destroy().unwrap();
        assert!(sim.report().is_clean(), "{:?}", sim.report());
    }
}

#[test]
fn a_streamer_on_a_group_not_activated_is_not_ready_and_says_why() {
    let (sim, _l, dev, g, ctx) = on_profile(ze_sim::config::Profile::NpuDriverLike, "NocTraffic");
    let e = zescope_ze::streamer::Streamer::open(&ctx, &dev, &g, 1_000_000, 1, None).err().expect("not activated");
    assert_eq!(e.code, level_zero_sys::ZE_RESULT_NOT_READY);
    assert!(e.to_string().contains("not activated"), "{e}");
    // Under the NPU driver's 1 ms floor: refused as an invalid argument.
    ctx.activate(&dev, &[&g]).unwrap();
    let e = zescope_ze::streamer::Streamer::open(&ctx, &dev, &g, 100_000, 1, None).err().expect("under the floor");
    assert_eq!(e.code, level_zero_sys::ZE_RESULT_ERROR_INVALID_ARGUMENT);
    let s = zescope_ze::streamer::Streamer::open(&ctx, &dev, &g, 1_000_000, 1, None).unwrap();
    assert_eq!((s.period_ns, s.notify_every), (1_000_000, 1), "the NPU driver writes nothing back");
    s.close().unwrap();
    ctx.activate(&dev, &[]).unwrap();
    ctx.destroy().unwrap();
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
