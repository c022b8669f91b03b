//! Starting a run: per device (target) its context, groups (checked for distinct domains),
//! activation, export queries, dedup by file identity, one import per buffer, layouts. Whatever
//! was set up when a step fails is torn down by `RunParts` before the error is returned.
//!
//! A run over several devices starts whole or not at all: when one device's setup fails, the
//! devices set up before it are torn down and the error names the device (its name first).

use std::collections::HashSet;

use crate::layout::decode::MetricDesc;
use crate::layout::{Decoder, LayoutSet, Owner};
use zescope_ze::{Context, CreateGroupError, Device, GroupExport, Loader, Metric, MetricGroup};

use super::dmabuf::{self, ImportError};
use super::errors;
use super::protocol::{DevicePath, ReadPath, RunConfig, RunInfo, SamplerError, SeriesInfo, StreamInfo, Target, Via};
use super::run::{Reader, Run, StreamReader};
use super::streamer_setup::{Refused, StreamedGroup, open_streamed};
use super::teardown::{DeviceContext, Pending, RunParts, Teardown};

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

fn metric_descs(metrics: &[Metric]) -> Vec<MetricDesc> {
    metrics
        .iter()
        .map(|m| MetricDesc {
            name: m.info.name.clone(),
            description: m.info.description.clone(),
            unit: m.info.units.clone(),
            value_type: m.info.value_type,
            metric_type: m.info.metric_type,
        })
        .collect()
}

