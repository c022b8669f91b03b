//! The processes using each device, as `zescope serve --processes` serves them: two gauge
//! families, `zescope_process_memory_bytes` and `zescope_process_shared_memory_bytes`, one sample
//! per process among the top N of its device by device memory (so the label sets a scrape holds
//! stay bounded: N per device), labelled with the device's labels (as every series of that
//! device) and `pid` and `command` (its command on the serving host, or `(not on this host)`).
//!
//! The list is the sampler's newest snapshot of the device (read once a second); a process that
//! leaves the top N or the device leaves the scrape, and Prometheus marks its series stale.

use zescope_sampler::processes::ProcessUse;

use crate::catalog::Labels;

/// The device-memory family (bytes).
pub const MEMORY_FAMILY: &str = "zescope_process_memory";
/// Its help text.
pub const MEMORY_HELP: &str = "Device memory a process allocated (the processes using the most, per device).";
/// The shared-memory family (bytes).
pub const SHARED_FAMILY: &str = "zescope_process_shared_memory";
/// Its help text.
pub const SHARED_HELP: &str =
    "Shared device memory mapped into a process (the processes using the most memory, per device).";
/// How many processes per device are served unless told otherwise.
pub const DEFAULT_TOP: usize = 10;

/// One process's sample labels: `device` (the device's labels, in their order), then `pid` and
/// `command`.
pub fn labels(device: &Labels, pid: u32, command: &str) -> Labels {
    let mut l = device.clone();
    l.push(("pid".into(), pid.to_string()));
    l.push(("command".into(), command.to_owned()));
    l
}

/// The `n` processes of `list` using the most device memory, most first (ties: the lower pid).
pub fn top(list: &[ProcessUse], n: usize) -> Vec<ProcessUse> {
    let mut v = list.to_vec();
    v.sort_by(|a, b| b.memory_bytes.cmp(&a.memory_bytes).then(a.pid.cmp(&b.pid)));
    v.truncate(n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_n_by_memory_and_their_labels() {
        let u = |pid, memory_bytes| ProcessUse { pid, memory_bytes, shared_bytes: 0, engines: 0 };
        let list = [u(5, 10), u(3, 30), u(4, 30), u(9, 1)];
        let pids: Vec<u32> = top(&list, 3).iter().map(|p| p.pid).collect();
        assert_eq!(pids, [3, 4, 5]);
        assert_eq!(top(&list, 0).len(), 0);
        assert_eq!(top(&list, 10).len(), 4);
        let device: Labels = vec![("device".into(), "GPU".into()), ("pci_bdf".into(), "0000:03:00.0".into())];
        let l = labels(&device, 42, "python3");
        let keys: Vec<&str> = l.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["device", "pci_bdf", "pid", "command"]);
        assert!(crate::names::reserved(MEMORY_FAMILY) && crate::names::reserved(SHARED_FAMILY));
    }
}
