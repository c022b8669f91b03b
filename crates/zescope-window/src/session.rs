//! Sessions and writes from the window's own state: what it shows captured into a session
//! (save, autosave), a session opened into it, and an export described from its panes. The
//! menus and dialogs that call these are in `actions.rs` and `files.rs`.

use zescope_model::session::{Capture, Marker, Session, SessionError};
use zescope_model::view::Ingest;
use zescope_model::view::timeview::shown_range;
use zescope_model::write::WriteSpec;
use zescope_store::Store;

use super::ZescopeApp;

/// What the app knows besides its store, for [`Session::capture`] and autosave.
pub(crate) fn app_capture<'a>(app: &'a ZescopeApp, markers: &'a [Marker]) -> Capture<'a> {
    Capture { history: &app.state.history, arrangement: &app.panes.arrangement, view: &app.view, markers }
}

/// The app's session: everything recorded, the view as shown.
pub fn capture_app(app: &ZescopeApp, markers: &[Marker]) -> Session {
    let mut s = Session::capture(&app.store, app_capture(app, markers));
    s.comparison = app.comparison.as_ref().map(|c| c.reference());
    s
}

/// Show `session` in the app instead of what it holds: a new store (with the
/// same memory cap) with the session's streams, its series, runs, panes and
/// view. Refused while a run is going (stop it first). Returns the markers.
/// On error the app is left as it was.
pub fn open_in_app(app: &mut ZescopeApp, session: &Session) -> Result<Vec<Marker>, SessionError> {
    if app.state.ingest.run.is_some() {
        return Err(SessionError::invalid("run", "stop the running recording before opening a session"));
    }
    let mut store = Store::new(app.store.memory_cap());
    let restored = session.restore_into(&mut store)?;
    let order = restored.keys_in_order();
    let samples_total = store.streams().map(|s| s.appended).sum();
    app.store = store;
    app.state.ingest = Ingest { series: restored.series, order, run: None, samples_total };
    app.state.history = restored.history;
    app.state.health = None;
    // Those computed over what was shown are over: the store they filled is gone.
    app.state.derived.stop_computing();
    // A server's panes shown until now are remembered with it first (as leaving it does).
    app.recent_remotes = app.remotes_with_panes();
    app.panes.show_file(restored.arrangement);
    app.view = restored.view;
    Ok(restored.markers)
}

/// What to export from the app: pane number `pane` (0-based, in the order
/// shown) or all panes; the range shown on screen or all data.
pub fn write_spec(app: &ZescopeApp, pane: Option<usize>, shown_range_only: bool) -> WriteSpec {
    let range = if shown_range_only { shown_range(&app.view, &app.store) } else { None };
    let which = pane.map(|p| vec![p]);
    let mut spec =
        WriteSpec::from_arrangement(&app.panes.arrangement, &app.state.ingest.series, which.as_deref(), range);
    spec.markers = app.markers.marks().to_vec();
    spec
}
