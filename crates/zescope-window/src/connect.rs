//! File → Connect…: watch a remote run (a `zescope serve` elsewhere) instead of the source shown
//! now, as `zescope --connect HOST:PORT` does at start. A small dialog asks for the server's
//! address and, beyond loopback, the file holding its token; the addresses connected to lately
//! are offered first (newest first, at most [`RECENT_REMOTES`], remembered in the settings file
//! as recent sessions are).
//!
//! Connecting replaces the source: the unsaved-data question first (`unsaved.rs`), then the
//! current sampler (or remote link) is shut down and a new link to the server takes its place
//! through the [`Connector`] the binary gave (`gui::Launch::connect`); what was shown goes, and
//! the remote run comes in as a local one would. A connector that refuses (an unreadable token
//! file) says why in the dialog, which stays open.

use egui::{Key, RichText};

use super::ZescopeApp;
use super::link::SamplerLink;

/// How many addresses File → Connect… remembers.
pub const RECENT_REMOTES: usize = 8;

/// A server to watch (remembered in the settings, which hold its type).
pub use super::settings::Remote;

/// Opens a link to a remote run; the error says why not.
pub type Connector = Box<dyn Fn(&Remote) -> Result<Box<dyn SamplerLink>, String>>;

/// The dialog's state.
#[derive(Clone, Debug, Default)]
pub struct ConnectDialog {
    /// The dialog is shown.
    pub open: bool,
    /// The address typed.
    pub addr: String,
    /// The token file typed (empty: none).
    pub token_file: String,
    /// Why the last Connect was refused.
    pub error: Option<String>,
    focus: bool,
}

impl ConnectDialog {
    /// Opens the dialog, filled with the newest of `recent`.
    pub fn open_with(&mut self, recent: &[Remote]) {
        *self = ConnectDialog { open: true, focus: true, ..ConnectDialog::default() };
        if let Some(r) = recent.first() {
            self.fill(r);
        }
    }

    fn fill(&mut self, r: &Remote) {
        self.addr = r.addr.clone();
        self.token_file = r.token_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        self.error = None;
    }

    /// What was typed, checked: an address with a port, a token file that exists.
    fn checked(&self) -> Result<Remote, String> {
        let addr = self.addr.trim();
        let port = addr.rsplit_once(':').map(|(host, port)| (host, port.parse::<u16>()));
        match port {
            Some((host, Ok(p))) if !host.is_empty() && p > 0 => {}
            _ => return Err(format!("{addr:?} is not HOST:PORT (such as localhost:9464)")),
        }
        let token = self.token_file.trim();
        let token_file = (!token.is_empty()).then(|| crate::path_prompt::expand_home(token));
        if let Some(t) = &token_file
            && !t.is_file()
        {
            return Err(format!("no token file at {}", t.display()));
        }
        Ok(Remote { addr: addr.to_owned(), token_file, layout: None })
    }

    /// Draws the dialog while open; the server to connect to once Connect (or Enter) is pressed
    /// on a valid address.
    pub fn ui(&mut self, ui: &mut egui::Ui, recent: &[Remote]) -> Option<Remote> {
        let mut chosen = None;
        let mut cancel = false;
        ui.label(RichText::new("Watch a run served by `zescope serve` on another machine.").weak());
        if !recent.is_empty() {
            ui.label("Recent:");
            ui.horizontal_wrapped(|ui| {
                for r in recent {
                    if ui.button(&r.addr).on_hover_text("fill in this server").clicked() {
                        self.fill(r);
                    }
                }
            });
        }
        let label = ui.label("Server address (HOST:PORT):");
        let addr = ui.add(egui::TextEdit::singleline(&mut self.addr).desired_width(320.0)).labelled_by(label.id);
        // Asked again until it takes (the menu that opened the dialog may hold it a frame).
        if self.focus {
            addr.request_focus();
            self.focus = !addr.has_focus();
        }
        let label = ui.label("Token file (beyond loopback; optional):");
        let token = ui.add(egui::TextEdit::singleline(&mut self.token_file).desired_width(320.0)).labelled_by(label.id);
        if addr.changed() || token.changed() {
            self.error = None;
        }
        ui.label(
            RichText::new(
                "Across machines, a tunnel needs no token: ssh -L 9464:localhost:9464 HOST, then localhost:9464.",
            )
            .weak(),
        );
        let enter = (addr.lost_focus() || token.lost_focus()) && ui.input(|i| i.key_pressed(Key::Enter));
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        ui.horizontal(|ui| {
            if ui.button("Connect").clicked() || enter {
                match self.checked() {
                    Ok(r) => chosen = Some(r),
                    Err(e) => self.error = Some(e),
                }
            }
            if ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                cancel = true;
            }
        });
        if cancel {
            self.open = false;
        }
        chosen
    }
}

