//! Starting a run: device, context, groups (checked for distinct domains), activation, export
//! queries, dedup by file identity, one import per buffer, layouts. Whatever was set up when a
//! step fails is torn down by `RunParts` before the error is returned.

use std::collections::HashSet;

use crate::layout::decode::MetricDesc;
use crate::layout::{Decoder, LayoutSet, Target};
use crate::ze::{Context, CreateGroupError, Device, GroupExport, Loader, Metric, MetricGroup};

use super::dmabuf::{self, ImportError};
use super::errors;
use super::protocol::{DevicePath, RunConfig, RunInfo, SamplerError, SeriesInfo, StreamInfo, Via};
use super::run::{Reader, Run, StreamReader};
use super::teardown::{DeviceContext, Pending, RunParts, Teardown};

pub fn find_device(loader: &Loader, path: DevicePath) -> Result<(Device, bool), SamplerError> {
    let not_found = || errors::config(format!("device {path:?} does not exist"), Some("refresh the device list"));
    let driver = loader.drivers.get(path.driver).ok_or_else(not_found)?;
    let simulated = driver.info.simulated || loader.origin == crate::ze::Origin::BuiltInSim;
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
    use level_zero_sys::*;
    metrics
        .iter()
        .map(|m| MetricDesc {
            name: m.info.name.clone(),
            description: m.info.description.clone(),
            unit: m.info.units.clone(),
            value_type: m.info.value_type,
            cumulative: matches!(m.info.metric_type, ZET_METRIC_TYPE_EVENT | ZET_METRIC_TYPE_DURATION),
        })
        .collect()
}

/// Starts a run. On error, everything already set up has been torn down (a disable the driver
/// refused is added to `pending`).
pub fn start(
    loader: &Loader,
    layouts: &LayoutSet,
    cfg: &RunConfig,
    run: u64,
    pending: &mut Vec<Pending>,
) -> Result<Run, SamplerError> {
    if cfg.groups.is_empty() && !cfg.telemetry {
        return Err(errors::config("no metric group chosen", Some("pick a group that exports memory")));
    }
    let (device, simulated) = find_device(loader, cfg.device)?;
    let driver = &loader.drivers[cfg.device.driver];
    let mut notices = Vec::new();
    let mut dc = DeviceContext {
        ctx: Context::create(driver).map_err(|e| errors::ze("creating a context", &e))?,
        device: device.clone(),
        path: cfg.device,
        enabled_metrics: false,
    };
    // Where the driver can enable metrics at run time, do (and disable them at teardown). An
    // optional call: a driver without it (or refusing it) has its metrics enabled otherwise.
    match device.enable_metrics() {
        Ok(enabled) => dc.enabled_metrics = enabled,
        Err(e) if super::optional::is_fatal(&e) => {
            let _ = dc.ctx.destroy();
            return Err(errors::ze("enabling metrics", &e));
        }
        Err(e) => notices.push(super::optional::off("run-time metrics enable", &e)),
    }
    let mut parts = RunParts::new(dc);
    match build(&mut parts, &device, driver, simulated, layouts, cfg, &mut notices) {
        Ok((streams, infos)) => {
            let imports = parts.buffers_mut().len();
            let info = RunInfo {
                run,
                config: cfg.clone(),
                device: device.info.name.clone(),
                simulated,
                streams: infos,
                imports,
                notices,
            };
            let mut r = Run::new(info, parts, streams, device);
            match r.check_first_snapshot() {
                Ok(()) => Ok(r),
                Err(e) => Err(with_teardown(e, r.stop(), pending)),
            }
        }
        Err(e) => Err(with_teardown(e, parts.finish(), pending)),
    }
}

/// Adds teardown failures to the error that ended a setup.
fn with_teardown(mut e: SamplerError, t: Teardown, pending: &mut Vec<Pending>) -> SamplerError {
    if !t.errors.is_empty() {
        e.message = format!("{}; releasing what was set up also failed: {}", e.message, t.errors.join("; "));
    }
    pending.extend(t.pending);
    e
}

