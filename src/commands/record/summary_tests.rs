//! The summary line `record` ends with: the whole run's rate, or none for a run too short to
//! have one.

use std::time::Duration;

use zescope_sampler::Health;

use super::Summary;
use crate::commands::headless::Rows;

/// `n` samples of the groups, nothing else.
fn samples(n: u64) -> Rows {
    Rows { samples: n, ..Rows::default() }
}

fn line(ticks: u64, ticked_for: Duration) -> String {
    missing(ticks, 0, ticked_for)
}

fn missing(ticks: u64, skipped_ticks: u64, ticked_for: Duration) -> String {
    let health = Health { requested_hz: 1000.0, ticks, skipped_ticks, ticked_for, ..Health::default() };
    Summary { rows: samples(ticks), elapsed: ticked_for, health: Some(health), ..Summary::default() }.to_string()
}

#[test]
fn a_whole_run_gives_its_rate() {
    let s = missing(990, 10, Duration::from_secs(1));
    assert!(s.contains(": 990.0 Hz achieved of 1000.0 Hz requested, 0 late ticks"), "{s}");
}

/// A tick is due at the start and every interval after: 4 s at 1 kHz are 4001 ticks if the last
/// falls on the end (the run ends a little after it). Ticks over the time read "1000.2 Hz
/// achieved of 1000.0 Hz requested" for a run that missed nothing.
#[test]
fn a_run_that_missed_no_deadline_achieved_what_it_asked_not_more() {
    for (ticks, secs) in [(4001, 4.0002), (4000, 4.0), (3, 0.0025), (10_001, 10.0009)] {
        let s = line(ticks, Duration::from_secs_f64(secs));
        assert!(s.contains(": 1000.0 Hz achieved of 1000.0 Hz requested"), "{ticks} ticks in {secs} s: {s}");
    }
}

#[test]
fn a_run_shorter_than_two_intervals_gives_no_rate() {
    // `--duration 0s`: a tick or two within microseconds, which made "512032.8 Hz achieved".
    let s = line(1, Duration::from_micros(2));
    assert!(s.contains(": too short for a rate (1000.0 Hz requested), 0 late ticks"), "{s}");
    assert!(!s.contains("achieved"), "{s}");
    // Two intervals are enough.
    let s = line(2, Duration::from_millis(2));
    assert!(s.contains(": 1000.0 Hz achieved of 1000.0 Hz requested"), "{s}");
}

#[test]
fn a_run_read_in_batches_gives_its_samples_a_second_and_no_ticks() {
    // A streamer at 10 µs reports for a 10 kHz request: 100 000 samples a second, read every 50 ms.
    let health = Health {
        requested_hz: 10_000.0,
        ticks: 20_000,
        samples: 200_000,
        ticked_for: Duration::from_secs(2),
        batched: true,
        latency: Duration::from_millis(50),
        ..Health::default()
    };
    let s =
        Summary { rows: samples(200_000), elapsed: Duration::from_secs(2), health: Some(health), ..Summary::default() }
            .to_string();
    assert!(
        s.contains(
            ": 100000.0 samples a second, read in batches at most 50 ms apart (10000.0 Hz requested), 0 dropped samples"
        ),
        "{s}"
    );
    assert!(!s.contains("achieved") && !s.contains("late ticks") && !s.contains("torn"), "{s}");
}

/// `record --connect` of a streamed run: its samples a second are over the time they span on the
/// server, which held samples from before the recording started.
#[test]
fn a_served_run_read_in_batches_gives_its_samples_a_second_over_their_span() {
    let health = Health {
        requested_hz: 1000.0,
        batched: true,
        latency: Duration::from_millis(20),
        ticked_for: Duration::from_millis(7020),
        ..Health::default()
    };
    let s = Summary {
        rows: samples(43_877),
        elapsed: Duration::from_millis(4020),
        served: Some(Duration::from_millis(7020)),
        health: Some(health),
        ..Summary::default()
    }
    .to_string();
    assert!(s.contains("(7.02 s of the served run") && s.contains(": 6250.3 samples a second"), "{s}");
}

