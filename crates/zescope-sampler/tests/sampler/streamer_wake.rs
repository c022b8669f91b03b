//! How a run of streamers is read: on the driver's notification event, at most a batch interval
//! apart, however high its sampling rate; with the very samples (count and timestamps) a run
//! read on every tick gets from the same simulated device.

use std::time::Duration;

use zescope_sampler::testing::*;
use zescope_sampler::{BATCH_INTERVAL, Command, Event, Health, Options};

/// What one run of RenderBasic at 100 µs (10 µs reports, 100k a second) delivered by its stop.
struct Got {
    /// Every sample's time, in order.
    ts: Vec<i64>,
    /// Batches after the first that said a gap came before them.
    gaps: usize,
    /// Reports the device made during the run.
    made: u64,
    /// The last health report.
    health: Health,
}

/// What a run's events said so far.
#[derive(Default)]
struct Seen {
    ts: Vec<i64>,
    gaps: usize,
    health: Option<Health>,
    stopped: bool,
}

impl Seen {
    fn take(&mut self, e: &Event) {
        match e {
            Event::Samples(b) => {
                self.gaps += usize::from(b.gap_before && !self.ts.is_empty());
                self.ts.extend_from_slice(&b.timestamps);
            }
            Event::Health(x) => self.health = Some(x.clone()),
            Event::Error(e) => panic!("{e:?}"),
            Event::RunStopped { .. } => self.stopped = true,
            _ => {}
        }
    }
}

fn run(sim: &std::sync::Arc<ze_sim::Sim>, poll_streamer: bool, want: usize) -> Got {
    run_with(sim, Options { poll_streamer, ..Default::default() }, want)
}

fn run_with(sim: &std::sync::Arc<ze_sim::Sim>, options: Options, want: usize) -> Got {
    let h = sampler_with(sim, Options { health_period: Duration::from_millis(100), ..options });
    wait_for(&h, T, |e| matches!(e, Event::Inventory(_)).then_some(()));
    let made = sim.streamer_reports_made();
    let mut cfg = run_config(&["RenderBasic"]);
    cfg.interval = Duration::from_micros(100);
    h.send(Command::Start(cfg));
    let mut got = Seen::default();
    wait_for(&h, T, |e| {
        got.take(e);
        (got.ts.len() >= want && got.health.as_ref().is_some_and(|x| x.ticks > 0)).then_some(())
    });
    h.send(Command::Stop);
    wait_for(&h, T, |e| {
        got.take(e);
        got.stopped.then_some(())
    });
    shut_down(&h);
    let Seen { ts, gaps, health, .. } = got;
    Got { ts, gaps, made: sim.streamer_reports_made() - made, health: health.expect("a health report") }
}

