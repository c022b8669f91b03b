//! `zescope export SESSION.ron`: images and CSV from a saved session, without
//! a display. The session is loaded and restored into a store like the UI
//! does, so the panes, colours and hidden series are the ones saved. A
//! session without panes (as `zescope record` writes) gets the UI's default
//! layout (`view::panes`): one pane per plotted unit, never two units on one axis.

use std::path::PathBuf;

use zescope_model::session;
use zescope_model::view::default_layout;
use zescope_model::view::phases::{PhaseRange, phase_table};
use zescope_model::view::timeview::shown_range;
use zescope_store::Store;

use zescope_model::write::{Output, WriteSpec, write_file};

/// `--phases` writes at most this many rows (phases × series; about 40 MB): marked ranges past
/// it are left out, and said so.
pub(super) const MAX_PHASE_ROWS: usize = 250_000;

/// Which panes `zescope export --pane` writes; parsed from "all" or a pane number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneChoice {
    /// Every pane, stacked top to bottom in one image.
    All,
    /// 1-based, as the UI numbers them.
    One(usize),
}

impl std::str::FromStr for PaneChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(PaneChoice::All),
            n => match n.parse::<usize>() {
                Ok(k) if k >= 1 => Ok(PaneChoice::One(k)),
                _ => Err(format!("{s:?} is not a pane number (1, 2, ...) or \"all\"")),
            },
        }
    }
}

/// A time range in seconds since the first sample; open ends allowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeArg {
    /// `START..END` in seconds since the session's first sample; `None` is an open end (the
    /// first or last sample). [`parse_range`] guarantees start < end when both are given.
    Seconds(Option<f64>, Option<f64>),
    /// The range the saved view showed (all data if it was live).
    View,
}

/// Parses `--range`: "START..END" in seconds (either may be left out, a trailing `s` is
/// allowed) or "view". The error names the text that is not a number, or an empty range.
pub fn parse_range(s: &str) -> Result<RangeArg, String> {
    if s == "view" {
        return Ok(RangeArg::View);
    }
    let (a, b) = s.split_once("..").ok_or_else(|| format!("{s:?} is not a range like 1.5..20 or \"view\""))?;
    let num = |x: &str| -> Result<Option<f64>, String> {
        let x = x.trim().trim_end_matches('s');
        if x.is_empty() {
            return Ok(None);
        }
        match x.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(format!("{x:?} in {s:?} is not a number of seconds")),
        }
    };
    let (a, b) = (num(a)?, num(b)?);
    if let (Some(a), Some(b)) = (a, b)
        && a >= b
    {
        return Err(format!("range {s:?} is empty: its start is not before its end"));
    }
    Ok(RangeArg::Seconds(a, b))
}

/// The options of `zescope export`, as `src/main.rs` takes them from the command line.
#[derive(Clone, Debug)]
pub struct ExportArgs {
    /// The session file (.ron) to load.
    pub session: PathBuf,
    /// Which panes the images hold (the CSV holds the same panes' visible series).
    pub pane: PaneChoice,
    /// The time range to export; `None`: all data the session holds.
    pub range: Option<RangeArg>,
    /// Image size in pixels (width, height); `None`: 1600 wide, 320 high per pane plus 120,
    /// kept within 480..=4000 high.
    pub size: Option<(u32, u32)>,
    /// Where to write a PNG image, if anywhere.
    pub png: Option<PathBuf>,
    /// Where to write an SVG image, if anywhere.
    pub svg: Option<PathBuf>,
    /// Where to write a CSV of the samples, if anywhere.
    pub csv: Option<PathBuf>,
    /// Where to write every sample as timestamped OpenMetrics text (for `promtool tsdb
    /// create-blocks-from openmetrics`), if anywhere.
    pub openmetrics: Option<PathBuf>,
    /// Where to write a Perfetto trace (every sample, markers, throttle bands, metadata), if
    /// anywhere.
    pub perfetto: Option<PathBuf>,
    /// Where to write the phase table (CSV), if anywhere: the whole session (or `range`) and each
    /// marked range.
    pub phases: Option<PathBuf>,
    /// The store's memory cap in bytes; `None`: the default cap (`zescope_store::default_cap`).
    pub memory_cap: Option<u64>,
}

/// Writes the files asked for; prints what was written (and notices on stderr).
pub fn main(args: &ExportArgs) -> Result<std::process::ExitCode, String> {
    println!("{}", run(args, &mut |n| eprintln!("zescope: {n}"))?);
    Ok(std::process::ExitCode::SUCCESS)
}

