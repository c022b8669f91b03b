//! Reading a `RunConfig` in either form: the current list of targets, or the one-device form
//! written before (`device`, `groups`, `metrics`, `custom_group` beside `interval`), which becomes
//! one target.

use std::time::Duration;

use super::protocol::{DevicePath, RunConfig, Target, Via};

/// Every field either form may hold.
#[derive(serde::Deserialize)]
#[serde(rename = "RunConfig")]
pub struct RunConfigRepr {
    #[serde(default)]
    targets: Option<Vec<Target>>,
    #[serde(default)]
    device: Option<DevicePath>,
    #[serde(default)]
    groups: Option<Vec<String>>,
    #[serde(default)]
    metrics: Vec<String>,
    #[serde(default)]
    custom_group: bool,
    interval: Duration,
    #[serde(default)]
    via: Via,
}

impl TryFrom<RunConfigRepr> for RunConfig {
    type Error = String;

    fn try_from(r: RunConfigRepr) -> Result<RunConfig, String> {
        let old = r.device.is_some() || r.groups.is_some() || !r.metrics.is_empty() || r.custom_group;
        let targets = match (r.targets, old) {
            (Some(_), true) => {
                return Err("a run configuration has both `targets` and the one-device fields \
                            (`device`, `groups`, `metrics`, `custom_group`): keep one form"
                    .into());
            }
            (Some(t), false) => t,
            (None, true) => vec![Target {
                device: r.device.ok_or("a one-device run configuration has no `device`")?,
                groups: r.groups.unwrap_or_default(),
                metrics: r.metrics,
                custom_group: r.custom_group,
            }],
            (None, false) => return Err("a run configuration names no device: `targets` is missing".into()),
        };
        Ok(RunConfig { targets, interval: r.interval, via: r.via })
    }
}
