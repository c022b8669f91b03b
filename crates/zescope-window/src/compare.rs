//! Two runs side by side: File → Compare with… opens a second session as a comparison. Its
//! series are overlaid in a lighter shade on the panes that plot the same series key, its start
//! aligned with the shown data's start (or a marker both sessions hold with the same label) plus
//! a manual offset (the comparison bar's drag value);
//! the phase table gets its numbers in extra columns. Saved with the session as a reference
//! (path and offset), reopened with it.
//!
//! Alignment is a choice of time origin: the comparison keeps its own store, whose origin is
//! set so that its plot x (seconds since the origin) of each sample is where that sample belongs
//! on the shown axis. The envelope path then draws it unchanged.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use egui::{Color32, Ui};

use zescope_model::session::{self, ComparisonRef, Marker};
use zescope_model::view::phases::PhaseRange;
use zescope_model::view::{SeriesEntry, SeriesKey};
use zescope_store::Store;

use super::dialogs::file_name;
use super::envelope_plot::{EnvelopePlot, PlotSeries};
use zescope_model::view::TimeAxis;

/// A second session shown beside the data (see the module docs).
pub struct Comparison {
    /// The session file it came from.
    pub path: PathBuf,
    /// Its samples.
    pub store: Store,
    /// Its series, by key.
    pub series: BTreeMap<SeriesKey, SeriesEntry>,
    /// Seconds it is shifted by after it is aligned (positive: later).
    pub offset_s: f64,
    /// Line up this marker (by label) of both sessions instead of their starts, when both
    /// hold it.
    pub align_marker: Option<String>,
    /// Its markers.
    pub markers: Vec<Marker>,
    /// Its first sample, ns on its own clock.
    start_ns: i64,
    /// Per pane id, the envelopes drawn for it.
    plots: HashMap<u64, EnvelopePlot>,
}

impl Comparison {
    /// Loads the session at `path` as a comparison, into a store of at most `cap` bytes (as the
    /// data's: older history coarsens first); the error names the file and the problem.
    pub fn load(path: &Path, offset_s: f64, align_marker: Option<String>, cap: usize) -> Result<Comparison, String> {
        // Streamed into its own store, as an open is: a session past the cap comes in coarsened.
        let mut store = Store::new(cap);
        let restored = session::open_into(path, &mut store)
            .map_err(|e| format!("cannot compare with {}", e.of_file(path)))?
            .restored;
        let (start_ns, _) = store
            .total_time_range()
            .ok_or_else(|| format!("cannot compare with {}: it holds no samples", path.display()))?;
        Ok(Comparison {
            path: path.to_path_buf(),
            store,
            series: restored.series,
            offset_s: if offset_s.is_finite() { offset_s } else { 0.0 },
            align_marker,
            markers: restored.markers,
            start_ns,
            plots: HashMap::new(),
        })
    }

    /// What the session saves.
    pub fn reference(&self) -> ComparisonRef {
        ComparisonRef {
            path: self.path.display().to_string(),
            offset_s: self.offset_s,
            align_marker: self.align_marker.clone(),
        }
    }

    /// Lines its origin up with `main`: its marker `align_marker` at `main`'s marker of that
    /// label when both hold one, else its first sample at `main`'s first sample; then shifted by
    /// the offset.
    pub fn align(&mut self, main: &Store, main_markers: &[zescope_model::view::Mark]) {
        let label = self.align_marker.as_deref();
        let mine = self.markers.iter().find(|m| Some(m.label.as_str()) == label).map(|m| m.t_ns);
        let theirs = main_markers.iter().find(|m| Some(m.label.as_str()) == label).map(|m| m.t_ns);
        let (anchor, at_x) = match (mine, theirs) {
            (Some(c), Some(m)) => (c, TimeAxis::of(main).x(m)),
            _ => (self.start_ns, main.total_time_range().map_or(0.0, |(a, _)| TimeAxis::of(main).x(a))),
        };
        let origin = anchor.saturating_sub(((at_x + self.offset_s) * 1e9).round() as i64);
        if self.store.origin_ns() != Some(origin) {
            self.store.set_origin(origin);
        }
    }

    /// Labels of the markers both `main_markers` and the comparison hold, to align on.
    pub fn shared_markers(&self, main_markers: &[zescope_model::view::Mark]) -> Vec<String> {
        let mut out: Vec<String> = main_markers
            .iter()
            .filter(|m| self.markers.iter().any(|c| c.label == m.label))
            .map(|m| m.label.clone())
            .collect();
        out.dedup();
        out
    }

    /// A phase of the shown axis as the same span of the comparison's own clock.
    pub fn range_of(&self, main: &Store, r: &PhaseRange) -> PhaseRange {
        let own = |t: i64| TimeAxis::of(&self.store).ns(TimeAxis::of(main).x(t));
        PhaseRange { name: r.name.clone(), start_ns: own(r.start_ns), end_ns: own(r.end_ns) }
    }

