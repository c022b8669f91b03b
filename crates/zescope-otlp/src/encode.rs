//! One export as OTLP's `ExportMetricsServiceRequest`, in the message types generated from the
//! OpenTelemetry project's own protobuf definitions (`opentelemetry-proto`), so the wire format
//! is theirs by construction.
//!
//! - One `ResourceMetrics` per device of the plan (its resource: [`resource`]), one scope
//!   (`zescope`, its version), one `Metric` per metric of the plan with points of that device.
//! - Each point is stamped with the time its value was read (the sample's own time, not the
//!   export's): a point combining two values takes the later of their times; an info point
//!   (a constant 1) the export's time. A point with no value yet is left out.
//! - Counters are monotonic cumulative sums, sizes non-monotonic cumulative sums, both starting
//!   at the export's start; levels are gauges. Values are doubles.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum, metric,
    number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;

use zescope_openmetrics::otel::{Combine, Kind, Plan};

use crate::settings::Settings;

fn key_value(k: &str, v: &str) -> KeyValue {
    KeyValue {
        key: k.to_owned(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(v.to_owned())) }),
        ..Default::default()
    }
}

/// A device's resource: `service.name` (`zescope`), `service.version`, `host.name`, the device's
/// attributes, then `OTEL_RESOURCE_ATTRIBUTES` (an attribute it names is replaced), then
/// `OTEL_SERVICE_NAME`.
pub(crate) fn resource(device: &[(String, String)], host: Option<&str>, settings: &Settings) -> Resource {
    let mut attrs: Vec<(String, String)> =
        vec![("service.name".into(), "zescope".into()), ("service.version".into(), env!("CARGO_PKG_VERSION").into())];
    attrs.extend(host.map(|h| ("host.name".to_owned(), h.to_owned())));
    let mut set = |k: &str, v: &str| match attrs.iter_mut().find(|(n, _)| n == k) {
        Some(a) => a.1 = v.to_owned(),
        None => attrs.push((k.to_owned(), v.to_owned())),
    };
    for (k, v) in device.iter().chain(&settings.resource) {
        set(k, v);
    }
    if let Some(name) = &settings.service_name {
        set("service.name", name);
    }
    Resource { attributes: attrs.iter().map(|(k, v)| key_value(k, v)).collect(), ..Default::default() }
}

/// What the run's values are at one export: each value and the time it was read (ns since the
/// Unix epoch).
pub(crate) struct Reading<'a> {
    pub(crate) values: &'a [f64],
    pub(crate) times: &'a [u64],
    /// When the export started (the sums' start).
    pub(crate) start: u64,
    /// Now.
    pub(crate) now: u64,
}

