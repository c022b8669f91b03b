//! The status bar: source and device, achieved vs requested rate, late ticks, drops, store
//! memory against its cap, and whether older history was coarsened or evicted.

use egui::{RichText, Ui};

use crate::store::Store;

use super::state::AppState;
use crate::view::format;
use crate::view::format::time_label;

pub fn show(ui: &mut Ui, state: &AppState, store: &Store, files: &super::files::Files) {
    ui.horizontal_wrapped(|ui| {
        if let Some(p) = files.saving() {
            ui.add(egui::ProgressBar::new(p).desired_width(120.0).text("saving"));
            ui.separator();
        } else if let Some(n) = &files.note {
            ui.label(RichText::new(n).weak());
            ui.separator();
        }
        let src = state.inventory.as_ref().and_then(|i| i.source.as_ref());
        match src {
            Some(s) if s.simulated => ui.label(RichText::new("simulated device").color(ui.visuals().warn_fg_color)),
            Some(_) => ui.label("Level Zero"),
            None => ui.label("no source"),
        };
        ui.separator();
        match (&state.ingest.run, &state.last_device) {
            (Some(r), _) => ui.label(format!("{} · {}", r.info.device, r.info.config.groups.join(", "))),
            (None, Some(d)) => ui.label(format!("{d} · stopped")),
            (None, None) => ui.label("not sampling"),
        };
        if let (Some(_), Some(s)) = (&state.ingest.run, &state.stats) {
            ui.separator();
            let ok = s.achieved_hz >= 0.99 * s.requested_hz;
            let rate = format!("{} of {} requested", format::hz(s.achieved_hz), format::hz(s.requested_hz));
            let r =
                ui.label(if ok { RichText::new(rate) } else { RichText::new(rate).color(ui.visuals().warn_fg_color) });
            r.on_hover_text(format!(
                "{} ticks, {} torn reads retried out, {} reads found nothing new, {} device clock resets",
                s.ticks, s.torn_reads, s.unchanged_reads, s.clock_resets
            ));
            ui.separator();
            ui.label(format!("late ticks {}", s.late_ticks));
            if s.dropped_reports > 0 {
                ui.separator();
                ui.label(
                    RichText::new(format!("streamer drops {}", s.dropped_reports)).color(ui.visuals().warn_fg_color),
                )
                .on_hover_text(
                    "reads the driver answered with ZE_RESULT_WARNING_DROPPED_DATA: reports were lost before \
                         zescope read them (the plot has a gap there); a longer interval or fewer streamed groups help",
                );
            }
            ui.separator();
            let drops = format!("dropped {}", s.dropped_samples);
            if s.dropped_samples > 0 {
                ui.label(RichText::new(drops).color(ui.visuals().warn_fg_color))
                    .on_hover_text(format!("{} batches the UI could not take in time were dropped", s.dropped_batches));
            } else {
                ui.label(drops);
            }
            ui.separator();
            ui.label(format!("CPU {:.1} %", s.cpu_percent)).on_hover_text("the sampler thread's share of one core");
        }
        if !state.notices().is_empty() {
            ui.separator();
            let n = state.notices().len();
            let text = format!("{n} driver feature{} off", if n == 1 { "" } else { "s" });
            ui.label(RichText::new(text).color(ui.visuals().warn_fg_color)).on_hover_text(state.notices().join("\n"));
        }
        ui.separator();
        ui.label(format!("memory {} of {}", format::bytes(store.memory_used()), format::bytes(store.memory_cap())));
        if let Some(note) = coarsening_note(store) {
            ui.separator();
            ui.label(RichText::new(note).color(ui.visuals().warn_fg_color));
        }
    });
}

/// "history before 2:05 is at ~1 s resolution", for the stream coarsened the furthest.
pub fn coarsening_note(store: &Store) -> Option<String> {
    let mut worst: Option<(i64, i64, u64)> = None;
    for (_, r) in store.coarsening() {
        if let Some(before) = r.coarsened_before() {
            let coarse = r.spans.iter().filter(|s| s.level > 0).map(|s| s.bucket_ns()).max().unwrap_or(0);
            if worst.is_none_or(|(b, _, _)| before > b) {
                worst = Some((before, coarse, r.evicted_samples));
            }
        } else if r.evicted_samples > 0 && worst.is_none() {
            worst = Some((r.spans.first().map_or(0, |s| s.t_first), 0, r.evicted_samples));
        }
    }
    let (before, bucket, evicted) = worst?;
    let at = time_label(store.to_plot_x(before));
    Some(if bucket > 0 {
        format!(
            "history before {at} is at ~{} resolution",
            format::duration(std::time::Duration::from_nanos(bucket as u64))
        )
    } else {
        format!("history before {at} was dropped ({evicted} samples) to stay under the memory cap")
    })
}
