//! [`Deriver`]: derivations bound to a run (the series each names, the derived streams added to
//! the run) and fed its batches (see the module docs of [`super`]).

use std::collections::VecDeque;

use zescope_sampler::layout::Kind;
use zescope_sampler::layout::glob::matches;
use zescope_sampler::{RunInfo, SampleBatch, SeriesInfo, StreamInfo};
use zescope_store::SeriesKind;
use zescope_store::rate::kind_rate_between;

use super::node::Node;
use super::units::unit_of;
use super::{DESCRIPTION_PREFIX, Derivation, GROUP, HOLD_NS};
use crate::triggers::expr::{Expr, Func};
use crate::triggers::names::{closest, offered, quoted};
use crate::view::series::{plotted_unit, store_kind};

/// The most samples of another stream held for the ticks of a driving stream.
const MAX_HELD: usize = 1 << 16;

/// Derivations bound to a run and its batches (see [`super`]).
#[derive(Debug, Default)]
pub struct Deriver {
    defs: Vec<Derivation>,
    run: u64,
    /// Per stream of the run as sampled: its width, the inputs it feeds, the output it drives.
    inputs: Vec<InputStream>,
    /// Per derivation.
    series: Vec<Bound>,
    /// The derived streams: which stream of the run (as passed on) each is, which stream drives
    /// it, which derivations it holds.
    outs: Vec<OutStream>,
}

#[derive(Debug, Default)]
struct InputStream {
    width: usize,
    /// (derivation, input) fed by this stream's samples.
    feeds: Vec<(usize, usize)>,
    /// The derived streams it drives (indices into `outs`).
    drives: Vec<usize>,
}

#[derive(Debug)]
struct OutStream {
    stream: usize,
    series: Vec<usize>,
}

/// A derivation bound to a run: its node and inputs, each input's stream (the first drives it),
/// its series' description.
type Binding = (Bound, Vec<usize>, SeriesInfo);

#[derive(Debug)]
struct Bound {
    /// The derivation's name.
    name: String,
    /// Not fed yet: it is being computed over what the run recorded before it was added
    /// (`CatchUp`), which hands its state over ([`Deriver::take_over`]).
    paused: bool,
    node: Node,
    inputs: Vec<Held>,
    /// The inputs' values at the tick being evaluated.
    values: Vec<Option<f64>>,
}

/// One series an expression names: its column, how its samples become values, and the values
/// held for the ticks of the driving stream.
#[derive(Debug)]
struct Held {
    column: usize,
    /// `Some`: a running total read as plotted (its rate, its busy share), from consecutive raw
    /// samples; `None`: read as sampled.
    rate: Option<SeriesKind>,
    prev: Option<(i64, f64)>,
    /// (time, value; NaN where there is none), oldest first.
    held: VecDeque<(i64, f64)>,
}

impl Held {
    fn take(&mut self, t: i64, raw: f64) {
        let v = match &self.rate {
            None => raw,
            Some(kind) => {
                let before = self.prev.replace((t, raw));
                before
                    .filter(|&(t0, _)| t > t0)
                    .and_then(|(t0, v0)| kind_rate_between(v0, raw, t - t0, kind))
                    .unwrap_or(f64::NAN)
            }
        };
        if self.held.len() == MAX_HELD {
            self.held.pop_front();
        }
        self.held.push_back((t, v));
    }

    /// The latest value at or before `t`, held at most [`HOLD_NS`]; `None`: a gap.
    fn at(&mut self, t: i64) -> Option<f64> {
        while self.held.len() > 1 && self.held[1].0 <= t {
            self.held.pop_front();
        }
        let &(ht, v) = self.held.front()?;
        (ht <= t && t - ht <= HOLD_NS && !v.is_nan()).then_some(v)
    }
}

impl Deriver {
    /// A deriver of `defs`, bound to no run yet.
    pub fn new(defs: Vec<Derivation>) -> Deriver {
        Deriver { defs, ..Deriver::default() }
    }

    /// The derivations.
    pub fn derivations(&self) -> &[Derivation] {
        &self.defs
    }

    /// Binds the derivations to run `info` and adds their streams to it (after the sampled ones,
    /// one per driving stream, group [`GROUP`]); errs, naming what each could mean, when a
    /// derivation names a series the run does not have, or several, or a name is taken twice.
    pub fn run_started(&mut self, info: &mut RunInfo) -> Result<(), String> {
        self.run = info.run;
        self.inputs =
            info.streams.iter().map(|s| InputStream { width: s.series.len(), ..InputStream::default() }).collect();
        self.series.clear();
        self.outs.clear();
        let mut problems = Vec::new();
        let mut bound = Vec::new();
        for (di, d) in self.defs.iter().enumerate() {
            if self.defs[..di].iter().any(|o| o.name == d.name) {
                problems.push(format!("derived series '{}' is defined twice", d.name));
                continue;
            }
            match bind(d, info, &self.defs) {
                Ok(b) => bound.push(b),
                Err(e) => problems.push(e),
            }
        }
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        // One derived stream per driving stream, in the order first driven.
        let mut by_driving: Vec<(usize, Vec<Binding>)> = Vec::new();
        for b in bound {
            match by_driving.iter_mut().find(|(d, _)| *d == b.1[0]) {
                Some((_, v)) => v.push(b),
                None => by_driving.push((b.1[0], vec![b])),
            }
        }
        for (driving, group) in by_driving {
            self.open(info, driving, group);
        }
        Ok(())
    }

