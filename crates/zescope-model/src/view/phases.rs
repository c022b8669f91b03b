//! The phase table: what each counter did during a phase — the visible range, the span between
//! the A/B cursors, or a marked range.
//!
//! A phase is a closed time range `(name, start_ns, end_ns)` ([`PhaseRange`]). Per phase and per
//! series ([`phase_table`]): the phase's duration, and the time the series was measured in it
//! (its samples' span there: each run's first sample in the phase to its last, summed over the
//! runs; a phase reaching past the data, or over the time between two runs, is longer than what
//! was measured); the mean, min and max of what is plotted
//! (the value of a gauge, the rate of a cumulative counter, the busy share of busy time) over the
//! stored samples in the range (`Store::stats`, full resolution where it is held); for a
//! cumulative counter its total over the phase (`Store::increase`: the running total's
//! increases, wraps handled as for its rate; for busy time, the time busy in its unit); a state
//! (an id, a flag) has its min and max but no mean, total or energy: it is no quantity; for
//! energy, the joules spent and the mean power, both over the time measured (never made up for
//! time without samples): from a cumulative energy counter (unit J, mJ, µJ/uJ or kJ) its total
//! and the total over the time measured, from a gauge of energy since its run started
//! (telemetry's "Package energy", no mean) its last value less its first within each run,
//! summed over the runs, and that over the time measured, from a power gauge (W, mW, µW/uW, kW)
//! its mean and the mean times the time measured. A phase with no sample has no total and no
//! energy (blank, not 0), nor a mean power from energy where it spans no time (one sample). A
//! counter sampled in several runs counts the samples of all of them. The rows come in a long form (one per phase and series),
//! sortable by any column ([`PhaseTable::sort`]) and written as CSV or Markdown
//! ([`PhaseTable::to_csv`], [`PhaseTable::to_markdown`]) for the clipboard and
//! `zescope export --phases`.

use std::collections::BTreeMap;

use zescope_sampler::layout::Kind;
use zescope_store::{RangeStats, Store};

use super::series::{SeriesEntry, SeriesKey};
use crate::view::TimeAxis;

/// A closed time range to summarise: a marked range, the cursors' span, the visible range.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseRange {
    /// What the table calls it.
    pub name: String,
    /// First instant, ns on the store's timeline.
    pub start_ns: i64,
    /// Last instant (inclusive), ns.
    pub end_ns: i64,
}

impl PhaseRange {
    /// A range named `name` from `start_ns` to `end_ns` (swapped if given backwards).
    pub fn new(name: impl Into<String>, start_ns: i64, end_ns: i64) -> PhaseRange {
        PhaseRange { name: name.into(), start_ns: start_ns.min(end_ns), end_ns: start_ns.max(end_ns) }
    }

    /// Duration in seconds.
    pub fn duration_s(&self) -> f64 {
        seconds(self.end_ns as i128 - self.start_ns as i128)
    }
}

/// One series over one phase: a row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseRow {
    /// The phase's name.
    pub phase: String,
    /// Its start and end, seconds since the store's origin.
    pub start_s: f64,
    /// See `start_s`.
    pub end_s: f64,
    /// `end_s - start_s`, computed from the nanoseconds.
    pub duration_s: f64,
    /// The time the series was measured in the phase, s: each run's first sample in it to its
    /// last, summed over the runs (0 with fewer than two samples). Energy and mean power are over
    /// it.
    pub measured_s: f64,
    /// The series ("group/metric"; "device · group/metric" in a table of several devices).
    pub series: String,
    /// Which series it is.
    pub key: SeriesKey,
    /// Unit of mean/min/max (per second for a cumulative counter).
    pub unit: String,
    /// Mean of the finite values in the phase; NaN when there are none, and for a state.
    pub mean: f64,
    /// Smallest finite value; NaN when there are none.
    pub min: f64,
    /// Largest finite value; NaN when there are none.
    pub max: f64,
    /// Finite values the statistics are over.
    pub samples: u64,
    /// A cumulative counter's (or busy time's) total over the phase, in its unit (`total_unit`).
    pub total: Option<f64>,
    /// Unit of `total` (the counter's own); empty for a gauge.
    pub total_unit: String,
    /// Energy spent in the phase, J.
    pub energy_j: Option<f64>,
    /// Mean power over the time measured in the phase, W.
    pub power_w: Option<f64>,
    /// False when part of the phase lies in coarsened history (the numbers cover buckets there).
    pub exact: bool,
    /// The same phase and series in the comparison run, when one is shown.
    pub other: Option<Box<PhaseRow>>,
}

