//! Command-line interface: `zescope [--source ...] [COMMAND]`.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand};

use crate::ze::Source;

#[derive(Parser, Debug)]
#[command(
    name = "zescope",
    version,
    about = "Live metrics viewer for Level Zero GPUs and NPUs",
    long_about = "zescope plots the hardware counters that Level Zero drivers export as DMA-BUF memory \
                  (ZET_experimental_metric_export_memory). Without a command it opens its window and starts \
                  sampling; the commands below work without a display. Without a Level Zero GPU it runs on a \
                  built-in simulated device."
)]
pub struct Cli {
    /// Where metrics come from: the real Level Zero loader if it has a device with metrics, else
    /// the simulated device (auto); only the loader (level-zero); only the simulated device (sim).
    #[arg(long, default_value = "auto", global = true, value_parser = source_parser())]
    pub source: Source,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--source` values (the Level Zero layer knows nothing of the command line).
fn source_parser() -> impl clap::builder::TypedValueParser<Value = Source> {
    clap::builder::PossibleValuesParser::new(["auto", "level-zero", "sim"]).map(|s| match s.as_str() {
        "level-zero" => Source::LevelZero,
        "sim" => Source::Sim,
        _ => Source::Auto,
    })
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List drivers, devices, sub-devices and metric groups, with what each exports.
    List {
        /// Also list every metric of every group.
        #[arg(long, short)]
        metrics: bool,
    },
    /// Sample without a window and write a session (--out run.ron) or a CSV (--out run.csv: time
    /// column + one column per counter, units in the header). Ends after --duration, or on
    /// Ctrl-C/SIGTERM, keeping everything recorded.
    Record {
        /// Device: an index from `zescope list` ("0"), a sub-device ("0.0"), or part of its name.
        /// Default: the first device with a group zescope can sample.
        #[arg(long)]
        device: Option<String>,
        /// Metric group to sample (repeat for groups of other domains). Default: the device's
        /// first group that exports memory.
        #[arg(long = "group")]
        groups: Vec<String>,
        /// Only these metrics (repeatable). Default: all metrics of the groups.
        #[arg(long = "metric")]
        metrics: Vec<String>,
        /// Combine the --metric list into one metric group created for the run.
        #[arg(long)]
        custom_group: bool,
        /// Sampling interval, 100us to 10s.
        #[arg(long, default_value = "1ms", value_parser = crate::view::format::parse_duration)]
        interval: Duration,
        /// How long to record.
        #[arg(long, default_value = "10s", value_parser = crate::view::format::parse_duration)]
        duration: Duration,
        /// Output file: .ron writes a session (open it in zescope, or `zescope export` it), any
        /// other extension a CSV.
        #[arg(long)]
        out: PathBuf,
    },
    /// Check what zescope needs, and print the fix for every problem.
    ///
    /// Checks the Level Zero loader, its drivers and devices, ZET_ENABLE_METRICS and run-time
    /// metrics enable, the metric groups that export memory and their layouts, the i915/xe paranoid
    /// knobs, access to /dev/dri/renderD*, CAP_PERFMON, the display and the file dialog backend.
    /// Prints OK / WARN / FAIL per check with the exact fix; exits with status 1 when a check FAILs.
    /// With --source sim, checks that matter only for real hardware are at most WARN.
    Doctor,
    /// Write images (PNG, SVG) of a saved session's plot panes and/or a CSV of its data, without
    /// a window.
    Export {
        /// The session file (.ron).
        session: PathBuf,
        /// Which pane, numbered from 1 as in the window, or "all" (stacked).
        #[arg(long, default_value = "all")]
        pane: crate::export::PaneChoice,
        /// Time range in seconds since the first sample, e.g. 2..10, 5.., ..30; or "view" for the
        /// range the saved view showed. Default: all data.
        #[arg(long, value_parser = crate::export::parse_range)]
        range: Option<crate::export::RangeArg>,
        /// Image size in pixels, WIDTHxHEIGHT. Default: 1600 wide, 320 high per pane.
        #[arg(long, value_parser = parse_size)]
        size: Option<(u32, u32)>,
        /// Write a PNG image here.
        #[arg(long)]
        png: Option<PathBuf>,
        /// Write an SVG image here.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Write a CSV of the exported series' samples here.
        #[arg(long)]
        csv: Option<PathBuf>,
    },
}

/// "1600x900".
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("{s:?} is not a size like 1600x900"))?;
    let side = |v: &str| v.trim().parse::<u32>().map_err(|_| format!("{v:?} in {s:?} is not a number of pixels"));
    Ok((side(w)?, side(h)?))
}
