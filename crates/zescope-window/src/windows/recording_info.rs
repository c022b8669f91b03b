//! The metadata panel of an opened recording (View → Recording info, or the Info button beside
//! the FILE badge): where and when it was recorded, the source, each run's device, groups
//! and interval, how long it lasts, and its markers.

use egui::{RichText, Ui};

use zescope_model::session::RunHistory;
use zescope_model::view::format::{duration, time_label, utc};
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
        rows.push((
            format!("Run {n}"),
            format!(
                "{device} · {} · every {interval} · via {} · from {}",
                groups.join("; "),
                if run.via.is_empty() { "auto" } else { &run.via },
                utc(run.started_unix_ms)
            ),
        ));
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
