//! The source tree as rows of one height, so the panel lays out only the rows in view
//! (`ScrollArea::show_rows`) however big the catalogue: a device, its groups (each with a whole-
//! group tick and an expander), a group's "read by" line and metrics when it is open, the
//! telemetry node. Drawing reads the state and returns [`Change`]s, applied after the frame's rows
//! by [`apply`], so a row never needs the state mutably while the tree is borrowed.

use std::collections::{BTreeSet, HashSet};

use egui::{Align, Layout, RichText, Sense, Ui, UiBuilder, vec2};

use super::index::{GroupHit, SearchIndex, words_match};
use zescope_model::view::SeriesKey;
use zescope_sampler::{DeviceEntry, DevicePath, GroupEntry, GroupExportKind, Inventory, StreamInfo};

use super::super::state::{AppState, Selection};

/// One row of the tree (indices into the inventory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Row {
    /// A device's tick box.
    Device(usize),
    /// Why a picked device's groups could not be listed.
    DeviceError(usize),
    /// A group: expander, whole-group tick, how it is read.
    Group(usize, usize),
    /// An open group's "read by" line.
    GroupInfo(usize, usize),
    /// A metric of an open group (index into the group's metrics).
    Metric(usize, usize, u32),
    /// A picked device's telemetry node.
    Telemetry(usize),
    /// The open telemetry node's line when it has no series to show.
    TelemetryInfo(usize),
    /// A series of the running telemetry stream.
    TelemetrySeries(usize, usize),
}

/// What a row asks for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Change {
    /// Pick (true) or drop a device.
    Device(DevicePath, bool),
    /// Tick a whole group (all its metrics) or untick it.
    Group(DevicePath, usize, bool),
    /// Tick or untick one metric (of group `.1`).
    Metric(DevicePath, usize, u32, bool),
    /// Open or close a group's (or the telemetry node's) rows.
    Open(DevicePath, String, bool),
    /// Read the telemetry too, or not.
    Telemetry(bool),
}

/// What a change of the selection does while a run goes on, said on hover.
const RESTARTS: &str = "\nWhile sampling, a change starts a new run with it at once; what was sampled stays.";

impl Change {
    /// Does it change what a run samples (not only which rows are open)?
    pub(crate) fn changes_the_run(&self) -> bool {
        !matches!(self, Change::Open(..))
    }
}

/// Which groups are open: by device and group name, remembered across frames. Matching groups
/// are open while searching unless closed during that search.
#[derive(Default)]
pub(crate) struct OpenGroups {
    pub(crate) open: HashSet<(DevicePath, String)>,
    pub(crate) closed_in_search: HashSet<(DevicePath, String)>,
}

impl OpenGroups {
    fn is_open(&self, path: DevicePath, name: &str, searching: bool) -> bool {
        let key = (path, name.to_owned());
        if searching { !self.closed_in_search.contains(&key) } else { self.open.contains(&key) }
    }
}

/// What a search of the source panel finds on the picked devices (shown open or not).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Metrics of the groups.
    pub(crate) metrics: usize,
    /// Series of the telemetry a run reads.
    pub(crate) telemetry: usize,
}

impl Shown {
    /// What the panel says under the search box: "2 metrics and 5 telemetry series match".
    pub(crate) fn text(self) -> String {
        use zescope_model::view::text::plural;
        let metrics = plural(self.metrics as u64, "metric", "metrics");
        let telemetry = format!("{} telemetry series", self.telemetry);
        match (self.metrics, self.telemetry) {
            (0, 0) => "no metric of the ticked devices matches".to_owned(),
            (1, 0) => format!("{metrics} matches"),
            (_, 0) => format!("{metrics} match"),
            (0, 1) => format!("{telemetry} matches"),
            (0, _) => format!("{telemetry} match"),
            _ => format!("{metrics} and {telemetry} match"),
        }
    }
}

