//! `zetMetricGroupGetExportDataExp`'s export data (`ZET_experimental_metric_export_data`): a
//! group's raw data with what a calculation on another system needs to make sense of it. The
//! specification leaves the arrangement to the driver; ze-sim's, version 1, all integers
//! little-endian, strings as a `u32` byte length then UTF-8:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `ZESIMEXD` |
//! | 4 | version (1) |
//! | 4 | the device's PCI device id |
//! | 4 | the group's domain |
//! | 4 | the group's sampling type flags (`zet_metric_group_sampling_type_flags_t`) |
//! | string | the group's name |
//! | 4 | metric count; then per metric: name (string), metric type (`u32`), result type (`u32`), unit (string) |
//! | 8 | raw data size; then the raw data, as given |
//!
//! The raw data is copied as given: the driver does not check what the application collected
//! (the suite exports a zeroed buffer of one report's size).

/// The first bytes of ze-sim's export data.
pub const MAGIC: &[u8; 8] = b"ZESIMEXD";
/// The version `encode` writes.
pub const VERSION: u32 = 1;

/// One metric as the export data describes it.
pub(crate) struct ExportedMetric {
    pub name: String,
    pub metric_type: u32,
    pub result_type: u32,
    pub unit: String,
}

/// What the export data says of a group, besides its raw data.
pub(crate) struct ExportedGroup {
    pub device_id: u32,
    pub domain: u32,
    pub sampling: u32,
    pub name: String,
    pub metrics: Vec<ExportedMetric>,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The export data of `raw` collected from `g`.
pub(crate) fn encode(g: &ExportedGroup, raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + raw.len() + g.metrics.len() * 48);
    out.extend_from_slice(MAGIC);
    for v in [VERSION, g.device_id, g.domain, g.sampling] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    put_str(&mut out, &g.name);
    out.extend_from_slice(&(g.metrics.len() as u32).to_le_bytes());
    for m in &g.metrics {
        put_str(&mut out, &m.name);
        out.extend_from_slice(&m.metric_type.to_le_bytes());
        out.extend_from_slice(&m.result_type.to_le_bytes());
        put_str(&mut out, &m.unit);
    }
    out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    out.extend_from_slice(raw);
    out
}