#[test]
fn telemetry_reads_are_counted_apart_from_the_groups_samples() {
    // `record` of ComputeBasic at 1 kHz with telemetry for 5 s printed "recorded 5010 samples in
    // 5.00 s: 997.2 Hz achieved": 4960 samples of the group and 50 telemetry reads, one sum.
    let stream = |index, group: &str, read_path| zescope_sampler::StreamInfo {
        index,
        target: 0,
        device: "GPU".into(),
        group: group.into(),
        layout: String::new(),
        series: Vec::new(),
        read_path,
    };
    let info = zescope_sampler::RunInfo {
        run: 1,
        config: zescope_sampler::RunConfig::single(
            zescope_sampler::DevicePath::default(),
            vec!["ComputeBasic".into()],
            Duration::from_millis(1),
        ),
        devices: vec!["GPU".into()],
        simulated: true,
        streams: vec![
            stream(0, "ComputeBasic", zescope_sampler::ReadPath::Mapped),
            stream(1, "Telemetry", zescope_sampler::ReadPath::Sysman),
            // `--derive`'s streams, one driven by each: derived samples, neither samples nor
            // telemetry reads (a derived series doubled a streamer run's samples a second).
            zescope_sampler::StreamInfo {
                layout: "derived from ComputeBasic".into(),
                ..stream(2, "Derived", zescope_sampler::ReadPath::Mapped)
            },
            zescope_sampler::StreamInfo {
                layout: "derived from Telemetry".into(),
                ..stream(3, "Derived", zescope_sampler::ReadPath::Sysman)
            },
        ],
        imports: 1,
        notices: Vec::new(),
    };
    let batch = |stream, rows: usize| zescope_sampler::SampleBatch {
        run: 1,
        stream,
        timestamps: (0..rows as i64).collect(),
        values: Vec::new(),
        gap_before: false,
    };
    let mut s = Summary { elapsed: Duration::from_secs(5), ..Summary::default() };
    for (stream, rows) in [(0, 2480), (1, 25), (0, 2480), (1, 25)] {
        s.count(&info, &batch(stream, rows));
    }
    assert_eq!((s.rows.samples, s.rows.telemetry), (4960, 50));
    let mut d = Summary { elapsed: Duration::from_secs(5), ..Summary::default() };
    for (stream, rows) in [(0, 2480), (2, 2480), (1, 25), (3, 25)] {
        d.count(&info, &batch(stream, rows));
    }
    assert_eq!(d.rows, Rows { samples: 2480, telemetry: 25, derived: 2505 });
    let said = d.to_string();
    assert!(said.starts_with("recorded 2480 samples, 25 telemetry reads and 2505 derived samples in 5.00 s"), "{said}");
    let health = Health {
        requested_hz: 1000.0,
        ticks: 4960,
        skipped_ticks: 14,
        ticked_for: Duration::from_millis(4974),
        ..Health::default()
    };
    let line = Summary { health: Some(health), ..s }.to_string();
    assert!(line.starts_with("recorded 4960 samples and 50 telemetry reads in 5.00 s: 997.2 Hz achieved"), "{line}");
    let s = Summary { rows: samples(7), elapsed: Duration::from_secs(1), ..Summary::default() }.to_string();
    assert!(s.starts_with("recorded 7 samples in 1.00 s") && !s.contains("telemetry"), "{s}");
    let s = Summary { rows: Rows { samples: 1, telemetry: 1, derived: 0 }, ..Summary::default() }.to_string();
    assert!(s.starts_with("recorded 1 sample and 1 telemetry read in 0.00 s"), "{s}");
}

#[test]
fn a_trigger_that_fired_once_is_said_in_the_singular() {
    let triggered = Some((1, 1, 1, std::path::PathBuf::from("run.triggers.csv")));
    let s = Summary { triggered, ..Summary::default() }.to_string();
    assert!(s.contains("; 1 firing, 1 window kept (1 sample), listed in run.triggers.csv"), "{s}");
    let triggered = Some((7, 5, 5100, std::path::PathBuf::from("run.triggers.csv")));
    let s = Summary { triggered, ..Summary::default() }.to_string();
    assert!(s.contains("; 7 firings, 5 windows kept (5100 samples), listed in"), "{s}");
}

#[test]
fn one_of_each_count_is_said_in_the_singular() {
    let health = Health {
        requested_hz: 1000.0,
        ticks: 1000,
        ticked_for: Duration::from_secs(1),
        late_ticks: 1,
        dropped_samples: 1,
        torn_reads: 1,
        clock_resets: 1,
        dropped_reports: 1,
        ..Health::default()
    };
    let s =
        Summary { rows: samples(1000), elapsed: Duration::from_secs(1), health: Some(health), ..Summary::default() };
    let s = s.to_string();
    assert!(s.contains(", 1 late tick, 1 dropped sample, 1 torn read, 0 unchanged reads, 1 device clock reset"), "{s}");
    assert!(s.contains(", 1 streamer read said the driver dropped reports"), "{s}");
}
