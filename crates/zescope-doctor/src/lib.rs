//! `zescope doctor`: why zescope shows no real device, and the exact command that fixes it.
//!
//! Getting hardware counters out of a GPU or NPU needs a chain of things to line up: the Level
//! Zero loader, a driver that finds the device, metrics enabled, groups that export memory with
//! a layout zescope knows, kernel knobs that let an unprivileged user read metrics, access to the
//! device node — and, for the GUI, a display and a file dialog backend. Any missing link shows up
//! in the app as "no device" or an error code; the doctor walks the chain and names the link.
//!
//! [`run`] is the library API (the GUI shows the same checks); [`render`] is the text of
//! `zescope doctor`. Severity is chosen so that the simulated path (`--source sim`) never FAILs
//! for lack of hardware: checks that only matter for a real device are capped at WARN there.

#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![forbid(unsafe_code)]

mod caps;
mod desktop;
mod groups;
mod level_zero;
mod nodes;
mod paranoid;
mod proc_status;
mod stream;
mod telemetry;

use std::fmt::Write;

use zescope_ze::Source;

use proc_status::ProcStatus;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Nothing to fix: the link this check looks at holds.
    Ok,
    /// zescope works, but with less than it could (or a part of it does not).
    Warn,
    /// What the chosen source needs is missing: zescope cannot show real metrics until it is fixed.
    Fail,
}

impl Status {
    /// The word the report prints for it: `OK`, `WARN` or `FAIL`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One line of the doctor's report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What was checked, as the report's first column shows it ("Level Zero loader",
    /// "dev.i915.perf_stream_paranoid", "capabilities", ...).
    pub name: String,
    /// How it came out; the order of [`Status`] is its severity (`Ok` < `Warn` < `Fail`).
    pub status: Status,
    /// What was found (may span lines).
    pub detail: String,
    /// The exact command or step that fixes a WARN or FAIL.
    pub fix: Option<String>,
}

impl Check {
    /// A passed check: no fix to print.
    pub fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check { name: name.into(), status: Status::Ok, detail: detail.into(), fix: None }
    }

    /// A check that found zescope working with less than it could; `fix` says how to get the rest.
    pub fn warn(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { name: name.into(), status: Status::Warn, detail: detail.into(), fix: Some(fix.into()) }
    }

    /// A check that found a missing link: real metrics cannot be shown until `fix` is applied.
    pub fn fail(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { name: name.into(), status: Status::Fail, detail: detail.into(), fix: Some(fix.into()) }
    }

    /// For `--source sim`: a check about hardware access cannot fail the simulated path.
    fn only_for_hardware(mut self, source: Source) -> Check {
        if source == Source::Sim && self.status == Status::Fail {
            self.status = Status::Warn;
            self.detail.push_str(" (matters only for a real device; --source sim does not need it)");
        }
        self
    }
}

/// Runs every check for `source`, with `built_in` the simulated device the program links in (the
/// checks of `sim` and `auto`'s fallback start it). Call [`zescope_ze::prepare_environment`]
/// first, as `main` does. Opens the source on the calling thread (Level Zero handles are not
/// `Send`) and releases it before returning; touches no exported memory, and no device a run
/// of this process holds (those are reported as [`IN_USE`]).
pub fn run(source: Source, built_in: zescope_ze::BuiltIn) -> Vec<Check> {
    let mut checks = level_zero::checks(source, built_in);
    let status = ProcStatus::read_self();
    let caps = status.as_ref().map(|s| s.capabilities()).unwrap_or_default();
    let knobs = paranoid::read_all();
    checks.extend(paranoid::checks(&knobs, caps).into_iter().map(|c| c.only_for_hardware(source)));
    let user = std::env::var("USER").ok();
    let groups = nodes::read_group_file();
    checks.push(nodes::check(&nodes::probe_all(), status.as_ref(), &groups, user.as_deref()).only_for_hardware(source));
    checks.push(caps::check(caps, &knobs));
    checks.push(desktop::display_check(&desktop::DisplayEnv::from_env()));
    checks.push(desktop::dialog_check(&desktop::DialogEnv::from_system()));
    checks
}

