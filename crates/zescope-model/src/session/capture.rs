//! Between a store with its view model and a [`Session`]: capture takes the store's
//! streams and the view's plain state (run history, pane arrangement, time view,
//! markers); restore rebuilds store streams from a session and hands back the
//! UI state that goes with them (series keys to store ids, arrangement, view).

use std::collections::BTreeMap;

use crate::view::{Arrangement, Mode, PaneSpec, SeriesEntry, SeriesKey, TimeView, ViewLength};
use zescope_sampler::SeriesInfo;
use zescope_store::{Store, StreamId};

use super::convert::parse_color;
use super::format::*;
use super::history::RunHistory;
use super::{Session, SessionError, SessionStream};

/// What the UI knows besides the store, borrowed for [`Session::capture`]. A headless caller
/// (`zescope record`, tests) passes a default arrangement and view.
#[derive(Clone, Copy)]
pub struct Capture<'a> {
    /// Source, devices and runs, and what each store stream is.
    pub history: &'a RunHistory,
    /// Panes, hidden series and colours.
    pub arrangement: &'a Arrangement,
    /// ViewLength length, follow/pause/zoom and the range shown when not live.
    pub view: &'a TimeView,
    /// The user's markers.
    pub markers: &'a [Marker],
}

/// What a restored session gives the UI.
#[derive(Clone, Debug)]
pub struct Restored {
    /// The store streams created, in the session's order.
    pub streams: Vec<StreamId>,
    /// Each counter with its store series (one per run), for `AppState::series`.
    pub series: BTreeMap<SeriesKey, SeriesEntry>,
    /// The saved source, devices and runs, with the new store streams' descriptions.
    pub history: RunHistory,
    /// The saved panes, hidden series and colours (no panes if none were saved).
    pub arrangement: Arrangement,
    /// The saved view, its range moved onto the store's time origin.
    pub view: TimeView,
    /// The saved markers, as they were.
    pub markers: Vec<Marker>,
}

impl Restored {
    /// The series keys of the restored streams, in stream order (a key once, where first seen).
    pub fn keys_in_order(&self) -> Vec<SeriesKey> {
        let mut keys: Vec<SeriesKey> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for m in self.streams.iter().filter_map(|id| self.history.streams.get(id)) {
            for s in &m.series {
                let k = SeriesKey { device: m.device.clone(), group: m.group.clone(), metric: s.metric.clone() };
                if seen.insert(k.clone()) {
                    keys.push(k);
                }
            }
        }
        keys
    }
}

/// A colour as sessions write it: `[0, 114, 178]` is "#0072b2" (lowercase).
pub(super) fn color_hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn to_ref(k: &SeriesKey) -> SeriesRef {
    SeriesRef { device: k.device.clone(), group: k.group.clone(), metric: k.metric.clone() }
}

fn to_key(r: &SeriesRef) -> SeriesKey {
    SeriesKey { device: r.device.clone(), group: r.group.clone(), metric: r.metric.clone() }
}

fn window_record(w: ViewLength) -> WindowRecord {
    match w {
        ViewLength::Sec10 => WindowRecord::Sec10,
        ViewLength::Min1 => WindowRecord::Min1,
        ViewLength::Min10 => WindowRecord::Min10,
        ViewLength::All => WindowRecord::All,
    }
}

fn window(w: WindowRecord) -> ViewLength {
    match w {
        WindowRecord::Sec10 => ViewLength::Sec10,
        WindowRecord::Min1 => ViewLength::Min1,
        WindowRecord::Min10 => ViewLength::Min10,
        WindowRecord::All => ViewLength::All,
    }
}

/// The view part of a session, from the UI's arrangement and time view.
pub(super) fn view_record(arrangement: &Arrangement, view: &TimeView) -> ViewRecord {
    let (start_s, end_s) = view.frozen_range();
    ViewRecord {
        panes: arrangement
            .panes
            .iter()
            .map(|p| PaneRecord { id: p.id, series: p.series.iter().map(to_ref).collect() })
            .collect(),
        next_pane_id: arrangement.next_id,
        colors: arrangement.colors.iter().map(|(k, &c)| (to_ref(k), color_hex(c))).collect(),
        hidden: arrangement.hidden.iter().map(to_ref).collect(),
        window: window_record(view.window),
        mode: match view.mode {
            Mode::Live => ModeRecord::Live,
            Mode::Paused => ModeRecord::Paused,
            Mode::Zoomed => ModeRecord::Zoomed,
        },
        range: (view.mode != Mode::Live).then_some(RangeRecord { start_s, end_s }),
    }
}

impl Session {
    /// A session of everything `store` holds, described by `ui`.
    /// Streams the run history does not know (made outside a run) are named
    /// after their store descriptor.
    pub fn capture(store: &Store, ui: Capture<'_>) -> Session {
        Session::capture_with(store, ui, |id| store.stream_data(id))
    }