/// Fills `rows` with the tree as `selection`, `open` and the search (`index`, `query`) show it;
/// returns what of the picked devices the search shows (open or not).
pub(crate) fn build(
    rows: &mut Vec<Row>,
    inv: &Inventory,
    state: &AppState,
    index: &SearchIndex,
    open: &OpenGroups,
    query: &str,
) -> Shown {
    rows.clear();
    let mut shown = Shown::default();
    let searching = !query.trim().is_empty();
    for (d, dev) in inv.devices.iter().enumerate() {
        rows.push(Row::Device(d));
        if !state.selection.is_picked(dev.path) {
            continue;
        }
        if dev.error.is_some() {
            rows.push(Row::DeviceError(d));
        }
        for (g, group) in dev.groups.iter().enumerate() {
            let hit = index.hit(d, g);
            if *hit == GroupHit::Hidden {
                continue;
            }
            shown.metrics += match hit {
                GroupHit::Some(ms) => ms.len(),
                _ => group.metrics.len(),
            };
            rows.push(Row::Group(d, g));
            if !open.is_open(dev.path, &group.name, searching) {
                continue;
            }
            rows.push(Row::GroupInfo(d, g));
            match hit {
                GroupHit::Some(ms) => rows.extend(ms.iter().map(|&m| Row::Metric(d, g, m))),
                _ => rows.extend((0..group.metrics.len() as u32).map(|m| Row::Metric(d, g, m))),
            }
        }
        // The telemetry node: while a run reads it, a search finds its series by their names,
        // descriptions and units (as a group's metrics, with the node's own words); before,
        // by the kinds of series it reads.
        let telemetry = zescope_sampler::telemetry::GROUP;
        let node = format!("{telemetry} sysman");
        let series: Vec<usize> = match telemetry_stream(state, dev) {
            Some(s) => (0..s.series.len())
                .filter(|&i| {
                    let x = &s.series[i];
                    !searching || words_match(query, &format!("{node} {} {} {}", x.name, x.description, x.unit))
                })
                .collect(),
            None => Vec::new(),
        };
        let kinds = "frequency clock throttle power energy temperature engines utilisation memory bandwidth fan";
        let found = if telemetry_stream(state, dev).is_some() {
            !series.is_empty()
        } else {
            words_match(query, &format!("{node} {kinds}"))
        };
        if found {
            shown.telemetry += series.len();
            rows.push(Row::Telemetry(d));
            if open.is_open(dev.path, telemetry, searching) {
                match telemetry_stream(state, dev) {
                    Some(_) => rows.extend(series.into_iter().map(|i| Row::TelemetrySeries(d, i))),
                    None => rows.push(Row::TelemetryInfo(d)),
                }
            }
        }
    }
    shown
}

/// The run's stream of `group` on `dev`, if the run reads it.
fn stream_of<'a>(state: &'a AppState, dev: &DeviceEntry, group: &str) -> Option<&'a StreamInfo> {
    let r = state.ingest.run.as_ref()?;
    let t = r.info.config.targets.iter().position(|t| t.device == dev.path)?;
    r.info.streams.iter().find(|s| s.target == t && s.group == group)
}

fn telemetry_stream<'a>(state: &'a AppState, dev: &DeviceEntry) -> Option<&'a StreamInfo> {
    stream_of(state, dev, zescope_sampler::telemetry::GROUP)
}

/// Draws rows with the state they show; collects what they ask for.
pub(crate) struct Painter<'a> {
    pub(crate) inv: &'a Inventory,
    pub(crate) state: &'a AppState,
    pub(crate) index: &'a SearchIndex,
    pub(crate) open: &'a OpenGroups,
    pub(crate) searching: bool,
    /// A remote server's run: its ticks are shown, not changed.
    pub(crate) read_only: bool,
    pub(crate) height: f32,
    pub(crate) changes: Vec<Change>,
}

/// Why a remote run's ticks cannot be changed.
pub(crate) const READ_ONLY: &str =
    "The run is the remote server's: `zescope serve` on its host chooses what it samples; this window only watches.";

/// Indentation of one level of the tree, in points.
const INDENT: f32 = 14.0;

