//! Command-line interface: `zescope [--source ...] [FILE.ron | COMMAND]`.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand};

use zescope_ze::Source;

/// The parsed command line. `src/main.rs` parses it once and dispatches on [`Cli::command`];
/// `zescope-gen` walks the same definition to write man pages and shell completions.
#[derive(Parser, Debug)]
#[command(
    name = "zescope",
    version,
    about = "Live metrics viewer for Level Zero GPUs and NPUs",
    long_about = "zescope plots the hardware counters that Level Zero drivers export as DMA-BUF memory \
                  (ZET_experimental_metric_export_memory). Without a command it opens its window and starts \
                  sampling, or shows the session FILE.ron; the commands below work without a display. Without a \
                  Level Zero GPU it runs on a built-in simulated device."
)]
pub struct Cli {
    /// Where metrics come from: the real Level Zero loader if it has a device with metrics, else
    /// the simulated device (auto); only the loader (level-zero); only the simulated device (sim).
    /// Also taken by the commands that sample (`list`, `doctor`, `record`, `serve`), before or
    /// after their name.
    #[arg(long, default_value = "auto", value_parser = source_parser())]
    pub source: Source,

    /// A session file (.ron) to open in the window instead of starting to sample; refused
    /// together with a command.
    #[arg(value_name = "FILE.ron", value_parser = parse_session_path)]
    pub file: Option<PathBuf>,

    /// A view file (docs/view-format.md) to lay the window's panes out with, once the run's (or
    /// the recording's) series are known.
    #[arg(long, value_name = "FILE", value_parser = parse_view)]
    pub view: Option<zescope_model::viewfile::ViewFile>,

    /// Watch the run a `zescope serve` on HOST:PORT serves (its live feed,
    /// docs/live-protocol.md) in the window, instead of sampling here; reconnects by itself.
    /// Across machines: `ssh -L 9464:localhost:9464 HOST`, then `--connect localhost:9464`.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "file")]
    pub connect: Option<String>,

    /// With --connect beyond loopback: the file whose first line is the server's token.
    #[arg(long, value_name = "FILE", requires = "connect")]
    pub token_file: Option<PathBuf>,

    /// The command to run headless; `None` (no command given) opens the window on
    /// [`Cli::source`] (or on [`Cli::file`]).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `zescope FILE.ron`: an existing file (whether it is a session is checked when it opens, with
/// the window's error banner).
pub fn parse_session_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => Err(format!("{s} is a folder, not a session file")),
        Ok(_) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if path.extension().is_some() || s.contains('/') {
                Err(format!("no such file: {s}"))
            } else {
                let commands = <Cli as clap::CommandFactory>::command();
                let names: Vec<&str> = commands.get_subcommands().map(|c| c.get_name()).collect();
                Err(format!("{s} is neither a file nor a command (commands: {})", names.join(", ")))
            }
        }
        Err(e) => Err(format!("cannot read {s}: {e}")),
    }
}

#[path = "cli_outputs.rs"]
mod outputs;
pub use outputs::Outputs;
use outputs::{parse_record_out, parse_record_perfetto, parse_session_out};

/// `--max-markers`: a count a session can hold (`view::markers::MAX_MARKS`).
fn parse_max_markers(s: &str) -> Result<usize, String> {
    let max = zescope_model::view::markers::MAX_MARKS;
    match s.parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        Ok(n) => Err(format!("{n} is more markers than a session may hold ({max})")),
        Err(e) => Err(format!("{s:?} is not a count: {e}")),
    }
}

/// `--source` values (the Level Zero layer knows nothing of the command line).
fn source_parser() -> impl clap::builder::TypedValueParser<Value = Source> {
    clap::builder::PossibleValuesParser::new(["auto", "level-zero", "sim"]).map(|s| match s.as_str() {
        "level-zero" => Source::LevelZero,
        "sim" => Source::Sim,
        _ => Source::Auto,
    })
}