    /// [`Session::capture`] with each stream's data from `export`.
    pub(crate) fn capture_with(
        store: &Store,
        ui: Capture<'_>,
        mut export: impl FnMut(StreamId) -> Option<zescope_store::StreamData>,
    ) -> Session {
        let h = ui.history;
        let streams = store
            .streams()
            .filter_map(|info| {
                let data = export(info.id)?;
                let meta = h.streams.get(&info.id).cloned().unwrap_or_else(|| StreamMeta {
                    name: info.desc.name.clone(),
                    run: 0,
                    device: String::new(),
                    group: info.desc.name.clone(),
                    layout: String::new(),
                    series: info
                        .desc
                        .series
                        .iter()
                        .map(|s| SeriesMeta {
                            metric: s.name.clone(),
                            unit: s.unit.clone(),
                            kind: match s.kind {
                                zescope_store::SeriesKind::Gauge => KindRecord::Gauge,
                                zescope_store::SeriesKind::Cumulative { wrap } => KindRecord::Cumulative { wrap },
                                zescope_store::SeriesKind::BusyTime { wrap, .. } => KindRecord::Busy { wrap },
                                zescope_store::SeriesKind::State => KindRecord::State,
                            },
                            description: String::new(),
                        })
                        .collect(),
                    read_path: None,
                });
                Some(SessionStream { meta, data })
            })
            .collect();
        Session {
            recorded: h.recorded(),
            source: h.source.clone(),
            devices: h.devices.clone(),
            runs: h.runs.clone(),
            view: view_record(ui.arrangement, ui.view),
            markers: ui.markers.to_vec(),
            origin_ns: store.origin_ns(),
            comparison: None,
            processes: super::processes::records(&h.processes),
            streams,
        }
    }

    /// Rebuild this session's streams as new streams of `store` and return
    /// the UI state that goes with them. Restore into a fresh store (then
    /// times and the view are exactly as saved) and drop it on error: the
    /// streams before a stream the store refuses stay imported.
    pub fn restore_into(&self, store: &mut Store) -> Result<Restored, SessionError> {
        if store.origin_ns().is_none()
            && let Some(o) = self.origin_ns
        {
            store.set_origin(o);
        }
        let mut out = Restored {
            streams: Vec::new(),
            series: BTreeMap::new(),
            history: RunHistory {
                recorded: Some(self.recorded.clone()),
                source: self.source.clone(),
                devices: self.devices.clone(),
                runs: self.runs.clone(),
                streams: BTreeMap::new(),
                processes: super::processes::processes(&self.processes),
            },
            arrangement: self.arrangement(),
            view: TimeView::default(),
            markers: self.markers.clone(),
        };
        for (i, s) in self.streams.iter().enumerate() {
            let id = store
                .restore_stream(&s.data)
                .map_err(|e| SessionError::invalid(format!("streams[{i}]"), e.to_string()))?;
            out.streams.push(id);
            out.history.streams.insert(id, s.meta.clone());
            for (k, m) in s.meta.series.iter().enumerate() {
                let key =
                    SeriesKey { device: s.meta.device.clone(), group: s.meta.group.clone(), metric: m.metric.clone() };
                let (kind, wrap) = m.kind.kind();
                let info = SeriesInfo {
                    name: m.metric.clone(),
                    description: m.description.clone(),
                    unit: m.unit.clone(),
                    kind,
                    wrap,
                };
                let entry =
                    out.series.entry(key).or_insert_with(|| SeriesEntry { info: info.clone(), ids: Vec::new() });
                entry.info = info;
                entry.ids.extend(store.series_id(id, k));
            }
        }
        // The saved range is relative to the saved origin; the store's may differ.
        let shift = match (self.origin_ns, store.origin_ns()) {
            (Some(saved), Some(now)) => (saved as i128 - now as i128) as f64 * 1e-9,
            _ => 0.0,
        };
        let range = self.view.range.map_or((0.0, 1.0), |r| (r.start_s + shift, r.end_s + shift));
        let mode = match self.view.mode {
            ModeRecord::Live => Mode::Live,
            ModeRecord::Paused => Mode::Paused,
            ModeRecord::Zoomed => Mode::Zoomed,
        };
        out.view = TimeView::restored(mode, window(self.view.window), range);
        Ok(out)
    }

    /// The pane arrangement of the session's view.
    pub fn arrangement(&self) -> Arrangement {
        let v = &self.view;
        Arrangement {
            panes: v
                .panes
                .iter()
                .map(|p| PaneSpec { id: p.id, series: p.series.iter().map(to_key).collect() })
                .collect(),
            next_id: v.next_pane_id,
            hidden: v.hidden.iter().map(to_key).collect(),
            colors: v.colors.iter().filter_map(|(k, c)| Some((to_key(k), parse_color(c)?))).collect(),
        }
    }
}
