//! Throttle reasons as bands over time, wherever they are drawn (the window's panes,
//! `zescope-window/src/throttle.rs`, and exported images, `write/image.rs`): where a telemetry
//! throttle series (a bitmask whose description names its bits,
//! `sampler::telemetry::throttle_names`) is non-zero, a band labelled with the reasons of the mask.
//!
//! # What a band covers
//!
//! A throttle series is a state, held from one sample to the next (as a state's steps are
//! drawn). A band runs from the sample where a mask is first seen to the sample where it is seen
//! clear or changed, so two runs with clear time between them are two bands at every zoom:
//! - pixel columns with no sample hold the state of the sample before them;
//! - a column whose samples are all set, or all clear, continues or ends a run exactly;
//! - a column mixing set and clear samples (zoomed out, many samples a pixel) is a band of its
//!   own, as wide as its samples span, its opacity the share of its samples that are set;
//! - a gap (the run paused or restarted) ends a run at its last sample, and a column with no
//!   finite value ends it at that column: nothing is known there;
//! - the state at the view's left edge is the last sample before it; a run still set at the
//!   right edge runs to the edge when later samples exist, else to its last sample.

use zescope_store::{Envelope, EnvelopeColumn, SeriesId, Store};

/// The names of the bits set in `mask`, joined; "throttled" when no bit has a name.
pub fn label(mask: u32, names: &[(u32, String)]) -> String {
    let set: Vec<&str> = names.iter().filter(|(b, _)| mask & (1 << b) != 0).map(|(_, n)| n.as_str()).collect();
    if set.is_empty() { "throttled".to_owned() } else { set.join(", ") }
}

/// One band: the time it covers (ns), the reasons' mask, and the share of that time the mask
/// is set (1 for a run; less for a column that mixes set and clear samples).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band {
    /// Where it starts, store ns.
    pub from: i64,
    /// Where it ends, store ns.
    pub to: i64,
    /// The reasons set.
    pub mask: u32,
    /// The share of its time the mask is set (0 to 1).
    pub share: f32,
}

fn mask_of(v: f64) -> u32 {
    if v.is_finite() && v > 0.0 { v.min(u32::MAX as f64) as u32 } else { 0 }
}

/// The bands of `series` over `t0..=t1` at `columns` columns (the module docs say what each
/// covers).
pub fn bands(store: &Store, series: SeriesId, t0: i64, t1: i64, columns: usize, env: &mut Envelope) -> Vec<Band> {
    store.envelope(series, t0, t1, columns, env);
    let held = store.bucket_at(series, t0).filter(|b| b.t_last < t0).and_then(|b| b.stats.last).map_or(0, mask_of);
    let later = store.time_range(series.stream()).is_some_and(|(_, newest)| newest > t1);
    let last_in = |c: &EnvelopeColumn| store.stats(series, c.t_start, c.t_end).last.map_or(0, mask_of);
    walk(env.columns(), (t0, t1), held, later, last_in)
}

/// [`bands`] over envelope columns: `held` is the mask before the first column, `later` says
/// whether samples follow `t1`, `last_in` gives a column's last sample's mask.
fn walk(
    columns: &[EnvelopeColumn],
    (t0, t1): (i64, i64),
    held: u32,
    later: bool,
    last_in: impl Fn(&EnvelopeColumn) -> u32,
) -> Vec<Band> {
    let mut out = Vec::new();
    // The run in progress: since when, which mask.
    let mut open: Option<(i64, u32)> = (held != 0).then_some((t0, held));
    let mut last_sample = t0;
    let close = |open: &mut Option<(i64, u32)>, at: i64, out: &mut Vec<Band>| {
        if let Some((from, mask)) = open.take() {
            out.push(Band { from, to: at.max(from), mask, share: 1.0 });
        }
    };
    for c in columns.iter().filter(|c| c.samples > 0) {
        if c.break_before {
            close(&mut open, last_sample, &mut out);
        }
        last_sample = c.t_end;
        if c.count == 0 {
            close(&mut open, c.t_start, &mut out);
            continue;
        }
        let (lo, hi) = (mask_of(c.min), mask_of(c.max));
        if lo == hi || lo != 0 {
            // All clear, or all set (one mask, or masks that differ without a clear sample).
            if open.is_some_and(|(_, m)| m != hi) {
                close(&mut open, c.t_start, &mut out);
            }
            if hi != 0 && open.is_none() {
                open = Some((c.t_start, hi));
            }
            continue;
        }
        // Set and clear samples in one column: where the state changes inside it is not known
        // at this width, only how much of it is set.
        close(&mut open, c.t_start, &mut out);
        let share = (c.mean / c.max).clamp(0.0, 1.0) as f32;
        out.push(Band { from: c.t_start, to: c.t_end, mask: hi, share });
        let after = last_in(c);
        if after != 0 {
            open = Some((c.t_end, after));
        }
    }
    close(&mut open, if later { t1 } else { last_sample }, &mut out);
    out.retain(|b| b.share > 0.0);
    out
}
