//! Naming a marker: the field the add-marker action (M, "+ Marker") opens in the toolbar, its
//! default name ("M3") selected so typing replaces it, and that View → Rename marker (or a
//! plot's context menu on a marker) opens for a marker already set. Enter keeps what is typed (as
//! does a click elsewhere), Escape keeps the name the marker had; an empty name keeps it too. The
//! name is the marker's label, saved with the session as markers are.

use egui::{Key, Ui};

use zescope_model::view::Markers;

/// The marker being named.
#[derive(Clone, Debug)]
pub struct MarkerName {
    /// Which marker (its index in the list).
    pub index: usize,
    /// Its name when the field opened: if the list changed under the field (cleared, a
    /// session opened), the marker at `index` is another and keeps its name.
    was: String,
    /// What is typed.
    pub text: String,
    /// The field takes the keys on its next frame, its text selected.
    focus: bool,
}

impl MarkerName {
    /// A field naming marker `index` of `markers`; `None` when there is no such marker.
    pub fn of(markers: &Markers, index: usize) -> Option<MarkerName> {
        let label = markers.marks().get(index)?.label.clone();
        Some(MarkerName { index, was: label.clone(), text: label, focus: true })
    }

    /// Draws the field (in a horizontal row); `true` once it is done with (Enter, Escape or
    /// focus lost), the marker renamed as the user chose.
    pub(crate) fn ui(&mut self, ui: &mut Ui, markers: &mut Markers) -> bool {
        let id = egui::Id::unique("zescope-marker-name");
        ui.label("Name");
        let field = ui.add(
            egui::TextEdit::singleline(&mut self.text)
                .id(id)
                .desired_width(140.0)
                .char_limit(zescope_model::markers::MAX_NAME),
        );
        let field = field.on_hover_text("Enter keeps this name, Escape keeps the marker's name");
        if self.focus {
            self.focus = false;
            field.request_focus();
            if let Some(mut st) = egui::TextEdit::load_state(ui.ctx(), id) {
                let all = egui::text::CCursorRange::two(
                    egui::text::CCursor::new(0),
                    egui::text::CCursor::new(self.text.chars().count()),
                );
                st.cursor.set_char_range(Some(all));
                st.store(ui.ctx(), id);
            }
            return false;
        }
        if !field.lost_focus() && field.has_focus() {
            return false;
        }
        // Escape takes the focus from the field as it is pressed.
        let escape = ui.input(|i| i.key_pressed(Key::Escape));
        let same_marker = markers.marks().get(self.index).is_some_and(|m| m.label == self.was);
        if !escape && same_marker {
            markers.rename(self.index, &self.text);
        }
        // The field goes at once, not at the next frame a paused view asks for.
        ui.ctx().request_repaint();
        true
    }
}

/// How many markers View → Rename marker lists (the newest).
const LISTED: usize = 30;

impl super::ZescopeApp {
    /// View → Rename marker: the newest markers by name and time; one picked opens the
    /// toolbar's name field on it.
    pub(crate) fn rename_marker_menu(&mut self, ui: &mut Ui) {
        let marks = self.markers.marks();
        ui.add_enabled_ui(!marks.is_empty(), |ui| {
            ui.menu_button("Rename marker", |ui| {
                let mut picked = None;
                egui::ScrollArea::vertical().max_height(400.0).show(ui, |ui| {
                    for (i, m) in marks.iter().enumerate().rev().take(LISTED) {
                        let at = zescope_model::view::text::time_label(
                            zescope_model::view::TimeAxis::of(&self.store).x(m.t_ns),
                        );
                        if ui.button(format!("{} · {at}…", m.label)).clicked() {
                            picked = Some(i);
                        }
                    }
                    if marks.len() > LISTED {
                        ui.label(egui::RichText::new(format!("and {} older", marks.len() - LISTED)).weak());
                    }
                });
                if let Some(i) = picked {
                    self.marker_name = MarkerName::of(&self.markers, i);
                    ui.close();
                }
            });
        });
    }
}

/// A plot's context menu (right-click on the plot): "Rename marker NAME…" for each marker under
/// where it was opened (`marker_paint::under`: an instant's line near it, a range's band around
/// it; an open range reaches `now_ns`); `x_of` maps a marker's time (ns) to screen x. The marker
/// picked, if one was.
pub(crate) fn context_menu(
    resp: &egui::Response,
    marks: &[zescope_model::view::Mark],
    now_ns: i64,
    x_of: impl Fn(i64) -> f32,
) -> Option<usize> {
    let at = resp.id.with("zescope-marker-menu-x");
    if resp.secondary_clicked()
        && let Some(p) = resp.interact_pointer_pos()
    {
        resp.ctx.data_mut(|d| d.insert_temp(at, p.x));
    }
    let x = resp.ctx.data(|d| d.get_temp::<f32>(at))?;
    let near = super::marker_paint::under(marks, now_ns, x_of, x);
    if near.is_empty() {
        return None;
    }
    let mut picked = None;
    resp.context_menu(|ui| {
        for &i in near.iter().rev().take(LISTED) {
            if ui.button(format!("Rename marker {}…", marks[i].label)).clicked() {
                picked = Some(i);
                ui.close();
            }
        }
    });
    picked
}
