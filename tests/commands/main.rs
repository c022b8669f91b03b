//! The command line's tests, one binary: each module runs the `zescope` binary as a user does
//! (`support::zescope`, with a clean environment) and checks what a feature does —
//! `doc_examples` (every command line, trigger and view the docs give, run on the simulated device),
//! `derive` (derived series in `record`, every export and `serve`), `dashboard` (the Grafana dashboard and alert rules of `dist/`, against a real Prometheus
//! scraping `serve`), `doctor`, `export` and `hostile_bounds` (memory bounds of a load),
//! `man_pages` (man pages and completions), `list` (and on a realistic catalogue,
//! `list_catalog`), `open` (a file argument), `out_paths` (a session file that cannot be written is refused
//! before sampling), `record` (and its globs on a realistic catalogue,
//! `record_globs`; killed in the middle of a checkpoint, `record_kill`), `markers`, `serve`, several devices, faults, the series it lays out and the
//! groups a big catalogue exposes (`serve*`), the same series live and backfilled
//! (`openmetrics_same_series`), Perfetto traces of `export` and `record` read back with Perfetto's
//! Python protos (`perfetto`, `perfetto_check.py`), the processes using each device in `record`'s
//! files and `serve --processes` (`processes`), sessions written by `record` from the streamer,
//! telemetry and the metric tracer (`session_*`), triggers in `record` and `serve` (`triggers`),
//! the window under Xvfb (`xvfb`; on a remote run whose link drops, `live_xvfb`), the live feed
//! (`live`, `live_window`), and every source through the real Level Zero loaders
//! (`loader_*`; `loader_profiles`: drivers that behave as Intel's NPU driver and compute-runtime
//! do, found by the loader's own discovery; `loader_tracer`: a tracer-based group read with the
//! metric tracer, or without it on an older loader; `loader_drivers_2026`: drivers as they are in
//! 2026: one streamer per device, the newer specification, group-type bits, an unlisted
//! extension, root-only Sysman pieces).

mod support;

mod dashboard;
mod derive;
mod doc_examples;
mod doctor;
mod export;
mod hostile_bounds;
mod list;
mod list_catalog;
mod live;
mod live_window;
mod live_xvfb;
mod loader_drivers_2026;
mod loader_matrix;
mod loader_profiles;
mod loader_telemetry;
mod loader_tracer;
mod man_pages;
mod markers;
mod open;
mod openmetrics_same_series;
mod otlp;
mod out_paths;
mod perfetto;
mod processes;
mod record;
mod record_cap;
mod record_globs;
mod record_kill;
mod record_workload;
mod serve;
mod serve_catalog;
mod serve_devices;
mod serve_faults;
mod serve_layout;
mod session_streamer;
mod session_telemetry;
mod session_tracer;
mod triggers;
mod xpumd;
mod xvfb;
mod xvfb_derived;
