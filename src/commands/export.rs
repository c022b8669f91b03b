//! `zescope export SESSION.ron`: files from a saved session (one option per format of
//! `zescope_model::write`), without a display. The session is loaded and restored into a store like the UI
//! does, so the panes, colours and hidden series are the ones saved. A
//! session without panes (as `zescope record` writes) gets the UI's default
//! arrangement (`view::panes`): one pane per plotted unit, never two units on one axis.

use std::path::PathBuf;

use zescope_model::session;
use zescope_model::view::default_arrangement;
use zescope_model::view::timeview::shown_range;
use zescope_store::Store;

use zescope_model::view::TimeAxis;
use zescope_model::write::{FORMATS, Format, Input, WriteSpec};

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
    /// Image size in pixels (width, height); `None`: `zescope_model::write::default_size` (1600
    /// wide, 320 high per pane or what its legend needs, plus 120).
    pub size: Option<(u32, u32)>,
    /// The files to write, each in its format, in the order of [`FORMATS`].
    pub outputs: Vec<(&'static dyn Format, PathBuf)>,
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
    if args.outputs.is_empty() {
        let options: Vec<String> = FORMATS.iter().map(|f| format!("--{}", f.key())).collect();
        return Err(match options.split_last() {
            Some((last, rest)) => format!("nothing to write: give {} and/or {last}", rest.join(", ")),
            None => "nothing to write".into(),
        });
    }
    let cap = args.memory_cap.map_or_else(zescope_store::default_cap, |c| usize::try_from(c).unwrap_or(usize::MAX));
    let mut store = Store::new(cap);
    let opened = session::open_into(&args.session, &mut store).map_err(|e| e.of_file(&args.session))?;
    if let Some(n) = &opened.notice {
        notice(&format!("{}: {n}", args.session.display()));
    }
    let (s, restored) = (&opened.head, &opened.restored);
    let arrangement = if restored.arrangement.panes.is_empty() {
        default_arrangement(&restored.keys_in_order(), &restored.series)
    } else {
        restored.arrangement.clone()
    };
    let which = match args.pane {
        PaneChoice::All => None,
        PaneChoice::One(k) if k <= arrangement.panes.len() => Some(vec![k - 1]),
        PaneChoice::One(k) => return Err(format!("there is no pane {k}: the session has {}", arrangement.panes.len())),
    };
    let range = match args.range {
        None => None,
        Some(RangeArg::View) => shown_range(&restored.view, &store),
        Some(RangeArg::Seconds(a, b)) => {
            let (lo, hi) = store.total_time_range().ok_or("the session holds no samples")?;
            let axis = TimeAxis::of(&store);
            let (from, to) = (a.map_or(lo, |a| axis.ns(a)), b.map_or(hi, |b| axis.ns(b)));
            // A range wholly past either end holds nothing: named, not written as empty files.
            if from > hi || to < lo {
                return Err(format!(
                    "--range {}..{}: no samples there; the session's samples run from {:.3} s to {:.3} s",
                    a.map_or(String::new(), |a| a.to_string()),
                    b.map_or(String::new(), |b| b.to_string()),
                    axis.x(lo),
                    axis.x(hi)
                ));
            }
            Some((from, to))
        }
    };
    let mut spec = WriteSpec::from_arrangement(&arrangement, &restored.series, which.as_deref(), range);
    spec.markers = session::markers_from_file(&restored.markers).marks().to_vec();
    let input = Input {
        store: &store,
        spec: &spec,
        session: s,
        streams: &restored.streams,
        series: &restored.series,
        size: args.size,
    };
    let mut done = Vec::new();
    for (format, path) in &args.outputs {
        done.push(format.write(&input, path, &|_| {})?);
    }
    Ok(format!("wrote {}", done.join(", ")))
}