    /// Makes an envelope cache for each of `panes` (and drops those of panes gone).
    pub(crate) fn prepare(&mut self, panes: impl Iterator<Item = u64>) {
        let ids: Vec<u64> = panes.collect();
        self.plots.retain(|id, _| ids.contains(id));
        for id in ids {
            self.plots.entry(id).or_default();
        }
    }

    /// What pane `pane` overlays: its envelope cache, the comparison's store, and one item per
    /// visible series of `rows` (key, colour, visible) the comparison holds, in a lighter shade.
    pub(crate) fn overlay(
        &mut self,
        pane: u64,
        rows: &[super::pane_row::PaneRow<'_>],
        bg: Color32,
    ) -> Option<(&mut EnvelopePlot, &Store, Vec<PlotSeries>)> {
        let plot = self.plots.get_mut(&pane)?;
        let items: Vec<PlotSeries> = rows
            .iter()
            .filter(|r| r.shown.visible)
            .filter_map(|r| self.series.get(&r.shown.key).map(|e| (r, e)))
            .flat_map(|(r, e)| {
                e.ids.iter().enumerate().map(move |(run, &id)| PlotSeries {
                    series: id,
                    name: format!("{} (compared)#{run}", r.shown.key.label()),
                    color: lighter(r.color, bg),
                    steps: r.shown.state,
                    identifier: r.shown.state && zescope_model::view::series::is_identifier_unit(&r.shown.unit),
                })
            })
            .collect();
        (!items.is_empty()).then_some((plot, &self.store, items))
    }

    /// `(t0, t1, columns)` of the comparison's envelopes pane `pane` drew last (on its own
    /// clock), if it drew any.
    pub fn last_query(&self, pane: u64) -> Option<(i64, i64, usize)> {
        self.plots.get(&pane)?.last_query()
    }

    /// How many of the comparison's series the shown data holds too (those it can overlay).
    pub fn in_common(&self, main: &BTreeMap<SeriesKey, SeriesEntry>) -> usize {
        self.series.keys().filter(|k| main.contains_key(*k)).count()
    }

    /// The comparison bar: which file, its offset (a drag value), how many series it shares with
    /// the shown data (none: said as a warning, with what it holds), and a button to close it.
    /// Returns false when the user closed the comparison.
    pub(crate) fn bar(
        &mut self,
        ui: &mut Ui,
        main_markers: &[zescope_model::view::Mark],
        main_series: &BTreeMap<SeriesKey, SeriesEntry>,
    ) -> bool {
        let mut keep = true;
        let shared = self.shared_markers(main_markers);
        let common = self.in_common(main_series);
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Compare with").weak());
            ui.label(file_name(&self.path)).on_hover_text(self.path.display().to_string());
            let aligned = ui.label("aligned on");
            let shown = self
                .align_marker
                .as_ref()
                .filter(|l| shared.contains(l))
                .map_or("its start".to_owned(), |l| format!("marker {l}"));
            let combo = egui::ComboBox::from_id_salt("compare-align").selected_text(shown).show_ui(ui, |ui| {
                ui.selectable_value(&mut self.align_marker, None, "its start");
                for l in &shared {
                    ui.selectable_value(&mut self.align_marker, Some(l.clone()), format!("marker {l}"));
                }
            });
            combo.response.labelled_by(aligned.id);
            ui.label("offset");
            ui.add(egui::DragValue::new(&mut self.offset_s).speed(0.01).suffix(" s"))
                .on_hover_text("shift the comparison run in time (its start is aligned with this one's)");
            if ui.small_button("x").on_hover_text("stop comparing").clicked() {
                keep = false;
            }
            if common == 0 {
                // Series match by device, group and metric: another device's run overlays nothing.
                let mut held: Vec<String> = self.series.keys().map(|k| format!("{} · {}", k.device, k.group)).collect();
                held.dedup();
                // Cut short where the window is narrow rather than widening the panes past it.
                let warn = egui::RichText::new("no series in common").color(ui.visuals().warn_fg_color);
                ui.add(egui::Label::new(warn).truncate())
                    .on_hover_text(format!("nothing to overlay: it holds {}", held.join(", ")));
            } else {
                ui.add(egui::Label::new(egui::RichText::new(format!("{common} series in common")).weak()).truncate());
            }
        });
        keep
    }
}

/// A series colour lightened for the comparison overlay: halfway to the background.
pub(crate) fn lighter(c: Color32, bg: Color32) -> Color32 {
    let mix = |a: u8, b: u8| ((a as u16 + b as u16) / 2) as u8;
    Color32::from_rgb(mix(c.r(), bg.r()), mix(c.g(), bg.g()), mix(c.b(), bg.b()))
}