/// The part of a run's setup that can fail after the context exists.
fn build(
    parts: &mut RunParts,
    device: &Device,
    driver: &crate::ze::Driver,
    simulated: bool,
    layouts: &LayoutSet,
    cfg: &RunConfig,
    notices: &mut Vec<String>,
) -> Result<(Vec<Reader>, Vec<StreamInfo>), SamplerError> {
    let all = device.metric_groups().map_err(|e| errors::ze("listing metric groups", &e))?;
    let mut groups: Vec<MetricGroup> = Vec::new();
    for name in &cfg.groups {
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
    if cfg.custom_group {
        let g = create_group(parts, &groups, &cfg.metrics)?;
        groups = vec![g];
    }
    let refs: Vec<&MetricGroup> = groups.iter().collect();
    if !refs.is_empty() {
        parts.device_context().ctx.activate(device, &refs).map_err(|e| errors::ze("activating metric groups", &e))?;
        parts.activation_mut().activated = true;
    }

    let mut streams = Vec::new();
    let mut infos = Vec::new();
    for g in &groups {
        let metrics = g.metrics().map_err(|e| errors::ze(&format!("listing metrics of {}", g.info.name), &e))?;
        if way(g, &metrics, cfg.via)? == Way::Streamer {
            let wanted = if cfg.custom_group { &[][..] } else { &cfg.metrics[..] };
            let Some((series, columns)) = super::streams::plan(&metrics, wanted) else {
                continue;
            };
            let (open, dc) = parts.streams_mut();
            let (period, notify) = streamer_request(cfg.interval);
            let i = open
                .open(&dc.ctx, device, g, period, notify, notices)
                .map_err(|e| streamer_open_error(&g.info.name, &e))?;
            let (period, notify) = open.granted(i);
            let reader = super::streams::StreamerReader::new(i, open, g.clone(), device.clone(), columns);
            infos.push(StreamInfo {
                index: streams.len(),
                group: g.info.name.clone(),
                layout: super::streams::describe(period, notify),
                series,
                read_path: "streamer",
            });
            streams.push(Reader::Streamer(reader));
            continue;
        }
        let (fd, size) = export_of(g, &metrics)?;
        validate_export(&g.info.name, fd, size)?;
        let target = Target {
            simulated,
            driver_uuid: &crate::ze::uuid_string(&driver.info.uuid),
            device: &device.info.name,
            group: &g.info.name,
        };
        let layout = layouts.select(&target).ok_or_else(|| {
            errors::layout(format!(
                "no layout matches metric group {} on {} (driver {})",
                g.info.name, device.info.name, target.driver_uuid
            ))
        })?;
        let mut decoder = Decoder::new(layout, &g.info.name, &metric_descs(&metrics), size)
            .map_err(|e| errors::layout(e.to_string()))?;
        if !cfg.custom_group {
            let wanted: Vec<String> =
                cfg.metrics.iter().filter(|m| metrics.iter().any(|x| &x.info.name == *m)).cloned().collect();
            if !cfg.metrics.is_empty() && wanted.is_empty() {
                continue;
            }
            decoder.select(&wanted).map_err(|e| errors::layout(e.to_string()))?;
        }
        let buffer = import(parts, device, fd, size, &g.info.name)?;
        let imported = parts.buffers_mut().get_mut(buffer).size;
        if decoder.span > imported {
            return Err(errors::export(format!(
                "metric group {} reports {size} bytes of exported memory, but the same buffer was imported with \
                 {imported} bytes for another group, less than its layout reads ({} bytes)",
                g.info.name, decoder.span
            )));
        }
        let read_path = parts.buffers_mut().get_mut(buffer).read_path().name();
        let series = decoder
            .fields
            .iter()
            .map(|f| SeriesInfo {
                name: f.name.clone(),
                description: f.description.clone(),
                unit: f.unit.clone(),
                kind: f.kind,
                wrap: if f.kind == crate::layout::Kind::Cumulative { f.value.wrap() } else { None },
            })
            .collect();
        infos.push(StreamInfo {
            index: streams.len(),
            group: g.info.name.clone(),
            layout: decoder.layout.clone(),
            series,
            read_path,
        });
        streams.push(Reader::Export(StreamReader::new(buffer, decoder)));
    }
    let groups_read = !streams.is_empty();
    if cfg.telemetry {
        let planned = super::telemetry::plan(device, cfg.interval, notices)
            .map_err(|e| errors::ze(&format!("reading the telemetry of {}", device.info.name), &e))?;
        if let Some((reader, series)) = planned {
            infos.push(StreamInfo {
                index: streams.len(),
                group: super::telemetry::GROUP.to_owned(),
                layout: super::telemetry::READ_PATH.to_owned(),
                series,
                read_path: super::telemetry::READ_PATH,
            });
            streams.push(Reader::Telemetry(reader));
        }
    }
    if !groups_read && !cfg.groups.is_empty() {
        return Err(errors::config("none of the chosen metrics belongs to the chosen groups", None));
    }
    if streams.is_empty() {
        return Err(errors::config(
            format!("no metric group chosen, and {} offers no telemetry", device.info.name),
            Some("pick a metric group"),
        ));
    }
    Ok((streams, infos))
}

/// The two ways to read a group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Way {
    Export,
    Streamer,
}