#[test]
fn a_notification_driven_run_has_the_samples_of_a_run_read_every_tick() {
    // A buffer that holds seconds of reports: a loaded machine delays reads, it drops nothing.
    let sim = sim(|c| c.streamer_buffer_reports = 1 << 20);
    let polled = run(&sim, true, 20_000);
    let notified = run(&sim, false, 20_000);
    for (name, got) in [("read every tick", &polled), ("notification-driven", &notified)] {
        assert_eq!(got.gaps, 0, "{name}: no report dropped");
        assert_eq!(got.ts.len() as u64, got.made, "{name}: every report the device made is a sample, once");
        let off: Vec<i64> = got.ts.iter().map(|t| t - got.ts[0]).collect();
        let first_wrong = off.iter().enumerate().find(|&(i, &o)| o != i as i64 * 10_000);
        assert_eq!(first_wrong, None, "{name}: one sample per 10 µs report, at the report's own time");
    }
    let n = polled.ts.len().min(notified.ts.len());
    let rel = |g: &Got| g.ts[..n].iter().map(|t| t - g.ts[0]).collect::<Vec<_>>();
    assert_eq!(rel(&polled), rel(&notified), "the same samples, whenever they were read");
    // Woken per notification (1,600 reports) or batch interval (2,000 reports), and for health
    // reports: a count, not a rate, so a loaded machine only lowers it.
    assert_eq!(notified.health.latency, BATCH_INTERVAL);
    assert_eq!(polled.health.latency, Duration::from_micros(100));
    let most = notified.ts.len() as u64 / 1_000 + 20;
    assert!(
        notified.health.wakeups <= most,
        "{} wakeups for {} samples: more than one per 1,000 reports",
        notified.health.wakeups,
        notified.ts.len()
    );
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// A longer batch interval (`record`'s 50 ms): the same samples, read about a third as often.
#[test]
fn a_longer_batch_interval_reads_the_same_reports_in_fewer_wakeups() {
    let sim = sim(|c| c.streamer_buffer_reports = 1 << 20);
    let batch = Duration::from_millis(50);
    let got = run_with(&sim, Options { batch_interval: batch, ..Default::default() }, 100_000);
    assert_eq!(got.gaps, 0, "no report dropped");
    assert_eq!(got.ts.len() as u64, got.made, "every report the device made is a sample, once");
    assert!(got.ts.windows(2).all(|w| w[1] - w[0] == 10_000), "one sample per 10 µs report, in order");
    assert_eq!(got.health.latency, batch, "the latency said is the batch interval asked");
    // A notification per 40 ms of reports (4,000), and a health report per 100 ms: ~35 in a
    // second of reports, where the default interval (a notification per 1,600) wakes ~70 times.
    let most = got.ts.len() as u64 / 2_500 + 15;
    assert!(got.health.wakeups <= most, "{} wakeups for {} samples", got.health.wakeups, got.ts.len());
    // Each wake's ~4,000 reports are read in parts of ~8,192 values (1,365 reports of 6), each
    // decoded before the next is read, not all at once.
    let (reads, most_in_one) = sim.streamer_reads();
    assert!((1..=1_400).contains(&most_in_one), "{most_in_one} reports in one read");
    assert!(reads >= got.made / 1_400, "{reads} reads for {} reports", got.made);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}

/// Telemetry beside a streamer, as a run has it unless told otherwise: read every 100 ms, it does
/// not put the run back on a tick per sampling interval (10,000 wakeups a second at 100 µs), and
/// the run wakes for it when it is due rather than leaving it to the next batch (record's 100 ms
/// batch interval would read it every 160–200 ms).
#[test]
fn telemetry_beside_a_streamer_keeps_its_period_and_the_run_its_batches() {
    let sim = sim(|c| c.streamer_buffer_reports = 1 << 20);
    let batch = Duration::from_millis(100);
    let options = Options { health_period: Duration::from_millis(100), batch_interval: batch, ..Default::default() };
    let h = sampler_with(&sim, options);
    wait_for(&h, T, |e| matches!(e, Event::Inventory(_)).then_some(()));
    let mut cfg = run_config(&["RenderBasic"]);
    cfg.interval = Duration::from_micros(100);
    cfg.telemetry = true;
    h.send(Command::Start(cfg));
    let info = wait_for(&h, T, |e| match e {
        Event::RunStarted(i) => Some(i.clone()),
        Event::Error(e) => panic!("{e:?}"),
        _ => None,
    });
    let telemetry = info.streams.iter().position(|s| s.group == "Telemetry").expect("a telemetry stream");
    let (mut reports, mut read_at, mut health) = (0usize, Vec::new(), None);
    wait_for(&h, T, |e| {
        match e {
            Event::Samples(b) if b.stream == telemetry => read_at.extend_from_slice(&b.timestamps),
            Event::Samples(b) => reports += b.timestamps.len(),
            Event::Health(x) => health = Some(x.clone()),
            Event::Error(e) => panic!("{e:?}"),
            _ => {}
        }
        (read_at.len() >= 16 && health.is_some()).then_some(())
    });
    h.send(Command::Stop);
    wait_for(&h, T, |e| matches!(e, Event::RunStopped { .. }).then_some(()));
    shut_down(&h);
    let health = health.unwrap();
    assert_eq!(health.latency, batch, "read in batches, not on a tick per 100 µs");
    let gaps: Vec<i64> = read_at.windows(2).map(|w| w[1] - w[0]).collect();
    // Never ahead of its period: read k at least k periods after the first, less 5 ms (the reads
    // keep to deadlines a whole number of periods after the first; a read's time is taken once
    // its values are in, so one that took longer than the next, as the first, cold read did by
    // 1.75 ms on CI, is followed by a gap a little under the period; a read that came late is
    // followed by one on its deadline, not a period after it).
    let ahead = read_at.iter().enumerate().find(|&(k, &t)| t - read_at[0] < k as i64 * 100_000_000 - 5_000_000);
    assert!(ahead.is_none(), "telemetry at most every 100 ms: read {ahead:?} ahead of its deadline in {gaps:?}");
    let mean = gaps.iter().sum::<i64>() / gaps.len() as i64;
    assert!(mean < 130_000_000, "telemetry read when due, not at the next batch: {gaps:?}");
    // About 1.6 s: ~16 telemetry reads, ~20 notifications, ~16 health reports.
    let seconds = reports as f64 / 100_000.0;
    assert!(seconds > 1.0, "{reports} reports");
    assert!(
        (health.wakeups as f64) < 100.0 * seconds,
        "{} wakeups in {seconds:.1} s of reports: more than 100 a second",
        health.wakeups
    );
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
