//! The window's tests, one binary: the egui app driven by egui_kittest without a display
//! (`support` builds windows on a private simulated driver or showing a recording), each module
//! a feature of the window — the basics (`basics`), the source panel on a realistic catalogue
//! (`catalog`), envelope plots (`envelope_plot`), files and the path prompt (`files`, `prompt`,
//! `open_progressive`, `unsaved`, `roundtrip`; File → Export → Perfetto trace…: `perfetto`), panes and their arrangement (`panes`, `arrangement`,
//! `resize`), live/paused/recording modes (`modes`), several devices (`multidev`), how metric
//! types are shown (`metric_types`), the phase table (`phases`), the process table
//! (`processes`), drivers that behave as Intel's NPU driver and compute-runtime do
//! (`profiles`), settings (`settings`), the streamer, tracer and
//! telemetry sources (`streamer`, `tracer`, `telemetry`), and the time axis (`time_axis`, `wheel`).
//! The few that open what the `zescope` binary or `zescope record`'s code wrote are the root
//! package's (`tests/window/` there), which shares this `support`: the window crate can neither
//! build the binary nor call the commands.

mod support;

mod arrangement;
mod basics;
mod catalog;
mod derived;
mod diagnostics;
mod envelope_plot;
mod files;
mod markers;
mod metric_types;
mod modes;
mod multidev;
mod open_progressive;
mod panes;
mod perfetto;
mod phases;
mod processes;
mod profiles;
mod prompt;
mod remote;
mod resize;
mod roundtrip;
mod settings;
mod streamer;
mod telemetry;
mod time_axis;
mod tracer;
mod triggers;
mod unsaved;
mod views;
mod wheel;