/// `--source` of a command that samples (`list`, `doctor`, `record`, `serve`): given after the
/// command's name, it wins over one given before it. Not global: `mark` and `export` read no
/// device, and their help offered it.
#[derive(clap::Args, Debug, Default, Clone, Copy)]
pub struct SourceChoice {
    /// Where metrics come from: the real Level Zero loader if it has a device with metrics, else
    /// the simulated device (auto, the default); only the loader (level-zero); only the
    /// simulated device (sim).
    #[arg(long = "source", value_name = "SOURCE", value_parser = source_parser())]
    pub source: Option<Source>,
}

impl SourceChoice {
    /// The source chosen here, else `before` (the one given before the command's name).
    pub fn or(self, before: Source) -> Source {
        self.source.unwrap_or(before)
    }
}

/// A command that runs without a window. Each variant's fields are its options exactly as
/// clap parsed them (durations already converted, paths not yet checked); `src/main.rs`
/// hands them to [`crate::commands::list`], [`crate::commands::record`], [`zescope_doctor`] or [`zescope_model::write`].
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List drivers, devices, sub-devices and metric groups, with what each exports.
    List {
        /// The full form: every metric of every listed group (name, unit, metric type, result
        /// type, description). Without it, one line per group.
        #[arg(long, short)]
        metrics: bool,
        /// Only the groups whose names match GLOB (`*` any run of characters, `?` one);
        /// repeat it or give a comma list. A pattern that matches no group is an error.
        #[arg(long = "group", value_name = "GLOB", value_delimiter = ',')]
        groups: Vec<String>,
        /// `--source` given after the command's name.
        #[command(flatten)]
        from: SourceChoice,
    },
    /// Sample without a window and write a session (--out run.ron) or a CSV (--out run.csv: time
    /// column + one column per counter, units in the header; markers in run.markers.csv). Ends
    /// after --duration, or on Ctrl-C/SIGTERM, keeping everything recorded. With a command after
    /// `--` (`zescope record --out run.ron -- ./workload args`) it starts the command once
    /// sampling runs, with ZESCOPE_MARKERS set, and ends when the command exits, with its exit
    /// status.
    Record(Box<RecordOptions>),
    /// Mark an instant (or, with --begin/--end, a range) on a running zescope's plots: the
    /// window, `record` or `serve`, found through ZESCOPE_MARKERS or
    /// $XDG_RUNTIME_DIR/zescope/markers.sock.
    Mark {
        /// Begin the range NAME.
        #[arg(long, conflicts_with = "end")]
        begin: bool,
        /// End the newest open range NAME.
        #[arg(long)]
        end: bool,
        /// The marker's name (up to 200 bytes, no control characters).
        name: String,
    },
    /// Serve the counters over HTTP for Prometheus: /metrics (Prometheus text 0.0.4, or
    /// OpenMetrics for clients that ask for it), /healthz and a short page at /. Runs until
    /// Ctrl-C/SIGTERM, through the same sampler and teardown as record.
    Serve(ServeOptions),
    /// Check what zescope needs, and print the fix for every problem.
    ///
    /// Checks the Level Zero loader, its drivers and devices, ZET_ENABLE_METRICS and run-time
    /// metrics enable, the metric groups that export memory and their layouts, the i915/xe paranoid
    /// knobs, access to /dev/dri/renderD*, CAP_PERFMON, the display and the file dialog backend.
    /// Prints OK / WARN / FAIL per check with the exact fix; exits with status 1 when a check FAILs.
    /// With --source sim, checks that matter only for real hardware are at most WARN.
    Doctor {
        /// `--source` given after the command's name.
        #[command(flatten)]
        from: SourceChoice,
    },
    /// Write images (PNG, SVG) of a saved session's plot panes and/or a CSV of its data, without
    /// a window.
    Export(ExportOptions),
}