impl Painter<'_> {
    /// Row `row` in a rect of the row height (its widgets' ids stable whatever is scrolled).
    pub(crate) fn row(&mut self, ui: &mut Ui, row: Row) {
        let (rect, _) = ui.allocate_exact_size(vec2(ui.available_width(), self.height), Sense::hover());
        let depth = match row {
            Row::Device(d) => usize::from(self.inv.devices[d].path.sub_device.is_some()),
            Row::DeviceError(d) | Row::Group(d, _) | Row::Telemetry(d) => {
                1 + usize::from(self.inv.devices[d].path.sub_device.is_some())
            }
            Row::GroupInfo(d, _) | Row::Metric(d, ..) | Row::TelemetryInfo(d) | Row::TelemetrySeries(d, _) => {
                2 + usize::from(self.inv.devices[d].path.sub_device.is_some())
            }
        };
        let inner = rect.with_min_x(rect.min.x + depth as f32 * INDENT);
        let mut ui = ui.new_child(
            UiBuilder::new()
                .id_salt(("source row", row_key(row)))
                .max_rect(inner)
                .layout(Layout::left_to_right(Align::Center)),
        );
        ui.set_clip_rect(inner.intersect(ui.clip_rect()));
        match row {
            Row::Device(d) => self.device(&mut ui, d),
            Row::DeviceError(d) => {
                let e = self.inv.devices[d].error.as_deref().unwrap_or_default();
                let text = RichText::new(format!("metric groups unavailable: {e}")).color(ui.visuals().warn_fg_color);
                ui.add(egui::Label::new(text).truncate());
            }
            Row::Group(d, g) => self.group(&mut ui, d, g),
            Row::GroupInfo(d, g) => {
                let read = self.read(&self.inv.devices[d], &self.inv.devices[d].groups[g]);
                ui.add(egui::Label::new(RichText::new(format!("read by {read}")).weak().small()).truncate());
            }
            Row::Metric(d, g, m) => self.metric(&mut ui, d, g, m),
            Row::Telemetry(d) => self.telemetry(&mut ui, d),
            Row::TelemetryInfo(_) => {
                let why = if self.running() {
                    "the driver offers no telemetry (see Help → Diagnostics)"
                } else {
                    "series listed while running"
                };
                ui.add(egui::Label::new(RichText::new(why).weak().small()).truncate());
            }
            Row::TelemetrySeries(d, i) => {
                let dev = &self.inv.devices[d];
                if let Some(x) = telemetry_stream(self.state, dev).and_then(|s| s.series.get(i)) {
                    let group = zescope_sampler::telemetry::GROUP;
                    let key = SeriesKey { device: dev.name.clone(), group: group.to_owned(), metric: x.name.clone() };
                    drag_label(&mut ui, key, with_unit(&x.name, &x.unit), &x.description);
                }
            }
        }
    }

    fn running(&self) -> bool {
        self.state.ingest.run.is_some()
    }

    /// A device's tick box (several devices may be ticked: one run samples them all).
    fn device(&mut self, ui: &mut Ui, d: usize) {
        let dev = &self.inv.devices[d];
        let picked = self.state.selection.is_picked(dev.path);
        let mut on = picked;
        let label = format!("{} [{:?}]{}", dev.name, dev.kind, if dev.simulated { " (simulated)" } else { "" });
        let r = ui.add_enabled(!self.read_only, egui::Checkbox::new(&mut on, label)).on_disabled_hover_text(READ_ONLY);
        let r = r.on_hover_text(format!(
            "{:04x}:{:04x}  uuid {}\nTick several devices to sample them together.{}",
            dev.vendor_id,
            dev.device_id,
            dev.uuid,
            if self.running() { RESTARTS } else { "" }
        ));
        if r.changed() {
            self.changes.push(Change::Device(dev.path, on));
        }
    }

    /// How `group` is read: by this run (with the driver's granted period), or how the chosen
    /// way would read it.
    fn read(&self, dev: &DeviceEntry, g: &GroupEntry) -> String {
        match (stream_of(self.state, dev, &g.name), g.read_by(self.state.selection.via)) {
            (Some(s), _) => s.read_path.shown(&s.layout).to_owned(),
            (None, Some(how)) => how.describe().to_owned(),
            (None, None) => "cannot be read".to_owned(),
        }
    }

    /// The expander, and the group's tick: ticking takes all its metrics (and unticks the groups
    /// of its domain: one per domain); it shows a dash when some of its metrics are unticked.
    fn group(&mut self, ui: &mut Ui, d: usize, gi: usize) {
        let dev = &self.inv.devices[d];
        let g = &dev.groups[gi];
        let open = self.open.is_open(dev.path, &g.name, self.searching);
        if expander(ui, open, &g.name) {
            self.changes.push(Change::Open(dev.path, g.name.clone(), !open));
        }
        let read = self.read(dev, g);
        let unreadable = g.unreadable_by(self.state.selection.via);
        let sel = &self.state.selection;
        let ticked = sel.groups_of(dev.path).is_some_and(|c| c.contains(&g.name));
        let partial = ticked && excluded(sel, dev.path, &g.name).is_some_and(|e| !e.is_empty());
        let tag = tag(&read, sel.via, g.exports);
        let matching = match self.index.hit(d, gi) {
            GroupHit::Some(ms) if self.searching => format!(" · {} of {} match", ms.len(), g.metrics.len()),
            _ => String::new(),
        };
        let text = RichText::new(format!("{}  · domain {} · {tag}{matching}", g.name, g.domain));
        let mut on = ticked;
        let enabled = unreadable.is_none() && !self.read_only;
        let r = ui.add_enabled(enabled, egui::Checkbox::new(&mut on, text).indeterminate(partial));
        let n = g.metrics.len();
        let r = match &unreadable {
            Some(why) => r.on_disabled_hover_text(format!("Cannot be sampled: {why}")),
            None if self.read_only => {
                r.on_disabled_hover_text(format!("{}\n{}, read by {read}\n{READ_ONLY}", g.description, metrics(n)))
            }
            None => r.on_hover_text(format!(
                "{}\n{}, read by {read}\nTick to sample all of them (one group per domain).{}",
                g.description,
                metrics(n),
                if self.running() { RESTARTS } else { "" }
            )),
        };
        if r.changed() {
            // A click on a partly ticked group ticks all of it.
            self.changes.push(Change::Group(dev.path, gi, on || partial));
        }
    }

    fn metric(&mut self, ui: &mut Ui, d: usize, gi: usize, mi: u32) {
        let dev = &self.inv.devices[d];
        let g = &dev.groups[gi];
        let Some(m) = g.metrics.get(mi as usize) else { return };
        let sel = &self.state.selection;
        let ticked = sel.groups_of(dev.path).is_some_and(|c| c.contains(&g.name));
        let mut on = ticked && !excluded(sel, dev.path, &g.name).is_some_and(|e| e.contains(&m.name));
        let enabled = g.unreadable_by(sel.via).is_none() && !self.read_only;
        if ui.add_enabled(enabled, egui::Checkbox::without_text(&mut on)).changed() {
            self.changes.push(Change::Metric(dev.path, gi, mi, on));
        }
        let key = SeriesKey { device: dev.name.clone(), group: g.name.clone(), metric: m.name.clone() };
        drag_label(ui, key, with_unit(&m.name, &m.unit), &m.description);
    }

    /// The telemetry node: ticked, the run also reads the device's Sysman telemetry.
    fn telemetry(&mut self, ui: &mut Ui, d: usize) {
        let dev = &self.inv.devices[d];
        let group = zescope_sampler::telemetry::GROUP;
        let open = self.open.is_open(dev.path, group, self.searching);
        if expander(ui, open, group) {
            self.changes.push(Change::Open(dev.path, group.to_owned(), !open));
        }
        let mut on = self.state.selection.telemetry;
        let text = RichText::new(format!("{group}  · Sysman"));
        let r = ui.add_enabled(!self.read_only, egui::Checkbox::new(&mut on, text)).on_disabled_hover_text(READ_ONLY);
        let what = "Clocks, throttle reasons, power and energy, temperatures, engine utilisation and memory, \
                    read through Sysman at most every 100 ms";
        let r = r.on_hover_text(format!("{what}{}", if self.running() { RESTARTS } else { "" }));
        if r.changed() {
            self.changes.push(Change::Telemetry(on));
        }
    }
}

