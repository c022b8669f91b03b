//! The eframe/egui UI. For now: the plot path that draws store envelopes.

pub mod envelope_plot;