/// The request for `plan`'s points in `reading`, and how many points it holds.
pub(crate) fn request(
    plan: &Plan,
    resources: &[Resource],
    reading: &Reading<'_>,
) -> (ExportMetricsServiceRequest, u64) {
    let time = |i: usize| reading.times.get(i).copied().unwrap_or(0);
    let mut count = 0;
    let mut resource_metrics = Vec::with_capacity(plan.devices.len());
    for (device, resource) in resources.iter().enumerate() {
        let mut metrics = Vec::new();
        for (mi, m) in plan.metrics.iter().enumerate() {
            let mut data_points = Vec::new();
            for p in plan.points.iter().filter(|p| p.metric == mi && p.device == device) {
                let Some(v) = plan.value(p, reading.values) else { continue };
                let read_at = match (p.value, p.with) {
                    (None, _) => reading.now,
                    (Some(i), None) => time(i),
                    (Some(i), Some(Combine::Add(j) | Combine::Over(j))) => time(i).max(time(j)),
                };
                data_points.push(NumberDataPoint {
                    attributes: p.attributes.iter().map(|(k, v)| key_value(k, v)).collect(),
                    start_time_unix_nano: if m.kind == Kind::Gauge { 0 } else { reading.start.min(read_at) },
                    time_unix_nano: read_at,
                    value: Some(number_data_point::Value::AsDouble(v)),
                    ..Default::default()
                });
            }
            if data_points.is_empty() {
                continue;
            }
            count += data_points.len() as u64;
            let data = match m.kind {
                Kind::Gauge => metric::Data::Gauge(Gauge { data_points }),
                Kind::Counter | Kind::UpDown => metric::Data::Sum(Sum {
                    data_points,
                    aggregation_temporality: AggregationTemporality::Cumulative as i32,
                    is_monotonic: m.kind == Kind::Counter,
                }),
            };
            metrics.push(Metric {
                name: m.name.clone(),
                description: m.description.clone(),
                unit: m.unit.to_owned(),
                data: Some(data),
                ..Default::default()
            });
        }
        if metrics.is_empty() {
            continue;
        }
        resource_metrics.push(ResourceMetrics {
            resource: Some(resource.clone()),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "zescope".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                metrics,
                ..Default::default()
            }],
            ..Default::default()
        });
    }
    (ExportMetricsServiceRequest { resource_metrics }, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zescope_openmetrics::otel::{Device, Metric as PlanMetric, Point};

    fn plan() -> Plan {
        let metric = |name: &str, unit: &'static str, kind: Kind| PlanMetric {
            name: name.into(),
            description: "d".into(),
            unit,
            kind,
            convention: name.starts_with("hw."),
        };
        let point = |metric: usize, value: Option<usize>, with: Option<Combine>| Point {
            metric,
            device: 0,
            attributes: vec![("hw.name".into(), "Card".into())],
            value,
            scale: 1e-3,
            bit: None,
            with,
        };
        Plan {
            metrics: vec![
                metric("hw.power", "W", Kind::Gauge),
                metric("hw.energy", "J", Kind::Counter),
                metric("hw.memory.utilization", "1", Kind::Gauge),
                metric("hw.gpu.info", "1", Kind::UpDown),
            ],
            points: vec![
                point(0, Some(0), None),
                point(1, Some(1), None),
                point(2, Some(0), Some(Combine::Over(1))),
                point(3, None, None),
            ],
            devices: vec![Device { attributes: vec![("hw.name".into(), "Card".into())], gpu: true }],
        }
    }

    fn settings() -> Settings {
        Settings::resolve(&crate::Config::default(), &|k| {
            (k == "OTEL_RESOURCE_ATTRIBUTES").then(|| "hw.name=Renamed,site=lab".to_owned())
        })
    }

    #[test]
    fn points_carry_the_time_their_value_was_read() {
        let plan = plan();
        let r = [resource(&plan.devices[0].attributes, Some("host1"), &settings())];
        let reading = Reading { values: &[1500.0, 3000.0], times: &[1_000, 2_000], start: 500, now: 9_000 };
        let (req, n) = request(&plan, &r, &reading);
        assert_eq!(n, 4);
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        let point = |m: usize| match metrics[m].data.as_ref().unwrap() {
            metric::Data::Gauge(g) => (g.data_points[0].clone(), None),
            metric::Data::Sum(s) => (s.data_points[0].clone(), Some((s.is_monotonic, s.aggregation_temporality))),
            other => panic!("{other:?}"),
        };
        let value = |p: &NumberDataPoint| match p.value {
            Some(number_data_point::Value::AsDouble(v)) => v,
            _ => f64::NAN,
        };
        let (power, kind) = point(0);
        assert_eq!((value(&power), power.time_unix_nano, power.start_time_unix_nano, kind), (1.5, 1_000, 0, None));
        let (energy, kind) = point(1);
        assert_eq!((value(&energy), energy.time_unix_nano, energy.start_time_unix_nano), (3.0, 2_000, 500));
        assert_eq!(kind, Some((true, AggregationTemporality::Cumulative as i32)));
        let (ratio, _) = point(2);
        assert_eq!((value(&ratio), ratio.time_unix_nano), (0.5, 2_000), "the later of its two values' times");
        let (info, kind) = point(3);
        assert_eq!((value(&info), info.time_unix_nano, kind), (1.0, 9_000, Some((false, 2))));
        let attrs: Vec<(String, String)> = req.resource_metrics[0]
            .resource
            .as_ref()
            .unwrap()
            .attributes
            .iter()
            .map(|kv| match &kv.value.as_ref().unwrap().value {
                Some(any_value::Value::StringValue(s)) => (kv.key.clone(), s.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        let want = [
            ("service.name", "zescope"),
            ("service.version", env!("CARGO_PKG_VERSION")),
            ("host.name", "host1"),
            ("hw.name", "Renamed"),
            ("site", "lab"),
        ];
        assert_eq!(attrs, want.map(|(k, v)| (k.to_owned(), v.to_owned())), "OTEL_RESOURCE_ATTRIBUTES wins");
    }

    #[test]
    fn a_point_with_no_value_yet_is_left_out() {
        let plan = plan();
        let r = [resource(&plan.devices[0].attributes, None, &settings())];
        let reading = Reading { values: &[f64::NAN, f64::NAN], times: &[0, 0], start: 500, now: 9_000 };
        let (req, n) = request(&plan, &r, &reading);
        assert_eq!(n, 1, "the info point only");
        assert_eq!(req.resource_metrics[0].scope_metrics[0].metrics[0].name, "hw.gpu.info");
    }
}
