//! Metric groups, per device and sub-device: which export memory (one DMA-BUF for the group, or
//! per metric), and whether a layout decodes that memory. A group zescope can sample needs both;
//! a device with none says which link is missing.

use super::Check;
use zescope_sampler::layout::{LayoutSet, Owner};
use zescope_ze::{Device, GroupExport, Loader, Origin};

/// The layouts zescope knows, and the user's layout files it had to skip.
pub(super) fn layouts_check(layouts: &LayoutSet, errors: &[zescope_sampler::layout::LayoutFileError]) -> Check {
    const NAME: &str = "layouts";
    // built-in layouts carry their file name as origin, the user's their absolute path
    let total = layouts.layouts.len();
    let user = layouts.layouts.iter().filter(|(origin, _)| origin.starts_with('/')).count();
    let detail = format!("{total} layouts ({} built in, {user} from your layout directory)", total - user);
    let catch_alls: Vec<String> =
        layouts.catch_alls().map(|(origin, l)| format!("{origin}: {}", l.catch_all_warning())).collect();
    if errors.is_empty() && catch_alls.is_empty() {
        return Check::ok(NAME, detail);
    }
    let mut lines = vec![detail];
    if !errors.is_empty() {
        let errs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        lines.push(format!("skipped:\n{}", errs.join("\n")));
    }
    if !catch_alls.is_empty() {
        lines.push(format!("catch-all (no magic, any driver):\n{}", catch_alls.join("\n")));
    }
    let fix = if errors.is_empty() {
        "give catch-all layouts a `magic` or narrow their `matches` to a driver/device/group (docs/layout-format.md)"
    } else {
        "fix or remove the files named; give catch-all layouts a `magic` or narrower `matches` (the format: docs/layout-format.md)"
    };
    Check::warn(NAME, lines.join("; "), fix)
}

/// How a group's memory can be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GroupVerdict {
    /// Exports memory and a layout decodes it.
    Sampleable { how: String, layout: String },
    /// Exports memory, but no layout matches it.
    NoLayout { how: String },
    /// Exports nothing (or the driver's answer is unusable).
    NoExport(String),
}

/// One check per device and sub-device of `loader`: its groups, what each exports and the
/// layout that decodes it; then a FAIL when no device has a group zescope can sample.
pub(crate) fn group_checks(loader: &Loader, layouts: &LayoutSet) -> Vec<Check> {
    let mut checks = Vec::new();
    let (mut sampleable, mut hidden) = (0, 0);
    for d in &loader.drivers {
        let simulated = loader.origin == Origin::BuiltInSim || d.info.simulated;
        let uuid = zescope_ze::uuid_string(&d.info.uuid);
        for dev in d.devices().unwrap_or_default() {
            if zescope_sampler::claims::held(&dev) {
                // A run of this process reads it: its groups are the run's to show, and it
                // samples, so the device has groups zescope can sample.
                checks.push(super::in_use(format!("metric groups of {}", dev.info.name)));
                sampleable += 1;
                continue;
            }
            let mut all = vec![dev.clone()];
            all.extend(dev.sub_devices().unwrap_or_default());
            for dev in all {
                let (check, n) = device_groups(&dev, simulated, &uuid, layouts);
                match n {
                    Groups::Sampleable(n) => sampleable += n,
                    Groups::HiddenUntilEnabled => hidden += 1,
                }
                checks.push(check);
            }
        }
    }
    if sampleable == 0 && hidden > 0 {
        checks.push(Check::warn(
            "sampleable groups",
            "unknown until metrics are enabled: the groups stay hidden until zescope enables metrics at run time",
            "unset ZET_ENABLE_METRICS (zescope then sets it to 1) to see the groups here",
        ));
    } else if sampleable == 0 {
        checks.push(Check::fail(
            "sampleable groups",
            "no device has a metric group that exports memory with a layout: zescope has nothing to plot",
            "see the metric group lines above",
        ));
    }
    checks
}