/// Runs an export: opens the session into a store of the default memory cap (streamed, as the
/// window opens it: a session past the cap comes in with its older history coarsened, and
/// `notice` is told so), then writes each requested file. Returns the line to print ("wrote
/// a.png (1600x800), a.csv (1200 rows)"), or an error naming the session file, the missing
/// pane, or the file that could not be written; nothing requested at all is an error too.
pub fn run(args: &ExportArgs, notice: &mut dyn FnMut(&str)) -> Result<String, String> {
    if args.png.is_none()
        && args.svg.is_none()
        && args.csv.is_none()
        && args.openmetrics.is_none()
        && args.perfetto.is_none()
        && args.phases.is_none()
    {
        return Err("nothing to write: give --png, --svg, --csv, --openmetrics, --perfetto and/or --phases".into());
    }
    let cap = args.memory_cap.map_or_else(zescope_store::default_cap, |c| usize::try_from(c).unwrap_or(usize::MAX));
    let mut store = Store::new(cap);
    let opened =
        session::open_into(&args.session, &mut store).map_err(|e| format!("{}: {e}", args.session.display()))?;
    if let Some(n) = &opened.notice {
        notice(&format!("{}: {n}", args.session.display()));
    }
    let (s, restored) = (&opened.head, &opened.restored);
    let layout = if restored.layout.panes.is_empty() {
        default_layout(&restored.keys_in_order(), &restored.series)
    } else {
        restored.layout.clone()
    };
    let which = match args.pane {
        PaneChoice::All => None,
        PaneChoice::One(k) if k <= layout.panes.len() => Some(vec![k - 1]),
        PaneChoice::One(k) => return Err(format!("there is no pane {k}: the session has {}", layout.panes.len())),
    };
    let range = match args.range {
        None => None,
        Some(RangeArg::View) => shown_range(&restored.view, &store),
        Some(RangeArg::Seconds(a, b)) => {
            let (lo, hi) = store.total_time_range().ok_or("the session holds no samples")?;
            Some((a.map_or(lo, |a| store.from_plot_x(a)), b.map_or(hi, |b| store.from_plot_x(b))))
        }
    };
    let mut spec = WriteSpec::from_layout(&layout, &restored.series, which.as_deref(), range);
    spec.markers = session::markers_from_file(&restored.markers).marks().to_vec();
    let mut done = Vec::new();
    let outputs = [(&args.png, Output::Png), (&args.svg, Output::Svg), (&args.csv, Output::Csv)];
    for (p, what) in outputs.into_iter().filter_map(|(p, what)| Some((p.as_ref()?, what))) {
        done.push(write_file(&store, &spec, (s, &restored.streams), what, p, args.size, &|_| {})?);
    }
    if let Some(p) = &args.openmetrics {
        let n = zescope_model::write::openmetrics(s, &store, &restored.streams, p)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        done.push(format!("{} ({n} samples)", p.display()));
    }
    if let Some(p) = &args.perfetto {
        done.push(write_file(&store, &spec, (s, &restored.streams), Output::Perfetto, p, args.size, &|_| {})?);
    }
    if let Some(p) = &args.phases {
        let whole = store.total_time_range().ok_or("the session holds no samples")?;
        let (name, (t0, t1)) = match range {
            Some(r) if args.range.is_some() => ("range", r),
            _ => ("session", whole),
        };
        // Then each marked range once, as many as keep the table within MAX_PHASE_ROWS.
        let mut ranges = vec![PhaseRange::new(name, t0, t1)];
        let marked = session::markers_from_file(&restored.markers);
        let room = (MAX_PHASE_ROWS / restored.series.len().max(1)).saturating_sub(1);
        let all = marked.closed_ranges().count();
        ranges.extend(marked.closed_ranges().take(room).map(|(n, a, b)| PhaseRange::new(n, a, b)));
        let table = phase_table(&store, &restored.series, &ranges);
        std::fs::write(p, table.to_csv()).map_err(|e| format!("{}: {e}", p.display()))?;
        let left = all - (ranges.len() - 1);
        let note = if left > 0 {
            format!("; {left} later marked ranges left out, past {MAX_PHASE_ROWS} rows: export a --range")
        } else {
            String::new()
        };
        done.push(format!("{} ({} phases, {} rows{note})", p.display(), ranges.len(), table.rows.len()));
    }
    Ok(format!("wrote {}", done.join(", ")))
}