/// A stable identity for a row's widgets.
fn row_key(row: Row) -> (u8, usize, usize, u32) {
    match row {
        Row::Device(d) => (0, d, 0, 0),
        Row::DeviceError(d) => (1, d, 0, 0),
        Row::Group(d, g) => (2, d, g, 0),
        Row::GroupInfo(d, g) => (3, d, g, 0),
        Row::Metric(d, g, m) => (4, d, g, m),
        Row::Telemetry(d) => (5, d, 0, 0),
        Row::TelemetryInfo(d) => (6, d, 0, 0),
        Row::TelemetrySeries(d, i) => (7, d, i, 0),
    }
}

/// A metric's row text: its name and, when it has one, its unit in brackets (no empty `[]`).
fn with_unit(name: &str, unit: &str) -> String {
    if unit.trim().is_empty() { name.to_owned() } else { format!("{name} [{unit}]") }
}

/// The open/closed arrow before a group; true when clicked. Its accessible name is "expand" or
/// "collapse" (the tick box beside it names the group).
fn expander(ui: &mut Ui, open: bool, name: &str) -> bool {
    let size = ui.spacing().icon_width;
    let (rect, r) = ui.allocate_exact_size(vec2(size, size), Sense::click());
    let what = if open { "collapse" } else { "expand" };
    r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, what));
    let r = r.on_hover_text(format!("{what} {name}"));
    if ui.is_rect_visible(rect) {
        egui::collapsing_header::paint_default_icon(ui, if open { 1.0 } else { 0.0 }, &r);
    }
    r.clicked()
}

/// A series' label that can be dragged onto a pane.
fn drag_label(ui: &mut Ui, key: SeriesKey, label: String, description: &str) {
    ui.dnd_drag_source(egui::Id::unique(("drag", &key)), key, |ui| {
        ui.add(egui::Label::new(label).truncate());
    })
    .response
    .on_hover_text(format!("{description}\nDrag onto a pane to plot it there."));
}

