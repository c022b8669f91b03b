//! Device telemetry a driver keeps from this user: Sysman pieces whose enumeration answers
//! ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS (compute-runtime since 2026-05 gives engine groups
//! only to a privileged user: it reads engine activity from the GPU's perf PMU). A run then goes
//! on without them, with one notice; the doctor names who may read them and how to become that.

use level_zero_sys::ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS;

use super::Check;
use super::caps::{CAP_SYS_ADMIN, Capabilities};
use super::proc_status::ProcStatus;
use zescope_ze::{Device, Loader, Sysman, ZeError};

/// What to do for a piece refused to an unprivileged user.
const PRIVILEGE_FIX: &str = "run zescope as root, or give it CAP_SYS_ADMIN (the driver gives these only to a \
     privileged process): `sudo setcap cap_sys_admin+ep \"$(command -v zescope)\"`; the rest of the telemetry and \
     every metric group work without it";

/// One check per root device whose Sysman refuses a piece to this user.
pub(crate) fn checks(loader: &Loader) -> Vec<Check> {
    let caps = ProcStatus::read_self().map(|s| s.capabilities()).unwrap_or_default();
    let mut out = Vec::new();
    for driver in &loader.drivers {
        for dev in driver.devices().unwrap_or_default() {
            if zescope_sampler::claims::held(&dev) {
                continue;
            }
            let refused = refused_pieces(&dev);
            if !refused.is_empty() {
                out.push(check(&dev.info.name, &refused, caps, driver.info.simulated));
            }
        }
    }
    out
}

/// The Sysman pieces of `dev` refused for lack of privilege: (piece, the call that refused).
fn refused_pieces(dev: &Device) -> Vec<(&'static str, &'static str)> {
    let Ok(s) = Sysman::open(dev) else { return Vec::new() };
    let answers: [(&str, Result<usize, ZeError>); 5] = [
        ("frequency domains", s.frequency_domains().map(|v| v.len())),
        ("power domains", s.power_domains().map(|v| v.len())),
        ("temperature sensors", s.temperature_sensors().map(|v| v.len())),
        ("engine groups (utilisation)", s.engine_groups().map(|v| v.len())),
        ("memory modules", s.memory_modules().map(|v| v.len())),
    ];
    answers
        .into_iter()
        .filter_map(|(piece, r)| match r {
            Err(e) if e.code == ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS => Some((piece, e.call)),
            _ => None,
        })
        .collect()
}

/// The check for `device` whose `refused` pieces need privilege, for a process with `caps`.
pub(crate) fn check(device: &str, refused: &[(&str, &str)], caps: Capabilities, simulated: bool) -> Check {
    let pieces: Vec<&str> = refused.iter().map(|(p, _)| *p).collect();
    let calls: Vec<&str> = refused.iter().map(|(_, c)| *c).collect();
    let detail = format!(
        "the driver refuses {} to this user ({} answered ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS): runs go on \
         without them",
        pieces.join(", "),
        calls.join(", ")
    );
    let fix = match (caps.has(CAP_SYS_ADMIN), simulated) {
        (false, _) => PRIVILEGE_FIX.to_owned(),
        (true, true) => format!(
            "{PRIVILEGE_FIX} (zescope has CAP_SYS_ADMIN already: the simulated driver refuses whoever asks, as \
             its configuration `sysman.root_only` says)"
        ),
        (true, false) => format!(
            "{PRIVILEGE_FIX} (zescope has CAP_SYS_ADMIN already: see the driver's documentation for the setting \
             that lets it read the device's PMU)"
        ),
    };
    Check::warn(format!("telemetry of {device}"), detail, fix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Status, sim_loader};
    use ze_sim::config::SysmanPiece;

    #[test]
    fn a_piece_refused_for_lack_of_privilege_is_named_with_who_may_read_it() {
        let l = sim_loader(|c| c.sysman.root_only = vec![SysmanPiece::Engines]);
        let dev = &l.drivers[0].devices().unwrap()[0];
        let refused = refused_pieces(dev);
        assert_eq!(refused, [("engine groups (utilisation)", "zesDeviceEnumEngineGroups")]);
        let c = check(&dev.info.name, &refused, Capabilities(0), false);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("engine groups") && c.detail.contains("INSUFFICIENT_PERMISSIONS"), "{c:?}");
        let fix = c.fix.unwrap();
        assert!(fix.contains("as root") && fix.contains("CAP_SYS_ADMIN"), "{fix}");
        let c = check("GPU", &refused, Capabilities(1 << CAP_SYS_ADMIN), true);
        assert!(c.fix.unwrap().contains("sysman.root_only"));
        let fine = sim_loader(|_| {});
        assert!(refused_pieces(&fine.drivers[0].devices().unwrap()[0]).is_empty());
    }
}
