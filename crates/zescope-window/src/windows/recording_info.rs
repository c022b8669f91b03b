//! The metadata panel of an opened recording (View → Recording info, or the Info button beside
//! the FILE badge): where and when it was recorded, the source, each run's device, groups
//! (how each was read), metrics, telemetry, derived series, interval and notices, how long it
//! lasts, and its markers.

use egui::{RichText, Ui};

use zescope_model::session::RunHistory;
use zescope_model::view::text::{duration, time_label, utc};
use zescope_store::Store;

use super::{Shared, Window};
use zescope_model::view::TimeAxis;

/// The recording info window: shown while a session file is.
#[derive(Default)]
pub struct RecordingInfo {
    /// Asked for (View → Recording info, or the Info button).
    pub open: bool,
}

impl Window for RecordingInfo {
    fn title(&self) -> &'static str {
        "Recording info"
    }

    fn is_open(&self, shared: &Shared<'_>) -> bool {
        self.open && shared.showing_file
    }

    fn close(&mut self, _: &mut Shared<'_>) {
        self.open = false;
    }

    fn frame(&self, _: &egui::Context) -> egui::Window<'static> {
        egui::Window::new(self.title()).default_width(480.0)
    }

    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>) {
        let rows = facts(&shared.state.history, shared.store, shared.markers.marks());
        show(ui, &rows);
    }
}

/// (what, value) rows describing a recording, in the order shown.
pub(crate) fn facts(
    history: &RunHistory,
    store: &Store,
    markers: &[zescope_model::view::Mark],
) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    if let Some(r) = &history.recorded {
        rows.push(("Recorded".into(), utc(r.started_unix_ms)));
        if !r.host.is_empty() {
            rows.push(("Host".into(), r.host.clone()));
        }
        if !r.zescope_version.is_empty() {
            rows.push(("By".into(), format!("zescope {}", r.zescope_version)));
        }
    }
    let src = &history.source;
    if !src.description.is_empty() {
        let sim = if src.simulated { " (simulated)" } else { "" };
        rows.push(("Source".into(), format!("{}{sim}", src.description)));
    }
    if let Some((a, b)) = store.total_time_range() {
        let d = std::time::Duration::from_nanos(b.saturating_sub(a).max(0) as u64);
        rows.push(("Duration".into(), duration(d)));
    }
    // A run over several devices has one record per device: one number for all of them.
    let mut n = 0;
    for (i, run) in history.runs.iter().enumerate() {
        if i == 0 || history.runs[i - 1].run != run.run {
            n += 1;
        }
        let device = history.devices.get(run.device as usize).map_or("?", |d| d.name.as_str());
        let interval = duration(std::time::Duration::from_nanos(run.interval_ns));
        // Each group with the way it was read: its layout, or the streamer and what it granted.
        let groups: Vec<String> = run
            .groups
            .iter()
            .enumerate()
            .map(|(k, g)| match run.layouts.get(k).filter(|l| !l.is_empty()) {
                Some(l) if l.starts_with("streamer") || l.starts_with("tracer") => format!("{g}: {l}"),
                Some(l) => format!("{g}: exported memory, layout {l}"),
                None => g.clone(),
            })
            .collect();
        // What else the run read and made: only these metrics (a group made of them), the
        // device's telemetry, series derived from the others.
        let mut also = Vec::new();
        if !run.metrics.is_empty() {
            let made = if run.custom_group { ", in one group made for the run" } else { "" };
            also.push(format!("only {}{made}", run.metrics.join(", ")));
        }
        if run.telemetry {
            also.push("telemetry through Sysman".to_owned());
        }
        if !run.derived.is_empty() {
            also.push(format!("derived {}", run.derived.join(", ")));
        }
        let also = if also.is_empty() { String::new() } else { format!(" · {}", also.join(" · ")) };
        rows.push((
            format!("Run {n}"),
            format!(
                "{device} · {}{also} · every {interval} · via {} · from {}",
                groups.join("; "),
                if run.via.is_empty() { "auto" } else { &run.via },
                utc(run.started_unix_ms)
            ),
        ));
        // What the sampler said as the run started (features off, a group left out and why).
        if !run.notices.is_empty() {
            rows.push((format!("Run {n} notices"), run.notices.join("\n")));
        }
    }
    // The first few; a workload may have set thousands.
    const LISTED: usize = 20;
    let mut marks: Vec<String> = markers
        .iter()
        .take(LISTED)
        .map(|m| {
            let at = time_label(TimeAxis::of(store).x(m.t_ns));
            match m.span {
                zescope_model::view::Span::Instant => format!("{} at {at}", m.label),
                zescope_model::view::Span::Range { end_ns } => {
                    format!("{} from {at} to {}", m.label, time_label(TimeAxis::of(store).x(end_ns)))
                }
                zescope_model::view::Span::Open => format!("{} from {at} (open)", m.label),
            }
        })
        .collect();
    if markers.len() > LISTED {
        marks.push(format!("and {} more", markers.len() - LISTED));
    }
    rows.push(("Markers".into(), if marks.is_empty() { "none".into() } else { marks.join(", ") }));
    rows
}

/// The panel's contents.
fn show(ui: &mut Ui, rows: &[(String, String)]) {
    egui::Grid::new("recording-info").striped(true).num_columns(2).show(ui, |ui| {
        for (what, value) in rows {
            ui.label(RichText::new(what).strong());
            ui.add(egui::Label::new(value).wrap());
            ui.end_row();
        }
    });
}

#[cfg(test)]
mod tests {
    use zescope_model::session::{RunHistory, RunRecord};

    /// A run's row says what it read and made beside its groups, and what the sampler said.
    #[test]
    fn a_runs_row_names_its_metrics_telemetry_derived_series_and_notices() {
        let run = RunRecord {
            groups: vec!["ComputeBasic".into()],
            metrics: vec!["GpuTime".into(), "GpuPower".into()],
            custom_group: true,
            layouts: vec!["ze-sim ComputeBasic".into(), "sysman".into()],
            telemetry: true,
            derived: vec!["w=ComputeBasic/GpuPower * 2".into()],
            notices: vec!["telemetry: the driver offers no power domains".into()],
            interval_ns: 1_000_000,
            ..RunRecord::default()
        };
        let history = RunHistory { runs: vec![run], ..RunHistory::default() };
        let store = zescope_store::Store::new(1 << 20);
        let rows = super::facts(&history, &store, &[]);
        let row = |what: &str| rows.iter().find(|(w, _)| w == what).map(|(_, v)| v.clone());
        let run = row("Run 1").expect("a row for the run");
        for part in [
            "ComputeBasic: exported memory, layout ze-sim ComputeBasic",
            "only GpuTime, GpuPower, in one group made for the run",
            "telemetry through Sysman",
            "derived w=ComputeBasic/GpuPower * 2",
            "every 1 ms",
        ] {
            assert!(run.contains(part), "{part:?} in {run:?}");
        }
        assert_eq!(row("Run 1 notices").as_deref(), Some("telemetry: the driver offers no power domains"));
        // A run that read its groups alone says so by saying nothing more.
        let plain = RunRecord { groups: vec!["RenderBasic".into()], interval_ns: 1_000_000, ..RunRecord::default() };
        let rows = super::facts(&RunHistory { runs: vec![plain], ..RunHistory::default() }, &store, &[]);
        let run = &rows.iter().find(|(w, _)| w == "Run 1").expect("a row").1;
        assert!(!run.contains("telemetry") && !run.contains("only") && !run.contains("derived"), "{run}");
        assert!(!rows.iter().any(|(w, _)| w.contains("notices")));
    }
}