/// Starts a run. On error, everything already set up has been torn down (a disable the driver
/// refused is added to `pending`).
pub(crate) fn start(
    loader: &Loader,
    layouts: &LayoutSet,
    cfg: &RunConfig,
    run: u64,
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
        let set_up = start_device(&mut parts, loader, layouts, cfg, t, &names, (&mut notices, &mut refused));
        let (device, name, sim, s, i) = match set_up {
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
        for (reader, mut info) in s.into_iter().zip(i) {
            info.index = streams.len();
            streams.push(reader);
            infos.push(info);
        }
        names.push(name);
        devices.push(device);
    }
    // The groups the driver refused to stream (one streamer per device) are not in the run.
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
    match r.check_first_snapshot() {
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

type DeviceSetup = (Device, String, bool, Vec<Reader>, Vec<StreamInfo>);

/// Sets up target `t` as device `t` of `parts`: context, metrics enabled, groups. The error
/// comes with the device's name when it was found; streamed groups the driver refused are left out
/// (in `refused`, with a notice).
fn start_device(
    parts: &mut RunParts,
    loader: &Loader,
    layouts: &LayoutSet,
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
    let driver = &loader.drivers[target.device.driver];
    let ctx = Context::create(driver).map_err(|e| fail(errors::ze("creating a context", &e)))?;
    let mut dc = DeviceContext { ctx, device: device.clone(), path: target.device, enabled_metrics: false };
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
    let on = Build { d, device: &device, name: &name, driver, simulated, layouts, cfg, target };
    let (streams, infos) = build(parts, &on, notices, refused).map_err(fail)?;
    Ok((device, name, simulated, streams, infos))
}

/// One device's part of a run being built.
struct Build<'a> {
    /// Its index in `RunParts` (and `RunConfig::targets`).
    d: usize,
    device: &'a Device,
    /// Its name in the run (`RunInfo::devices`).
    name: &'a str,
    driver: &'a zescope_ze::Driver,
    simulated: bool,
    layouts: &'a LayoutSet,
    cfg: &'a RunConfig,
    target: &'a Target,
}

/// Adds teardown failures to the error that ended a setup.
fn with_teardown(mut e: SamplerError, t: Teardown, pending: &mut Vec<Pending>) -> SamplerError {
    if !t.errors.is_empty() {
        e.message = format!("{}; releasing what was set up also failed: {}", e.message, t.errors.join("; "));
    }
    pending.extend(t.pending);
    e
}

/// The part of a device's setup that can fail after its context exists.
fn build(
    parts: &mut RunParts,
    on: &Build,
    notices: &mut Vec<String>,
    refused: &mut Vec<Refused>,
) -> Result<(Vec<Reader>, Vec<StreamInfo>), SamplerError> {
    let Build { d, device, driver, simulated, layouts, cfg, target, .. } = *on;
    let all = device.metric_groups().map_err(|e| errors::ze("listing metric groups", &e))?;
    let mut groups: Vec<MetricGroup> = Vec::new();
    for name in &target.groups {
        let g = all
            .iter()
            .find(|g| &g.info.name == name)
            .ok_or_else(|| errors::config(format!("device {} has no metric group {name:?}", device.info.name), None))?;
        if let Some(other) = groups.iter().find(|o| o.info.domain == g.info.domain) {
            return Err(errors::config(
                format!("metric groups {} and {} are both in domain {}", other.info.name, name, g.info.domain),
                Some("a device samples one group per domain at a time: choose one of them"),
            ));
        }
        groups.push(g.clone());
    }
    if target.custom_group {
        let g = create_group(parts, d, &groups, &target.metrics)?;
        groups = vec![g];
    }
    // Each group's metrics and way. A tracer-based group's exported memory is queried and
    // imported before anything is activated (the order of Intel's conformance suite); without
    // the tracer's entry points its groups are left out of the run, with one notice.
    let tracer_off = zescope_ze::tracer::available(&device.ze).err();
    let mut skipped_tracer = false;
    let mut listed: Vec<(MetricGroup, Vec<Metric>, Way)> = Vec::new();
    for g in groups {
        let metrics = g.metrics().map_err(|e| errors::ze(&format!("listing metrics of {}", g.info.name), &e))?;
        let w = way(&g, &metrics, cfg.via)?;
        if w == Way::Tracer {
            if let Some(e) = &tracer_off {
                if !skipped_tracer {
                    notices.push(format!(
                        "the metric tracer is off for this run ({e}): tracer-based group {} is not read, the rest of \
                         the run goes on",
                        g.info.name
                    ));
                }
                skipped_tracer = true;
                continue;
            }
            if exports(&g, &metrics) {
                let (fd, size) = export_of(&g, &metrics)?;
                validate_export(&g.info.name, fd, size)?;
                import(parts, d, device, fd, size, &g.info.name)?;
            }
        }
        listed.push((g, metrics, w));
    }
    let refs: Vec<&MetricGroup> = listed.iter().map(|(g, ..)| g).collect();
    if !refs.is_empty() {
        parts.device_context(d).ctx.activate(device, &refs).map_err(|e| errors::ze("activating metric groups", &e))?;
        parts.activation_mut(d).activated = true;
    }

    let mut streams = Vec::new();
    let mut infos = Vec::new();
    let traced: Vec<&MetricGroup> = listed.iter().filter(|(.., w)| *w == Way::Tracer).map(|(g, ..)| g).collect();
    let mut tracer_opened = false;
    for (g, metrics, w) in &listed {
        let (g, metrics, w) = (g, &metrics[..], *w);
        if w == Way::Tracer {
            if !tracer_opened {
                tracer_opened = true;
                if let Some((reader, info)) =
                    super::tracer::open(parts, (on.d, on.device, on.name), on.target, &traced, notices)?
                {
                    infos.push(StreamInfo { index: streams.len(), ..info });
                    streams.push(Reader::Tracer(Box::new(reader)));
                }
            }
            // The mapped memory's words are read too where a layout describes them.
            let uuid = zescope_ze::uuid_string(&driver.info.uuid);
            let lt = Owner { simulated, driver_uuid: &uuid, device: &device.info.name, group: &g.info.name };
            if layouts.select_naming_group(&lt).is_none() {
                continue;
            }
        }
        if w == Way::Streamer {
            let wanted = if target.custom_group { &[][..] } else { &target.metrics[..] };
            let alone = !cfg.telemetry && cfg.targets.iter().map(|t| t.groups.len()).sum::<usize>() == 1;
            let group =
                StreamedGroup { d, device, name: on.name, group: g, metrics, wanted, interval: cfg.interval, alone };
            if let Some((reader, info)) = open_streamed(parts, &group, notices, refused)? {
                infos.push(StreamInfo { index: streams.len(), ..info });
                streams.push(reader);
            }
            continue;
        }
        let (fd, size) = export_of(g, metrics)?;
        validate_export(&g.info.name, fd, size)?;
        let uuid = zescope_ze::uuid_string(&driver.info.uuid);
        let lt = Owner { simulated, driver_uuid: &uuid, device: &device.info.name, group: &g.info.name };
        let layout = layouts.select(&lt).ok_or_else(|| {
            errors::layout(format!(
                "no layout matches metric group {} on {} (driver {})",
                g.info.name, device.info.name, lt.driver_uuid
            ))
        })?;
        let mut decoder = Decoder::new(layout, &g.info.name, &metric_descs(metrics), size)
            .map_err(|e| errors::layout(e.to_string()))?;
        if !target.custom_group {
            let wanted: Vec<String> =
                target.metrics.iter().filter(|m| metrics.iter().any(|x| &x.info.name == *m)).cloned().collect();
            if !target.metrics.is_empty() && wanted.is_empty() {
                continue;
            }
            decoder.select(&wanted).map_err(|e| errors::layout(e.to_string()))?;
        }
        let buffer = import(parts, d, device, fd, size, &g.info.name)?;
        let imported = parts.buffers_mut(d).get_mut(buffer).size;
        if decoder.span > imported {
            return Err(errors::export(format!(
                "metric group {} reports {size} bytes of exported memory, but the same buffer was imported with \
                 {imported} bytes for another group, less than its layout reads ({} bytes)",
                g.info.name, decoder.span
            )));
        }
        let read_path = parts.buffers_mut(d).get_mut(buffer).read_path();
        let series = decoder
            .fields
            .iter()
            .map(|f| SeriesInfo {
                name: f.name.clone(),
                description: f.description.clone(),
                unit: f.unit.clone(),
                kind: f.kind,
                wrap: if f.kind.is_running_total() { f.value.wrap().map(|w| w * f.scale.abs()) } else { None },
            })
            .collect();
        infos.push(StreamInfo {
            index: streams.len(),
            target: d,
            device: on.name.to_owned(),
            group: g.info.name.clone(),
            layout: decoder.layout.clone(),
            series,
            read_path,
        });
        streams.push(Reader::Export(Box::new(StreamReader::new(d, buffer, decoder))));
    }
    let groups_read = !streams.is_empty() || tracer_opened;
    if cfg.telemetry {
        let planned = super::sysman::plan(device, cfg.interval, notices)
            .map_err(|e| errors::ze(&format!("reading the telemetry of {}", device.info.name), &e))?;
        if let Some((reader, series)) = planned {
            infos.push(StreamInfo {
                index: streams.len(),
                target: d,
                device: on.name.to_owned(),
                group: crate::protocol::telemetry::GROUP.to_owned(),
                layout: crate::protocol::telemetry::LAYOUT.to_owned(),
                series,
                read_path: ReadPath::Sysman,
            });
            streams.push(Reader::Telemetry(reader));
        }
    }
    if streams.is_empty()
        && skipped_tracer
        && let Some(e) = &tracer_off
    {
        return Err(errors::config(
            format!("the chosen groups are tracer-based and the metric tracer is not offered ({e})"),
            Some("use a Level Zero loader of API 1.10 or newer (`zescope doctor` shows the loader's version)"),
        ));
    }
    if !groups_read && !skipped_tracer && !target.groups.is_empty() {
        return Err(errors::config("none of the chosen metrics belongs to the chosen groups", None));
    }
    if streams.is_empty() && refused.iter().any(|r| r.target == d) {
        return Err(errors::config(
            format!("every metric group chosen on {} was refused: its metric stream is held elsewhere", on.name),
            Some(
                "close the profiler (or the other zescope) holding it, or read this device through its exported memory",
            ),
        ));
    }
    if streams.is_empty() {
        return Err(errors::config(
            format!("no metric group chosen, and {} offers no telemetry", device.info.name),
            Some("pick a metric group"),
        ));
    }
    Ok((streams, infos))
}

/// The three ways to read a metric group (telemetry is not a group).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Way {
    Export,
    Streamer,
    Tracer,
}

