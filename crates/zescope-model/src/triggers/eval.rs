//! Evaluating triggers on ingest: every sample of every watched series, whatever is shown.
//!
//! [`Evaluator::run_started`] binds each trigger to the series of the run its pattern matches
//! (one watch per matched series, with its own state) and indexes the watches by stream and
//! column, so a batch touches only the watches of its own stream: the cost per sample is that of
//! the watches on its stream, whatever the number of triggers or series elsewhere, and no sample
//! allocates (a firing pushes onto the caller's vector). A value is what is plotted (the
//! store's own rules: `zescope_store::rate::kind_rate_between` for running totals, a busy share clamped to 0–100 %), so a
//! trigger fires where the plot crosses its value. `rise`/`fall` keep a monotonic deque of the
//! window's values (amortised O(1) per sample; at most [`MAX_WINDOW_SAMPLES`] entries, past
//! which the window is shortened).

use std::collections::VecDeque;
use std::sync::Arc;

use zescope_sampler::layout::Kind;
use zescope_sampler::layout::glob::matches;
use zescope_sampler::telemetry::throttle_names;
use zescope_sampler::{RunInfo, SampleBatch};
use zescope_store::SeriesKind;
use zescope_store::rate::kind_rate_between;

use super::syntax::{Condition, Test, Trigger, mask_of};
use crate::view::series::store_kind;

/// The most values a `rise`/`fall` window keeps (its oldest are dropped past this).
pub const MAX_WINDOW_SAMPLES: usize = 1 << 16;

/// One firing: which trigger, when, on what, at which value.
#[derive(Clone, Debug, PartialEq)]
pub struct Firing {
    /// Index of the trigger in the evaluator's list.
    pub trigger: usize,
    /// When (ns, the samples' CLOCK_MONOTONIC timeline).
    pub t_ns: i64,
    /// The series ("device · group/metric") or "marker NAME".
    pub series: Arc<str>,
    /// The plotted value that fired it (a throttle mask, NaN for a marker).
    pub value: f64,
}

/// Triggers bound to a run's series, with their state (see the module docs).
#[derive(Debug, Default)]
pub struct Evaluator {
    triggers: Vec<Trigger>,
    /// Firings so far, per trigger.
    counts: Vec<u64>,
    run: u64,
    /// Per stream of the run: its width and its watches.
    streams: Vec<StreamWatches>,
}

#[derive(Debug, Default)]
struct StreamWatches {
    width: usize,
    /// The stream's watches, each with its column: a batch walks them in order.
    watches: Vec<Watch>,
}

#[derive(Debug)]
struct Watch {
    column: usize,
    trigger: usize,
    label: Arc<str>,
    value: Value,
    state: State,
}

/// How a sample becomes the plotted value.
#[derive(Debug)]
enum Value {
    Level,
    Rate { kind: SeriesKind, prev: Option<(i64, f64)> },
}

impl Value {
    #[inline]
    fn plotted(&mut self, t: i64, raw: f64) -> Option<f64> {
        match self {
            Value::Level => (!raw.is_nan()).then_some(raw),
            Value::Rate { kind, prev } => {
                let before = prev.replace((t, raw));
                let (t0, v0) = before?;
                if t <= t0 {
                    return None;
                }
                kind_rate_between(v0, raw, t - t0, kind).filter(|v| !v.is_nan())
            }
        }
    }

    fn reset(&mut self) {
        if let Value::Rate { prev, .. } = self {
            *prev = None;
        }
    }
}

/// A test's state: was its condition true at the last value (`None`: no value yet)?
#[derive(Debug)]
struct State {
    test: Test,
    /// Throttle: the bits watched.
    mask: u32,
    was: Option<bool>,
    prev: f64,
    window: VecDeque<(i64, f64)>,
}

impl State {
    fn new(test: Test, mask: u32) -> State {
        State { test, mask, was: None, prev: f64::NAN, window: VecDeque::new() }
    }

    fn reset(&mut self) {
        self.was = None;
        self.prev = f64::NAN;
        self.window.clear();
    }