/// The options of `zescope record`, as clap parses them; [`RecordOptions::into_args`] makes them
/// what [`crate::commands::record::record`] takes.
#[derive(clap::Args, Debug)]
pub struct RecordOptions {
    /// `--source` given after the command's name.
    #[command(flatten)]
    pub from: SourceChoice,
    /// Device: an index from `zescope list` ("0"; "1/0" for device 0 of driver 1), a sub-device
    /// ("0.0"), or part of its name (a whole name first).
    /// Repeat it (or give a comma list) to record several devices on one time axis.
    /// Default: the first device with a group zescope can sample.
    #[arg(long = "device", value_delimiter = ',')]
    pub devices: Vec<String>,
    /// Metric group to sample (repeat it, or give a comma list, for groups of other domains):
    /// GROUP, or DEVICE:GROUP for one of several devices (a plain GROUP goes to every device that
    /// has it). GROUP may be a glob ('Compute*', 'L3_?'): every group it matches, at most one per
    /// domain. Default: each device's first group that exports memory.
    #[arg(long = "group", value_delimiter = ',')]
    pub groups: Vec<String>,
    /// Only these metrics (repeat it or give a comma list); a glob ('Gpu*') stands for every
    /// metric of the groups it matches. Default: all metrics of the groups.
    #[arg(long = "metric", value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// Combine the --metric list into one metric group created for the run.
    #[arg(long)]
    pub custom_group: bool,
    /// Sampling interval, 100us to 10s.
    #[arg(long, default_value = "1ms", value_parser = parse_interval)]
    pub interval: Duration,
    /// How to read the groups (`via_help`: the ways' own list).
    #[arg(long, default_value = "auto", value_parser = parse_via, help = via_help())]
    pub via: zescope_sampler::Via,
    /// Also record the device's telemetry through Sysman (clocks, throttle reasons, power,
    /// energy, temperatures, engine utilisation, memory): on by default.
    #[arg(long, overrides_with = "no_telemetry")]
    pub telemetry: bool,
    /// Record no telemetry.
    #[arg(long, overrides_with = "telemetry")]
    pub no_telemetry: bool,
    /// How long to record (default 10s; with a command, until it exits).
    #[arg(long, value_parser = zescope_model::view::text::parse_duration)]
    pub duration: Option<Duration>,
    /// Output file: .ron writes a session (open it in zescope, or `zescope export` it), any
    /// other extension a CSV (not one of another format zescope writes: .pftrace, .png, .svg,
    /// .om are refused, saying which option writes it).
    #[arg(long, required_unless_present = "perfetto", value_parser = parse_record_out)]
    pub out: Option<PathBuf>,
    /// Also (or only) write a Perfetto trace here as the run records (open it in
    /// ui.perfetto.dev): counter tracks per device and group, markers and throttle reasons as
    /// slices, on CLOCK_MONOTONIC.
    #[arg(long, value_name = "OUT.pftrace", value_parser = parse_record_perfetto)]
    pub perfetto: Option<PathBuf>,
    /// Markers the workload may send per second, sustained; faster ones are dropped and counted.
    #[arg(long, value_name = "N", default_value_t = zescope_model::markers::Limits::default().per_second)]
    pub marker_rate: u32,
    /// Markers the workload may send at once after a quiet spell (at least 1).
    #[arg(long, value_name = "N", default_value_t = zescope_model::markers::Limits::default().burst,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub marker_burst: u32,
    /// Markers kept in the session at most (up to 1048576); more are dropped and counted.
    #[arg(long, value_name = "N", default_value_t = zescope_model::markers::Limits::default().per_session,
          value_parser = parse_max_markers)]
    pub max_markers: usize,
    /// Keep only the time around this trigger's firings (repeatable; docs/triggers.md), e.g.
    /// 'ComputeBasic/GpuUtilization > 80', '"Telemetry/Package power" rise 50 in 500ms', 'marker solve',
    /// 'throttle power'; the firings are listed in NAME.firings.csv beside the output.
    #[arg(long = "trigger", value_name = "EXPR", value_parser = parse_trigger)]
    pub triggers: Vec<zescope_model::triggers::Trigger>,
    /// Also record a series derived from the others (repeatable; docs/derived-series.md):
    /// `NAME=EXPR` or `NAME[UNIT]=EXPR`, e.g. 'bw=rate(MemoryTraffic/BytesRead) / 1e9',
    /// 'energy=integral("Telemetry/Package power")'; recorded as Derived/NAME.
    #[arg(long = "derive", value_name = "NAME=EXPR", value_parser = parse_derivation)]
    pub derive: Vec<zescope_model::derive::Derivation>,
    /// Record the series this view file names (docs/view-format.md): each device the groups
    /// and metrics its kind's patterns match, instead of --group/--metric.
    #[arg(long, value_name = "FILE", value_parser = parse_view, conflicts_with_all = ["groups", "metrics"])]
    pub view: Option<zescope_model::viewfile::ViewFile>,
    /// With --trigger: time kept before each firing.
    #[arg(long, default_value = "5s", value_parser = zescope_model::view::text::parse_duration, requires = "triggers")]
    pub pre: Duration,
    /// With --trigger: time kept after each firing.
    #[arg(long, default_value = "5s", value_parser = zescope_model::view::text::parse_duration, requires = "triggers")]
    pub post: Duration,
    /// A workload to run while recording, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Record the run a `zescope serve` on HOST:PORT serves (its live feed,
    /// docs/live-protocol.md) instead of sampling here; reconnects by itself when the link
    /// drops. Without --duration: until that run ends or Ctrl-C.
    #[arg(long, value_name = "HOST:PORT",
          conflicts_with_all = ["devices", "groups", "metrics", "custom_group", "view", "command", "triggers", "derive", "perfetto"])]
    pub connect: Option<String>,
    /// With --connect beyond loopback: the file whose first line is the server's token.
    #[arg(long, value_name = "FILE", requires = "connect")]
    pub token_file: Option<PathBuf>,
    /// Also push every series to an OpenTelemetry Collector over OTLP (HTTP/protobuf) at URL
    /// while recording, as `serve --otlp` does (docs/otel.md).
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "", conflicts_with = "connect")]
    pub otlp: Option<String>,
    /// Most memory the recording's samples may take (e.g. 256M, 2G): past it the oldest history
    /// is summarised (each series' least, greatest and mean over coarser spans, as in a live
    /// run), in the session written too; opening it says from when. Default: a quarter of the
    /// smallest of the machine's memory, the address-space limit and the control group's memory
    /// limit, at most 1G.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub memory_cap: Option<u64>,
}

