//! View → Triggers (or a legend's "Trigger on this series…"): write a trigger, set the time kept
//! around its firings, pause on them or keep them as sessions; the triggers with their counts and
//! the firings, each with a Show button that centres the view on it. The triggers themselves and
//! their evaluation live in `crate::triggers` (`AppState::triggers`), evaluated on ingest.

use std::path::PathBuf;
use std::time::Duration;

use egui::{RichText, Ui};

use zescope_model::triggers::left_out::named;
use zescope_model::view::TimeView;
use zescope_model::view::text::plural;
use zescope_sampler::{Inventory, RunInfo};
use zescope_store::Store;

use super::{Shared, Window};
use crate::triggers::Triggers;

/// The Triggers window.
#[derive(Default)]
pub struct TriggersWindow {
    /// Shown.
    pub open: bool,
    /// The trigger whose × was pressed while it had firings: removed only once the user says so
    /// (its firings go with it, and cannot be had back).
    pub confirm_remove: Option<usize>,
}

impl Window for TriggersWindow {
    fn title(&self) -> &'static str {
        "Triggers"
    }

    fn is_open(&self, _: &Shared<'_>) -> bool {
        self.open
    }

    fn close(&mut self, _: &mut Shared<'_>) {
        self.open = false;
    }

    fn frame(&self, _: &egui::Context) -> egui::Window<'static> {
        egui::Window::new(self.title()).default_width(560.0)
    }

    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>) {
        let state = &mut *shared.state;
        let run = state.ingest.run.as_ref().map(|r| &r.info);
        let inv = state.inventory.as_ref();
        contents(&mut state.triggers, &mut self.confirm_remove, ui, shared.view, shared.store, (run, inv));
    }
}

fn contents(
    tr: &mut Triggers,
    confirm: &mut Option<usize>,
    ui: &mut Ui,
    view: &mut TimeView,
    store: &Store,
    (run, inv): (Option<&RunInfo>, Option<&Inventory>),
) {
    ui.horizontal(|ui| {
        let edit = ui.add(
            egui::TextEdit::singleline(&mut tr.text)
                .hint_text("ComputeBasic/GpuUtilization > 80, G/M rise 20 in 500ms, marker NAME, throttle power")
                .desired_width(380.0),
        );
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("Add").clicked() || enter {
            let text = tr.text.clone();
            // A series the device has and the run leaves out: what to tick, not a typo's near names.
            if !tr.add(&text, run)
                && let (Some(info), Ok(t)) = (run, zescope_model::triggers::Trigger::parse(&text))
                && let Some(advice) = crate::left_out::advice(inv, info, &named(&[], &[t]))
            {
                tr.error = Some(advice);
            }
        }
        if enter {
            // Ready for the next expression (or the correction of this one).
            edit.request_focus();
        }
    });
    if let Some(e) = &tr.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    ui.horizontal(|ui| {
        let mut pre = tr.pre.as_secs_f64();
        let mut post = tr.post.as_secs_f64();
        ui.label("keep");
        ui.add(egui::DragValue::new(&mut pre).range(0.0..=3600.0).suffix(" s"));
        ui.label("before and");
        ui.add(egui::DragValue::new(&mut post).range(0.0..=3600.0).suffix(" s"));
        ui.label("after each firing");
        tr.pre = Duration::from_secs_f64(pre);
        tr.post = Duration::from_secs_f64(post);
    });
    ui.checkbox(&mut tr.pause_on_trigger, "Pause on trigger")
        .on_hover_text("centre the view on each firing as it comes; sampling goes on");
    ui.checkbox(&mut tr.on_panes, "Show firings on the panes")
        .on_hover_text("the time kept around each firing, as a strip along the bottom of every pane");
    ui.horizontal(|ui| {
        let mut keep = tr.keep.is_some();
        if ui.checkbox(&mut keep, "Keep each firing as a session in").changed() {
            tr.keep = keep.then(crate::triggers::default_keep_dir);
        }
        if let Some(dir) = &mut tr.keep {
            let mut text = dir.display().to_string();
            if ui.text_edit_singleline(&mut text).changed() {
                *dir = PathBuf::from(text);
            }
        }
    });
    if !tr.kept.is_empty() {
        ui.label(
            RichText::new(format!("{} kept, the newest {}", tr.kept.len(), tr.kept[tr.kept.len() - 1].display()))
                .weak(),
        );
    }
    ui.separator();
    let mut remove = None;
    let count = tr.eval.triggers().len();
    if confirm.is_some_and(|i| i >= count) {
        *confirm = None;
    }
    for (i, (t, &n)) in tr.eval.triggers().iter().zip(tr.eval.counts()).enumerate() {
        ui.horizontal(|ui| {
            if ui.small_button("×").on_hover_text("remove this trigger").clicked() {
                // A trigger that fired takes its firings with it: ask first.
                if n > 0 {
                    *confirm = Some(i);
                } else {
                    remove = Some(i);
                }
            }
            ui.monospace(&t.text);
            ui.label(RichText::new(plural(n, "firing", "firings")).weak());
        });
        if *confirm == Some(i) {
            ui.horizontal(|ui| {
                let what = if n == 1 { "its firing".to_string() } else { format!("its {n} firings") };
                ui.colored_label(ui.visuals().warn_fg_color, format!("Remove this trigger and {what}?"));
                if ui.button("Remove").clicked() {
                    remove = Some(i);
                    *confirm = None;
                }
                if ui.button("Keep").clicked() {
                    *confirm = None;
                }
            });
        }
        if let Some(why) = tr.unbound(i) {
            ui.colored_label(ui.visuals().warn_fg_color, why);
        }
    }
    if let Some(i) = remove {
        tr.remove(i, run);
        // The question stays with its trigger, which moved up one.
        *confirm = confirm.and_then(|c| if c > i { Some(c - 1) } else { (c < i).then_some(c) });
    }
    ui.separator();
    let origin = store.origin_ns();
    let mut show = None;
    egui::ScrollArea::vertical().max_height(240.0).show(ui, |ui| {
        egui::Grid::new("firings").striped(true).show(ui, |ui| {
            for h in ["", "time", "trigger", "series", "value"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            // Oldest first: a new firing is added below, and the rows under the pointer stay
            // where they are (newest first, each firing pushed them all down a row).
            for f in tr.firings.iter().skip(tr.firings.len().saturating_sub(500)) {
                if ui.small_button("Show").clicked() {
                    show = Some(f.clone());
                }
                // On the plots' time axis, as its labels write it (m:ss past a minute).
                let t = origin.map_or(0.0, |o| (f.t_ns - o) as f64 * 1e-9);
                ui.monospace(zescope_model::view::text::time_label(t));
                ui.label(tr.eval.triggers().get(f.trigger).map_or("", |t| t.text.as_str()));
                ui.label(&*f.series);
                ui.monospace(if f.value.is_nan() { String::new() } else { crate::triggers::round(f.value) });
                ui.end_row();
            }
        });
    });
    if let Some(f) = show {
        Triggers::show_firing(view, store, f.t_ns, tr.around(f.trigger));
    }
}
