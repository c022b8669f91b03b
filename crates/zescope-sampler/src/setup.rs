//! Starting a run: per device (target) its context, groups (checked for distinct domains), each
//! group read by the way that claims it (`read/`), what the ways need before the
//! activation, the activation, then each group's streams as its way opens them and the
//! device's own (telemetry). Whatever was set up when a step fails is torn down by `RunParts`
//! before the error is returned.
//!
//! A run over several devices starts whole or not at all: when one device's setup fails, the
//! devices set up before it are torn down and the error names the device (its name first).

use crate::layout::LayoutSet;
use zescope_ze::{Context, CreateGroupError, Device, Loader, Metric, MetricGroup};

use super::claims::{self, Claim};
use super::errors;
use super::protocol::{DevicePath, RunConfig, RunInfo, SamplerError, StreamInfo};
use super::read::{self, Dev, Group, Opened, Prepared, Way};
use super::run::Run;
use super::teardown::{DeviceContext, DeviceParts, Pending, RunParts, Teardown};

pub(crate) fn find_device(loader: &Loader, path: DevicePath) -> Result<(Device, bool), SamplerError> {
    let not_found = || errors::config(format!("device {path:?} does not exist"), Some("refresh the device list"));
    let driver = loader.drivers.get(path.driver).ok_or_else(not_found)?;
    let simulated = driver.info.simulated || loader.origin == zescope_ze::Origin::BuiltInSim;
    let devices = driver.devices().map_err(|e| errors::ze("listing devices", &e))?;
    let root = devices.into_iter().nth(path.device).ok_or_else(not_found)?;
    match path.sub_device {
        None => Ok((root, simulated)),
        Some(s) => {
            let subs = root.sub_devices().map_err(|e| errors::ze("listing sub-devices", &e))?;
            Ok((subs.into_iter().nth(s).ok_or_else(not_found)?, simulated))
        }
    }
}

/// Starts a run. On error, everything already set up has been torn down (a disable the driver
/// refused is added to `pending`).
pub(crate) fn start(
    loader: &Loader,
    (layouts, batch): (&LayoutSet, std::time::Duration),
    cfg: &RunConfig,
    run: u64,
    wait: std::time::Duration,
    pending: &mut Vec<Pending>,
) -> Result<Run, SamplerError> {
    check_targets(cfg)?;
    let several = cfg.targets.len() > 1;
    let mut parts = RunParts::new();
    let mut notices = Vec::new();
    let mut streams = Vec::new();
    let mut infos = Vec::new();
    let mut devices = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut refused: Vec<Refused> = Vec::new();
    let mut simulated = false;
    for (t, target) in cfg.targets.iter().enumerate() {
        let before = notices.len();
        let set_up =
            start_device(&mut parts, (loader, wait), (layouts, batch), cfg, t, &names, (&mut notices, &mut refused));
        let (device, name, sim, opened) = match set_up {
            Ok(x) => x,
            Err((mut e, name)) => {
                if several {
                    let name = name.unwrap_or_else(|| format!("device {:?}", target.device));
                    e.message = format!("{name}: {}", e.message);
                }
                return Err(with_teardown(e, parts.finish(), pending));
            }
        };
        simulated |= sim;
        if several {
            for n in &mut notices[before..] {
                *n = format!("{name}: {n}");
            }
        }
        for (stream, mut info) in opened.at.into_iter().zip(opened.infos) {
            info.index = streams.len();
            streams.push(stream);
            infos.push(info);
        }
        names.push(name);
        devices.push(device);
    }
    // The groups the driver refused (a second streamer on a device that allows one) are not in
    // the run.
    let mut config = cfg.clone();
    for r in &refused {
        config.targets[r.target].groups.retain(|g| *g != r.group);
    }
    let processes = match cfg.telemetry {
        true => match super::process_reader::ProcessReaders::plan(&devices, &names, &mut notices) {
            Ok(p) => p,
            Err(e) => return Err(with_teardown(e, parts.finish(), pending)),
        },
        false => Default::default(),
    };
    let info = RunInfo { run, config, devices: names, simulated, streams: infos, imports: parts.imports(), notices };
    let mut r = Run::new(info, parts, streams, devices).with_processes(processes);
    match r.check_first() {
        Ok(()) => Ok(r),
        Err(e) => Err(with_teardown(e, r.stop(), pending)),
    }
}

/// At least one target, each with a group, no device twice.
fn check_targets(cfg: &RunConfig) -> Result<(), SamplerError> {
    if cfg.targets.is_empty() {
        return Err(errors::config("no device chosen", Some("pick a device and its metric groups")));
    }
    for (i, t) in cfg.targets.iter().enumerate() {
        if t.groups.is_empty() && !cfg.telemetry {
            let message = match cfg.targets.len() {
                1 => "no metric group chosen".to_owned(),
                _ => format!("no metric group chosen for device {:?}", t.device),
            };
            return Err(errors::config(message, Some("pick a group that exports memory")));
        }
        if cfg.targets[..i].iter().any(|o| o.device == t.device) {
            return Err(errors::config(
                format!("device {:?} is named twice in one run", t.device),
                Some("name each device once, with all of its groups"),
            ));
        }
    }
    Ok(())
}