    /// Adds derivation `def` to the run in progress (`info`, as passed on, which gains its
    /// stream, returned): a series derived from then on, in a derived stream of its own (from the
    /// run's start with [`super::CatchUp`], which holds it back and hands it over). Errs as
    /// [`Deriver::run_started`] does, and for a name taken already; nothing changes then.
    pub fn add(&mut self, def: Derivation, info: &mut RunInfo) -> Result<StreamInfo, String> {
        if self.defs.iter().any(|o| o.name == def.name) {
            return Err(format!("derived series '{}' is defined already", def.name));
        }
        if info.run != self.run || self.inputs.is_empty() {
            self.defs.push(def);
            return Err("no run in progress: it is derived from the next run on".into());
        }
        let b = bind(&def, info, &self.defs)?;
        self.defs.push(def);
        let driving = b.1[0];
        self.open(info, driving, vec![b]);
        Ok(info.streams.last().cloned().expect("opened"))
    }

    /// Holds derivation `name` (of the run in progress) back from the batches that follow, or
    /// lets it take them again.
    pub(crate) fn set_paused(&mut self, name: &str, paused: bool) {
        self.series.iter_mut().filter(|b| b.name == name).for_each(|b| b.paused = paused);
    }

    /// Derivation `name` goes on from where `from`'s left off (its running sums, windows and
    /// the values held for its ticks; `from` bound it to the same run), and takes the batches
    /// that follow.
    pub(crate) fn take_over(&mut self, name: &str, from: &mut Deriver) {
        let theirs = from.series.iter_mut().find(|b| b.name == name);
        if let (Some(ours), Some(theirs)) = (self.series.iter_mut().find(|b| b.name == name), theirs) {
            std::mem::swap(&mut ours.node, &mut theirs.node);
            std::mem::swap(&mut ours.inputs, &mut theirs.inputs);
            std::mem::swap(&mut ours.values, &mut theirs.values);
            ours.paused = false;
        }
    }

    /// Adds `def` to those bound when the next run starts; errs for a name taken already.
    pub fn define(&mut self, def: Derivation) -> Result<(), String> {
        if self.defs.iter().any(|o| o.name == def.name) {
            return Err(format!("derived series '{}' is defined already", def.name));
        }
        self.defs.push(def);
        Ok(())
    }

    /// Removes the derivation named `name` from those bound at the next run (the run in progress
    /// keeps deriving it).
    pub fn remove(&mut self, name: &str) {
        self.defs.retain(|d| d.name != name);
    }

    /// The streams of the bound run (as sampled, by index) that feed or drive a derived series:
    /// those a computation over recorded data has to read.
    pub fn streams_read(&self) -> Vec<usize> {
        let used = |i: &InputStream| !i.feeds.is_empty() || !i.drives.is_empty();
        self.inputs.iter().enumerate().filter(|(_, i)| used(i)).map(|(k, _)| k).collect()
    }

    /// Opens a derived stream driven by stream `driving` for `group`, adding it to `info`.
    fn open(&mut self, info: &mut RunInfo, driving: usize, group: Vec<Binding>) {
        let out = self.outs.len();
        let mut series = Vec::new();
        let mut infos = Vec::new();
        for (bound, streams, si) in group {
            let bi = self.series.len();
            for (k, &stream) in streams.iter().enumerate() {
                self.inputs[stream].feeds.push((bi, k));
            }
            self.series.push(bound);
            series.push(bi);
            infos.push(si);
        }
        self.inputs[driving].drives.push(out);
        let s = &info.streams[driving];
        let stream = StreamInfo {
            index: info.streams.len(),
            target: s.target,
            device: s.device.clone(),
            group: GROUP.into(),
            layout: format!("{}{}", super::LAYOUT_PREFIX, s.group),
            series: infos,
            read_path: s.read_path,
        };
        self.outs.push(OutStream { stream: stream.index, series });
        info.streams.push(stream);
    }

    /// The derived batches a batch of the bound run drives, one per derived stream it drives
    /// (none for a batch that drives no derived series, or of another run).
    pub fn samples(&mut self, b: &SampleBatch) -> Vec<SampleBatch> {
        self.rows(b.run, b.stream, &b.timestamps, &b.values, b.gap_before)
    }