impl PhaseRow {
    /// Relative change of the mean from the comparison run to this one, in percent.
    pub fn change_pct(&self) -> Option<f64> {
        let o = self.other.as_ref()?;
        (o.mean != 0.0 && o.mean.is_finite() && self.mean.is_finite())
            .then(|| (self.mean - o.mean) / o.mean.abs() * 100.0)
    }
}

/// The columns of the table, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// Phase name.
    Phase,
    /// Start, s.
    Start,
    /// Duration, s.
    Duration,
    /// The time the series was measured in the phase, s.
    Measured,
    /// Series label.
    Series,
    /// Mean.
    Mean,
    /// Min.
    Min,
    /// Max.
    Max,
    /// Total of a cumulative counter.
    Total,
    /// Energy, J.
    Energy,
    /// Mean power, W.
    Power,
    /// The comparison run's mean.
    OtherMean,
    /// The comparison run's total.
    OtherTotal,
    /// Relative change of the mean from the comparison run, %.
    Change,
}

impl Column {
    /// Every column, left to right.
    pub const ALL: [Column; 11] = [
        Column::Phase,
        Column::Start,
        Column::Duration,
        Column::Measured,
        Column::Series,
        Column::Mean,
        Column::Min,
        Column::Max,
        Column::Total,
        Column::Energy,
        Column::Power,
    ];

    /// Its heading in the window, whose cells carry their units ("20.1 kJ"): words, not the
    /// CSV's column names (`energy_J` over a cell in kJ would say the wrong unit).
    pub fn heading(self) -> &'static str {
        match self {
            Column::Start => "start",
            Column::Duration => "duration",
            Column::Measured => "measured",
            Column::Energy => "energy",
            Column::Power => "mean power",
            Column::OtherMean => "mean (cmp)",
            Column::OtherTotal => "total (cmp)",
            Column::Change => "change",
            _ => self.title(),
        }
    }

    /// Its heading in CSV and Markdown (the unit its plain numbers are in, where fixed).
    pub fn title(self) -> &'static str {
        match self {
            Column::Phase => "phase",
            Column::Start => "start_s",
            Column::Duration => "duration_s",
            Column::Measured => "measured_s",
            Column::Series => "series",
            Column::Mean => "mean",
            Column::Min => "min",
            Column::Max => "max",
            Column::Total => "total",
            Column::Energy => "energy_J",
            Column::Power => "mean_power_W",
            Column::OtherMean => "mean_cmp",
            Column::OtherTotal => "total_cmp",
            Column::Change => "change_%",
        }
    }

    fn number(self, r: &PhaseRow) -> Option<f64> {
        match self {
            Column::Phase | Column::Series => None,
            Column::Start => Some(r.start_s),
            Column::Duration => Some(r.duration_s),
            Column::Measured => Some(r.measured_s),
            Column::Mean => Some(r.mean),
            Column::Min => Some(r.min),
            Column::Max => Some(r.max),
            Column::Total => r.total,
            Column::Energy => r.energy_j,
            Column::Power => r.power_w,
            Column::OtherMean => r.other.as_ref().map(|o| o.mean),
            Column::OtherTotal => r.other.as_ref().and_then(|o| o.total),
            Column::Change => r.change_pct(),
        }
    }
}

/// Rows of the phase table (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTable {
    /// One per phase and series: phases in the order given, series in key order.
    pub rows: Vec<PhaseRow>,
    /// A comparison run's numbers are joined in ([`PhaseTable::compare_with`]).
    pub compared: bool,
}

/// Joules per unit of a cumulative energy counter, watts per unit of a power gauge.
fn energy_scale(unit: &str) -> Option<f64> {
    let (prefix, _) = unit.split_at(unit.len().checked_sub(1)?);
    match prefix {
        "" => Some(1.0),
        "m" => Some(1e-3),
        "u" | "µ" | "μ" => Some(1e-6),
        "k" => Some(1e3),
        _ => None,
    }
}

/// The table for `ranges` over the series of `series` (see the module docs).
pub fn phase_table(store: &Store, series: &BTreeMap<SeriesKey, SeriesEntry>, ranges: &[PhaseRange]) -> PhaseTable {
    let several = super::series::several_devices(series);
    let mut rows = Vec::with_capacity(ranges.len() * series.len());
    for r in ranges {
        for (key, entry) in series {
            let mut row = phase_row(store, key, entry, r);
            row.series = key.shown(several);
            rows.push(row);
        }
    }
    PhaseTable { rows, compared: false }
}