/// Does `g` export memory (itself or through its metrics)?
fn exports(g: &MetricGroup, metrics: &[Metric]) -> bool {
    g.info.export == GroupExport::DmaBuf || metrics.iter().any(|m| m.info.exports_dma_buf())
}

/// How `g` is read under `via`: exported memory first where it has it (`auto`), else the
/// time-based streamer where its sampling type says TIME_BASED; an error says why neither fits.
fn way(g: &MetricGroup, metrics: &[Metric], via: Via) -> Result<Way, SamplerError> {
    let name = &g.info.name;
    if g.info.tracer_based() {
        return match via {
            Via::Auto | Via::Tracer => Ok(Way::Tracer),
            _ => Err(errors::config(
                format!("metric group {name}: {}", zescope_ze::TRACER_BASED_UNREAD),
                Some("read it with the metric tracer (`--via tracer` or auto)"),
            )),
        };
    }
    let time = g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
    match (via, exports(g, metrics), time) {
        (Via::Tracer, ..) => Err(errors::config(
            format!("metric group {name} is not tracer-based: the metric tracer cannot read it"),
            Some("read it through its exported memory or the streamer (`--via auto`)"),
        )),
        (Via::Auto | Via::Export, true, _) => Ok(Way::Export),
        (Via::Auto | Via::Streamer, _, true) => Ok(Way::Streamer),
        (Via::Export, false, _) => export_of(g, metrics).map(|_| Way::Export).map_err(|mut e| {
            if time {
                e.hint = Some("read it with the time-based streamer instead (`--via streamer` or auto)".into());
            }
            e
        }),
        (Via::Streamer, _, false) => Err(errors::config(
            format!("metric group {name} has no time-based sampling: the metric streamer cannot read it"),
            Some("read it through its exported memory (`--via export` or auto)"),
        )),
        (Via::Auto, false, false) => export_of(g, metrics).map(|_| Way::Export).map_err(|mut e| {
            e.message = format!("{}, and it has no time-based sampling for the metric streamer", e.message);
            e
        }),
    }
}