/// What a device's check found out about its groups.
enum Groups {
    Sampleable(usize),
    /// Metrics are disabled, and the driver can enable them at run time.
    HiddenUntilEnabled,
}

fn device_groups(dev: &Device, simulated: bool, uuid: &str, layouts: &LayoutSet) -> (Check, Groups) {
    let name = format!("metric groups of {}", dev.info.name);
    let groups = match dev.metric_groups() {
        Ok(g) => g,
        Err(e) => {
            let check = Check::warn(name, e.to_string(), "see the hint above; `zescope list` shows the same");
            return (check, Groups::Sampleable(0));
        }
    };
    if groups.is_empty() {
        return if dev.extensions().enable_metrics.is_some() {
            let fix = "none while metrics are disabled; zescope enables them at run time when it opens the device";
            (Check::warn(name, "no metric groups", fix), Groups::HiddenUntilEnabled)
        } else {
            let fix =
                "run zescope with ZET_ENABLE_METRICS=1 (its default); if it is set, the device has no metric groups";
            (Check::warn(name, "no metric groups", fix), Groups::Sampleable(0))
        };
    }
    let mut lines = Vec::new();
    let (mut ok, mut no_layout) = (0, 0);
    for g in &groups {
        let metrics = g.metrics().unwrap_or_default();
        let per_metric = metrics.iter().filter(|m| m.info.exports_dma_buf()).count();
        let target = Owner { simulated, driver_uuid: uuid, device: &dev.info.name, group: &g.info.name };
        if g.info.tracer_based() {
            match zescope_ze::tracer::available(&g.ze) {
                Ok(()) => {
                    ok += 1;
                    lines.push(format!("{}: tracer-based; read with the metric tracer", g.info.name));
                }
                Err(e) => lines.push(format!("{}: tracer-based, but {e}: not read", g.info.name)),
            }
            continue;
        }
        let verdict =
            classify(&g.info.export, per_metric, g.info.metric_count, layouts.select(&target).map(|l| &l.name));
        lines.push(match &verdict {
            GroupVerdict::Sampleable { how, layout } => {
                ok += 1;
                format!("{}: {how}, layout {layout:?}", g.info.name)
            }
            GroupVerdict::NoLayout { how } => {
                no_layout += 1;
                format!("{}: {how}, but no layout describes it", g.info.name)
            }
            GroupVerdict::NoExport(why)
                if g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0 =>
            {
                ok += 1;
                let why = why.trim_end_matches(" (cannot be sampled)");
                format!("{}: {why}; read with the time-based metric streamer", g.info.name)
            }
            GroupVerdict::NoExport(why) => format!("{}: {why}", g.info.name),
        });
    }
    let summary = format!("{ok} of {} groups can be sampled", groups.len());
    let detail = format!("{summary}\n{}", lines.join("\n"));
    let check = if ok > 0 {
        Check::ok(name, detail)
    } else if no_layout > 0 {
        Check::warn(
            name,
            detail,
            format!(
                "write a layout for the group in {} (`zescope list --metrics` shows the names to match)",
                zescope_sampler::layout::where_to_add(zescope_sampler::layout::user_dir().as_deref())
            ),
        )
    } else {
        Check::warn(
            name,
            detail,
            "zescope needs a driver that exports metric memory (ZET_experimental_metric_export_memory); \
             a newer driver may",
        )
    };
    (check, Groups::Sampleable(ok))
}

/// What a group offers: its own export flag, how many of its metrics export, and the name of
/// the layout that matches it.
pub(crate) fn classify(
    export: &GroupExport,
    per_metric: usize,
    metric_count: u32,
    layout: Option<&String>,
) -> GroupVerdict {
    let how = match (export, per_metric) {
        (GroupExport::DmaBuf, _) => "exports one DMA-BUF for the group".to_owned(),
        (_, n) if n > 0 => format!("{n} of {metric_count} metrics export DMA-BUF"),
        (GroupExport::Unknown(why), _) => return GroupVerdict::NoExport(format!("export unknown: {why}")),
        (GroupExport::No, _) => return GroupVerdict::NoExport("exports no memory (cannot be sampled)".into()),
    };
    match layout {
        Some(l) => GroupVerdict::Sampleable { how, layout: l.clone() },
        None => GroupVerdict::NoLayout { how },
    }
}