/// Puts `r` first in `recent`, once (with the panes remembered for its address when `r` has
/// none), keeping at most [`RECENT_REMOTES`].
fn remember(recent: &mut Vec<Remote>, r: &Remote) {
    let layout = recent.iter().find(|x| x.addr == r.addr).and_then(|x| x.layout.clone());
    recent.retain(|x| x.addr != r.addr);
    recent.insert(0, Remote { layout: r.layout.clone().or(layout), ..r.clone() });
    recent.truncate(RECENT_REMOTES);
}

impl ZescopeApp {
    /// `r` is the server watched: first among the recent ones, and its remembered panes are what
    /// its first run shown starts in.
    pub(crate) fn watching(&mut self, r: &Remote) {
        remember(&mut self.recent_remotes, r);
        self.panes.remote_layout = self.recent_remotes.first().and_then(|x| x.layout.clone());
    }

    /// File → Connect…'s dialog, while open.
    pub(crate) fn connect_dialog(&mut self, ctx: &egui::Context) {
        if !self.connect.open {
            return;
        }
        let mut open = true;
        let recent = self.recent_remotes.clone();
        let mut chosen = None;
        egui::Window::new("Connect to a server")
            .id(egui::Id::unique("zescope-connect"))
            .collapsible(false)
            .resizable(false)
            .open(&mut open)
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .show(ctx, |ui| chosen = self.connect.ui(ui, &recent));
        if !open {
            self.connect.open = false;
        }
        if let Some(r) = chosen {
            self.guarded(super::unsaved::Pending::Connect(r));
        }
    }

    /// Replaces the source with a link to `r` (after the unsaved-data question).
    pub(crate) fn connect_to(&mut self, r: Remote) {
        let Some(connector) = &self.connector else {
            self.connect.error = Some("this window cannot connect to a server".to_owned());
            return;
        };
        let link = match connector(&r) {
            Ok(l) => l,
            Err(e) => {
                self.connect.error = Some(e);
                self.connect.open = true;
                return;
            }
        };
        // The current source ends as it does on quit (bounded wait for its teardown).
        if let Err(waited) = self.link.shutdown(crate::SHUTDOWN_WAIT) {
            log::warn!("the sampler did not finish its teardown within {waited:?}");
        }
        self.link = link;
        self.connect.open = false;
        // The server left keeps its panes; the user's own come back, and the next server's
        // remembered ones are what its run starts in.
        self.recent_remotes = self.remotes_with_panes();
        self.panes.back_to_own();
        self.watching(&r);
        self.leave_recording();
        self.store = zescope_store::Store::new(self.store.memory_cap());
        self.state.ingest = Default::default();
        self.state.history = Default::default();
        self.state.inventory = None;
        self.state.health = None;
        self.files.current = None;
        self.files.reset_autosave();
        // The server's run starts by itself.
        self.auto_start = false;
        self.view.follow();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_connected_to_again_goes_first_with_its_remembered_panes() {
        let mut panes = zescope_model::view::Arrangement::default();
        panes.add_pane();
        let r = |addr: &str, layout: Option<&zescope_model::view::Arrangement>| Remote {
            addr: addr.into(),
            token_file: None,
            layout: layout.cloned(),
        };
        let mut recent = vec![r("a:1", None), r("b:2", Some(&panes))];
        remember(&mut recent, &r("b:2", None));
        assert_eq!(recent, [r("b:2", Some(&panes)), r("a:1", None)], "first, its panes kept");
        let other = zescope_model::view::Arrangement::default();
        remember(&mut recent, &r("b:2", Some(&other)));
        assert_eq!(recent[0].layout.as_ref(), Some(&other), "panes given win over those remembered");
    }
}
