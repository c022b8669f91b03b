//! Help → Diagnostics: the checks of `zescope doctor` in a window, run on a background thread
//! (they open the Level Zero loader and probe devices, which may take a moment).
//!
//! The checks leave every device this window's run holds alone (`zescope_sampler::claims`: only
//! the run's sampler thread touches them; they say "in use by this window's run"); what the run
//! reads on them is shown from the run's own state instead.

use std::thread::JoinHandle;

use egui::{Color32, RichText, Ui};

use zescope_doctor::{Check, Status};
use zescope_ze::{BuiltIn, Source};

use super::{Shared, Window};

/// The diagnostics window: its checks and the simulated device the program links in (which the
/// checks open for `sim` and `auto`'s fallback).
pub struct Diagnostics {
    checks: Checks,
    built_in: BuiltIn,
}

/// The checks' state.
#[derive(Default)]
enum Checks {
    /// Not shown.
    #[default]
    Closed,
    /// The checks run on their thread (`None`: the thread could not be spawned; the window
    /// then shows one failed check).
    Running(Option<JoinHandle<Vec<Check>>>),
    /// The checks' results, shown until closed or run again.
    Done(Vec<Check>),
}

/// A program without a built-in simulated device (a test's window): `sim` says so.
fn no_built_in() -> Result<zescope_ze::InProcess, String> {
    Err("this program has no built-in simulated device".to_owned())
}

impl Default for Diagnostics {
    fn default() -> Self {
        Diagnostics { checks: Checks::Closed, built_in: no_built_in }
    }
}

impl Diagnostics {
    /// Closed, checking with the program's built-in simulated device.
    pub fn with_built_in(built_in: BuiltIn) -> Diagnostics {
        Diagnostics { checks: Checks::Closed, built_in }
    }

    /// Shows the window and starts the checks for `source` (nothing if they are running).
    pub fn open(&mut self, source: Source) {
        if matches!(self.checks, Checks::Running(_)) {
            return;
        }
        let built_in = self.built_in;
        let job = std::thread::Builder::new()
            .name("zescope-doctor".into())
            .spawn(move || zescope_doctor::run(source, built_in))
            .ok();
        self.checks = Checks::Running(job);
    }

    /// Whether the window is shown.
    pub fn is_open(&self) -> bool {
        !matches!(self.checks, Checks::Closed)
    }

    /// The checks' results once they are done (`None` while they run or the window is closed).
    pub fn results(&self) -> Option<&[Check]> {
        match &self.checks {
            Checks::Done(c) => Some(c),
            _ => None,
        }
    }

    fn poll(&mut self) {
        if let Checks::Running(job) = &mut self.checks
            && job.as_ref().is_none_or(|j| j.is_finished())
        {
            let checks = job.take().and_then(|j| j.join().ok()).unwrap_or_else(|| {
                vec![Check::fail("diagnostics", "the checks could not run", "run `zescope doctor` in a terminal")]
            });
            self.checks = Checks::Done(checks);
        }
    }
}