    /// As [`Deriver::samples`], for a batch given as its parts (rows read from a store).
    pub fn rows(
        &mut self,
        run: u64,
        stream: usize,
        timestamps: &[i64],
        values: &[f64],
        gap_before: bool,
    ) -> Vec<SampleBatch> {
        let Some(input) = self.inputs.get(stream).filter(|_| run == self.run) else { return Vec::new() };
        let width = input.width;
        // A stream no derived series reads (every stream of a run without any): nothing to do
        // per row.
        if width == 0 || values.len() != timestamps.len() * width || (input.feeds.is_empty() && input.drives.is_empty())
        {
            return Vec::new();
        }
        // A derivation paused is neither fed nor evaluated (one is alone in its stream).
        let series = &self.series;
        let drives: Vec<usize> = input
            .drives
            .iter()
            .copied()
            .filter(|&o| self.outs[o].series.iter().any(|&di| !series[di].paused))
            .collect();
        if gap_before {
            for &(di, k) in &input.feeds {
                self.series[di].inputs[k].prev = None;
            }
            for &o in &drives {
                self.outs[o].series.iter().for_each(|&di| self.series[di].node.break_continuity());
            }
        }
        let mut out: Vec<Vec<f64>> =
            drives.iter().map(|&o| Vec::with_capacity(timestamps.len() * self.outs[o].series.len())).collect();
        for (row, &t) in values.chunks_exact(width).zip(timestamps) {
            for &(di, k) in &input.feeds {
                let s = &mut self.series[di];
                if !s.paused {
                    let h = &mut s.inputs[k];
                    h.take(t, row[h.column]);
                }
            }
            for (values, &o) in out.iter_mut().zip(&drives) {
                for &di in &self.outs[o].series {
                    let s = &mut self.series[di];
                    for (v, h) in s.values.iter_mut().zip(&mut s.inputs) {
                        *v = h.at(t);
                    }
                    values.push(s.node.eval(t, &s.values).unwrap_or(f64::NAN));
                }
            }
        }
        out.into_iter()
            .zip(&drives)
            .map(|(values, &o)| SampleBatch {
                run,
                stream: self.outs[o].stream,
                timestamps: timestamps.to_vec(),
                values,
                gap_before,
            })
            .collect()
    }
}

