//! View → New derived series… (or a legend row's "Rate of…", "Ratio to…", "Moving average…"):
//! write `NAME=EXPR` (`docs/derived-series.md`), checked as it is typed (errors name the column,
//! or the series the run lacks with what they could mean), added to the run in progress and every
//! run after; the definitions listed. The series themselves live in `crate::derived`.

use egui::{RichText, Ui};

use super::{Shared, Window};

/// The derived series' window.
#[derive(Default)]
pub struct DerivedWindow {
    /// Shown.
    pub open: bool,
    /// The pass it was last drawn in: drawn after a pause, it has just opened (its field takes
    /// the keyboard then, so the definition can be typed at once).
    last_pass: Option<u64>,
}

impl Window for DerivedWindow {
    fn title(&self) -> &'static str {
        "Derived series"
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
        let (mut add, mut problem) = (false, None);
        ui.horizontal(|ui| {
            let edit = ui.add(
                egui::TextEdit::singleline(&mut state.derived.text).hint_text(hint(&state.ingest)).desired_width(420.0),
            );
            // Focus on opening, and never requested again while held: a request also interrupts
            // an input method's composition in progress (egui's `request_focus`).
            let pass = ui.ctx().cumulative_pass_nr();
            if self.last_pass.is_none_or(|p| pass > p + 1) && !edit.has_focus() {
                edit.request_focus();
            }
            self.last_pass = Some(pass);
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            // Checked as the text stands after this frame's keys: the last keystroke and Enter
            // can come in one frame.
            problem = state.derived.check(run, state.inventory.as_ref());
            let ok = problem.is_none() && !state.derived.text.trim().is_empty();
            add = (ui.add_enabled(ok, egui::Button::new("Add")).clicked() || enter) && ok;
        });
        if let Some(p) = &problem {
            ui.colored_label(ui.visuals().error_fg_color, p);
        } else if let Some(s) = &state.derived.said {
            ui.label(RichText::new(s).weak());
        }
        if add {
            state.derived.requested = true;
        }
        ui.separator();
        for d in state.derived.deriver.derivations() {
            ui.label(RichText::new(format!("Derived/{}", d.definition())).monospace());
        }
        if state.derived.deriver.derivations().is_empty() {
            ui.label(RichText::new("none yet: NAME=EXPR, e.g. energy=integral(\"Telemetry/Package power\")").weak());
        }
    }
}

/// The field's example, on a series of the run where it has one (a moving average, as the
/// legend's "Moving average…" writes it), else on a group's counter.
fn hint(ingest: &zescope_model::view::Ingest) -> String {
    match ingest.order.iter().find(|k| k.group != zescope_model::derive::GROUP) {
        Some(k) => format!("avg_{}=avg({}, 1s)", crate::derived::name_of(k), k.in_expression(ingest.several_devices())),
        None => "bw[GB/s]=rate(MemoryTraffic/BytesRead) / 1e9".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::hint;
    use zescope_model::view::{Ingest, SeriesKey};

    /// The example is written on the run's first series (not a derived one), with its device
    /// once the run has several, quoted where its name needs it; before a run, a generic one.
    #[test]
    fn the_fields_example_names_a_series_of_the_run() {
        let key = |d: &str, g: &str, m: &str| SeriesKey { device: d.into(), group: g.into(), metric: m.into() };
        let mut ingest = Ingest::default();
        assert_eq!(hint(&ingest), "bw[GB/s]=rate(MemoryTraffic/BytesRead) / 1e9");
        ingest.order = vec![key("GPU", "Derived", "twice"), key("GPU", "Telemetry", "Package power")];
        assert_eq!(hint(&ingest), "avg_Packagepower=avg(\"Telemetry/Package power\", 1s)");
        ingest.order.push(key("NPU", "NpuActivity", "NpuBusyTime"));
        assert_eq!(hint(&ingest), "avg_Packagepower=avg(\"GPU/Telemetry/Package power\", 1s)");
    }
}