/// One series over one range.
pub fn phase_row(store: &Store, key: &SeriesKey, entry: &SeriesEntry, r: &PhaseRange) -> PhaseRow {
    let (t0, t1) = (r.start_ns, r.end_ns);
    let per_run: Vec<RangeStats> = entry.ids.iter().map(|&id| store.stats(id, t0, t1)).collect();
    let stats = per_run.iter().copied().fold(RangeStats::EMPTY, RangeStats::merge);
    // What was measured: each run's samples' span in the phase (none between runs, before the
    // first sample or after the last).
    let measured_s: f64 =
        per_run.iter().filter(|s| s.samples > 1).map(|s| seconds(s.t_last as i128 - s.t_first as i128)).sum();
    let cumulative = entry.info.kind.is_running_total();
    // A state (an id, a flag) has no mean: an average of ids is no id.
    let state = entry.info.kind == Kind::State;
    let unit = &entry.info.unit;
    // A gauge of energy since its run started (telemetry's "Package energy"): what was spent is
    // its last value less its first, within each run (it starts again at 0 with each); its mean
    // is no quantity.
    let energy_level = !cumulative && !state && unit.ends_with('J') && energy_scale(unit).is_some();
    // With no sample in the phase nothing was counted: blank, not 0.
    let sampled = stats.samples > 0;
    let total = if cumulative && sampled {
        let incs: Vec<_> = entry.ids.iter().filter_map(|&id| store.increase(id, t0, t1)).collect();
        Some((incs.iter().map(|i| i.total).sum::<f64>(), incs.iter().all(|i| i.exact)))
    } else if energy_level && stats.count > 0 {
        Some(entry.ids.iter().map(|&id| spent(store, id, t0, t1)).fold((0.0, true), |a, b| (a.0 + b.0, a.1 && b.1)))
    } else {
        None
    };
    let over = (measured_s > 0.0).then_some(measured_s);
    let (energy_j, power_w) =
        match (cumulative || energy_level, unit.ends_with('J'), unit.ends_with('W'), energy_scale(unit)) {
            _ if state => (None, None),
            (true, true, _, Some(k)) => {
                let e = total.map(|t| t.0 * k);
                (e, e.zip(over).map(|(e, s)| e / s))
            }
            (false, _, true, Some(k)) if stats.count > 0 => (over.map(|s| stats.mean * k * s), Some(stats.mean * k)),
            _ => (None, None),
        };
    PhaseRow {
        phase: r.name.clone(),
        start_s: TimeAxis::of(store).x(t0),
        end_s: TimeAxis::of(store).x(t1),
        duration_s: r.duration_s(),
        measured_s,
        series: key.label(),
        key: key.clone(),
        unit: entry.plotted_unit(),
        mean: if state || energy_level { f64::NAN } else { stats.mean },
        min: stats.min,
        max: stats.max,
        samples: stats.count,
        total: total.map(|t| t.0),
        total_unit: if cumulative || energy_level { unit.clone() } else { String::new() },
        energy_j,
        power_w,
        exact: stats.exact && total.is_none_or(|t| t.1),
        other: None,
    }
}

/// What an energy gauge of one run (energy since the run started) rose by in `t0..=t1`: its last
/// finite value there less its first, and whether both are exact samples (else the range's max
/// and min, which they are for energy that only grows). `(0, true)` with no value there.
fn spent(store: &Store, id: zescope_store::SeriesId, t0: i64, t1: i64) -> (f64, bool) {
    let s = store.stats(id, t0, t1);
    if s.count == 0 {
        return (0.0, true);
    }
    let exact_at = |t: i64| store.nearest(id, t).filter(|x| x.t == t).and_then(|x| x.value).filter(|v| v.is_finite());
    let (first, last) = (exact_at(s.t_first), s.last.filter(|v| v.is_finite()).or_else(|| exact_at(s.t_last)));
    let exact = first.is_some() && last.is_some() && s.exact;
    ((last.unwrap_or(s.max) - first.unwrap_or(s.min)).max(0.0), exact)
}

/// `ns` nanoseconds in seconds, the nearest double (divided, not multiplied by 1e-9: a minute is
/// 60, not 60.00000000000001).
fn seconds(ns: i128) -> f64 {
    ns as f64 / 1e9
}