impl Window for Diagnostics {
    fn title(&self) -> &'static str {
        "Diagnostics"
    }

    fn is_open(&self, _: &Shared<'_>) -> bool {
        Diagnostics::is_open(self)
    }

    fn close(&mut self, _: &mut Shared<'_>) {
        self.checks = Checks::Closed;
    }

    fn frame(&self, ctx: &egui::Context) -> egui::Window<'static> {
        let max_w = (ctx.content_rect().width() - 40.0).max(200.0);
        egui::Window::new(self.title()).default_width(640.0_f32.min(max_w)).max_width(max_w)
    }

    /// The checks; the run's notices (optional features turned off for it) first.
    fn ui(&mut self, ui: &mut Ui, shared: &mut Shared<'_>) {
        self.poll();
        let mut rerun = false;
        match &self.checks {
            Checks::Running(_) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Checking the Level Zero setup…");
                });
                ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
            }
            Checks::Done(checks) => {
                let source = shared.state.inventory.as_ref().and_then(|i| i.source.as_ref());
                let remote = source.and_then(crate::status::remote_address).map(str::to_owned);
                if let Some(run) = &shared.state.ingest.run {
                    let title = match &remote {
                        Some(addr) => format!("The run this window watches, on the server {addr}"),
                        None => "This window's run (its devices are not probed while it runs)".to_owned(),
                    };
                    ui.label(RichText::new(title).strong());
                    for s in &run.info.streams {
                        ui.label(format!("• {}: {} — {}", s.device, s.group, s.layout));
                    }
                    ui.separator();
                }
                let notices = shared.state.notices();
                if !notices.is_empty() {
                    ui.label(RichText::new("What the run has said").strong());
                    for n in notices {
                        ui.label(format!("• {n}"));
                    }
                    ui.separator();
                }
                let checks_of = match &remote {
                    Some(_) => {
                        "The same checks as `zescope doctor`, of this machine (the window's), not of the server: \
                         `zescope doctor` there checks its devices. Each problem comes with its fix."
                    }
                    None => "The same checks as `zescope doctor`; each problem comes with its fix.",
                };
                ui.label(RichText::new(checks_of).weak());
                egui::ScrollArea::vertical().max_height(480.0).show(ui, |ui| {
                    for c in checks.iter() {
                        check(ui, c);
                    }
                });
                if ui.button("Check again").clicked() {
                    rerun = true;
                }
            }
            Checks::Closed => {}
        }
        if rerun {
            self.checks = Checks::Closed;
            self.open(shared.source);
        }
    }
}

fn check(ui: &mut Ui, c: &Check) {
    let color = match c.status {
        Status::Ok => Color32::from_rgb(60, 170, 60),
        Status::Warn => Color32::from_rgb(220, 160, 40),
        Status::Fail => Color32::from_rgb(220, 60, 60),
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("{:4}", c.status.label())).monospace().strong().color(color));
        ui.label(RichText::new(&c.name).strong());
        ui.label(&c.detail);
    });
    if let Some(fix) = &c.fix {
        // The fix wraps at the window's width (a long command is never cut off); copy first,
        // so it stays on the first line.
        ui.horizontal_top(|ui| {
            ui.add_space(40.0);
            ui.label(RichText::new("fix:").weak());
            if ui.small_button("copy").clicked() {
                ui.ctx().copy_text(fix.clone());
            }
            ui.add(egui::Label::new(RichText::new(fix).monospace()).selectable(true).wrap());
        });
    }
    ui.add_space(2.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks_of(mut d: Diagnostics, source: Source) -> Vec<Check> {
        d.open(source);
        let Checks::Running(job) = &mut d.checks else { panic!("open starts the checks") };
        job.take().expect("the checks' thread starts").join().expect("the checks do not panic")
    }

    fn simulated(checks: &[Check]) -> &Check {
        checks.iter().find(|c| c.name == "simulated device").expect("a sim source checks the simulated device")
    }

    fn sim() -> Result<zescope_ze::InProcess, String> {
        ze_sim::in_process().map_err(|e| e.to_string())
    }

    #[test]
    fn the_window_checks_the_simulated_device_the_program_hands_in() {
        let checks = checks_of(Diagnostics::with_built_in(sim), Source::Sim);
        let c = simulated(&checks);
        assert_eq!(c.status, Status::Ok, "{c:?}");
        assert!(c.detail.contains("ze-sim GPU"), "{c:?}");
    }

    #[test]
    fn without_a_built_in_device_the_window_says_so() {
        let checks = checks_of(Diagnostics::default(), Source::Sim);
        let c = simulated(&checks);
        assert_eq!(c.status, Status::Fail, "{c:?}");
        assert!(c.detail.contains("no built-in simulated device"), "{c:?}");
    }
}
