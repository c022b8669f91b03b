//! The window's fonts: egui's defaults, then DejaVu Sans (bundled with the exported images,
//! `zescope_model::write::FONT`) for the glyphs they lack. The window's texts say "File →
//! Connect…" and "Help → Diagnostics"; egui's fonts have no "→", drawn as a box.

use std::sync::Arc;

/// egui's default fonts with DejaVu Sans after them in every family (their look stays; a glyph
/// they lack comes from DejaVu).
pub fn definitions() -> egui::FontDefinitions {
    let mut fonts = egui::FontDefinitions::default();
    let name = "DejaVuSans".to_owned();
    fonts.font_data.insert(name.clone(), Arc::new(egui::FontData::from_static(zescope_model::write::FONT)));
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts.families.entry(family).or_default().push(name.clone());
    }
    fonts
}

#[cfg(test)]
mod tests {
    /// Whether every glyph of `text` is in the fonts of `ctx` after `fonts` are set (or the
    /// default ones, with `None`), in both families.
    fn covers(fonts: Option<egui::FontDefinitions>, text: &str) -> bool {
        let ctx = egui::Context::default();
        if let Some(f) = fonts {
            ctx.set_fonts(f);
        }
        // Fonts set take effect at the next pass; its texture updates have no renderer to go to.
        ctx.run_ui(egui::RawInput::default(), |_| {}).textures_delta.clear();
        [egui::FontId::proportional(14.0), egui::FontId::monospace(14.0)]
            .iter()
            .all(|id| ctx.fonts_mut(|f| f.has_glyphs(id, text)))
    }

    #[test]
    fn the_arrows_and_signs_the_windows_texts_use_have_glyphs() {
        // Menu paths, units and the marks the texts use.
        let used = "File → Connect… Help › ±5 °C µs × ≤ ≥ — ·";
        assert!(!covers(None, "→"), "egui's own fonts lack the arrow (what this mends)");
        assert!(covers(Some(super::definitions()), used));
    }
}
