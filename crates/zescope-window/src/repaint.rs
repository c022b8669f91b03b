//! When the window paints: a live view when its time axis has moved [`STEP_PX`] pixels, or (at
//! least every [`FRESH`]) for new values in the legend, and at most as often as the frame-rate cap
//! (30 a second unless View → Frame rate says otherwise). Where the window has a [`Wake`]
//! (`crate::wake`), such a frame follows the data: it comes with the first delivery after
//! [`MEET_DATA`] of its period short of the period (so a frame may be a tenth early, and a sample
//! waits for the frame after its arrival at most one delivery, 16 ms, not a whole period), or,
//! when no delivery comes, [`DATA_SLACK`] after the period if the last frame had data (at the
//! period if it had none: a run slower than the frame rate moves its axis as smoothly as without
//! a waker). A frozen view with a run going on takes in data once a second; without a run
//! nothing is scheduled.
//!
//! [`Wake`]: crate::wake::Wake
//!
//! Why three pixels and 30 frames: under a software GL (Mesa's llvmpipe, as in a VM or a remote
//! desktop) a frame of a 1600x1000 window costs ~20 ms of CPU whatever changed in it (shading,
//! clearing and presenting every pixel; zescope's own work is under a tenth of it,
//! `docs/benchmarks.md`, "The monitor's own cost"), so the frame count is the window's cost. A plot
//! moving three pixels a step (six steps a second at the default minute on a 1150-pixel plot), at
//! most 30 times a second, still reads as motion; one pixel at the display's rate cost three
//! times as much for no more to read.
//!
//! Also the whole process's CPU use for the status bar ([`ProcessCpu`]).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// A live view paints when its time axis has moved this many physical pixels.
pub(crate) const STEP_PX: f64 = 3.0;

/// The longest a live view waits between frames, so its legend's numbers stay fresh even when a
/// pixel of the time axis is longer than this (a 10-minute window).
pub(crate) const FRESH: Duration = Duration::from_millis(250);
/// How much of its period a live view's frame may come early to meet a delivery of data.
pub(crate) const MEET_DATA: f64 = 0.1;
/// How long past its period a live view's frame that had data waits for more before it paints
/// without (the sampler delivers every 16 ms in a run).
pub(crate) const DATA_SLACK: Duration = Duration::from_millis(20);
/// A frozen view with a run going on repaints this often (the "new samples" hint).
pub(crate) const FROZEN: Duration = Duration::from_secs(1);
/// How often a save's or export's progress is shown while it runs.
pub(crate) const FILE_PROGRESS: Duration = Duration::from_millis(100);

/// View → Frame rate: the most frames a second a live view paints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FrameCap {
    /// The display's rate (taken as 60 Hz: eframe does not report it).
    Display,
    /// 30 frames a second (the default).
    #[default]
    Fps30,
    /// 10 frames a second (least CPU; a live view still moves smoothly enough to read).
    Fps10,
}

impl FrameCap {
    /// Every cap, fastest first, as the menu offers them.
    pub const ALL: [FrameCap; 3] = [FrameCap::Display, FrameCap::Fps30, FrameCap::Fps10];

    /// The shortest time between two frames.
    pub fn period(self) -> Duration {
        match self {
            FrameCap::Display => Duration::from_micros(16_667),
            FrameCap::Fps30 => Duration::from_micros(33_333),
            FrameCap::Fps10 => Duration::from_millis(100),
        }
    }

    /// Its name in the menu.
    pub fn label(self) -> &'static str {
        match self {
            FrameCap::Display => "display rate",
            FrameCap::Fps30 => "30 per second",
            FrameCap::Fps10 => "10 per second",
        }
    }
}

/// How long a live view showing `span_s` seconds over `plot_px` physical pixels waits before its
/// next frame: the time [`STEP_PX`] pixels of its axis stand for, at least `cap`'s period, at
/// most [`FRESH`].
pub(crate) fn live_period(span_s: f64, plot_px: f32, cap: FrameCap) -> Duration {
    let px = f64::from(plot_px.max(1.0));
    let step = if span_s.is_finite() && span_s > 0.0 { span_s / px * STEP_PX } else { 0.0 };
    Duration::from_secs_f64(step.min(FRESH.as_secs_f64())).max(cap.period())
}

/// The whole process's share of one core, measured over about a second.
#[derive(Debug, Default)]
pub(crate) struct ProcessCpu {
    since: Option<(Instant, Duration)>,
    /// Percent of one core over the last measured second; `None` until then.
    pub percent: Option<f64>,
}

impl ProcessCpu {
    /// Takes a new measurement when a second has passed since the last.
    pub(crate) fn update(&mut self) {
        let now = Instant::now();
        let cpu = zescope_sampler::process_cpu_time();
        match self.since {
            Some((t, c)) if now.duration_since(t) >= Duration::from_secs(1) => {
                let wall = now.duration_since(t).as_secs_f64();
                self.percent = Some(cpu.saturating_sub(c).as_secs_f64() / wall * 100.0);
                self.since = Some((now, cpu));
            }
            Some(_) => {}
            None => self.since = Some((now, cpu)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_view_paints_when_its_axis_moves_a_pixel_within_the_cap() {
        // 1 minute over 1000 px: 60 ms a pixel, a frame every three: 5.6 frames a second.
        assert_eq!(live_period(60.0, 1000.0, FrameCap::Display), Duration::from_millis(180));
        // 10 s over 1000 px is 10 ms a pixel, 30 ms three: the cap decides.
        assert_eq!(live_period(10.0, 1000.0, FrameCap::Display), Duration::from_millis(30));
        assert_eq!(live_period(10.0, 1000.0, FrameCap::default()), Duration::from_micros(33_333));
        assert_eq!(live_period(10.0, 1000.0, FrameCap::Fps10), Duration::from_millis(100));
        // 10 minutes: three pixels are 1.8 s, but the legend's numbers are refreshed sooner.
        assert_eq!(live_period(600.0, 1000.0, FrameCap::Display), FRESH);
        assert_eq!(live_period(f64::NAN, 0.0, FrameCap::Fps30), FrameCap::Fps30.period());
    }

    #[test]
    fn process_cpu_counts_every_thread() {
        // Another thread spins for a fixed amount of its own CPU time (however slowly a loaded
        // machine schedules it) while this one sleeps: the whole process's share cannot be less
        // than that CPU time over the wall time of the whole measurement.
        let t0 = Instant::now();
        let mut cpu = ProcessCpu::default();
        cpu.update();
        let spin = std::thread::spawn(|| {
            let start = zescope_sampler::thread_cpu_time();
            let mut x = 0u64;
            while zescope_sampler::thread_cpu_time() - start < Duration::from_millis(300) {
                for _ in 0..10_000 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            }
            zescope_sampler::thread_cpu_time() - start
        });
        let spun = spin.join().expect("the spinning thread ends");
        while cpu.percent.is_none() {
            std::thread::sleep(Duration::from_millis(10));
            cpu.update();
        }
        let wall = t0.elapsed();
        let p = cpu.percent.expect("a second has passed");
        // getrusage counts in whole microseconds.
        let floor = spun.saturating_sub(Duration::from_micros(10)).as_secs_f64() / wall.as_secs_f64() * 100.0;
        assert!(p >= floor, "{spun:?} of another thread's CPU over {wall:?} is at least {floor:.1} %, not {p:.1} %");
    }
}