/// A number as the table shows and writes it: empty for none or NaN, else shortest round-trip.
pub fn cell(v: Option<f64>) -> String {
    match v {
        Some(v) if !v.is_nan() => format!("{v}"),
        _ => String::new(),
    }
}

impl PhaseTable {
    /// The columns shown, left to right: [`Column::ALL`], then the comparison's when joined.
    pub fn columns(&self) -> Vec<Column> {
        let mut c = Column::ALL.to_vec();
        if self.compared {
            c.extend([Column::OtherMean, Column::OtherTotal, Column::Change]);
        }
        c
    }

    /// Joins the comparison run's table (the same phases, on its own timeline): each row gets
    /// the row of the same phase and series, if the comparison has that series.
    /// Rows are matched by phase and series (device, group, metric); a row whose series the other
    /// run lacks (it ran on another device, another machine) is matched by phase and
    /// group/metric when that names one series on each side.
    pub fn compare_with(&mut self, other: PhaseTable) {
        let label_count = |rows: &[PhaseRow]| {
            let mut n: BTreeMap<(String, String), usize> = BTreeMap::new();
            rows.iter().for_each(|r| *n.entry((r.phase.clone(), r.key.label())).or_default() += 1);
            n
        };
        let (mine, theirs) = (label_count(&self.rows), label_count(&other.rows));
        let mut by_key: BTreeMap<(String, SeriesKey), PhaseRow> =
            other.rows.into_iter().map(|r| ((r.phase.clone(), r.key.clone()), r)).collect();
        let mut by_label: BTreeMap<(String, String), (String, SeriesKey)> = BTreeMap::new();
        for (phase, key) in by_key.keys() {
            let l = (phase.clone(), key.label());
            if theirs.get(&l) == Some(&1) && mine.get(&l) == Some(&1) {
                by_label.insert(l, (phase.clone(), key.clone()));
            }
        }
        for r in &mut self.rows {
            let exact = (r.phase.clone(), r.key.clone());
            let found = by_key.remove(&exact).or_else(|| {
                let k = by_label.get(&(r.phase.clone(), r.key.label()))?;
                by_key.remove(k)
            });
            r.other = found.map(Box::new);
        }
        self.compared = true;
    }

    /// Sorts the rows by `col` (numbers numerically, empty cells last; text by text), stable.
    pub fn sort(&mut self, col: Column, ascending: bool) {
        self.rows.sort_by(|a, b| {
            let ord = match (col.number(a), col.number(b)) {
                _ if col == Column::Phase => a.phase.cmp(&b.phase),
                _ if col == Column::Series => a.series.cmp(&b.series),
                (x, y) => {
                    let (x, y) = (x.filter(|v| !v.is_nan()), y.filter(|v| !v.is_nan()));
                    match (x, y) {
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        (Some(_), None) => return std::cmp::Ordering::Less,
                        (None, Some(_)) => return std::cmp::Ordering::Greater,
                        (None, None) => std::cmp::Ordering::Equal,
                    }
                }
            };
            if ascending { ord } else { ord.reverse() }
        });
    }

    /// The cells of row `r` in [`Self::columns`] order.
    pub fn cells(&self, r: &PhaseRow) -> Vec<String> {
        self.columns()
            .iter()
            .map(|c| match c {
                Column::Phase => r.phase.clone(),
                Column::Series => r.series.clone(),
                c => cell(c.number(r)),
            })
            .collect()
    }

    fn header(&self) -> Vec<String> {
        let mut h: Vec<String> = self.columns().iter().map(|c| c.title().to_string()).collect();
        h.extend(["unit", "total_unit", "samples", "exact"].map(String::from));
        h
    }

    fn record(&self, r: &PhaseRow) -> Vec<String> {
        let mut v = self.cells(r);
        v.extend([r.unit.clone(), r.total_unit.clone(), r.samples.to_string(), r.exact.to_string()]);
        v
    }