/// The metrics of `group` the user unticked on `path`.
fn excluded<'a>(sel: &'a Selection, path: DevicePath, group: &str) -> Option<&'a BTreeSet<String>> {
    sel.excluded_of(path).and_then(|x| x.get(group))
}

/// Applies what the rows asked for (`inv` is the inventory they were drawn from).
pub(crate) fn apply(
    changes: Vec<Change>,
    inv: &Inventory,
    state: &mut AppState,
    open: &mut OpenGroups,
    searching: bool,
) {
    let sel = &mut state.selection;
    let device = |path: DevicePath| inv.devices.iter().find(|d| d.path == path);
    for c in changes {
        match c {
            Change::Device(path, true) => {
                let Some(dev) = device(path) else { continue };
                let first = dev.groups.iter().find(|g| g.read_by(sel.via).is_some()).map(|g| g.name.clone());
                sel.pick(path, first.into_iter().collect());
            }
            Change::Device(path, false) => sel.unpick(path),
            Change::Group(path, gi, on) => {
                let (Some(g), Some(dev)) = (device(path).and_then(|d| d.groups.get(gi)), device(path)) else {
                    continue;
                };
                let Some(choice) = sel.choice_mut(path) else { continue };
                if on {
                    // One group per domain: ticking a group unticks the others of its domain.
                    for o in dev.groups.iter().filter(|o| o.domain == g.domain && o.name != g.name) {
                        choice.groups.remove(&o.name);
                    }
                    choice.groups.insert(g.name.clone());
                }
                if !on {
                    choice.groups.remove(&g.name);
                }
                // Ticked or not, a group's tick is about all of it.
                choice.excluded.remove(&g.name);
            }
            Change::Metric(path, gi, mi, on) => {
                let Some(dev) = device(path) else { continue };
                let Some(g) = dev.groups.get(gi) else { continue };
                let Some(m) = g.metrics.get(mi as usize) else { continue };
                let Some(choice) = sel.choice_mut(path) else { continue };
                let ticked = choice.groups.contains(&g.name);
                if on && !ticked {
                    // Ticking a metric of an unticked group takes the group with that metric only.
                    for o in dev.groups.iter().filter(|o| o.domain == g.domain && o.name != g.name) {
                        choice.groups.remove(&o.name);
                    }
                    choice.groups.insert(g.name.clone());
                    let others = g.metrics.iter().filter(|x| x.name != m.name).map(|x| x.name.clone());
                    choice.excluded.insert(g.name.clone(), others.collect());
                } else if on {
                    let e = choice.excluded.entry(g.name.clone()).or_default();
                    e.remove(&m.name);
                    if e.is_empty() {
                        choice.excluded.remove(&g.name);
                    }
                } else if ticked {
                    let e = choice.excluded.entry(g.name.clone()).or_default();
                    e.insert(m.name.clone());
                    // Unticking its last metric unticks the group.
                    if g.metrics.iter().all(|x| e.contains(&x.name)) {
                        choice.groups.remove(&g.name);
                        choice.excluded.remove(&g.name);
                    }
                }
            }
            Change::Open(path, name, now) => {
                let key = (path, name);
                if searching {
                    if now {
                        open.closed_in_search.remove(&key)
                    } else {
                        open.closed_in_search.insert(key)
                    };
                } else if now {
                    open.open.insert(key);
                } else {
                    open.open.remove(&key);
                }
            }
            Change::Telemetry(on) => sel.telemetry = on,
        }
    }
}

/// A group row's word for how it is read (`read`, from [`Painter::read`]): its export (`DMA-BUF`,
/// `DMA-BUF per metric`) when exported memory reads it, `streamer` or `tracer`; when the way
/// chosen (`via`) cannot read it, that it is not read that way (`not by streamer`), where its
/// export kind would read as the way it is read; with `auto`, what its export lacks.
pub(super) fn tag(read: &str, via: zescope_sampler::Via, exports: GroupExportKind) -> String {
    let export = match exports {
        GroupExportKind::Group => "DMA-BUF",
        GroupExportKind::PerMetric => "DMA-BUF per metric",
        GroupExportKind::None => "no export",
        GroupExportKind::Unknown => "export unknown",
    };
    match read {
        "exported memory" => export.to_owned(),
        "cannot be read" if via != zescope_sampler::Via::Auto => format!("not by {}", via.describe()),
        "cannot be read" => export.to_owned(),
        r if r.starts_with("tracer") => "tracer".to_owned(),
        _ => "streamer".to_owned(),
    }
}

/// "1 metric", "45 metrics".
fn metrics(n: usize) -> String {
    zescope_model::view::text::plural(n as u64, "metric", "metrics")
}
