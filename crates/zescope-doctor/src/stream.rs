//! The time-based metric streamer, tried for real: on each root device with a group whose
//! sampling type says TIME_BASED, a streamer is opened (through the sampler's own setup, on this
//! thread) and closed again. A refused open is explained: the paranoid knobs, CAP_PERFMON,
//! another process holding the device's stream, access to the render node — each with the
//! command that fixes it. A device a run of this process holds is not opened (`in_use`); if a
//! run takes one between that look and the open, the open fails without touching it.

use level_zero_sys::ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED;

use super::Check;
use zescope_sampler::layout::LayoutSet;
use zescope_sampler::{DevicePath, DirectRun, ErrorKind, RunConfig, Via};
use zescope_ze::Loader;

/// What to run when the kernel refuses performance streams to this user.
const PERMISSION_FIX: &str = "allow metric streams: `sudo sysctl dev.i915.perf_stream_paranoid=0` (i915) or \
     `sudo sysctl dev.xe.observation_paranoid=0` (xe) — add the line to /etc/sysctl.d/ to keep it — or give zescope \
     CAP_PERFMON: `sudo setcap cap_perfmon+ep \"$(command -v zescope)\"`; and make sure you may open the render \
     node: `sudo usermod -aG render \"$USER\"` (log in again)";

/// What to run when another process holds the device's stream.
const BUSY_FIX: &str = "another process holds this device's metric stream (a profiler such as VTune or unitrace, or \
     another zescope): find it with `sudo fuser -v /dev/dri/renderD*` and close it";

/// One check per root device that has a time-based group.
pub(crate) fn checks(loader: &Loader, layouts: &LayoutSet) -> Vec<Check> {
    let mut out = Vec::new();
    for (di, driver) in loader.drivers.iter().enumerate() {
        for (i, dev) in driver.devices().unwrap_or_default().iter().enumerate() {
            let groups = dev.metric_groups().unwrap_or_default();
            let Some(g) = groups.iter().find(|g| g.info.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED != 0)
            else {
                continue;
            };
            let name = format!("metric streamer on {}", dev.info.name);
            if zescope_sampler::claims::held(dev) {
                out.push(super::in_use(name));
                continue;
            }
            let device = DevicePath { driver: di, device: i, sub_device: None };
            let interval = std::time::Duration::from_millis(10);
            let cfg =
                RunConfig { via: Via::Streamer, ..RunConfig::single(device, vec![g.info.name.clone()], interval) };
            out.push(match DirectRun::start(loader, layouts, &cfg) {
                Ok(run) => {
                    let how = run.info().streams.first().map(|s| s.layout.clone()).unwrap_or_default();
                    let errors = run.stop();
                    if errors.is_empty() {
                        Check::ok(name, format!("opened and closed on {}: {how}", g.info.name))
                    } else {
                        Check::warn(name, errors.join("; "), "see the messages; `zescope list` shows the groups")
                    }
                }
                Err(e) => {
                    let detail = format!("{} cannot be read with the streamer: {}", g.info.name, e.message);
                    let fix = if e.kind == ErrorKind::Permission {
                        PERMISSION_FIX.to_owned()
                    } else if e.message.contains("HANDLE_OBJECT_IN_USE") {
                        BUSY_FIX.to_owned()
                    } else {
                        e.hint.unwrap_or_else(|| "groups that export memory can still be read".into())
                    };
                    Check::warn(name, detail, fix)
                }
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Status, sim_loader};
    use super::*;

    #[test]
    fn an_open_streamer_is_reported_with_what_the_driver_granted() {
        let c = checks(&sim_loader(|_| {}), &LayoutSet::built_in());
        let gpu = c.iter().find(|c| c.name == "metric streamer on ze-sim GPU").unwrap();
        assert_eq!(gpu.status, Status::Ok, "{gpu:?}");
        // The first time-based group: ComputeBasic, exported and time-based.
        assert!(
            gpu.detail.contains("opened and closed on ComputeBasic: streamer (1.28 ms, 16 reports per notification)"),
            "{gpu:?}"
        );
        assert!(c.iter().any(|c| c.name == "metric streamer on ze-sim NPU" && c.status == Status::Ok));
    }

    #[test]
    fn a_refused_open_names_the_cause_and_the_command() {
        let denied = checks(&sim_loader(|c| c.faults.streamer_open_denied = true), &LayoutSet::built_in());
        let fix = denied[0].fix.as_deref().unwrap();
        assert_eq!(denied[0].status, Status::Warn);
        assert!(denied[0].detail.contains("ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"), "{:?}", denied[0]);
        for cmd in ["perf_stream_paranoid=0", "observation_paranoid=0", "setcap cap_perfmon+ep", "usermod -aG render"] {
            assert!(fix.contains(cmd), "{cmd} in {fix}");
        }
        let busy = checks(&sim_loader(|c| c.faults.streamer_open_busy = true), &LayoutSet::built_in());
        assert!(busy[0].fix.as_deref().unwrap().contains("fuser -v /dev/dri/renderD*"), "{:?}", busy[0]);
    }
}