/// `--view FILE`: a view file, read and checked.
fn parse_view(s: &str) -> Result<zescope_model::viewfile::ViewFile, String> {
    zescope_model::viewfile::ViewFile::load(std::path::Path::new(s))
}

/// `--derive NAME=EXPR`: a derived series; its error names the column.
fn parse_derivation(s: &str) -> Result<zescope_model::derive::Derivation, String> {
    zescope_model::derive::Derivation::parse(s).map_err(|e| format!("{e} of '{s}'"))
}

/// `--trigger EXPR`: a trigger expression; its error names the column.
fn parse_trigger(s: &str) -> Result<zescope_model::triggers::Trigger, String> {
    zescope_model::triggers::Trigger::parse(s).map_err(|e| format!("{e} of '{s}'"))
}

impl RecordOptions {
    /// The recording these options ask for, from `source` (unless `--source` came after
    /// `record`): telemetry unless `--no-telemetry`, and
    /// without `--duration` 10 s, or until the workload exits when there is one.
    pub fn into_args(self, source: Source) -> crate::commands::record::RecordArgs {
        let open_ended = !self.command.is_empty() || self.connect.is_some();
        let duration = self.duration.unwrap_or(if open_ended { Duration::MAX } else { Duration::from_secs(10) });
        crate::commands::record::RecordArgs {
            source: self.from.or(source),
            devices: self.devices,
            groups: self.groups,
            metrics: self.metrics,
            custom_group: self.custom_group,
            interval: self.interval,
            via: self.via,
            telemetry: !self.no_telemetry,
            duration,
            out: self.out,
            perfetto: self.perfetto,
            command: self.command,
            triggers: self.triggers.into_iter().map(|t| t.around(self.pre, self.post)).collect(),
            derive: self.derive,
            view: self.view,
            pre: self.pre,
            post: self.post,
            markers: zescope_model::markers::Limits {
                per_second: self.marker_rate,
                burst: self.marker_burst,
                per_session: self.max_markers,
            },
            connect: self.connect,
            token_file: self.token_file,
            otlp: self.otlp.map(otlp_config),
            memory_cap: self.memory_cap,
        }
    }
}

