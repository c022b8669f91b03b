//! Keeping only the time around firings: what `record --trigger` writes.
//!
//! [`Keeper`] holds each stream's newest samples that no window takes yet (the time before a
//! firing: `pre` plus [`SLACK_NS`], since streams arrive a little apart) and passes on the
//! samples inside a window `[t - pre, t + post]` of a firing at `t`. Windows that overlap join.
//! A sample passed on after samples were left out is marked as after a gap, so no rate or line
//! joins it to the previous window. The caller evaluates each batch first, opens the windows of
//! its firings ([`Keeper::open`]), then hands the batch to [`Keeper::samples`]: a firing keeps
//! its own batch's samples before it, and the buffered ones of every stream.

use std::collections::VecDeque;

use zescope_sampler::SampleBatch;

/// How much longer than `pre` each stream's unkept samples are held (ns): streams' batches
/// arrive up to this far apart.
pub const SLACK_NS: i64 = 2_000_000_000;

/// Samples around firings only (see the module docs).
#[derive(Debug)]
pub struct Keeper {
    pre_ns: i64,
    post_ns: i64,
    run: u64,
    /// Open and recent windows, oldest first, none overlapping.
    windows: VecDeque<(i64, i64)>,
    streams: Vec<Held>,
}

#[derive(Debug, Default)]
struct Held {
    width: usize,
    /// Unkept samples, oldest first: (t, values).
    rows: VecDeque<(i64, Vec<f64>)>,
    /// Was a sample left out (or a gap seen) since the last one kept?
    gap: bool,
}

impl Keeper {
    /// A keeper of `pre_ns` before and `post_ns` after each firing.
    pub fn new(pre_ns: i64, post_ns: i64) -> Keeper {
        Keeper { pre_ns: pre_ns.max(0), post_ns: post_ns.max(0), run: 0, windows: VecDeque::new(), streams: Vec::new() }
    }

    /// A run starts: `widths` are its streams' series counts.
    pub fn run_started(&mut self, run: u64, widths: &[usize]) {
        self.run = run;
        self.windows.clear();
        self.streams = widths.iter().map(|&width| Held { width, gap: true, ..Held::default() }).collect();
    }

    /// The windows opened so far, oldest first, overlapping ones joined (the most recent 1024).
    pub fn windows(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.windows.iter().copied()
    }

    /// A firing at `t_ns`: opens its window and passes on every stream's held samples inside it.
    pub fn open(&mut self, t_ns: i64, emit: &mut impl FnMut(SampleBatch) -> Result<(), String>) -> Result<(), String> {
        let (start, end) = (t_ns.saturating_sub(self.pre_ns), t_ns.saturating_add(self.post_ns));
        match self.windows.back_mut() {
            Some(w) if start <= w.1 => {
                w.0 = w.0.min(start);
                w.1 = w.1.max(end);
            }
            _ => {
                self.windows.push_back((start, end));
                if self.windows.len() > 1024 {
                    self.windows.pop_front();
                }
            }
        }
        for (stream, h) in self.streams.iter_mut().enumerate() {
            let mut out =
                SampleBatch { run: self.run, stream, timestamps: Vec::new(), values: Vec::new(), gap_before: h.gap };
            while let Some((t, row)) = h.rows.pop_front() {
                if t >= start && t <= end {
                    out.timestamps.push(t);
                    out.values.extend_from_slice(&row);
                } else if t < start {
                    out.gap_before = true;
                }
            }
            if !out.timestamps.is_empty() {
                h.gap = false;
                emit(out)?;
            }
        }
        Ok(())
    }

    /// Is `t` inside a window? (Newest first; the windows are in time order.)
    fn kept(&self, t: i64) -> bool {
        for &(a, b) in self.windows.iter().rev() {
            if b < t {
                return false;
            }
            if a <= t {
                return true;
            }
        }
        false
    }