type DeviceSetup = (Device, String, bool, Streams);

/// A device's streams as set up: each one's way (its index in `RunParts::ways`) and its index
/// among that way's streams, and what each announces.
#[derive(Default)]
struct Streams {
    at: Vec<(usize, usize)>,
    infos: Vec<StreamInfo>,
}

impl Streams {
    /// Adds what path `p` opened.
    fn add(&mut self, p: usize, opened: Opened) {
        for (s, info) in opened.streams {
            self.infos.push(StreamInfo { index: self.at.len(), ..info });
            self.at.push((p, s));
        }
    }
}

/// Sets up target `t` as device `t` of `parts`: context, metrics enabled, groups. The error
/// comes with the device's name when it was found; groups the driver refused are left out (in
/// `refused`, with a notice).
fn start_device(
    parts: &mut RunParts,
    (loader, wait): (&Loader, std::time::Duration),
    (layouts, batch): (&LayoutSet, std::time::Duration),
    cfg: &RunConfig,
    t: usize,
    earlier: &[String],
    (notices, refused): (&mut Vec<String>, &mut Vec<Refused>),
) -> Result<DeviceSetup, (SamplerError, Option<String>)> {
    let target = &cfg.targets[t];
    let (device, simulated) = find_device(loader, target.device).map_err(|e| (e, None))?;
    let name = if earlier.contains(&device.info.name) {
        // Series name their device: two devices of one name must not share series.
        let p = target.device;
        match p.sub_device {
            Some(s) => format!("{} #{}.{}.{s}", device.info.name, p.driver, p.device),
            None => format!("{} #{}.{}", device.info.name, p.driver, p.device),
        }
    } else {
        device.info.name.clone()
    };
    let fail = |e: SamplerError| (e, Some(name.clone()));
    // Before the first call on the device: no other thread of this process may touch it while
    // the run holds it (`claims`).
    let root = claims::root_of(loader, target.device).map_err(fail)?;
    let claim = Claim::take(&root, &name, wait).map_err(fail)?;
    let driver = &loader.drivers[target.device.driver];
    let ctx = Context::create(driver).map_err(|e| fail(errors::ze("creating a context", &e)))?;
    let mut dc = DeviceContext { ctx, device: device.clone(), path: target.device, enabled_metrics: false, claim };
    // Where the driver can enable metrics at run time, do (and disable them at teardown). An
    // optional call: a driver without it (or refusing it) has its metrics enabled otherwise.
    match device.enable_metrics() {
        Ok(enabled) => dc.enabled_metrics = enabled,
        Err(e) if super::optional::is_fatal(&e) => {
            let _ = dc.ctx.destroy();
            return Err(fail(errors::ze("enabling metrics", &e)));
        }
        Err(e) => notices.push(super::optional::off("run-time metrics enable", &e)),
    }
    let d = parts.add_device(dc);
    let RunParts { devices, ways } = parts;
    let mut dev = Dev {
        d,
        device: &device,
        name: &name,
        driver_uuid: zescope_ze::uuid_string(&driver.info.uuid),
        simulated,
        layouts,
        cfg,
        batch,
        target,
        parts: &mut devices[d],
        notices,
    };
    let streams = build(ways, &mut dev, refused).map_err(fail)?;
    Ok((device, name, simulated, streams))
}

/// Adds teardown failures to the error that ended a setup.
fn with_teardown(mut e: SamplerError, t: Teardown, pending: &mut Vec<Pending>) -> SamplerError {
    if !t.errors.is_empty() {
        e.message = format!("{}; releasing what was set up also failed: {}", e.message, t.errors.join("; "));
    }
    pending.extend(t.pending);
    e
}

/// What to say after "has no metric group NAME": the group of that name in another case, or the
/// device's groups (the first eight).
fn groups_named(all: &[MetricGroup], name: &str) -> String {
    if let Some(g) = all.iter().find(|g| g.info.name.eq_ignore_ascii_case(name)) {
        return format!("; did you mean {:?}? (group names are case-sensitive)", g.info.name);
    }
    if all.is_empty() {
        return "; it lists none".to_owned();
    }
    let names: Vec<&str> = all.iter().take(8).map(|g| g.info.name.as_str()).collect();
    let more = if all.len() > 8 { format!(" and {} more", all.len() - 8) } else { String::new() };
    format!("; its groups: {}{more}", names.join(", "))
}

