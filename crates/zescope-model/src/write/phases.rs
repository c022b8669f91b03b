//! The phase table as CSV (`zescope export --phases`): per series the mean, min, max, totals and
//! energy over the whole session (or the range asked for), then over each marked range within it
//! (the part within it).

use std::path::Path;

use crate::view::Span;
use crate::view::phases::{PhaseRange, phase_table};

use super::{Format, Input, Scope};

/// At most this many rows (phases × series; about 40 MB): marked ranges past it are left out, and
/// said so.
pub(super) const MAX_PHASE_ROWS: usize = 250_000;

/// The phase table (`--phases`).
pub struct Phases;

impl Format for Phases {
    fn key(&self) -> &'static str {
        "phases"
    }
    fn value_name(&self) -> &'static str {
        "OUT.csv"
    }
    fn help(&self) -> &'static str {
        "Write the phase table here (CSV): per series the mean, min, max, totals and energy over the whole \
         session (or --range) and over each marked range (`zescope mark --begin/--end`) within it"
    }
    fn extension(&self) -> &'static str {
        "csv"
    }
    fn name(&self) -> &'static str {
        "phase table"
    }
    fn title(&self) -> &'static str {
        "Phase table (CSV)"
    }
    fn scope(&self) -> Scope {
        Scope::Session
    }
    fn in_window(&self) -> bool {
        false
    }
    fn write(&self, input: &Input<'_>, path: &Path, _progress: &dyn Fn(f32)) -> Result<String, String> {
        let store = input.store;
        let whole = store.total_time_range().ok_or("the session holds no samples")?;
        // The range asked for, else the whole session.
        let (name, (t0, t1)) = match input.spec.range {
            Some(r) => ("range", r),
            None => ("session", whole),
        };
        // Then each marked range once, the part of it within that range (one wholly outside is
        // left out), as many as keep the table within MAX_PHASE_ROWS.
        let mut ranges = vec![PhaseRange::new(name, t0, t1)];
        let marked: Vec<(&str, i64, i64)> = input
            .spec
            .markers
            .iter()
            .filter_map(|m| match m.span {
                Span::Range { end_ns } if end_ns > t0 && m.t_ns < t1 => {
                    Some((m.label.as_str(), m.t_ns.max(t0), end_ns.min(t1)))
                }
                _ => None,
            })
            .collect();
        let room = (MAX_PHASE_ROWS / input.series.len().max(1)).saturating_sub(1);
        ranges.extend(marked.iter().take(room).map(|&(n, a, b)| PhaseRange::new(n, a, b)));
        let table = phase_table(store, input.series, &ranges);
        std::fs::write(path, table.to_csv()).map_err(|e| format!("{}: {e}", path.display()))?;
        let left = marked.len() - (ranges.len() - 1);
        let note = if left > 0 {
            format!("; {left} later marked ranges left out, past {MAX_PHASE_ROWS} rows: export a --range")
        } else {
            String::new()
        };
        let (phases, rows) = (ranges.len() as u64, table.rows.len() as u64);
        let (phases, rows) =
            (crate::view::text::plural(phases, "phase", "phases"), crate::view::text::plural(rows, "row", "rows"));
        Ok(format!("{} ({phases}, {rows}{note})", path.display()))
    }
}