/// The fd and size a group exports: its own, or the one buffer its metrics share.
fn export_of(g: &MetricGroup, metrics: &[Metric]) -> Result<(i32, usize), SamplerError> {
    let name = &g.info.name;
    if g.info.export == GroupExport::DmaBuf {
        let e = g.query_export().map_err(|e| errors::export(format!("metric group {name}: {e}")))?;
        return Ok((e.fd, e.size));
    }
    let exporting: Vec<&Metric> = metrics.iter().filter(|m| m.info.exports_dma_buf()).collect();
    if exporting.is_empty() {
        let why = match &g.info.export {
            GroupExport::Unknown(why) => format!("its export properties are unusable ({why})"),
            _ => "it exports no memory".to_owned(),
        };
        return Err(export(format!("metric group {name} cannot be sampled: {why}")));
    }
    let mut ids = HashSet::new();
    let mut chosen: Option<(i32, usize)> = None;
    for m in exporting {
        let e = m.query_export().map_err(|e| errors::export(format!("metric {} of {name}: {e}", m.info.name)))?;
        validate_export(&format!("{name}/{}", m.info.name), e.fd, e.size)?;
        let id = dmabuf::file_id(e.fd)
            .map_err(|err| errors::export(format!("metric {}: fd {}: {err}", m.info.name, e.fd)))?;
        ids.insert(id);
        // Metrics of one buffer may report different sizes: each was checked against the file,
        // so the largest is the buffer's.
        if chosen.is_none_or(|(_, size)| e.size > size) {
            chosen = Some((e.fd, e.size));
        }
    }
    if ids.len() > 1 {
        return Err(errors::export(format!(
            "the metrics of group {name} export {} different buffers; zescope reads one buffer per group",
            ids.len()
        )));
    }
    chosen.ok_or_else(|| errors::export(format!("metric group {name}: no metric reported its exported memory")))
}

fn export(message: String) -> SamplerError {
    errors::export(message)
}

/// `fd >= 0`, `size > 0`, and `size` no larger than the file behind `fd` (when it has a size).
fn validate_export(what: &str, fd: i32, size: usize) -> Result<(), SamplerError> {
    if fd < 0 {
        return Err(errors::export(format!("{what}: the driver reported fd {fd} for its exported memory")));
    }
    if size == 0 {
        return Err(errors::export(format!("{what}: the driver reported an exported buffer of size 0")));
    }
    match dmabuf::file_size(fd) {
        Err(e) => Err(errors::export(format!("{what}: the exported fd {fd} is not usable: {e}"))),
        Ok(actual) if actual > 0 && size as u64 > actual => Err(errors::export(format!(
            "{what}: the driver reports {size} bytes of exported memory but the buffer behind fd {fd} has {actual}"
        ))),
        Ok(_) => Ok(()),
    }
}

fn import(
    parts: &mut RunParts,
    d: usize,
    device: &Device,
    fd: i32,
    size: usize,
    group: &str,
) -> Result<usize, SamplerError> {
    parts.import(d, device, fd, size).map_err(|e| match e {
        ImportError::Fd(m) => errors::export(format!("importing the memory of {group}: {m}")),
        ImportError::Ze(z) => errors::ze(&format!("importing the memory of {group}"), &z),
    })
}

/// Creates a group at run time from the chosen metrics (all of the chosen groups' domain).
fn create_group(
    parts: &mut RunParts,
    d: usize,
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
    let device = parts.device_context(d).device.clone();
    let group = device.create_metric_group(c"zescope custom", &chosen).map_err(|e| match e {
        CreateGroupError::Ze(z) => errors::ze("creating a metric group", &z),
        other => errors::config(other.to_string(), Some("sample predefined groups instead")),
    })?;
    let plain = group.group().clone();
    parts.activation_mut(d).created.push(group);
    Ok(plain)
}
