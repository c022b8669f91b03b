//! Reading a `RunConfig` in either form: the current list of targets, or the one-device form
//! written before (`device`, `groups`, `metrics`, `custom_group` beside `interval`), which becomes
//! one target. A field added to `RunConfig` is added here too (`try_from` reads this type).

use std::time::Duration;

use super::protocol::{DevicePath, RunConfig, Target, Via};

/// Every field either form may hold.
#[derive(serde::Deserialize)]
#[serde(rename = "RunConfig")]
pub struct RunConfigRepr {
    #[serde(default, deserialize_with = "present")]
    targets: Option<Vec<Target>>,
    #[serde(default, deserialize_with = "present")]
    device: Option<DevicePath>,
    #[serde(default, deserialize_with = "present")]
    groups: Option<Vec<String>>,
    #[serde(default)]
    metrics: Vec<String>,
    #[serde(default)]
    custom_group: bool,
    interval: Duration,
    #[serde(default)]
    via: Via,
    #[serde(default = "telemetry_default")]
    telemetry: bool,
}

/// Files written before telemetry existed read it as on, as a new run would be.
fn telemetry_default() -> bool {
    true
}

/// A field that is there, as written (`targets: [...]`, not RON's `Some([...])`).
fn present<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
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
        Ok(RunConfig { targets, interval: r.interval, via: r.via, telemetry: r.telemetry })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_device_form_becomes_one_target() {
        let old = r#"RunConfig(device: (driver: 0, device: 1, sub_device: None), groups: ["NpuActivity"],
            metrics: ["NpuPower"], custom_group: false, interval: (secs: 0, nanos: 1000000), via: Export)"#;
        let c: RunConfig = ron::from_str(old).unwrap();
        let device = DevicePath { driver: 0, device: 1, sub_device: None };
        let want = Target {
            device,
            groups: vec!["NpuActivity".into()],
            metrics: vec!["NpuPower".into()],
            custom_group: false,
        };
        assert_eq!(c.targets, [want]);
        assert_eq!((c.interval, c.via), (Duration::from_millis(1), Via::Export));
        // Written again, it is the current form, which reads back the same.
        let again: RunConfig = ron::from_str(&ron::to_string(&c).unwrap()).unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn the_current_form_keeps_every_target_in_order() {
        let gpu = Target::new(DevicePath::default(), vec!["ComputeBasic".into()]);
        let npu = Target::new(DevicePath { driver: 0, device: 1, sub_device: None }, vec!["NpuActivity".into()]);
        let c =
            RunConfig { targets: vec![gpu, npu], interval: Duration::from_millis(5), via: Via::Auto, telemetry: false };
        let text = ron::to_string(&c).unwrap();
        assert!(text.contains("targets") && !text.contains("custom_group: false, interval"), "{text}");
        assert_eq!(ron::from_str::<RunConfig>(&text).unwrap(), c);
    }

    #[test]
    fn both_forms_at_once_or_neither_is_refused_with_the_reason() {
        let both = r#"(targets: [], device: (driver: 0, device: 0, sub_device: None), interval: (secs: 1, nanos: 0))"#;
        let e = ron::from_str::<RunConfig>(both).unwrap_err().to_string();
        assert!(e.contains("both `targets` and the one-device fields"), "{e}");
        let neither = r#"(interval: (secs: 1, nanos: 0))"#;
        let e = ron::from_str::<RunConfig>(neither).unwrap_err().to_string();
        assert!(e.contains("names no device"), "{e}");
        let no_device = r#"(groups: ["A"], interval: (secs: 1, nanos: 0))"#;
        let e = ron::from_str::<RunConfig>(no_device).unwrap_err().to_string();
        assert!(e.contains("has no `device`"), "{e}");
    }
}