#[cfg(test)]
mod tests {
    use ze_sim::config::{Export, MetricsEnable};

    use super::*;
    use crate::{Status, sim_loader};

    #[test]
    fn classifies_groups_by_export_and_layout() {
        let l = "ze-sim ComputeBasic".to_owned();
        assert!(matches!(classify(&GroupExport::DmaBuf, 0, 5, Some(&l)), GroupVerdict::Sampleable { .. }));
        assert_eq!(
            classify(&GroupExport::No, 3, 3, None),
            GroupVerdict::NoLayout { how: "3 of 3 metrics export DMA-BUF".into() }
        );
        assert!(matches!(classify(&GroupExport::No, 0, 1, Some(&l)), GroupVerdict::NoExport(_)));
        let unknown = classify(&GroupExport::Unknown("pNext overwritten".into()), 0, 4, Some(&l));
        assert_eq!(unknown, GroupVerdict::NoExport("export unknown: pNext overwritten".into()));
    }

    #[test]
    fn a_tracer_based_group_without_the_tracer_entry_points_is_said_not_read() {
        let loader = sim_loader(|c| c.empty_entry_points = vec!["zetMetricTracerDecodeExp".into()]);
        let checks = group_checks(&loader, &LayoutSet::built_in());
        let gpu = checks.iter().find(|c| c.name == "metric groups of ze-sim GPU").unwrap();
        assert!(gpu.detail.starts_with("4 of 5 groups can be sampled"), "{}", gpu.detail);
        assert!(
            gpu.detail.contains("KernelTrace: tracer-based, but the Level Zero loader lacks zetMetricTracerDecodeExp"),
            "{}",
            gpu.detail
        );
    }

    #[test]
    fn the_default_simulated_device_has_sampleable_groups() {
        let checks = group_checks(&sim_loader(|_| {}), &LayoutSet::built_in());
        assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
        let gpu = checks.iter().find(|c| c.name == "metric groups of ze-sim GPU").unwrap();
        assert!(gpu.detail.starts_with("5 of 5 groups can be sampled"), "{}", gpu.detail);
        assert!(gpu.detail.contains("KernelTrace: tracer-based; read with the metric tracer"), "{}", gpu.detail);
        assert!(
            gpu.detail.contains("EuStallSampling: exports no memory; read with the time-based metric streamer"),
            "{}",
            gpu.detail
        );
        assert!(
            gpu.detail.contains("RenderBasic: exports no memory; read with the time-based metric streamer"),
            "{}",
            gpu.detail
        );
        assert!(gpu.detail.contains("ComputeBasic: exports one DMA-BUF for the group, layout"), "{}", gpu.detail);
        // The streamer's timestamp metric exports nothing.
        assert!(gpu.detail.contains("MemoryTraffic: 3 of 4 metrics export DMA-BUF"), "{}", gpu.detail);
        assert!(checks.iter().any(|c| c.name == "metric groups of ze-sim GPU tile 0"));
    }

    #[test]
    fn a_group_no_way_reads_is_named_with_why() {
        let checks = group_checks(&sim_loader(|c| c.unreadable_group = true), &LayoutSet::built_in());
        let gpu = checks.iter().find(|c| c.name == "metric groups of ze-sim GPU").unwrap();
        assert!(gpu.detail.starts_with("5 of 6 groups can be sampled"), "{}", gpu.detail);
        assert!(gpu.detail.contains("Unreadable: exports no memory"), "{}", gpu.detail);
    }

