//! A group's exported memory as the driver offers it, for the export way and the tracer (which
//! imports its groups' memory too): whether the group exports any, its `fd` and `size` (its own,
//! or the one buffer its metrics share), checked against the file behind `fd`, and imported into
//! the device's context once per file.

use std::collections::HashSet;

use zescope_ze::{GroupExport, Metric, MetricGroup};

use crate::dmabuf::{self, ImportError};
use crate::errors;
use crate::layout::decode::MetricDesc;
use crate::protocol::SamplerError;
use crate::teardown::DeviceParts;

pub(super) fn metric_descs(metrics: &[Metric]) -> Vec<MetricDesc> {
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

/// Does the group's sampling type say TIME_BASED (the streamer can read it)?
pub(super) fn time_based(g: &MetricGroup) -> bool {
    g.info.sampling & level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0
}

/// Does `g` export memory (itself or through its metrics)?
pub(crate) fn exports(g: &MetricGroup, metrics: &[Metric]) -> bool {
    g.info.export == GroupExport::DmaBuf || metrics.iter().any(|m| m.info.exports_dma_buf())
}

/// The fd and size a group exports: its own, or the one buffer its metrics share.
pub(crate) fn export_of(g: &MetricGroup, metrics: &[Metric]) -> Result<(i32, usize), SamplerError> {
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
        return Err(errors::export(format!("metric group {name} cannot be sampled: {why}")));
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

/// `fd >= 0`, `size > 0`, and `size` no larger than the file behind `fd` (when it has a size).
pub(crate) fn validate_export(what: &str, fd: i32, size: usize) -> Result<(), SamplerError> {
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

/// Imports the buffer behind `fd` into the device's context (once per file); its index.
pub(crate) fn import(parts: &mut DeviceParts, fd: i32, size: usize, group: &str) -> Result<usize, SamplerError> {
    parts.import(fd, size).map_err(|e| match e {
        ImportError::Fd(m) => errors::export(format!("importing the memory of {group}: {m}")),
        ImportError::Ze(z) => errors::ze(&format!("importing the memory of {group}"), &z),
    })
}
