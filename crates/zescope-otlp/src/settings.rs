//! Where and how often to export: the command line's [`Config`] over the OpenTelemetry
//! exporter's environment variables, read as the OpenTelemetry specification (and its Rust SDK)
//! reads them.
//!
//! - Endpoint: `--otlp URL` (`/v1/metrics` appended unless it ends in it), else
//!   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT` with
//!   `/v1/metrics` appended, else `http://localhost:4318/v1/metrics`.
//! - Headers: `OTEL_EXPORTER_OTLP_HEADERS`, then `OTEL_EXPORTER_OTLP_METRICS_HEADERS` over it;
//!   `key=value` pairs split at commas, values percent-decoded, empty keys or values left out.
//! - Timeout of one export: `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`
//!   (ms), else 10 s.
//! - Interval: the caller's, else `OTEL_METRIC_EXPORT_INTERVAL` (ms), else 60 s.
//! - Resource: `OTEL_RESOURCE_ATTRIBUTES` (`key=value,…`, percent-decoded) over zescope's own
//!   attributes, and `OTEL_SERVICE_NAME` over both for `service.name`.
//!
//! A value that does not parse is ignored, as the SDK ignores it.

use std::time::Duration;

use crate::Config;

/// The exporter's settings, resolved.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    /// The collector's metrics URL.
    pub(crate) endpoint: String,
    /// Extra request headers.
    pub(crate) headers: Vec<(String, String)>,
    /// Bound on one export.
    pub(crate) timeout: Duration,
    /// Time between exports.
    pub(crate) interval: Duration,
    /// `OTEL_RESOURCE_ATTRIBUTES`, in order.
    pub(crate) resource: Vec<(String, String)>,
    /// `OTEL_SERVICE_NAME`.
    pub(crate) service_name: Option<String>,
}

/// The collector's URL for metrics from a base URL.
pub fn metrics_endpoint(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/v1/metrics") { base.to_owned() } else { format!("{base}/v1/metrics") }
}

impl Settings {
    /// `config` over the variables `var` gives (`std::env::var` outside tests).
    pub(crate) fn resolve(config: &Config, var: &dyn Fn(&str) -> Option<String>) -> Settings {
        let var = |k: &str| var(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let endpoint = match (&config.endpoint, var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")) {
            (Some(url), _) => metrics_endpoint(url),
            (None, Some(url)) => url,
            (None, None) => {
                metrics_endpoint(&var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or("http://localhost:4318".into()))
            }
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        for k in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"] {
            for (key, value) in pairs(var(k).as_deref().unwrap_or("")) {
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&key));
                headers.push((key, value));
            }
        }
        let ms = |k: &str| var(k)?.parse::<u64>().ok().map(Duration::from_millis);
        let timeout = ms("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT")
            .or_else(|| ms("OTEL_EXPORTER_OTLP_TIMEOUT"))
            .unwrap_or(Duration::from_secs(10));
        let interval = config
            .interval
            .or_else(|| ms("OTEL_METRIC_EXPORT_INTERVAL").filter(|d| !d.is_zero()))
            .unwrap_or(Duration::from_secs(60));
        let resource = pairs(var("OTEL_RESOURCE_ATTRIBUTES").as_deref().unwrap_or(""));
        Settings { endpoint, headers, timeout, interval, resource, service_name: var("OTEL_SERVICE_NAME") }
    }
}

/// `key=value` pairs split at commas, each trimmed, values percent-decoded (left as written
/// when that fails); pairs with an empty key or value are left out.
fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let (k, v) = (k.trim(), v.trim());
            (!k.is_empty() && !v.is_empty()).then(|| (k.to_owned(), percent_decoded(v).unwrap_or_else(|| v.to_owned())))
        })
        .collect()
}

/// `%XX` escapes decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decoded(v: &str) -> Option<String> {
    let mut out = Vec::with_capacity(v.len());
    let mut bytes = v.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(config: Config, env: &[(&str, &str)]) -> Settings {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        Settings::resolve(&config, &|k| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn the_base_url_gets_the_metrics_path_once() {
        assert_eq!(metrics_endpoint("http://c:4318"), "http://c:4318/v1/metrics");
        assert_eq!(metrics_endpoint("http://c:4318/"), "http://c:4318/v1/metrics");
        assert_eq!(metrics_endpoint("http://c:4318/v1/metrics"), "http://c:4318/v1/metrics");
        assert_eq!(metrics_endpoint("http://c/otlp"), "http://c/otlp/v1/metrics");
    }

    #[test]
    fn endpoints_by_precedence() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318/");
        let signal = ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://sig:9/custom");
        let flag = Config { endpoint: Some("http://flag:1".into()), interval: None };
        assert_eq!(resolve(Config::default(), &[]).endpoint, "http://localhost:4318/v1/metrics");
        assert_eq!(resolve(Config::default(), &[base]).endpoint, "http://base:4318/v1/metrics");
        assert_eq!(resolve(Config::default(), &[base, signal]).endpoint, "http://sig:9/custom", "the signal's as is");
        assert_eq!(resolve(flag, &[base, signal]).endpoint, "http://flag:1/v1/metrics");
    }

    #[test]
    fn headers_timeout_interval_and_resource_as_the_sdk_reads_them() {
        let s = resolve(
            Config::default(),
            &[
                ("OTEL_EXPORTER_OTLP_HEADERS", "a=1, Authorization=Bearer%20t0k,=x,b="),
                ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "A=2"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
                ("OTEL_METRIC_EXPORT_INTERVAL", "300"),
                ("OTEL_RESOURCE_ATTRIBUTES", "site=lab%201,deployment.environment=test,bad"),
                ("OTEL_SERVICE_NAME", " gpu-fleet "),
            ],
        );
        let h = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(s.headers, [h("Authorization", "Bearer t0k"), h("A", "2")]);
        assert_eq!(s.timeout, Duration::from_millis(2500));
        assert_eq!(s.interval, Duration::from_millis(300));
        assert_eq!(s.resource, [h("site", "lab 1"), h("deployment.environment", "test")]);
        assert_eq!(s.service_name.as_deref(), Some("gpu-fleet"));
        let s = resolve(
            Config { endpoint: None, interval: Some(Duration::from_secs(1)) },
            &[
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
                ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "700"),
                ("OTEL_METRIC_EXPORT_INTERVAL", "300"),
            ],
        );
        assert_eq!((s.timeout, s.interval), (Duration::from_millis(700), Duration::from_secs(1)));
        let s = resolve(Config::default(), &[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]);
        assert_eq!((s.timeout, s.interval), (Duration::from_secs(10), Duration::from_secs(60)));
    }
}