    /// Takes value `v` at `t`; true when the trigger fires.
    #[inline]
    fn step(&mut self, t: i64, v: f64) -> bool {
        let prev = std::mem::replace(&mut self.prev, v);
        let now = match self.test {
            Test::Above(x) => v > x,
            Test::Below(x) => v < x,
            Test::Cross(x) => {
                // Fires on a move from one side to the other (or onto the value from one side).
                return !prev.is_nan() && ((prev <= x && v > x) || (prev >= x && v < x));
            }
            Test::Rise { by, within_ns } => {
                slide(&mut self.window, t, v, within_ns, |old, new| old >= new);
                self.window.front().is_some_and(|&(_, lo)| v - lo > by)
            }
            Test::Fall { by, within_ns } => {
                slide(&mut self.window, t, v, within_ns, |old, new| old <= new);
                self.window.front().is_some_and(|&(_, hi)| hi - v > by)
            }
        };
        let fired = now && self.was == Some(false);
        self.was = Some(now);
        fired
    }

    /// A throttle mask: fires when a watched bit becomes set.
    #[inline]
    fn step_mask(&mut self, v: f64) -> bool {
        let now = v.is_finite() && v >= 0.0 && (v.min(u32::MAX as f64) as u32) & self.mask != 0;
        let fired = now && self.was == Some(false);
        self.was = Some(now);
        fired
    }
}

/// Pushes (t, v) onto a monotonic deque (dropping from the back the entries `dominated` by v),
/// then drops from the front what is older than `within_ns` before `t`.
#[inline]
fn slide(w: &mut VecDeque<(i64, f64)>, t: i64, v: f64, within_ns: i64, dominated: impl Fn(f64, f64) -> bool) {
    while w.back().is_some_and(|&(_, old)| dominated(old, v)) {
        w.pop_back();
    }
    if w.len() == MAX_WINDOW_SAMPLES {
        w.pop_front();
    }
    w.push_back((t, v));
    let from = t.saturating_sub(within_ns);
    while w.front().is_some_and(|&(ft, _)| ft < from) {
        w.pop_front();
    }
}

impl Evaluator {
    /// An evaluator of these triggers, bound to no run yet.
    pub fn new(triggers: Vec<Trigger>) -> Evaluator {
        let counts = vec![0; triggers.len()];
        Evaluator { triggers, counts, ..Evaluator::default() }
    }

    /// The triggers, in the order firings name them.
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// Firings so far, per trigger.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Adds a trigger (bound to the run in progress, if any); returns its index.
    pub fn add(&mut self, trigger: Trigger, run: Option<&RunInfo>) -> usize {
        self.triggers.push(trigger);
        self.counts.push(0);
        let i = self.triggers.len() - 1;
        if let Some(info) = run.filter(|r| r.run == self.run) {
            self.bind(i, info);
        }
        i
    }

    /// Removes trigger `index` (later ones move down by one, as in [`Evaluator::triggers`]).
    pub fn remove(&mut self, index: usize, run: Option<&RunInfo>) {
        if index >= self.triggers.len() {
            return;
        }
        self.triggers.remove(index);
        self.counts.remove(index);
        if let Some(info) = run.filter(|r| r.run == self.run) {
            self.run_started(info);
        }
    }

    /// Binds every trigger to the series of run `info`, with fresh state; returns, per trigger,
    /// how many series it watches (0 for a marker trigger, or a pattern that matches nothing).
    pub fn run_started(&mut self, info: &RunInfo) -> Vec<usize> {
        self.run = info.run;
        self.streams =
            info.streams.iter().map(|s| StreamWatches { width: s.series.len(), watches: Vec::new() }).collect();
        (0..self.triggers.len()).map(|i| self.bind(i, info)).collect()
    }

    /// Binds trigger `i` to the matching series of `info`; returns how many it watches.
    fn bind(&mut self, i: usize, info: &RunInfo) -> usize {
        let several = info.devices.len() > 1;
        let mut n = 0;
        for (si, s) in info.streams.iter().enumerate() {
            for (col, x) in s.series.iter().enumerate() {
                let (test, mask) = match &self.triggers[i].condition {
                    Condition::Series { pattern: p, test } => {
                        let hit = p.device.as_deref().is_none_or(|d| matches(d, &s.device))
                            && matches(&p.group, &s.group)
                            && matches(&p.metric, &x.name);
                        if !hit {
                            continue;
                        }
                        (*test, 0)
                    }
                    Condition::Throttle(word) => match mask_of(word, &throttle_names(&x.description)) {
                        Some(mask) => (Test::Above(0.0), mask),
                        None => continue,
                    },
                    Condition::Marker(_) => return 0,
                };
                let value = match (x.kind, &self.triggers[i].condition) {
                    (Kind::Cumulative | Kind::Busy, Condition::Series { .. }) => {
                        Value::Rate { kind: store_kind(x), prev: None }
                    }
                    _ => Value::Level,
                };
                let label = match several {
                    true => format!("{} · {}/{}", s.device, s.group, x.name),
                    false => format!("{}/{}", s.group, x.name),
                };
                let w = Watch { column: col, trigger: i, label: label.into(), value, state: State::new(test, mask) };
                self.streams[si].watches.push(w);
                n += 1;
            }
        }
        n
    }

