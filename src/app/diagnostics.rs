//! Help → Diagnostics: the checks of `zescope doctor` in a window, run on a background thread
//! (they open the Level Zero loader and probe devices, which may take a moment).

use std::thread::JoinHandle;

use egui::{Color32, RichText, Ui};

use crate::doctor::{self, Check, Status};
use crate::ze::Source;

/// The diagnostics window's state.
#[derive(Default)]
pub enum Diagnostics {
    /// Not shown.
    #[default]
    Closed,
    /// The checks run on their thread (`None`: the thread could not be spawned; the window
    /// then shows one failed check).
    Running(Option<JoinHandle<Vec<Check>>>),
    /// The checks' results, shown until closed or run again.
    Done(Vec<Check>),
}

impl Diagnostics {
    /// Shows the window and starts the checks for `source` (nothing if they are running).
    pub fn open(&mut self, source: Source) {
        if matches!(self, Diagnostics::Running(_)) {
            return;
        }
        let job = std::thread::Builder::new()
            .name("zescope-doctor".into())
            .spawn(move || doctor::run(source, crate::sim::built_in))
            .ok();
        *self = Diagnostics::Running(job);
    }

    /// Whether the window is shown.
    pub fn is_open(&self) -> bool {
        !matches!(self, Diagnostics::Closed)
    }

    fn poll(&mut self) {
        if let Diagnostics::Running(job) = self
            && job.as_ref().is_none_or(|j| j.is_finished())
        {
            let checks = job.take().and_then(|j| j.join().ok()).unwrap_or_else(|| {
                vec![Check::fail("diagnostics", "the checks could not run", "run `zescope doctor` in a terminal")]
            });
            *self = Diagnostics::Done(checks);
        }
    }

    /// The window; `notices` are the optional features turned off for the current run.
    pub fn window(&mut self, ctx: &egui::Context, source: Source, notices: &[String]) {
        if !self.is_open() {
            return;
        }
        self.poll();
        let mut open = true;
        let mut rerun = false;
        let max_w = (ctx.content_rect().width() - 40.0).max(200.0);
        egui::Window::new("Diagnostics").open(&mut open).default_width(640.0_f32.min(max_w)).max_width(max_w).show(
            ctx,
            |ui| match self {
                Diagnostics::Running(_) => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label("Checking the Level Zero setup…");
                    });
                    ctx.request_repaint_after(std::time::Duration::from_millis(100));
                }
                Diagnostics::Done(checks) => {
                    if !notices.is_empty() {
                        ui.label(RichText::new("This run: features the driver does not offer").strong());
                        for n in notices {
                            ui.label(format!("• {n}"));
                        }
                        ui.separator();
                    }
                    ui.label(
                        RichText::new("The same checks as `zescope doctor`; each problem comes with its fix.").weak(),
                    );
                    egui::ScrollArea::vertical().max_height(480.0).show(ui, |ui| {
                        for c in checks.iter() {
                            check(ui, c);
                        }
                    });
                    if ui.button("Check again").clicked() {
                        rerun = true;
                    }
                }
                Diagnostics::Closed => {}
            },
        );
        if !open {
            *self = Diagnostics::Closed;
        } else if rerun {
            *self = Diagnostics::Closed;
            self.open(source);
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
