//! What the driver enforces, and the report it writes.
//!
//! A violation is something the application did that the extension's rules (or the API) forbid:
//! closing an exported fd, tearing down an exporter while an import of its memory is alive,
//! touching one exporter from two threads, a wrong `stype`. A leak is something still alive when
//! the report is taken: an import never freed, a context never destroyed, metrics left enabled.
//! Both are kept in-process (`Sim::report`) and written as RON to `ZE_SIM_REPORT=path`.

use serde::{Deserialize, Serialize};

/// One violation or leak, as it appears in the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// A stable machine-readable kind, e.g. `"exported_fd_closed"`.
    pub kind: String,
    /// What happened, in words.
    pub message: String,
    /// The handle involved, as the application saw it (`0x...`).
    pub handle: String,
    /// The thread that did it: name and OS thread id (empty for a leak).
    pub thread: String,
}

/// What the driver saw: the breaches of the rules so far and what is still alive. Taken
/// in-process with [`crate::Sim::report`] / [`crate::Global::report`], or read back from the
/// RON file `ZE_SIM_REPORT` names (`ron::from_str::<Report>`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Every breach, in the order it happened; never cleared while the instance lives.
    pub violations: Vec<Entry>,
    /// What was still alive when the report was taken (imports and host allocations not
    /// freed, command lists, contexts and user-created groups not destroyed, groups left
    /// activated, metrics left enabled); empty after a clean teardown.
    pub leaks: Vec<Entry>,
    /// Reads that asked for their size by passing 0 (`*pRawDataSize == 0` to
    /// `zetMetricStreamerReadData` or `zetMetricTracerReadDataExp`, deprecated since 1.16),
    /// answered or refused. Not a breach (drivers answer them, or refuse them on a newer
    /// specification); a client built to the newer specification makes none. Absent: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub size_queries: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Report {
    /// No violation and no leak: what every test of a well-behaved client asserts at the end.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty() && self.leaks.is_empty()
    }

    /// The report as pretty RON (what [`Report::write_to`] writes); it cannot fail, an
    /// unserialisable report becomes a RON comment saying so.
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .unwrap_or_else(|e| format!("// report could not be serialised: {e}\n"))
    }

    /// Writes the report atomically (temp file + rename) so readers never see half of it.
    pub fn write_to(&self, path: &std::path::Path) -> std::io::Result<()> {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_ron())?;
        std::fs::rename(&tmp, path)
    }

    /// Kinds of all violations, for compact assertions.
    pub fn violation_kinds(&self) -> Vec<&str> {
        self.violations.iter().map(|e| e.kind.as_str()).collect()
    }
}

/// "name (tid N)" of the calling thread.
pub(crate) fn thread_label() -> String {
    let t = std::thread::current();
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    format!("{} (tid {tid})", t.name().unwrap_or("unnamed"))
}

/// A handle as the application saw it, `0x...`.
pub(crate) fn handle_label(h: usize) -> String {
    format!("{h:#x}")
}