    /// Evaluates a batch of the bound run; pushes its firings, in time order within the batch,
    /// onto `out`. A batch of another run or stream is ignored.
    pub fn samples(&mut self, b: &SampleBatch, out: &mut Vec<Firing>) {
        if b.run != self.run {
            return;
        }
        let Some(sw) = self.streams.get_mut(b.stream) else { return };
        if sw.watches.is_empty() || sw.width == 0 || b.values.len() != b.timestamps.len() * sw.width {
            return;
        }
        if b.gap_before {
            for w in &mut sw.watches {
                w.value.reset();
                w.state.reset();
            }
        }
        let counts = &mut self.counts;
        // Row after row: the firings come out in time order.
        for (row, &t) in b.values.chunks_exact(sw.width).zip(&b.timestamps) {
            for w in &mut sw.watches {
                let Some(&raw) = row.get(w.column) else { continue };
                let fired = match w.state.mask {
                    0 => match w.value.plotted(t, raw) {
                        Some(v) => w.state.step(t, v).then_some(v),
                        None => None,
                    },
                    _ => w.state.step_mask(raw).then_some(raw),
                };
                if let Some(value) = fired {
                    counts[w.trigger] += 1;
                    out.push(Firing { trigger: w.trigger, t_ns: t, series: w.label.clone(), value });
                }
            }
        }
    }

    /// A marker the workload sent (an instant, or a range's begin): fires every marker trigger
    /// whose glob matches `name`.
    pub fn marker(&mut self, name: &str, t_ns: i64, out: &mut Vec<Firing>) {
        for (i, t) in self.triggers.iter().enumerate() {
            if let Condition::Marker(glob) = &t.condition
                && matches(glob, name)
            {
                self.counts[i] += 1;
                out.push(Firing { trigger: i, t_ns, series: format!("marker {name}").into(), value: f64::NAN });
            }
        }
    }