    /// The table as CSV (RFC 4180 quoting), a header line first. Text cells (phase and series
    /// names, units: from markers and drivers) that could be taken for spreadsheet formulas get a
    /// `'` in front (`view::csv_text`); numbers stay as they are.
    pub fn to_csv(&self) -> String {
        let quote = |s: &String| {
            if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.clone() }
        };
        let text = |s: &mut String| {
            if let std::borrow::Cow::Owned(n) = super::csv_text::csv_text(s) {
                *s = n;
            }
        };
        // Which cells of a record are text: the phase and series columns, then the two units.
        let mut texts: Vec<usize> = self
            .columns()
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, Column::Phase | Column::Series))
            .map(|(i, _)| i)
            .collect();
        texts.extend([self.columns().len(), self.columns().len() + 1]);
        let record = |r: &PhaseRow| {
            let mut v = self.record(r);
            for &i in &texts {
                if let Some(c) = v.get_mut(i) {
                    text(c);
                }
            }
            v
        };
        let mut out = String::new();
        for line in std::iter::once(self.header()).chain(self.rows.iter().map(record)) {
            out.push_str(&line.iter().map(quote).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }

    /// The table as a Markdown (GitHub) table.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &String| s.replace('|', "\\|").replace('\n', " ");
        let row = |v: Vec<String>| format!("| {} |\n", v.iter().map(esc).collect::<Vec<_>>().join(" | "));
        let header = self.header();
        let mut out = row(header.clone());
        out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
        for r in &self.rows {
            out.push_str(&row(self.record(r)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(phase: &str, series: &str, mean: f64) -> PhaseRow {
        PhaseRow {
            phase: phase.into(),
            start_s: 0.0,
            end_s: 1.0,
            duration_s: 1.0,
            measured_s: 1.0,
            series: series.into(),
            key: SeriesKey { device: "d".into(), group: "g".into(), metric: series.into() },
            unit: "W".into(),
            mean,
            min: mean,
            max: mean,
            samples: 1,
            total: None,
            total_unit: String::new(),
            energy_j: None,
            power_w: None,
            exact: true,
            other: None,
        }
    }

    #[test]
    fn energy_units_scale_to_joules_and_watts() {
        assert_eq!(energy_scale("J"), Some(1.0));
        assert_eq!(energy_scale("mW"), Some(1e-3));
        assert_eq!(energy_scale("µJ"), Some(1e-6));
        assert_eq!(energy_scale("uJ"), Some(1e-6));
        assert_eq!(energy_scale("MJ"), None, "an unknown prefix is not guessed");
        assert_eq!(energy_scale(""), None);
    }

    #[test]
    fn csv_quotes_what_needs_it_and_sorting_puts_empty_cells_last() {
        let mut t = PhaseTable { rows: vec![row("a,b", "g/\"x\"", 2.0), row("p", "g/y", f64::NAN)], compared: false };
        let csv = t.to_csv();
        assert!(csv.lines().nth(1).unwrap().starts_with("\"a,b\",0,1,1,\"g/\"\"x\"\"\",2,"), "{csv}");
        assert_eq!(csv.lines().nth(2).unwrap().split(',').nth(5), Some(""), "NaN is an empty cell");
        t.sort(Column::Mean, false);
        assert_eq!(t.rows[0].series, "g/\"x\"");
        t.sort(Column::Mean, true);
        assert_eq!(t.rows[0].series, "g/\"x\"", "empty cells last either way");
        t.sort(Column::Phase, false);
        assert_eq!(t.rows[0].phase, "p");
        let md = t.to_markdown();
        assert_eq!(md.lines().count(), 4);
    }

    #[test]
    fn csv_text_cells_that_look_like_formulas_are_neutralised_and_numbers_are_not() {
        let mut r = row("=1+1", "-g/x", -2.5);
        r.unit = "@W".into();
        let t = PhaseTable { rows: vec![r], compared: false };
        let csv = t.to_csv();
        let line = csv.lines().nth(1).unwrap();
        assert!(line.starts_with("'=1+1,0,1,1,'-g/x,-2.5,"), "{csv}");
        assert!(line.contains(",'@W,"), "{csv}");
        assert!(t.to_markdown().contains("| =1+1 |"), "Markdown is not a spreadsheet: left as it is");
    }

    #[test]
    fn a_comparison_joins_by_phase_and_series() {
        let mut t = PhaseTable { rows: vec![row("p", "g/x", 3.0), row("p", "g/y", 1.0)], compared: false };
        t.compare_with(PhaseTable { rows: vec![row("p", "g/x", 2.0), row("q", "g/y", 1.0)], compared: false });
        assert_eq!(t.rows[0].change_pct(), Some(50.0));
        assert_eq!(t.rows[1].other, None, "no such phase in the comparison");
        assert!(
            t.to_csv().lines().next().unwrap().ends_with("mean_cmp,total_cmp,change_%,unit,total_unit,samples,exact")
        );
    }
}
