//! Markers as CSV: a file of their own beside the samples' CSV (`run.csv` → `run.markers.csv`),
//! so the samples' CSV keeps one row shape. Columns: `kind` (`instant`, `range` or `open`: a
//! range that had not ended), `name`, `start_s` and `end_s` (seconds on the samples' `time_s`
//! axis, 9 decimals; `end_s` empty for instants and open ranges), in the order they were set.
//! A name comes from the workload: one that could be taken for a spreadsheet formula gets a `'`
//! in front (`view::csv_text`).

use std::path::{Path, PathBuf};

use crate::view::csv_text::csv_text;
use crate::view::{Mark, Span};

/// Where the markers of the CSV at `csv` go: `NAME.markers.csv` beside it.
pub fn markers_path(csv: &Path) -> PathBuf {
    let stem = csv.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    csv.with_file_name(format!("{stem}.markers.csv"))
}

/// Writes `marks` to `path`; `origin` is the samples' time zero (ns; `None`: the first marker's).
pub fn write_markers_csv(path: &Path, marks: &[Mark], origin: Option<i64>) -> csv::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(["kind", "name", "start_s", "end_s"])?;
    let Some(origin) = origin.or_else(|| marks.first().map(|m| m.t_ns)) else { return w.flush().map_err(Into::into) };
    let secs = |t: i64| format!("{:.9}", (t as i128 - origin as i128) as f64 * 1e-9);
    for m in marks {
        let (kind, end) = match m.span {
            Span::Instant => ("instant", String::new()),
            Span::Range { end_ns } => ("range", secs(end_ns)),
            Span::Open => ("open", String::new()),
        };
        w.write_record([kind, csv_text(&m.label).as_ref(), secs(m.t_ns).as_str(), end.as_str()])?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Markers;

    #[test]
    fn markers_are_listed_on_the_samples_time_axis() {
        let dir = tempfile::tempdir().unwrap();
        let path = markers_path(&dir.path().join("run.csv"));
        assert_eq!(path.file_name().unwrap(), "run.markers.csv");
        let mut m = Markers::default();
        m.begin(1_500_000_000, "load, \"big\"");
        m.instant(2_000_000_000, "tick");
        m.end(3_250_000_000, "load, \"big\"");
        m.begin(4_000_000_000, "tail");
        write_markers_csv(&path, m.marks(), Some(1_000_000_000)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let rows: Vec<csv::StringRecord> =
            csv::Reader::from_path(&path).unwrap().records().collect::<Result<_, _>>().unwrap();
        assert_eq!(rows.len(), 3, "{text}");
        assert_eq!(&rows[0], vec!["range", "load, \"big\"", "0.500000000", "2.250000000"]);
        assert_eq!(&rows[1], vec!["instant", "tick", "1.000000000", ""]);
        assert_eq!(&rows[2], vec!["open", "tail", "3.000000000", ""]);
    }

    #[test]
    fn names_that_look_like_formulas_are_neutralised_and_times_before_the_origin_stay_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.markers.csv");
        let mut m = Markers::default();
        for (t, name) in
            [(500_000_000, "=HYPERLINK(\"http://evil\")"), (1, "+1"), (2, "-1"), (3, "@SUM(A1)"), (4, "\tx")]
        {
            m.instant(t, name);
        }
        m.instant(5, "fine = name");
        write_markers_csv(&path, m.marks(), Some(1_000_000_000)).unwrap();
        let rows: Vec<csv::StringRecord> =
            csv::Reader::from_path(&path).unwrap().records().collect::<Result<_, _>>().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
        assert_eq!(names, ["'=HYPERLINK(\"http://evil\")", "'+1", "'-1", "'@SUM(A1)", "'\tx", "fine = name"]);
        assert_eq!(&rows[0][2], "-0.500000000", "a time before the origin is a negative number, not text");
    }
}
