//! Errors as dismissible banners: what happened, what to try. Never a crash; a new run can be
//! started right away. A banner shows either the sampler's own error ([`SamplerError`]) or one of
//! the window's ([`UiError`]: a file that could not be opened, saved or exported, samples the
//! store refused).

use egui::{Color32, RichText, Ui};

use zescope_sampler::{ErrorKind, SamplerError};

/// What the window itself failed to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiErrorKind {
    /// A session file could not be read or shown.
    Open,
    /// A session could not be written (or a save was already running).
    Save,
    /// An image or CSV export could not be written.
    Write,
    /// A checkpoint could not be written, or this session gets none at all.
    Autosave,
    /// A crashed session's checkpoint could not be loaded.
    Recover,
    /// Samples the store refused.
    Store,
    /// Remembered settings that did not match the devices found (shown until a run starts).
    Settings,
    /// A view laid out in part: series or derived series it names that the run lacks (shown
    /// until a run starts).
    View,
    /// Derived series a run could not compute (shown until a run starts).
    Derived,
    /// A selection no run can sample stopped the sampling (shown until a run starts).
    Stopped,
}

/// An error of the window's own (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct UiError {
    /// What failed; decides the banner's title.
    pub kind: UiErrorKind,
    /// What happened, naming the file or value at fault.
    pub message: String,
    /// What to try.
    pub hint: Option<String>,
    /// Metric groups the banner offers to sample (a button): a view names their series.
    pub sample: Vec<String>,
}

impl UiError {
    /// An error with a hint (what to try) — the window's errors always have one.
    pub(crate) fn new(kind: UiErrorKind, message: String, hint: &str) -> UiError {
        UiError { kind, message, hint: Some(hint.to_owned()), sample: Vec::new() }
    }

    /// The same, offering to sample `groups` (a "Sample …" button).
    pub(crate) fn offering(mut self, groups: Vec<String>) -> UiError {
        self.sample = groups;
        self
    }
}

impl std::fmt::Display for UiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What a banner reports.
#[derive(Clone, Debug, PartialEq)]
pub enum BannerError {
    /// Reported by the sampler thread.
    Sampler(SamplerError),
    /// The window's own.
    Ui(UiError),
}

impl From<SamplerError> for BannerError {
    fn from(e: SamplerError) -> BannerError {
        BannerError::Sampler(e)
    }
}

impl From<UiError> for BannerError {
    fn from(e: UiError) -> BannerError {
        BannerError::Ui(e)
    }
}

impl BannerError {
    fn title(&self) -> &'static str {
        match self {
            BannerError::Sampler(e) => match e.kind {
                ErrorKind::DeviceLost => "Device lost",
                ErrorKind::Permission => "Permission problem",
                ErrorKind::Source => "Cannot open the source",
                ErrorKind::Layout => "Cannot decode the exported memory",
                ErrorKind::Export => "Exported memory unusable",
                ErrorKind::Config => "Cannot start",
                ErrorKind::Teardown => "Release problem",
                ErrorKind::Driver => "Driver error",
                ErrorKind::Internal => "Internal error",
                ErrorKind::Link => "Cannot watch the server",
            },
            BannerError::Ui(e) => match e.kind {
                UiErrorKind::Open => "Cannot open",
                UiErrorKind::Save => "Save failed",
                UiErrorKind::Write => "Export failed",
                UiErrorKind::Autosave => "Autosave failed",
                UiErrorKind::Recover => "Recovery failed",
                UiErrorKind::Store => "Samples not stored",
                UiErrorKind::Settings => "Remembered settings adjusted",
                UiErrorKind::View => "View shown in part",
                UiErrorKind::Derived => "Derived series not computed",
                UiErrorKind::Stopped => "Sampling stopped",
            },
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            BannerError::Sampler(e) => &e.message,
            BannerError::Ui(e) => &e.message,
        }
    }

    pub(crate) fn hint(&self) -> Option<&str> {
        match self {
            BannerError::Sampler(e) => e.hint.as_deref(),
            BannerError::Ui(e) => e.hint.as_deref(),
        }
    }

    /// Stale once a run started: settings notices and errors that kept a run from starting.
    pub(crate) fn cleared_by_start(&self) -> bool {
        match self {
            BannerError::Sampler(e) => matches!(e.kind, ErrorKind::Config | ErrorKind::Link),
            BannerError::Ui(e) => matches!(
                e.kind,
                UiErrorKind::Settings | UiErrorKind::View | UiErrorKind::Derived | UiErrorKind::Stopped
            ),
        }
    }

    /// A permission problem: the banner offers the diagnostics window.
    fn is_permission(&self) -> bool {
        matches!(self, BannerError::Sampler(e) if e.kind == ErrorKind::Permission)
    }

    /// The groups the banner offers to sample.
    fn sample(&self) -> &[String] {
        match self {
            BannerError::Ui(e) => &e.sample,
            BannerError::Sampler(_) => &[],
        }
    }
}

/// What the user asked of the banners this frame.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Asked {
    /// The diagnostics window.
    pub diagnostics: bool,
    /// To sample these groups (the banner that offered it is gone).
    pub sample: Vec<String>,
}

/// An error shown as a banner until dismissed.
#[derive(Clone, Debug)]
pub struct Banner {
    /// Unique among this window's banners (what the dismiss button names).
    pub(crate) id: u64,
    /// What is reported.
    pub error: BannerError,
    /// How often the same error was reported while shown (≥ 1).
    pub count: u32,
}

/// Draws the banners; what the user asked of them.
pub(crate) fn show(ui: &mut Ui, banners: &mut Vec<Banner>) -> Asked {
    let mut dismissed = Vec::new();
    let mut asked = Asked::default();
    for b in banners.iter() {
        let fill =
            if ui.visuals().dark_mode { Color32::from_rgb(90, 30, 30) } else { Color32::from_rgb(255, 225, 220) };
        egui::Frame::new().fill(fill).inner_margin(6.0).corner_radius(4.0).show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(b.error.title()).strong());
                ui.label(b.error.message());
                if b.count > 1 {
                    ui.label(RichText::new(format!("(×{})", b.count)).weak());
                }
                if let Some(h) = b.error.hint() {
                    ui.label(RichText::new(format!("Try: {h}")).italics());
                }
                if b.error.is_permission() && ui.button("Diagnostics…").clicked() {
                    asked.diagnostics = true;
                }
                let sample = b.error.sample();
                if !sample.is_empty() {
                    let r = ui.button(format!("Sample {}", sample.join(", ")));
                    if r.on_hover_text("Tick these groups on the left (a run going on restarts with them)").clicked() {
                        asked.sample = sample.to_vec();
                        dismissed.push(b.id);
                    }
                }
                if ui.small_button("x").on_hover_text("dismiss").clicked() {
                    dismissed.push(b.id);
                }
            });
        });
    }
    banners.retain(|b| !dismissed.contains(&b.id));
    asked
}
