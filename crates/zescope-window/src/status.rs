//! The status bar: source (a remote one with its link's figures) and device, achieved vs requested rate, late ticks, drops, store
//! memory against its cap, and whether older history was coarsened or evicted.

use egui::{RichText, Ui};

use zescope_model::view::Activity;
use zescope_store::Store;

use super::state::AppState;
use zescope_model::view::TimeAxis;
use zescope_model::view::text;
use zescope_model::view::text::time_label;

/// The most width the last outcome's note takes in the bar.
const NOTE_WIDTH: f32 = 280.0;

pub fn show(
    ui: &mut Ui,
    activity: Activity,
    cpu: Option<f64>,
    state: &AppState,
    store: &Store,
    files: &super::files::Files,
    markers: (&zescope_model::view::Markers, Option<&zescope_model::markers::Listener>),
) {
    let (marks, listener) = markers;
    ui.horizontal_wrapped(|ui| {
        // An item that does not fit moves to the next line whole: "requested" alone on a
        // second line read as its own item.
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        if let Some(p) = files.saving() {
            ui.add(egui::ProgressBar::new(p).desired_width(120.0).text("saving"));
            ui.separator();
        } else if let Some((path, p)) = files.writing() {
            let text = format!("exporting {}", super::dialogs::file_name(path));
            ui.add(egui::ProgressBar::new(p).desired_width(160.0).text(text));
            ui.separator();
        } else if let Some(o) = &files.opening {
            ui.label(o.status());
            ui.separator();
        } else if let Some((text, p)) = state.derived.progress() {
            ui.add(egui::ProgressBar::new(p).desired_width(200.0).text(text));
            ui.separator();
        } else if let Some(n) = &files.note {
            // Cut short (whole on hover): a long path must not wrap the bar onto a second line.
            let h = ui.spacing().interact_size.y;
            ui.allocate_ui(egui::vec2(NOTE_WIDTH, h), |ui| {
                ui.add(egui::Label::new(RichText::new(n).weak()).truncate())
            });
            ui.separator();
        }
        let src = state.inventory.as_ref().and_then(|i| i.source.as_ref());
        match src {
            // A remote run's source names the server and the link's figures (`--connect`).
            Some(s) if is_remote(s) => ui.label(RichText::new(&s.description).strong()),
            Some(s) if s.simulated => ui.label(RichText::new("simulated device").color(ui.visuals().warn_fg_color)),
            Some(_) => ui.label("Level Zero"),
            None => ui.label("no source"),
        };
        ui.separator();
        let recorded_on = || {
            // A run over several devices has one record per device.
            let last = state.history.runs.last()?.run;
            let names: Vec<&str> = (state.history.runs.iter().rev())
                .take_while(|r| r.run == last)
                .filter_map(|r| state.history.devices.get(r.device as usize).map(|d| d.name.as_str()))
                .collect();
            (!names.is_empty()).then(|| names.into_iter().rev().collect::<Vec<_>>().join(" + "))
        };
        match (activity, &state.ingest.run) {
            (Activity::File, _) => {
                let file = files.recording.as_deref().map(super::dialogs::file_name).unwrap_or_default();
                let on = recorded_on().map(|d| format!(" · recorded on {d}")).unwrap_or_default();
                ui.label(format!("showing {file}{on} · not sampling"))
            }
            (Activity::Live | Activity::Paused { .. }, Some(r)) => {
                let view = match activity {
                    Activity::Paused { .. } => " · view frozen, sampling continues",
                    _ => "",
                };
                // Cut short (whole on hover): a run over several devices and groups must not
                // push the bar's figures onto a second line.
                cut(ui, &format!("{}{view}", sampling(&r.info)), RUN_WIDTH)
            }
            _ => match &state.last_device {
                Some(d) => ui.label(format!("{d} · stopped")),
                None => ui.label("not sampling"),
            },
        };
        if let (true, Some(_), Some(s)) = (activity != Activity::File, &state.ingest.run, &state.health) {
            ui.separator();
            let (rate, warn) =
                if s.batched { (batched_rate(s), false) } else { text::rate(s.achieved_hz, s.requested_hz) };
            let r = ui.label(if warn {
                RichText::new(rate).color(ui.visuals().warn_fg_color)
            } else {
                RichText::new(rate)
            });
            r.on_hover_text(rate_tooltip(s));
            // A run read in batches has no tick to be late for.
            if !s.batched {
                ui.separator();
                ui.label(format!("late ticks {}", s.late_ticks));
            }
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
        }
        if let Some(p) = cpu {
            ui.separator();
            ui.label(format!("CPU {p:.1} %")).on_hover_text(match &state.health {
                Some(s) => format!(
                    "the whole zescope process (window, drawing, sampler, saving) as a share of one core, over the \
                     last second; the sampler thread alone: {:.1} %",
                    s.cpu_percent
                ),
                None => "the whole zescope process (window, drawing, saving) as a share of one core, over the last \
                         second"
                    .to_owned(),
            });
        }
        if !state.notices().is_empty() {
            ui.separator();
            let n = state.notices().len();
            let text = format!("{n} notice{}", if n == 1 { "" } else { "s" });
            let list = state.notices().join("\n");
            ui.label(RichText::new(text).color(ui.visuals().warn_fg_color))
                .on_hover_text(format!("what the run has said (also in Help → Diagnostics):\n{list}"));
        }
        let clamps = store.busy_clamps();
        if clamps > 0 {
            ui.separator();
            let text = format!("{clamps} busy share{} clamped", if clamps == 1 { "" } else { "s" });
            ui.label(RichText::new(text).weak()).on_hover_text(
                "samples of busy time whose share of the time between two samples came out above 100 % (or below \
                 0): a device cannot be busy longer than the time that passed, so they are drawn at 100 % (0 %). \
                 Where the exported memory has no device timestamp, a sample's time is the host's time of the read, \
                 and a read late after a read early makes the interval look shorter than the counter's",
            );
        }
        if let Some(l) = listener {
            ui.separator();
            let c = l.counts();
            let over_cap = marks.over_cap;
            let dropped = c.dropped() + over_cap;
            let text = if dropped > 0 { format!("markers ({dropped} dropped)") } else { "markers".to_owned() };
            let limits = l.limits();
            ui.label(RichText::new(text).weak()).on_hover_text(format!(
                "the workload's markers arrive at {}={}\n{} received, {} malformed, {} over the rate limit ({}/s, \
                 bursts of {}), {} over the queue, {} over the limit of {} per session, {} from other users, {} \
                 without credentials",
                zescope_model::markers::ENV,
                l.path().display(),
                c.accepted,
                c.malformed,
                c.over_rate,
                limits.per_second,
                limits.burst,
                c.queue_full,
                over_cap,
                marks.cap(),
                c.other_user,
                c.no_credentials
            ));
        }
        ui.separator();
        ui.label(format!("memory {} of {}", text::bytes(store.memory_used()), text::bytes(store.memory_cap())));
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
    let at = time_label(TimeAxis::of(store).x(before));
    Some(if bucket > 0 {
        format!(
            "history before {at} is at ~{} resolution",
            text::duration(std::time::Duration::from_nanos(bucket as u64))
        )
    } else {
        format!("history before {at} was dropped ({evicted} samples) to stay under the memory cap")
    })
}

/// The most a run's description takes of the bar, in points.
const RUN_WIDTH: f32 = 420.0;

/// `text` as a label at most `max` points wide, cut short with "…" (the whole text on hover).
fn cut(ui: &mut Ui, text: &str, max: f32) -> egui::Response {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let width = ui.painter().layout_no_wrap(text.to_owned(), font, egui::Color32::WHITE).size().x;
    if width <= max {
        return ui.label(text);
    }
    let h = ui.spacing().interact_size.y;
    ui.allocate_ui(egui::vec2(max, h), |ui| ui.add(egui::Label::new(text).truncate())).inner.on_hover_text(text)
}

/// The source is a remote `zescope serve`'s live feed: its description starts with "REMOTE "
/// (then the server's address, the link's state or figures).
pub(crate) fn is_remote(s: &zescope_sampler::SourceInfo) -> bool {
    s.description.starts_with("REMOTE ")
}

/// The address of a remote source's server: "REMOTE [STATE ]HOST:PORT[ · FIGURES]" gives
/// HOST:PORT (`None` for a source not remote).
pub(crate) fn remote_address(s: &zescope_sampler::SourceInfo) -> Option<&str> {
    let rest = s.description.strip_prefix("REMOTE ")?;
    rest.split(" · ").next()?.rsplit(' ').next()
}

/// The remote feed was left (the window's "Disconnect"): the server's run goes on, unwatched.
pub(crate) fn is_disconnected(s: &zescope_sampler::SourceInfo) -> bool {
    s.description.starts_with("REMOTE disconnected ")
}

/// What a run samples: "DEVICE · GROUP, GROUP", one such part per device (joined by " · "); a
/// device in the run for its telemetry alone "DEVICE · telemetry".
pub(crate) fn sampling(info: &zescope_sampler::RunInfo) -> String {
    let parts: Vec<String> = (info.config.targets.iter().zip(&info.devices))
        .map(|(t, name)| match (t.groups.is_empty(), info.config.telemetry) {
            (false, _) => format!("{name} · {}", t.groups.join(", ")),
            (true, true) => format!("{name} · telemetry"),
            (true, false) => name.clone(),
        })
        .collect();
    parts.join(" · ")
}

/// The rate of a run read in batches: its samples a second over the run (a streamer takes ten
/// reports an interval; the intervals its reads served say nothing a user can check), and what
/// was asked.
pub(crate) fn batched_rate(s: &zescope_sampler::Health) -> String {
    let Some(per_s) = s.samples_per_second() else {
        return format!("too short for a rate · {} requested", text::hz(s.requested_hz));
    };
    format!("{} samples/s · {} requested", text::count(per_s.round() as u64), text::hz(s.requested_hz))
}

/// The rate's tooltip: the sampler's counts (one and many each in its number), then how the run
/// is read ([`latency`]).
pub(crate) fn rate_tooltip(s: &zescope_sampler::Health) -> String {
    let unchanged = text::counted(s.unchanged_reads, "read", "reads");
    if s.batched {
        let samples = text::counted(s.samples, "sample", "samples");
        return format!("{samples} read, {unchanged} found nothing new\n{}", latency(s));
    }
    format!(
        "{}, {} retried out, {unchanged} found nothing new, {}\n{}",
        text::counted(s.ticks, "tick", "ticks"),
        text::counted(s.torn_reads, "torn read", "torn reads"),
        text::counted(s.clock_resets, "device clock reset", "device clock resets"),
        latency(s)
    )
}

/// The live latency and the sampler's wakeups, for the rate's tooltip.
pub(crate) fn latency(s: &zescope_sampler::Health) -> String {
    let every = text::duration(s.latency);
    let secs = s.ticked_for.as_secs_f64();
    let wakes = if secs > 0.0 { s.wakeups as f64 / secs } else { 0.0 };
    let how = if s.batched {
        "read in batches (the streamer's and the tracer's samples keep the hardware's time)"
    } else {
        "read on every tick"
    };
    format!("{how}: live latency at most {every}; the sampler woke {wakes:.0} times a second")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn a_remote_sources_address_is_found_in_every_state_of_the_link() {
        let of = |description: &str| {
            let s = zescope_sampler::SourceInfo {
                requested: zescope_ze::Source::Auto,
                simulated: false,
                description: description.to_owned(),
                fallback_reason: None,
            };
            super::remote_address(&s).map(str::to_owned)
        };
        for d in [
            "REMOTE gpu-box:9464",
            "REMOTE connecting gpu-box:9464",
            "REMOTE reconnecting gpu-box:9464",
            "REMOTE gpu-box:9464 · 12.5 KiB/s · rtt 0.4 ms",
            "REMOTE gpu-box:9464 · 12.5 KiB/s",
        ] {
            assert_eq!(of(d).as_deref(), Some("gpu-box:9464"), "{d}");
        }
        assert_eq!(of("Level Zero 1.20 · ze-sim"), None);
    }

    #[test]
    fn the_rate_tooltip_says_how_the_run_is_read_and_its_live_latency() {
        let batched = zescope_sampler::Health {
            requested_hz: 10_000.0,
            latency: Duration::from_millis(20),
            wakeups: 100,
            ticked_for: Duration::from_secs(2),
            batched: true,
            ..Default::default()
        };
        assert_eq!(
            super::latency(&batched),
            "read in batches (the streamer's and the tracer's samples keep the hardware's time): live latency at most \
             20 ms; the sampler woke 50 times a second"
        );
        let ticked = zescope_sampler::Health { latency: Duration::from_micros(100), batched: false, ..batched };
        assert!(super::latency(&ticked).starts_with("read on every tick: live latency at most 100 µs"));
    }

    #[test]
    fn the_rate_tooltip_counts_one_and_many_each_in_its_number() {
        let ticked = zescope_sampler::Health {
            ticks: 12_345,
            torn_reads: 1,
            unchanged_reads: 0,
            clock_resets: 1,
            ..Default::default()
        };
        let said = super::rate_tooltip(&ticked);
        assert!(
            said.starts_with(
                "12,345 ticks, 1 torn read retried out, 0 reads found nothing new, 1 device clock reset\n"
            ),
            "{said}"
        );
        let batched = zescope_sampler::Health { samples: 1, unchanged_reads: 1, batched: true, ..ticked };
        assert!(super::rate_tooltip(&batched).starts_with("1 sample read, 1 read found nothing new\n"));
    }

    #[test]
    fn a_device_in_the_run_for_its_telemetry_alone_says_so() {
        use zescope_sampler::{DevicePath, RunConfig, RunInfo, Target};
        let mut config =
            RunConfig::single(DevicePath::default(), vec!["RenderBasic".into()], Duration::from_millis(10));
        config.targets.push(Target::new(DevicePath::default(), Vec::new()));
        config.telemetry = true;
        let devices = vec!["ze-sim GPU".to_owned(), "ze-sim NPU".to_owned()];
        let info =
            RunInfo { run: 1, config, devices, simulated: true, streams: Vec::new(), imports: 0, notices: Vec::new() };
        assert_eq!(super::sampling(&info), "ze-sim GPU · RenderBasic · ze-sim NPU · telemetry");
        let mut without = info.clone();
        without.config.telemetry = false;
        assert_eq!(super::sampling(&without), "ze-sim GPU · RenderBasic · ze-sim NPU");
    }

    #[test]
    fn a_run_read_in_batches_shows_its_samples_a_second() {
        // A streamer at 10 µs reports for a 10 kHz request, 2 s in: 100 000 samples a second.
        let s = zescope_sampler::Health {
            requested_hz: 10_000.0,
            ticks: 20_000,
            samples: 200_000,
            ticked_for: Duration::from_secs(2),
            batched: true,
            ..Default::default()
        };
        assert_eq!(super::batched_rate(&s), "100,000 samples/s · 10 kHz requested");
        let few = zescope_sampler::Health { samples: 1_250, ..s };
        assert_eq!(super::batched_rate(&few), "625 samples/s · 10 kHz requested");
        let early = zescope_sampler::Health { ticked_for: Duration::from_micros(150), ..s };
        assert_eq!(super::batched_rate(&early), "too short for a rate · 10 kHz requested");
    }
}