/// Does `g` export memory (itself or through its metrics)?
fn exports(g: &MetricGroup, metrics: &[Metric]) -> bool {
    g.info.export == GroupExport::DmaBuf || metrics.iter().any(|m| m.info.exports_dma_buf())
}

/// How `g` is read under `via`: exported memory first where it has it (`auto`), else the
/// time-based streamer where its sampling type says TIME_BASED; an error says why neither fits.
fn way(g: &MetricGroup, metrics: &[Metric], via: Via) -> Result<Way, SamplerError> {
    let name = &g.info.name;
    let time = g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0;
    match (via, exports(g, metrics), time) {
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

/// The period (ns) and reports per notification to ask for at sampling interval `interval`: ten
/// reports per interval (a finer plot than one sample per tick), at least 10 µs and at most
/// 1 ms apart; a notification once per interval.
fn streamer_request(interval: std::time::Duration) -> (u32, u32) {
    let interval_ns = interval.as_nanos().clamp(1, u32::MAX as u128) as u32;
    let period = (interval_ns / 10).clamp(super::streams::MIN_PERIOD_NS, super::streams::DEFAULT_PERIOD_NS);
    (period, (interval_ns / period).max(1))
}

/// A refused `zetMetricStreamerOpen`, with what usually causes it and how to fix it.
fn streamer_open_error(group: &str, e: &crate::ze::ZeError) -> SamplerError {
    use level_zero_sys::*;
    let mut err = errors::ze(&format!("opening the metric streamer of {group}"), e);
    match e.code {
        ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE => {
            err.hint = Some(
                "another process (a profiler, another zescope) holds this device's metric stream, or another group \
                 of this run streams already: close it, or read one streamed group per device"
                    .into(),
            )
        }
        ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS | ZE_RESULT_ERROR_NOT_AVAILABLE => {
            err.kind = super::protocol::ErrorKind::Permission;
            err.hint = Some(
                "the kernel refuses performance streams to unprivileged users: `sudo sysctl dev.i915.perf_stream_paranoid=0` \
                 (i915) or `sudo sysctl dev.xe.observation_paranoid=0` (xe), or give zescope CAP_PERFMON; \
                 `zescope doctor` checks these"
                    .into(),
            )
        }
        _ => {}
    }
    err
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

fn import(parts: &mut RunParts, device: &Device, fd: i32, size: usize, group: &str) -> Result<usize, SamplerError> {
    parts.import(device, fd, size).map_err(|e| match e {
        ImportError::Fd(m) => errors::export(format!("importing the memory of {group}: {m}")),
        ImportError::Ze(z) => errors::ze(&format!("importing the memory of {group}"), &z),
    })
}

/// Creates a group at run time from the chosen metrics (all of the chosen groups' domain).
fn create_group(parts: &mut RunParts, groups: &[MetricGroup], metrics: &[String]) -> Result<MetricGroup, SamplerError> {
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
    let device = parts.device_context().device.clone();
    let group = device.create_metric_group(c"zescope custom", &chosen).map_err(|e| match e {
        CreateGroupError::Ze(z) => errors::ze("creating a metric group", &z),
        other => errors::config(other.to_string(), Some("sample predefined groups instead")),
    })?;
    let plain = group.group().clone();
    parts.activation_mut().created.push(group);
    Ok(plain)
}
