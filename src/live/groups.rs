//! A device's metric groups in the live feed's hello (`docs/live-protocol.md`, "hello": each
//! device's `groups`), so a viewer lists the server's catalogue as a local window lists its own.
//!
//! Each group is `{"name", "description", "domain", "exports", "streamable", "tracer", "ways",
//! "unavailable", "export_unavailable", "metrics": [{"name", "description", "unit"}]}`; `exports` is `group`,
//! `per_metric`, `none` or `unknown`, `ways` the names of the ways that read it (`export`,
//! `streamer`, `tracer`), `unavailable` why it cannot be sampled and `export_unavailable` why its
//! exported memory cannot be read (each `null` when nothing stops it). A hello without
//! `groups` (an earlier server) gives no groups; a malformed one is an error naming the field.

use serde_json::{Value, json};
use zescope_sampler::{GroupEntry, GroupExportKind, MetricEntry, Via};

fn exports_name(e: GroupExportKind) -> &'static str {
    match e {
        GroupExportKind::Group => "group",
        GroupExportKind::PerMetric => "per_metric",
        GroupExportKind::None => "none",
        GroupExportKind::Unknown => "unknown",
    }
}

/// The JSON of `groups`.
pub fn to_json(groups: &[GroupEntry]) -> Value {
    let one = |g: &GroupEntry| {
        let metrics: Vec<Value> =
            g.metrics.iter().map(|m| json!({"name": m.name, "description": m.description, "unit": m.unit})).collect();
        json!({
            "name": g.name,
            "description": g.description,
            "domain": g.domain,
            "exports": exports_name(g.exports),
            "streamable": g.streamable,
            "tracer": g.tracer,
            "ways": g.ways.iter().map(|w| w.name()).collect::<Vec<_>>(),
            "unavailable": g.unavailable,
            "export_unavailable": g.export_unavailable,
            "metrics": metrics,
        })
    };
    Value::Array(groups.iter().map(one).collect())
}

fn text(v: &Value, name: &str, what: &str) -> Result<String, String> {
    v.get(name).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| format!("{what} has no text {name:?}"))
}

fn flag(v: &Value, name: &str, what: &str) -> Result<bool, String> {
    v.get(name).and_then(Value::as_bool).ok_or_else(|| format!("{what} has no true/false {name:?}"))
}

/// The groups of a hello's device `d` (none when it names none).
pub fn from_json(d: &Value) -> Result<Vec<GroupEntry>, String> {
    let Some(list) = d.get("groups") else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or("a device's groups in the hello are not a list")?;
    let mut groups = Vec::with_capacity(list.len());
    for (i, g) in list.iter().enumerate() {
        let what = format!("group {i} of a device in the hello");
        let exports = match text(g, "exports", &what)?.as_str() {
            "group" => GroupExportKind::Group,
            "per_metric" => GroupExportKind::PerMetric,
            "none" => GroupExportKind::None,
            "unknown" => GroupExportKind::Unknown,
            other => return Err(format!("{what}: exports {other:?} is none of group, per_metric, none, unknown")),
        };
        let ways = g.get("ways").and_then(Value::as_array).ok_or_else(|| format!("{what} has no list \"ways\""))?;
        let ways = ways
            .iter()
            .map(|w| {
                w.as_str().and_then(Via::from_name).ok_or_else(|| format!("{what}: a way {w} zescope does not know"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let metrics =
            g.get("metrics").and_then(Value::as_array).ok_or_else(|| format!("{what} has no list \"metrics\""))?;
        let metrics = metrics
            .iter()
            .map(|m| {
                Ok(MetricEntry {
                    name: text(m, "name", &what)?,
                    description: text(m, "description", &what)?,
                    unit: text(m, "unit", &what)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let domain = g.get("domain").and_then(Value::as_u64).and_then(|d| u32::try_from(d).ok());
        groups.push(GroupEntry {
            name: text(g, "name", &what)?,
            description: text(g, "description", &what)?,
            domain: domain.ok_or_else(|| format!("{what} has no domain (a 32-bit whole number)"))?,
            exports,
            streamable: flag(g, "streamable", &what)?,
            tracer: flag(g, "tracer", &what)?,
            metrics,
            unavailable: g.get("unavailable").and_then(Value::as_str).map(str::to_owned),
            export_unavailable: g.get("export_unavailable").and_then(Value::as_str).map(str::to_owned),
            ways,
        });
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group() -> GroupEntry {
        GroupEntry {
            name: "ComputeBasic".into(),
            description: "Engine activity".into(),
            domain: 3,
            exports: GroupExportKind::PerMetric,
            streamable: true,
            tracer: false,
            metrics: vec![MetricEntry { name: "GpuTime".into(), description: "busy".into(), unit: "ns".into() }],
            unavailable: None,
            export_unavailable: Some("no DMA-BUF".into()),
            ways: vec![Via::Export, Via::Streamer],
        }
    }

    #[test]
    fn groups_read_back_as_written() {
        let written = vec![group(), GroupEntry { unavailable: Some("busy".into()), ways: Vec::new(), ..group() }];
        let read = from_json(&json!({ "groups": to_json(&written) })).unwrap();
        assert_eq!(format!("{read:?}"), format!("{written:?}"));
        assert!(from_json(&json!({})).unwrap().is_empty(), "an earlier server's hello names no groups");
    }

    #[test]
    fn a_malformed_group_is_named() {
        let mut v = to_json(&[group()]);
        v[0]["exports"] = json!("sometimes");
        let e = from_json(&json!({ "groups": v })).unwrap_err();
        assert!(e.contains("group 0") && e.contains("sometimes"), "{e}");
        let mut v = to_json(&[group()]);
        v[0]["ways"] = json!(["telepathy"]);
        assert!(from_json(&json!({ "groups": v })).unwrap_err().contains("telepathy"));
        let mut v = to_json(&[group()]);
        v[0]["domain"] = json!(-1);
        assert!(from_json(&json!({ "groups": v })).unwrap_err().contains("domain"));
        assert!(from_json(&json!({ "groups": 3 })).unwrap_err().contains("not a list"));
    }
}
