//! `serve --processes`: from a device's process snapshot to the series a scrape serves — the top
//! N processes by device memory (`zescope-openmetrics`' `processes`), each labelled with its
//! device's labels, its pid and its command. Commands are looked up once per process
//! (`/proc/PID/comm`, a pid's start time telling a reused pid apart) and forgotten when the pid
//! leaves the device's list, so what `serve` keeps stays as small as the list.

use std::collections::HashMap;

use zescope_model::view::processes::{Host, NOT_ON_HOST};
use zescope_openmetrics::Labels;
use zescope_openmetrics::processes::{labels, top};
use zescope_sampler::processes::ProcessSnapshot;

use super::latest::ProcessSeries;

/// A pid's start time on this host and its command (`None`: not on this host).
type Known = (Option<u64>, Option<String>);

/// The top processes of each device, and the commands of the pids listed last.
pub(super) struct Top {
    n: usize,
    /// Per device (run target): pid → what is known of it, for the pids its last snapshot listed.
    commands: HashMap<usize, HashMap<u32, Known>>,
}

impl Top {
    /// Serves at most `n` processes per device.
    pub(super) fn new(n: usize) -> Top {
        Top { n, commands: HashMap::new() }
    }

    /// The series of `snap`'s device (whose labels are `device`): its top processes by memory.
    pub(super) fn of(&mut self, snap: &ProcessSnapshot, device: &Labels, host: &dyn Host) -> Vec<ProcessSeries> {
        let known = self.commands.entry(snap.target).or_default();
        known.retain(|pid, _| snap.processes.iter().any(|p| p.pid == *pid));
        top(&snap.processes, self.n)
            .iter()
            .map(|p| {
                let start = host.start_time(p.pid);
                let command = match known.get(&p.pid) {
                    Some((s, c)) if *s == start => c.clone(),
                    _ => host.command(p.pid),
                };
                known.insert(p.pid, (start, command.clone()));
                ProcessSeries {
                    labels: labels(device, p.pid, command.as_deref().unwrap_or(NOT_ON_HOST)),
                    memory_bytes: p.memory_bytes as f64,
                    shared_bytes: p.shared_bytes as f64,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use zescope_sampler::processes::ProcessUse;

    /// Pid 1 is this host's "init"; counts the lookups.
    struct Counting(Cell<u32>);
    impl Host for Counting {
        fn command(&self, pid: u32) -> Option<String> {
            self.0.set(self.0.get() + 1);
            (pid == 1).then(|| "init".into())
        }
        fn start_time(&self, pid: u32) -> Option<u64> {
            (pid == 1).then_some(5)
        }
    }

    #[test]
    fn at_most_n_per_device_most_memory_first_with_commands_looked_up_once() {
        let host = Counting(Cell::new(0));
        let device: Labels = vec![("device".into(), "GPU".into())];
        let u = |pid, memory_bytes| ProcessUse { pid, memory_bytes, shared_bytes: 1, engines: 0 };
        let snap = ProcessSnapshot { run: 1, target: 0, at_ns: 0, processes: vec![u(1, 10), u(2, 30), u(3, 20)] };
        let mut t = Top::new(2);
        let served = t.of(&snap, &device, &host);
        let pids: Vec<&str> = served.iter().map(|s| s.labels[1].1.as_str()).collect();
        assert_eq!(pids, ["2", "3"], "the two using the most");
        assert_eq!(served[0].labels[2].1, NOT_ON_HOST);
        assert_eq!(served[0].memory_bytes, 30.0);
        let looked = host.0.get();
        t.of(&snap, &device, &host);
        assert_eq!(host.0.get(), looked, "known pids are not looked up again");
        let one = ProcessSnapshot { processes: vec![u(1, 99)], ..snap };
        assert_eq!(t.of(&one, &device, &host)[0].labels[2].1, "init");
    }
}
