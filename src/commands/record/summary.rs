//! What a `record` did: the summary line it ends with (samples and telemetry reads apart, the
//! whole run's rate, drops, markers, triggers, the workload's exit).

use std::time::Duration;

use zescope_model::view::text::plural;
use zescope_sampler::{Health, RunInfo, SampleBatch};

use crate::commands::headless::Rows;

/// What a `record` did, for the summary line.
#[derive(Debug, Default)]
pub struct Summary {
    /// Rows received: the groups' samples (a tick that reads two groups counts twice), telemetry
    /// reads and derived samples apart: telemetry at most ten a second and derived samples one per
    /// sample of their stream are not the groups' rate ("5010 samples in 5.00 s: 997.2 Hz" read as
    /// a contradiction).
    pub rows: Rows,
    /// How long the run went, from its start to the end of sampling (zero if it never started).
    pub elapsed: Duration,
    /// `record --connect`: the time the samples received span, on the server's clock. It starts
    /// at the oldest sample the server still held, so it may be longer than `elapsed` ("501
    /// samples in 3.00 s" of a 100 Hz run said nothing of the 2 s held from before).
    pub served: Option<Duration>,
    /// The sampler's last health report; `None` when none arrived (a run shorter than one
    /// health period).
    pub health: Option<Health>,
    /// The `record` ended on SIGINT or SIGTERM rather than after its duration.
    pub interrupted: bool,
    /// Errors the sampler reported during the run, and a teardown that missed its deadline, one
    /// line each; the output file still holds what was recorded. `zescope record` exits non-zero
    /// when there is any.
    pub errors: Vec<String>,
    /// What the run said (features the driver lacks, turned off for it; groups left out; values
    /// out of range; a remote link's drops), one line each.
    pub notices: Vec<String>,
    /// Markers the recording holds (an instant, a range: its begin and end are one), or with no
    /// output keeping them, the messages received.
    pub markers: u64,
    /// Ends received for a range of a name none was begun of (ignored).
    pub unmatched_ends: u64,
    /// What the markers listener dropped (malformed, too fast, queue full, not the user's);
    /// `None`: no listener.
    pub marker_drops: Option<zescope_model::markers::Counts>,
    /// Markers refused because the session held its limit of them already.
    pub markers_over_cap: u64,
    /// That limit.
    pub marker_cap: usize,
    /// How the command after `--` ended; `None` when there was none or it still runs.
    pub workload: Option<std::process::ExitStatus>,
    /// With triggers: firings, windows kept, samples written, and the index's path.
    pub triggered: Option<(u64, usize, u64, std::path::PathBuf)>,
}

impl Summary {
    /// Counts `b`'s rows: as telemetry reads for a Sysman stream, derived samples for a derived
    /// one, else as samples.
    pub(crate) fn count(&mut self, info: &RunInfo, b: &SampleBatch) {
        self.rows.count(info, b.stream, b.timestamps.len() as u64);
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "recorded {} in {:.2} s", self.rows, self.elapsed.as_secs_f64())?;
        if let Some(span) = self.served {
            write!(
                f,
                " ({:.2} s of the served run, from the oldest sample its server still held)",
                span.as_secs_f64()
            )?;
        }
        if let Some(s) = &self.health {
            // Whole-run figures: the sampler's own counts up to the last health report (not
            // the last health window's rate, nor the time this thread heard of the run: under load
            // its start event can arrive tens of milliseconds after the first tick).
            // A run shorter than two intervals has no rate to speak of (`--duration 0s` gave
            // "512032.8 Hz achieved").
            let secs = s.ticked_for.as_secs_f64();
            if s.batched {
                // No tick: the streamer's (or tracer's) reports, read in batches. Its samples a
                // second are the device's reports a second (ten an interval for a streamer), which
                // "Hz achieved" of the ticks it served did not say (a 10 kHz run recorded 100 000
                // samples a second and read "10000.0 Hz achieved").
                // The run's own count over its own time, both complete at the end (the sampler's
                // count in `Health` is as of its last report, up to a batch behind its time); of
                // a served run, over the time its samples span (`record --connect` takes what the
                // server still held from before: 43 877 samples of 7.02 s over the 4.02 s it
                // recorded read "10917.1 samples a second" of a device making 6250).
                let all = self.served.unwrap_or(self.elapsed).as_secs_f64();
                if all * s.requested_hz >= 2.0 {
                    write!(f, ": {:.1} samples a second", self.rows.samples as f64 / all)?;
                } else {
                    write!(f, ": too short for a rate")?;
                }
                write!(
                    f,
                    ", read in batches at most {} apart ({:.1} Hz requested), {}",
                    zescope_model::view::text::duration(s.latency),
                    s.requested_hz,
                    plural(s.dropped_samples, "dropped sample", "dropped samples")
                )?;
            } else {
                // The deadlines served of those passed: a tick is due at the run's start and every
                // interval after, so ticks over the time gave one tick too many (a clean 4 s at
                // 1 kHz read "1000.2 Hz achieved of 1000.0 Hz requested").
                let due = s.ticks + s.skipped_ticks;
                if secs * s.requested_hz >= 2.0 && due > 0 {
                    let achieved = s.requested_hz * s.ticks as f64 / due as f64;
                    write!(f, ": {achieved:.1} Hz achieved of {:.1} Hz requested", s.requested_hz)?;
                } else {
                    write!(f, ": too short for a rate ({:.1} Hz requested)", s.requested_hz)?;
                }
                write!(
                    f,
                    ", {}, {}, {}",
                    plural(s.late_ticks, "late tick", "late ticks"),
                    plural(s.dropped_samples, "dropped sample", "dropped samples"),
                    plural(s.torn_reads, "torn read", "torn reads")
                )?;
            }
            if s.unchanged_reads > 0 || s.clock_resets > 0 {
                let unchanged = plural(s.unchanged_reads, "unchanged read", "unchanged reads");
                write!(f, ", {unchanged}, {}", plural(s.clock_resets, "device clock reset", "device clock resets"))?;
            }
            if s.dropped_reports > 0 {
                let reads = plural(s.dropped_reports, "streamer read", "streamer reads");
                write!(f, ", {reads} said the driver dropped reports")?;
            }
        }
        let c = self.marker_drops.unwrap_or_default();
        if self.markers + self.unmatched_ends > 0 || c.dropped() + self.markers_over_cap > 0 {
            write!(f, "; {}", plural(self.markers, "marker", "markers"))?;
            if self.unmatched_ends > 0 {
                write!(f, " ({} of a range never begun ignored)", plural(self.unmatched_ends, "end", "ends"))?;
            }
            if c.dropped() + self.markers_over_cap > 0 {
                write!(
                    f,
                    " ({} malformed, {} over the rate limit, {} over the queue, {} over the limit of {} per session, \
                     {} from other users, {} without credentials dropped)",
                    c.malformed,
                    c.over_rate,
                    c.queue_full,
                    self.markers_over_cap,
                    self.marker_cap,
                    c.other_user,
                    c.no_credentials
                )?;
            }
        }
        if let Some((firings, windows, kept, index)) = &self.triggered {
            let (firings, windows) =
                (plural(*firings, "firing", "firings"), plural(*windows as u64, "window", "windows"));
            let kept = plural(*kept, "sample", "samples");
            write!(f, "; {firings}, {windows} kept ({kept}), listed in {}", index.display())?;
        }
        if let Some(s) = self.workload {
            write!(f, "; the workload exited with {s}")?;
        }
        if self.interrupted {
            write!(f, " (interrupted)")?;
        }
        Ok(())
    }
}