/// The options of `zescope serve`, as clap parses them; [`ServeOptions::into_args`] makes them
/// what [`crate::commands::serve::serve`] takes.
#[derive(clap::Args, Debug)]
pub struct ServeOptions {
    /// Address and port to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:9464")]
    pub listen: std::net::SocketAddr,
    /// `--source` given after the command's name.
    #[command(flatten)]
    pub from: SourceChoice,
    /// Device: an index from `zescope list` ("0"; "1/0" for device 0 of driver 1), a sub-device
    /// ("0.0"), or part of its name (a whole name first).
    /// Repeat it (or give a comma list) to serve several devices, each series labelled with
    /// its device. Default: the first device with a group zescope can sample.
    #[arg(long = "device", value_delimiter = ',')]
    pub devices: Vec<String>,
    /// Metric group to sample (repeat it, or give a comma list, for groups of other domains):
    /// GROUP, or DEVICE:GROUP for one of several devices, as for `record` (globs too). Default:
    /// each device's first group that exports memory.
    #[arg(long = "group", value_delimiter = ',')]
    pub groups: Vec<String>,
    /// Also serve the devices' telemetry through Sysman (clocks, throttle reasons, power,
    /// energy, temperatures, engine utilisation, memory): on by default.
    #[arg(long, overrides_with = "no_telemetry")]
    pub telemetry: bool,
    /// Serve no telemetry.
    #[arg(long, overrides_with = "telemetry")]
    pub no_telemetry: bool,
    /// Sampling interval, 100us to 10s; each scrape serves the newest sample.
    #[arg(long, default_value = "100ms", value_parser = parse_interval)]
    pub interval: Duration,
    /// How to read the groups: `export`, `streamer`, `tracer` or `auto`, as for `record`.
    #[arg(long, default_value = "auto", value_parser = parse_via)]
    pub via: zescope_sampler::Via,
    /// Also write DIR/zescope.prom (Prometheus text, atomically, every second or every
    /// interval if longer) for node_exporter's textfile collector.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
    /// Also serve the processes using each device (read through Sysman once a second, as
    /// telemetry): zescope_process_memory_bytes and zescope_process_shared_memory_bytes with
    /// `pid` and `command` labels, for the top processes by memory of each device.
    #[arg(long, conflicts_with = "no_telemetry")]
    pub processes: bool,
    /// How many processes per device `--processes` serves (those using the most device memory):
    /// bounds the series a scrape holds.
    #[arg(long, value_name = "N", default_value_t = zescope_openmetrics::processes::DEFAULT_TOP,
          value_parser = clap::value_parser!(u16).range(1..=1000).map(usize::from))]
    pub top_processes: usize,
    /// Count the firings of this trigger (repeatable; docs/triggers.md):
    /// zescope_trigger_firings_total{trigger="EXPR"}.
    #[arg(long = "trigger", value_name = "EXPR", value_parser = parse_trigger)]
    pub triggers: Vec<zescope_model::triggers::Trigger>,
    /// Also serve a series derived from the others (repeatable; docs/derived-series.md):
    /// `NAME=EXPR` or `NAME[UNIT]=EXPR`, served with the label derived="NAME".
    #[arg(long = "derive", value_name = "NAME=EXPR", value_parser = parse_derivation)]
    pub derive: Vec<zescope_model::derive::Derivation>,
    /// How much of the run the live feed (/live, docs/live-protocol.md) keeps for viewers that
    /// join late or reconnect, in MiB; the oldest goes first.
    #[arg(long, value_name = "MIB", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=65536).map(|m| m as usize))]
    pub history: usize,
    /// Offer the live feed beyond loopback to viewers that send this file's token (its first
    /// line) as `Authorization: Bearer TOKEN`; without it the feed is offered on loopback only
    /// (watch from another machine through `ssh -L`).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Also record the run as a session (.ron), written when serve ends (and checkpointed as
    /// `record` does).
    #[arg(long, value_name = "FILE", value_parser = parse_session_out)]
    pub save: Option<PathBuf>,
    /// Which names the page serves (docs/otel.md): `zescope` (zescope_*), `xpumd` (the
    /// telemetry under xpumd's hw_* names and attributes, as its dashboards and alert rules read
    /// them; everything else zescope_*), or both, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "zescope")]
    pub names: Vec<crate::commands::serve::xpumd::Names>,
    /// Also push every series to an OpenTelemetry Collector over OTLP (HTTP/protobuf) at URL
    /// (`http://HOST:4318`; without URL: OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4318),
    /// every OTEL_METRIC_EXPORT_INTERVAL ms (60 s). docs/otel.md.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub otlp: Option<String>,
}