    /// Forgets the bound run (its series are no longer watched); counts stay.
    pub fn run_stopped(&mut self, run: u64) {
        if run == self.run {
            self.streams.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_sampler::{DevicePath, ReadPath, RunConfig, SeriesInfo, StreamInfo};

    fn info(series: &[(&str, Kind)]) -> RunInfo {
        RunInfo {
            run: 1,
            config: RunConfig::single(
                DevicePath { driver: 0, device: 0, sub_device: None },
                vec!["G".into()],
                std::time::Duration::from_millis(1),
            ),
            devices: vec!["dev".into()],
            simulated: true,
            streams: vec![StreamInfo {
                index: 0,
                target: 0,
                device: "dev".into(),
                group: "G".into(),
                layout: "l".into(),
                series: series
                    .iter()
                    .map(|(n, k)| SeriesInfo {
                        name: n.to_string(),
                        description: match *n {
                            "Throttle" => zescope_sampler::telemetry::throttle_description(),
                            _ => String::new(),
                        },
                        unit: if *k == Kind::Busy { "ns".into() } else { "x".into() },
                        kind: *k,
                        wrap: None,
                    })
                    .collect(),
                read_path: ReadPath::Mapped,
            }],
            imports: 1,
            notices: Vec::new(),
        }
    }

    /// Runs `values` (one series, 1 ms apart from t = 1 ms) through `expr`; the firing times in ms.
    fn fire(expr: &str, kind: Kind, values: &[f64]) -> Vec<i64> {
        let mut ev = Evaluator::new(vec![Trigger::parse(expr).unwrap()]);
        let watched = ev.run_started(&info(&[("other", Kind::Gauge), ("v", kind)]));
        assert_eq!(watched, [usize::from(!expr.contains("nope"))], "{expr}");
        let ts: Vec<i64> = (1..=values.len() as i64).map(|i| i * 1_000_000).collect();
        let vals: Vec<f64> = values.iter().flat_map(|&v| [0.0, v]).collect();
        let mut out = Vec::new();
        ev.samples(&SampleBatch { run: 1, stream: 0, timestamps: ts, values: vals, gap_before: false }, &mut out);
        assert_eq!(ev.counts()[0], out.len() as u64);
        out.iter().map(|f| f.t_ns / 1_000_000).collect()
    }

    #[test]
    fn thresholds_fire_where_the_value_crosses_them() {
        let v = [90.0, 10.0, 50.0, 81.0, 85.0, 80.0, 81.0, f64::NAN, 20.0, 99.0];
        assert_eq!(fire("G/v > 80", Kind::Gauge, &v), [4, 7, 10], "not at the first value, above already");
        assert_eq!(fire("G/v < 50", Kind::Gauge, &v), [2, 9]);
        assert_eq!(fire("G/v cross 50", Kind::Gauge, &v), [2, 4, 9, 10]);
        assert_eq!(fire("G/nope > 1", Kind::Gauge, &v), Vec::<i64>::new());
    }

    #[test]
    fn rise_and_fall_look_back_over_their_window() {
        let v = [0.0, 5.0, 10.0, 15.0, 30.0, 31.0, 32.0, 33.0, 34.0, 0.0];
        assert_eq!(fire("G/v rise 20 in 3ms", Kind::Gauge, &v), [5]);
        assert_eq!(fire("G/v rise 20 in 2ms", Kind::Gauge, &v), Vec::<i64>::new(), "15 → 30 is too small");
        assert_eq!(fire("G/v fall 30 in 1ms", Kind::Gauge, &v), [10]);
    }

    #[test]
    fn running_totals_are_tested_as_their_rate() {
        // A count rising by 1 per ms is 1000/s, then by 3 per ms: 3000/s.
        let totals = [0.0, 1.0, 2.0, 3.0, 6.0, 9.0];
        assert_eq!(fire("G/v > 2000", Kind::Cumulative, &totals), [5]);
        // Busy time in ns: 0.5 ms of each ms is 50 %, then 90 %.
        let busy = [0.0, 5e5, 1e6, 1.9e6, 2.8e6];
        assert_eq!(fire("G/v > 80", Kind::Busy, &busy), [4]);
    }

    #[test]
    fn throttle_reasons_fire_when_their_bit_sets() {
        let mut ev = Evaluator::new(vec![Trigger::parse("throttle thermal").unwrap()]);
        assert_eq!(ev.run_started(&info(&[("Throttle", Kind::State)])), [1]);
        let mut out = Vec::new();
        let b = SampleBatch {
            run: 1,
            stream: 0,
            timestamps: vec![1, 2, 3, 4, 5],
            values: vec![0.0, 1.0, 8.0, 9.0, 8.0],
            gap_before: false,
        };
        ev.samples(&b, &mut out);
        assert_eq!(out.iter().map(|f| (f.t_ns, f.value)).collect::<Vec<_>>(), [(3, 8.0)]);
    }

    #[test]
    fn markers_and_gaps() {
        let mut ev = Evaluator::new(vec![Trigger::parse("marker solve*").unwrap(), Trigger::parse("G/v > 5").unwrap()]);
        ev.run_started(&info(&[("v", Kind::Gauge)]));
        let mut out = Vec::new();
        ev.marker("solve 3", 7, &mut out);
        ev.marker("setup", 8, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(&*out[0].series, "marker solve 3");
        out.clear();
        let b = |t: i64, v: f64, gap: bool| SampleBatch {
            run: 1,
            stream: 0,
            timestamps: vec![t],
            values: vec![v],
            gap_before: gap,
        };
        ev.samples(&b(1, 1.0, false), &mut out);
        ev.samples(&b(2, 9.0, true), &mut out);
        assert!(out.is_empty(), "no crossing across a gap");
        ev.samples(&b(3, 1.0, false), &mut out);
        ev.samples(&b(4, 9.0, false), &mut out);
        ev.samples(&b(5, 9.0, false), &mut out);
        assert_eq!(out.iter().map(|f| f.t_ns).collect::<Vec<_>>(), [4]);
        assert_eq!(ev.counts(), [1, 1]);
    }
}