    #[test]
    fn no_layouts_warn_per_device_and_fail_overall() {
        // No group the streamer or the tracer could read either (the tile's time-based group
        // included).
        let no_stream = |c: &mut ze_sim::SimConfig| {
            let unstreamed = |d: &mut ze_sim::config::DeviceConfig| {
                d.groups.retain(|g| !g.tracer);
                d.groups.iter_mut().for_each(|g| g.stream = false);
            };
            for d in &mut c.devices {
                unstreamed(d);
                d.sub_devices.iter_mut().for_each(unstreamed);
            }
        };
        let checks = group_checks(&sim_loader(no_stream), &LayoutSet::default());
        let gpu = checks.iter().find(|c| c.name == "metric groups of ze-sim GPU").unwrap();
        assert_eq!(gpu.status, Status::Warn);
        let fix = gpu.fix.as_deref().unwrap();
        let dir = zescope_sampler::layout::user_dir().unwrap();
        assert!(fix.contains(&format!("{}/", dir.display())) && !fix.contains("docs/"), "{fix}");
        let last = checks.last().unwrap();
        assert_eq!((last.name.as_str(), last.status), ("sampleable groups", Status::Fail));
    }

    #[test]
    fn a_driver_without_export_is_named_as_the_reason() {
        let l = sim_loader(|c| {
            for d in &mut c.devices {
                d.sub_devices.clear();
                d.groups.retain(|g| !g.tracer);
                for g in &mut d.groups {
                    g.export = Export::None;
                    g.stream = false;
                }
            }
        });
        let checks = group_checks(&l, &LayoutSet::built_in());
        let gpu = checks.iter().find(|c| c.name == "metric groups of ze-sim GPU").unwrap();
        assert_eq!(gpu.status, Status::Warn);
        assert!(gpu.fix.as_deref().unwrap().contains("ZET_experimental_metric_export_memory"));
        assert_eq!(checks.last().unwrap().status, Status::Fail);
    }

    #[test]
    fn hidden_groups_point_at_run_time_enable() {
        let l = sim_loader(|c| c.metrics = MetricsEnable::RuntimeOnly);
        let checks = group_checks(&l, &LayoutSet::built_in());
        let gpu = checks.iter().find(|c| c.name == "metric groups of ze-sim GPU").unwrap();
        assert_eq!((gpu.status, gpu.detail.as_str()), (Status::Warn, "no metric groups"));
        assert!(gpu.fix.as_deref().unwrap().contains("enables them at run time"), "{gpu:?}");
        // not known to be unsampleable: a warning, not a failure
        let last = checks.last().unwrap();
        assert_eq!((last.name.as_str(), last.status), ("sampleable groups", Status::Warn));
    }

    #[test]
    fn unusable_layout_files_are_named_with_the_fix() {
        let set = LayoutSet::built_in();
        let c = layouts_check(&set, &[]);
        assert_eq!(c.status, Status::Ok);
        assert!(c.detail.ends_with("built in, 0 from your layout directory)"), "{c:?}");
        let bad = zescope_sampler::layout::LayoutFileError {
            origin: "/home/u/.config/zescope/layouts/gpu.ron".into(),
            message: "1:5: expected `Layout`".into(),
        };
        let c = layouts_check(&set, &[bad]);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("skipped:\nlayout file /home/u/.config/zescope/layouts/gpu.ron: 1:5"), "{c:?}");
        assert!(c.fix.unwrap().contains("docs/layout-format.md"));
    }

    #[test]
    fn catch_all_layouts_are_warned_about_with_their_file() {
        let mut set = LayoutSet::built_in();
        let text = "Layout(name: \"any\", matches: [()], counters: MetricOrder(first: 0, stride: 8))";
        set.add_file("/home/u/.config/zescope/layouts/any.ron", text).unwrap();
        let c = layouts_check(&set, &[]);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("catch-all (no magic, any driver):\n/home/u/.config/zescope/layouts/any.ron"));
        assert!(c.detail.contains("simulated driver only"), "{c:?}");
        assert!(c.fix.unwrap().contains("magic"));
    }
}