impl ServeOptions {
    /// The serving these options ask for, from `source` (unless `--source` came after `serve`):
    /// telemetry unless `--no-telemetry`.
    pub fn into_args(self, source: Source) -> crate::commands::serve::ServeArgs {
        let ServeOptions {
            listen,
            from,
            devices,
            groups,
            telemetry: _,
            no_telemetry,
            interval,
            via,
            textfile,
            processes,
            top_processes,
            triggers,
            derive,
            history,
            token_file,
            save,
            names,
            otlp,
        } = self;
        crate::commands::serve::ServeArgs {
            otlp: otlp.map(otlp_config),
            names: crate::commands::serve::xpumd::Names::set(&names),
            source: from.or(source),
            listen,
            devices,
            groups,
            interval,
            via,
            telemetry: !no_telemetry,
            textfile,
            processes: processes.then_some(top_processes),
            triggers,
            derive,
            history: history << 20,
            token_file,
            save,
        }
    }
}

/// The options of `zescope export`, as clap parses them.
#[derive(clap::Args, Debug)]
pub struct ExportOptions {
    /// The session file (.ron).
    pub session: PathBuf,
    /// Which pane, numbered from 1 as in the window, or "all" (stacked).
    #[arg(long, default_value = "all")]
    pub pane: crate::commands::export::PaneChoice,
    /// Time range in seconds since the first sample, e.g. 2..10, 5.., ..30; or "view" for the
    /// range the saved view showed. Default: all data. A range wholly before the first sample or
    /// after the last is refused.
    #[arg(long, value_parser = crate::commands::export::parse_range)]
    pub range: Option<crate::commands::export::RangeArg>,
    /// Image size in pixels, WIDTHxHEIGHT, each side 64 to 16384. Default: 1600 wide, 320 high per pane (more for a pane whose legend needs it).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<(u32, u32)>,
    /// One `--KEY FILE` per file format.
    #[command(flatten)]
    pub outputs: Outputs,
    /// Most memory opening the session may take (e.g. 512M, 4G; the file and its head count
    /// against it, and at most 72 MiB of decoded samples are in flight besides): past it the
    /// oldest history is summarised, as in a live run, and a note says from when. Default: a
    /// quarter of the smallest of the machine's memory, the address-space limit and the control
    /// group's memory limit, at most 1G.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub memory_cap: Option<u64>,
}

impl From<ExportOptions> for crate::commands::export::ExportArgs {
    fn from(o: ExportOptions) -> Self {
        let ExportOptions { session, pane, range, size, outputs, memory_cap } = o;
        crate::commands::export::ExportArgs { session, pane, range, size, outputs: outputs.0, memory_cap }
    }
}