    /// Passes on the batch's samples inside a window (as one batch per run of kept samples) and
    /// holds the others for a later firing's `pre`.
    pub fn samples(
        &mut self,
        b: &SampleBatch,
        emit: &mut impl FnMut(SampleBatch) -> Result<(), String>,
    ) -> Result<(), String> {
        if b.run != self.run || b.stream >= self.streams.len() {
            return Ok(());
        }
        let width = self.streams[b.stream].width;
        if width == 0 || b.values.len() != b.timestamps.len() * width {
            return Ok(());
        }
        if b.gap_before {
            let h = &mut self.streams[b.stream];
            h.gap = true;
            h.rows.clear();
        }
        let mut out: Option<SampleBatch> = None;
        for (row, &t) in b.values.chunks_exact(width).zip(&b.timestamps) {
            if self.kept(t) {
                let h = &mut self.streams[b.stream];
                let o = out.get_or_insert_with(|| SampleBatch {
                    run: b.run,
                    stream: b.stream,
                    timestamps: Vec::new(),
                    values: Vec::new(),
                    gap_before: h.gap,
                });
                h.gap = false;
                o.timestamps.push(t);
                o.values.extend_from_slice(row);
            } else {
                if let Some(o) = out.take() {
                    emit(o)?;
                }
                let h = &mut self.streams[b.stream];
                h.gap = true;
                h.rows.push_back((t, row.to_vec()));
            }
        }
        if let Some(o) = out {
            emit(o)?;
        }
        let h = &mut self.streams[b.stream];
        if let Some(&newest) = b.timestamps.last() {
            let from = newest.saturating_sub(self.pre_ns.saturating_add(SLACK_NS));
            while h.rows.front().is_some_and(|(t, _)| *t < from) {
                h.rows.pop_front();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn batch(stream: usize, ts: &[i64]) -> SampleBatch {
        SampleBatch {
            run: 1,
            stream,
            timestamps: ts.to_vec(),
            values: ts.iter().map(|&t| t as f64).collect(),
            gap_before: false,
        }
    }

    #[test]
    fn only_the_windows_around_firings_pass() {
        let mut k = Keeper::new(2 * S, S);
        k.run_started(1, &[1, 1]);
        let mut kept: Vec<(usize, Vec<i64>, bool)> = Vec::new();
        let mut emit = |b: SampleBatch| {
            kept.push((b.stream, b.timestamps, b.gap_before));
            Ok(())
        };
        let every = |from: i64, to: i64| (from..to).map(|i| i * S / 2).collect::<Vec<_>>();
        k.samples(&batch(0, &every(0, 20)), &mut emit).unwrap(); // 0 .. 9.5 s
        k.samples(&batch(1, &every(0, 18)), &mut emit).unwrap(); // 0 .. 8.5 s
        k.open(9 * S, &mut emit).unwrap(); // window 7 .. 10 s
        k.samples(&batch(1, &every(18, 30)), &mut emit).unwrap(); // 9 .. 14.5 s
        k.samples(&batch(0, &every(20, 30)), &mut emit).unwrap();
        assert_eq!(k.windows().collect::<Vec<_>>(), [(7 * S, 10 * S)]);
        let s = |v: &[f64]| v.iter().map(|x| (x * S as f64) as i64).collect::<Vec<_>>();
        assert_eq!(
            kept,
            [
                (0, s(&[7.0, 7.5, 8.0, 8.5, 9.0, 9.5]), true),
                (1, s(&[7.0, 7.5, 8.0, 8.5]), true),
                (1, s(&[9.0, 9.5, 10.0]), false),
                (0, s(&[10.0]), false),
            ]
        );
    }

    #[test]
    fn overlapping_windows_join_and_later_samples_follow_a_gap() {
        let mut k = Keeper::new(S, S);
        k.run_started(1, &[1]);
        let mut kept: Vec<(Vec<i64>, bool)> = Vec::new();
        let mut emit = |b: SampleBatch| {
            kept.push((b.timestamps, b.gap_before));
            Ok(())
        };
        k.open(2 * S, &mut emit).unwrap();
        k.open(3 * S, &mut emit).unwrap();
        assert_eq!(k.windows().collect::<Vec<_>>(), [(S, 4 * S)]);
        k.samples(&batch(0, &[S, 4 * S, 5 * S]), &mut emit).unwrap();
        k.open(6 * S, &mut emit).unwrap();
        k.samples(&batch(0, &[6 * S]), &mut emit).unwrap();
        assert_eq!(kept, [(vec![S, 4 * S], true), (vec![5 * S], true), (vec![6 * S], false)]);
    }
}