/// What the per-device checks say of a device a run of this process holds
/// (`zescope_sampler::claims`): nothing but that run's thread touches it, so it is not probed.
/// (`zescope doctor` has no run: it probes every device. A doctor in another process probes
/// with its own handles; the driver keeps each process's objects apart and refuses what only
/// one process may hold — a busy streamer is reported with the command that finds its owner.)
fn in_use(name: String) -> Check {
    Check::ok(name, IN_USE)
}

/// The detail of a check on a device a run of this process holds.
pub const IN_USE: &str = "in use by this window's run: not probed while it runs (the run shows what it reads)";

/// Is there a backend for the Open/Save file dialogs (a usable xdg-desktop-portal, or zenity)?
/// The window asks with its own path prompt when there is none.
pub fn dialog_backend_found() -> bool {
    desktop::dialog_check(&desktop::DialogEnv::from_system()).status == Status::Ok
}

/// A private simulated driver with metrics always visible, for the checks' unit tests.
#[cfg(test)]
fn sim_loader(tweak: impl FnOnce(&mut ze_sim::config::SimConfig)) -> zescope_ze::Loader {
    let mut cfg = ze_sim::config::SimConfig { metrics: ze_sim::config::MetricsEnable::Always, ..Default::default() };
    tweak(&mut cfg);
    zescope_ze::Loader::in_process(std::sync::Arc::new(ze_sim::Sim::new(cfg)).in_process()).unwrap()
}

/// Did any check FAIL? (`zescope doctor` then exits non-zero.)
pub fn failed(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == Status::Fail)
}

/// The report as text: one `OK` / `WARN` / `FAIL` line per check, its fix indented below, and a
/// summary.
pub fn render(source: Source, checks: &[Check]) -> String {
    let mut out = String::new();
    let source_name = match source {
        Source::Auto => "auto",
        Source::LevelZero => "level-zero",
        Source::Sim => "sim",
    };
    let _ = writeln!(out, "zescope doctor (--source {source_name})");
    for c in checks {
        let mut lines = c.detail.lines();
        let _ = writeln!(out, "{:<4}  {}: {}", c.status.label(), c.name, lines.next().unwrap_or(""));
        for l in lines {
            let _ = writeln!(out, "        {l}");
        }
        if let Some(fix) = &c.fix {
            let mut fl = fix.lines();
            let _ = writeln!(out, "      fix: {}", fl.next().unwrap_or(""));
            for l in fl {
                let _ = writeln!(out, "           {l}");
            }
        }
    }
    let count = |s| checks.iter().filter(|c| c.status == s).count();
    let _ = writeln!(
        out,
        "{} FAIL, {} WARN, {} OK{}",
        count(Status::Fail),
        count(Status::Warn),
        count(Status::Ok),
        if failed(checks) { " — fix the FAIL lines above, then run `zescope doctor` again" } else { "" }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_puts_status_first_and_the_fix_below() {
        let checks = vec![
            Check::ok("loader", "found"),
            Check::fail(
                "render nodes",
                "cannot open /dev/dri/renderD128\nowned by group render",
                "sudo usermod -aG render $USER",
            ),
        ];
        let text = render(Source::LevelZero, &checks);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "zescope doctor (--source level-zero)");
        assert_eq!(lines[1], "OK    loader: found");
        assert_eq!(lines[2], "FAIL  render nodes: cannot open /dev/dri/renderD128");
        assert_eq!(lines[3], "        owned by group render");
        assert_eq!(lines[4], "      fix: sudo usermod -aG render $USER");
        assert!(lines[5].starts_with("1 FAIL, 0 WARN, 1 OK"), "{text}");
        assert!(failed(&checks));
        assert!(!failed(&checks[..1]));
    }

    #[test]
    fn hardware_checks_cannot_fail_the_simulated_path() {
        let c = Check::fail("knob", "is 1", "sudo sysctl x=0");
        assert_eq!(c.clone().only_for_hardware(Source::Sim).status, Status::Warn);
        assert_eq!(c.clone().only_for_hardware(Source::Auto).status, Status::Fail);
        assert_eq!(c.only_for_hardware(Source::LevelZero).status, Status::Fail);
        assert_eq!(Check::ok("k", "d").only_for_hardware(Source::Sim).status, Status::Ok);
    }
}