/// Binds `d` to run `info`: its node and inputs, the stream of each input (the first drives it),
/// and the description of its series. Errs naming what a series name could mean, or, for a
/// derived series (of `info` or of `defs`), why it is not taken and what to write instead.
fn bind(d: &Derivation, info: &RunInfo, defs: &[Derivation]) -> Result<Binding, String> {
    // Sampled series only: a derived series is not fed back (write its expression out instead).
    let sampled: Vec<bool> = info.streams.iter().map(|s| !super::is_derived(s)).collect();
    let offered: Vec<_> = offered(info).into_iter().filter(|o| o.group != GROUP).collect();
    let mut problems = Vec::new();
    // Each series named, resolved to (stream, column).
    let mut at = Vec::new();
    for e in d.expr.series() {
        let Expr::Series { pattern: p, text, .. } = e else { continue };
        let hits: Vec<(usize, usize)> = info
            .streams
            .iter()
            .enumerate()
            .flat_map(|(si, s)| s.series.iter().enumerate().map(move |(ci, x)| (si, ci, s, x)))
            .filter(|(si, _, s, x)| {
                sampled[*si]
                    && p.device.as_deref().is_none_or(|dv| matches(dv, &s.device))
                    && matches(&p.group, &s.group)
                    && matches(&p.metric, &x.name)
            })
            .map(|(si, ci, _, _)| (si, ci))
            .collect();
        match hits.as_slice() {
            [one] => at.push(*one),
            [] if let Some(other) = derived_named(p, info, defs) => problems.push(format!(
                "derived series '{}' names '{text}', itself a derived series: a derivation names sampled \
                 series only, so write its expression out instead ({other})",
                d.name
            )),
            [] => {
                let close = closest(p, &offered);
                problems.push(format!(
                    "derived series '{}' names '{text}', no series of this run; it could mean {}",
                    d.name,
                    close.join(", ")
                ));
            }
            many => {
                let names: Vec<String> = many
                    .iter()
                    .take(5)
                    .map(|&(si, ci)| {
                        let s = &info.streams[si];
                        quoted(&format!("{}/{}/{}", s.device, s.group, s.series[ci].name))
                    })
                    .collect();
                problems.push(format!(
                    "derived series '{}' names '{text}', which is {} series ({}); name one",
                    d.name,
                    many.len(),
                    names.join(", ")
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    if at.is_empty() {
        return Err(format!("derived series '{}' names no series: it has no samples to tick with", d.name));
    }
    let mut holds = Vec::new();
    let node = build(&d.expr, info, &at, &mut holds, false);
    let named = d.expr.series();
    let info_of = |e: &Expr| {
        let i = named.iter().position(|x| std::ptr::eq(*x, e)).unwrap_or(0);
        let (si, ci) = at[i];
        &info.streams[si].series[ci]
    };
    let unit = d.unit.clone().or_else(|| {
        unit_of(&d.expr, &|e, raw| {
            let x = info_of(e);
            if raw { x.unit.clone() } else { plotted_unit(x) }
        })
    });
    let streams: Vec<usize> = holds.iter().map(|h| h.1).collect();
    let inputs: Vec<Held> = holds.into_iter().map(|h| h.0).collect();
    let values = vec![None; inputs.len()];
    let series = SeriesInfo {
        name: d.name.clone(),
        description: format!("{DESCRIPTION_PREFIX}{}", d.definition()),
        unit: unit.unwrap_or_default(),
        kind: Kind::Gauge,
        wrap: None,
    };
    Ok((Bound { name: d.name.clone(), paused: false, node, inputs, values }, streams, series))
}

/// The definition of the derived series pattern `p` names, among those of run `info` and `defs`.
fn derived_named(p: &crate::triggers::SeriesPattern, info: &RunInfo, defs: &[Derivation]) -> Option<String> {
    if !matches(&p.group, GROUP) {
        return None;
    }
    let of_run = info.streams.iter().filter(|s| super::is_derived(s)).flat_map(|s| &s.series);
    let mut known = of_run.filter_map(|x| Derivation::from_description(&x.description)).chain(defs.iter().cloned());
    known.find(|k| matches(&p.metric, &k.name)).map(|k| format!("{} = {}", k.name, k.text))
}

/// The node of `e`, with one held input per series it names (in the order written: `at`).
/// `raw`: `e` is the operand of `rate`/`delta`, where a running total counts as read.
fn build(e: &Expr, info: &RunInfo, at: &[(usize, usize)], holds: &mut Vec<(Held, usize)>, raw: bool) -> Node {
    let b = |x: &Expr, holds: &mut Vec<(Held, usize)>| Box::new(build(x, info, at, holds, false));
    match e {
        Expr::Num(v) => Node::Num(*v),
        Expr::Series { .. } => {
            let (si, ci) = at[holds.len()];
            let x = &info.streams[si].series[ci];
            let rate = (!raw && x.kind.is_running_total()).then(|| store_kind(x));
            holds.push((Held { column: ci, rate, prev: None, held: VecDeque::new() }, si));
            Node::Input(holds.len() - 1)
        }
        Expr::Neg(x) => Node::Neg(b(x, holds)),
        Expr::Bin(op, x, y) => {
            let x = b(x, holds);
            Node::Bin(*op, x, b(y, holds))
        }
        Expr::Call { func, args, window_ns } => {
            let x = &args[0];
            match func {
                Func::Rate | Func::Delta => {
                    let running_total = match x {
                        Expr::Series { .. } => {
                            let (si, ci) = at[holds.len()];
                            let s = &info.streams[si].series[ci];
                            s.kind.is_running_total().then_some(s.wrap)
                        }
                        _ => None,
                    };
                    let x = Box::new(build(x, info, at, holds, true));
                    Node::Change {
                        x,
                        per_second: *func == Func::Rate,
                        wrap: running_total.flatten(),
                        running_total: running_total.is_some(),
                        prev: None,
                    }
                }
                Func::Integral => {
                    // A running total read as its rate, and a `rate`, are means over the time
                    // since the tick before (`Node::Integral`'s `means`).
                    let means = match x {
                        Expr::Series { .. } => {
                            let (si, ci) = at[holds.len()];
                            info.streams[si].series[ci].kind.is_running_total()
                        }
                        Expr::Call { func: Func::Rate, .. } => true,
                        _ => false,
                    };
                    Node::Integral { x: b(x, holds), prev: None, sum: 0.0, means }
                }
                Func::Cumsum => Node::Cumsum { x: b(x, holds), sum: 0.0 },
                Func::Abs => Node::Abs(b(x, holds)),
                Func::Clamp => {
                    let n = [*b(x, holds), *b(&args[1], holds), *b(&args[2], holds)];
                    Node::Clamp(Box::new(n))
                }
                Func::Max | Func::Min if window_ns.is_none() => {
                    let n = [*b(x, holds), *b(&args[1], holds)];
                    Node::Pick { x: Box::new(n), max: *func == Func::Max }
                }
                Func::Avg | Func::Max | Func::Min | Func::Rms | Func::Stddev => Node::Window {
                    x: b(x, holds),
                    func: *func,
                    within_ns: window_ns.unwrap_or(1),
                    w: Default::default(),
                },
            }
        }
    }
}