/// The part of a device's setup that can fail after its context exists: its groups, each read
/// by the way that claims it (`read::resolve`), activated together, then opened in order; the
/// device's own streams after them.
fn build(ways: &mut [Box<dyn Way>], dev: &mut Dev<'_>, refused: &mut Vec<Refused>) -> Result<Streams, SamplerError> {
    let (device, target) = (dev.device, dev.target);
    let all = device.metric_groups().map_err(|e| errors::ze("listing metric groups", &e))?;
    let mut groups: Vec<MetricGroup> = Vec::new();
    // A driver that hides its groups while metrics are disabled lists none when enabling them
    // failed: that failure is the reason to name.
    let enable_failed = match all.is_empty() {
        true => dev.notices.iter().find(|n| n.starts_with("run-time metrics enable")),
        false => None,
    };
    for name in &target.groups {
        let g = all.iter().find(|g| &g.info.name == name).ok_or_else(|| match enable_failed {
            Some(n) => errors::config(
                format!(
                    "device {} lists no metric group (it hides them while metrics are disabled): {n}",
                    device.info.name
                ),
                Some("set ZET_ENABLE_METRICS=1 before starting zescope, or see `zescope doctor`"),
            ),
            None => errors::config(
                format!("device {} has no metric group {name:?}{}", device.info.name, groups_named(&all, name)),
                Some("`zescope list` shows each device's groups and their metrics"),
            ),
        })?;
        if let Some(other) = groups.iter().find(|o| o.info.domain == g.info.domain) {
            return Err(errors::config(
                format!("metric groups {} and {} are both in domain {}", other.info.name, name, g.info.domain),
                Some("a device samples one group per domain at a time: choose one of them"),
            ));
        }
        groups.push(g.clone());
    }
    if target.custom_group {
        let g = create_group(dev.parts, &groups, &target.metrics)?;
        groups = vec![g];
    }
    // Each group's metrics and way, and what must exist before the activation (a tracer-based
    // group's exported memory is imported first); a group its way skips is not activated.
    let mut listed: Vec<(MetricGroup, Vec<Metric>, usize)> = Vec::new();
    let mut skipped: Option<SamplerError> = None;
    for g in groups {
        let metrics = g.metrics().map_err(|e| errors::ze(&format!("listing metrics of {}", g.info.name), &e))?;
        let group = Group { group: &g, metrics: &metrics };
        let w = read::resolve(ways, dev, &group, dev.cfg.via)?;
        match ways[w].before_activation(dev, &group)? {
            Prepared::Ready => listed.push((g, metrics, w)),
            Prepared::Skip(why) => {
                skipped.get_or_insert(why);
            }
        }
    }
    let refs: Vec<&MetricGroup> = listed.iter().map(|(g, ..)| g).collect();
    if !refs.is_empty() {
        dev.parts.dc.ctx.activate(device, &refs).map_err(|e| errors::ze("activating metric groups", &e))?;
        dev.parts.activation.activated = true;
    }

    let mut streams = Streams::default();
    let mut groups_read = false;
    let mut left_out: Option<SamplerError> = None;
    for (g, metrics, w) in &listed {
        let group = Group { group: g, metrics };
        let also: Vec<usize> = (0..ways.len()).filter(|&q| q != *w && ways[q].also(dev, &group)).collect();
        for q in std::iter::once(*w).chain(also) {
            let mut opened = ways[q].open(dev, &group)?;
            groups_read |= opened.reads;
            if let Some(why) = opened.refused.take() {
                refused.push(Refused { target: dev.d, group: g.info.name.clone() });
                left_out.get_or_insert(why);
            }
            streams.add(q, opened);
        }
    }
    for (q, way) in ways.iter_mut().enumerate() {
        let opened = way.open_device(dev)?;
        streams.add(q, opened);
    }
    let none = streams.at.is_empty();
    if none && let Some(why) = skipped.take() {
        return Err(why);
    }
    if !groups_read && skipped.is_none() && !target.groups.is_empty() {
        return Err(errors::config("none of the chosen metrics belongs to the chosen groups", None));
    }
    if none && let Some(why) = left_out {
        return Err(why);
    }
    if none {
        return Err(errors::config(
            format!("no metric group chosen, and {} offers no telemetry", device.info.name),
            Some("pick a metric group"),
        ));
    }
    Ok(streams)
}

/// A group left out of a run because the driver refused it: its device (index of the run's
/// targets) and name.
pub(crate) struct Refused {
    target: usize,
    group: String,
}

/// Creates a group at run time from the chosen metrics (all of the chosen groups' domain).
fn create_group(
    parts: &mut DeviceParts,
    groups: &[MetricGroup],
    metrics: &[String],
) -> Result<MetricGroup, SamplerError> {
    if metrics.is_empty() {
        return Err(errors::config("a custom group needs metrics", Some("choose the metrics to combine")));
    }
    let mut chosen = Vec::new();
    for name in metrics {
        let m = groups
            .iter()
            .find_map(|g| g.metrics().ok()?.into_iter().find(|m| &m.info.name == name))
            .ok_or_else(|| errors::config(format!("metric {name:?} is in none of the chosen groups"), None))?;
        chosen.push(m);
    }
    let device = parts.dc.device.clone();
    let group = device.create_metric_group(c"zescope custom", &chosen).map_err(|e| match e {
        CreateGroupError::Ze(z) => errors::ze("creating a metric group", &z),
        other => errors::config(other.to_string(), Some("sample predefined groups instead")),
    })?;
    let plain = group.group().clone();
    parts.activation.created.push(group);
    Ok(plain)
}