/// Parses an amount of memory: bytes, or a number with K, M, G or T (powers of 1024, `iB`
/// or `B` after them accepted: "512M", "4GiB"); at least 16 MiB.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("{s:?}: the unit is K, M, G or T")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not an amount of memory like 512M or 4G"))?;
    let bytes = n * f64::from(1u32 << (shift / 2)) * f64::from(1u32 << (shift - shift / 2));
    if !(bytes.is_finite() && bytes >= f64::from(16u32 << 20)) || bytes > u64::MAX as f64 {
        return Err(format!("{s:?}: at least 16M"));
    }
    Ok(bytes as u64)
}

/// Parses an image size `WIDTHxHEIGHT` ("1600x900", `X` also accepted) into pixels; the error
/// names the text that is not a size or not a number, or the side outside what an image may be
/// (refused here, before the session is read, not after).
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    use zescope_model::write::{MAX_SIDE, MIN_SIDE};
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("{s:?} is not a size like 1600x900"))?;
    let side = |v: &str| {
        let px = v.trim().parse::<u32>().map_err(|_| format!("{v:?} in {s:?} is not a number of pixels"))?;
        if (MIN_SIDE..=MAX_SIDE).contains(&px) {
            Ok(px)
        } else {
            Err(format!("{px} pixels in {s:?}: each side of an image is {MIN_SIDE} to {MAX_SIDE} pixels"))
        }
    };
    Ok((side(w)?, side(h)?))
}

/// `--via`'s help: each way that reads groups, by its word and what it reads with, in the order
/// `auto` offers a group to them (`zescope_sampler::group_ways`, from the ways themselves), then
/// `auto`.
fn via_help() -> String {
    use zescope_sampler::Via;
    let ways = zescope_sampler::group_ways();
    let each: Vec<String> = ways.iter().map(|v| format!("`{}` ({})", v.name(), v.help())).collect();
    let order: Vec<&str> = ways.iter().map(|v| v.name()).collect();
    format!(
        "How to read the groups: {} or `auto` ({}, in the order {})",
        each.join(", "),
        Via::Auto.help(),
        order.join(", ")
    )
}

/// `--interval`: a duration the sampler samples at, with its unit, or what range it must be in
/// (the sampler would clamp it, and the run then sample at another rate than the one asked for).
fn parse_interval(s: &str) -> Result<Duration, String> {
    use zescope_sampler::{MAX_INTERVAL, MIN_INTERVAL};
    let bare = s.trim();
    let zero = bare.parse::<f64>().is_ok_and(|v| v == 0.0);
    if !zero && !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit() || c == '.') {
        // A bare number would be seconds (as for --duration), which `--interval 5` rarely means.
        return Err(format!("{bare} has no unit: give the interval with one, as {bare}ms, {bare}s or {bare}us"));
    }
    let d = if zero { Duration::ZERO } else { zescope_model::view::text::parse_duration(s)? };
    if (MIN_INTERVAL..=MAX_INTERVAL).contains(&d) {
        return Ok(d);
    }
    Err(format!(
        "{s} is outside 100us to 10s, the intervals zescope samples at (a streamer reports every tenth of one, down to 10us)"
    ))
}

/// `--via`: auto, export, streamer or tracer (`Via::names`).
fn parse_via(s: &str) -> Result<zescope_sampler::Via, String> {
    use zescope_sampler::Via;
    Via::from_name(s).ok_or_else(|| format!("{s:?} is not a way to read groups: use {}", Via::names()))
}

/// `--otlp [URL]` as the exporter's configuration (no URL: the OTLP exporter's environment variables).
fn otlp_config(url: String) -> zescope_otlp::Config {
    let endpoint = Some(url).filter(|u| !u.trim().is_empty());
    zescope_otlp::Config { endpoint, interval: None }
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
