//! Triggers: conditions on series (above, below or crossing a value, rising or falling by an
//! amount within a time), a workload's marker by name, or a throttle reason set, each with a time
//! kept before and after its firings. Evaluated on ingest, on every sample, wherever the window,
//! `record` or `serve` receive the sampler's batches, never on the plot.
//!
//! - [`syntax`]: the trigger syntax ([`Trigger::parse`], errors naming the column);
//! - [`expr`]: expressions over series, the language triggers and derived series share;
//! - [`eval`]: the [`Evaluator`], O(1) per sample per watched series, no allocation per sample;
//! - [`keep`]: the [`Keeper`] that passes on only the samples around firings (`record
//!   --trigger`);
//! - [`names`]: whether a trigger names anything sampled, and what it could have meant;
//! - [`left_out`]: a name of the source's that a run leaves out (its group, metric or device);
//! - [`firings_csv`]: the index of firings `record` writes beside its output.

pub mod eval;
pub mod expr;
pub mod keep;
pub mod left_out;
pub mod names;
pub mod syntax;

pub use eval::{Evaluator, Firing};
pub use keep::Keeper;
pub use syntax::{Condition, SeriesPattern, Test, Trigger, TriggerError};

/// The index of firings as CSV: `time_s,t_ns,trigger,series,value`, `time_s` in seconds since
/// `origin_ns` (the output's first sample), text quoted as CSV needs and guarded against
/// spreadsheet formulas (`view::csv_text`).
pub fn firings_csv(firings: &[Firing], triggers: &[Trigger], origin_ns: i64) -> String {
    let mut s = String::from("time_s,t_ns,trigger,series,value\n");
    for f in firings {
        let trigger = triggers.get(f.trigger).map_or("", |t| t.text.as_str());
        let value = if f.value.is_nan() { String::new() } else { f.value.to_string() };
        s.push_str(&format!(
            "{:.6},{},{},{},{}\n",
            (f.t_ns - origin_ns) as f64 * 1e-9,
            f.t_ns,
            cell(trigger),
            cell(&f.series),
            value
        ));
    }
    s
}

/// A CSV text cell: formula-guarded, quoted when it holds a comma, quote or line break.
fn cell(text: &str) -> String {
    let t = crate::view::csv_text::csv_text(text);
    if t.contains([',', '"', '\n', '\r']) { format!("\"{}\"", t.replace('"', "\"\"")) } else { t.into_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_names_each_firing() {
        let triggers = vec![Trigger::parse("\"G/a,b\" > 1").unwrap(), Trigger::parse("marker =x").unwrap()];
        let firings = vec![
            Firing { trigger: 0, t_ns: 3_500_000_000, series: "G/a,b".into(), value: 2.5 },
            Firing { trigger: 1, t_ns: 4_000_000_000, series: "marker =x".into(), value: f64::NAN },
        ];
        assert_eq!(
            firings_csv(&firings, &triggers, 1_000_000_000),
            "time_s,t_ns,trigger,series,value\n\
             2.500000,3500000000,\"\"\"G/a,b\"\" > 1\",\"G/a,b\",2.5\n\
             3.000000,4000000000,marker =x,marker =x,\n"
        );
    }
}
