//! The processes that used each device, over time: what the window's process table and plot,
//! `record`'s files and `serve`'s process series are made from. Fed with the sampler's
//! [`ProcessSnapshot`]s (`Event::Processes`, once a second per device of a run that reads
//! telemetry).
//!
//! # Which process is which
//!
//! A snapshot lists pids; a [`Process`] is one process's life as zescope saw it: one device, one
//! run, and the snapshots it was listed in without a break. A pid missing from a device's
//! snapshot ends its process there; listed again later, it is a new process (a pid the host gave
//! to another program, or a program that let go of the device and came back: zescope cannot tell
//! them apart and does not guess). For a pid of this host, its start time (`/proc/PID/stat`) is
//! also compared at each snapshot, so a pid reused between two snapshots is two processes too;
//! a pid of another host (or pid namespace) reused between two snapshots, a second apart, cannot
//! be told apart and stays one process. When a run stops, its processes end; a process listed
//! when a run stopped and again in its device's first snapshot of the next run (with the same
//! start time, for a pid of this host) is the same process going on: one row per pid, not one
//! per run ([`Process::run`] then names the newest run it was seen in).
//!
//! A process's command is looked up once, when it is first listed: `/proc/PID/comm` (else the
//! first word of `/proc/PID/cmdline`). A pid not on this host — the driver's answer for another
//! pid namespace, a remote device, the simulated driver's processes — has none and is shown as
//! "(not on this host)". Sessions keep the command as it was found.
//!
//! # Bounds
//!
//! At most [`MAX_PROCESSES`] processes are kept (then the earliest that ended go first) and at
//! most [`MAX_SAMPLES`] samples over all of them (then the process with the most has every
//! other one of its samples dropped, its first and last kept): a day of a dozen processes at
//! one snapshot a second, whatever runs for how long.

use std::cmp::Ordering;

use zescope_sampler::RunInfo;
use zescope_sampler::processes::{ProcessSnapshot, engine_names};

/// Most processes kept.
pub const MAX_PROCESSES: usize = 4096;
/// Most samples kept over all processes.
pub const MAX_SAMPLES: usize = 1 << 20;

/// What a process used at one snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessSample {
    /// When (ns on the samples' clock).
    pub t_ns: i64,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// Shared device memory, bytes.
    pub shared_bytes: u64,
    /// `ZES_ENGINE_TYPE_FLAG_*` bits.
    pub engines: u32,
}

/// One process's use of one device during one run (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Process {
    /// The run it was seen in.
    pub run: u64,
    /// The device, as the run names it (series name their device the same way).
    pub device: String,
    /// Its pid.
    pub pid: u32,
    /// Its command, when the pid was a process of this host; `None`: not on this host.
    pub command: Option<String>,
    /// Its samples, in time order; never empty.
    pub samples: Vec<ProcessSample>,
    /// Listed in its device's newest snapshot of a run still going.
    pub alive: bool,
    /// The host's start time of the pid when first seen (clock ticks since boot), if on this host.
    pub host_start: Option<u64>,
}

/// How a process's command is shown when its pid is not a process of this host.
pub const NOT_ON_HOST: &str = "(not on this host)";

impl Process {
    /// When it was first listed (ns).
    pub fn first_ns(&self) -> i64 {
        self.samples.first().map_or(0, |s| s.t_ns)
    }

    /// When it was last listed (ns).
    pub fn last_ns(&self) -> i64 {
        self.samples.last().map_or(0, |s| s.t_ns)
    }

    /// Its newest sample.
    pub fn latest(&self) -> ProcessSample {
        self.samples.last().copied().unwrap_or(ProcessSample { t_ns: 0, memory_bytes: 0, shared_bytes: 0, engines: 0 })
    }

    /// Its command, or [`NOT_ON_HOST`].
    pub fn command_text(&self) -> &str {
        self.command.as_deref().unwrap_or(NOT_ON_HOST)
    }

    /// Its newest engines, by name ("compute, copy").
    pub fn engines_text(&self) -> String {
        engine_names(self.latest().engines).join(", ")
    }

    /// The most device memory it used (bytes).
    pub fn peak_memory(&self) -> u64 {
        self.samples.iter().map(|s| s.memory_bytes).max().unwrap_or(0)
    }
}

/// What zescope asks the host about a pid.
pub trait Host {
    /// The pid's command, if it is a process of this host.
    fn command(&self, pid: u32) -> Option<String>;
    /// The pid's start time (clock ticks since boot), if it is a process of this host.
    fn start_time(&self, pid: u32) -> Option<u64>;
}

/// This host, through `/proc`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcFs;

impl Host for ProcFs {
    fn command(&self, pid: u32) -> Option<String> {
        if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            let comm = comm.trim_end_matches('\n');
            if !comm.is_empty() {
                return Some(comm.to_owned());
            }
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let first = cmdline.split(|&b| b == 0).next().filter(|a| !a.is_empty())?;
        let first = String::from_utf8_lossy(first);
        Some(first.rsplit('/').next().unwrap_or(&first).to_owned())
    }

    fn start_time(&self, pid: u32) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command (field 2) is in parentheses and may hold anything: count after the last ')'.
        stat[stat.rfind(')')? + 1..].split_whitespace().nth(19)?.parse().ok()
    }
}

/// Every process seen so far (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Processes {
    list: Vec<Process>,
    samples: usize,
    /// The processes listed when their run stopped, (device, pid): each goes on if its
    /// device's first snapshot of the next run lists it again.
    at_stop: Vec<(String, u32)>,
    /// Each (device, run)'s first snapshot time: a process first listed then was already
    /// running when the run started ([`Processes::listed_from_start`]).
    firsts: Vec<(String, u64, i64)>,
}

impl Processes {
    /// Processes as restored from a file (each one's samples in time order, none alive).
    pub fn from_list(mut list: Vec<Process>) -> Processes {
        list.retain(|p| !p.samples.is_empty());
        list.iter_mut().for_each(|p| p.alive = false);
        let samples = list.iter().map(|p| p.samples.len()).sum();
        // A file keeps processes, not snapshots: each (device, run)'s first listing stands for
        // its first snapshot (a run whose first snapshot listed nobody is then misread).
        let mut firsts: Vec<(String, u64, i64)> = Vec::new();
        for p in &list {
            match firsts.iter_mut().find(|(d, r, _)| *d == p.device && *r == p.run) {
                Some(f) => f.2 = f.2.min(p.first_ns()),
                None => firsts.push((p.device.clone(), p.run, p.first_ns())),
            }
        }
        let mut out = Processes { list, samples, at_stop: Vec::new(), firsts };
        out.enforce_bounds();
        out
    }

    /// Every process, in the order first seen.
    pub fn list(&self) -> &[Process] {
        &self.list
    }

    /// Nothing seen yet.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The devices with processes, in the order first seen.
    pub fn devices(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in &self.list {
            if !out.contains(&p.device.as_str()) {
                out.push(&p.device);
            }
        }
        out
    }

    /// The processes of `device`.
    pub fn on<'a>(&'a self, device: &str) -> impl Iterator<Item = &'a Process> + 'a {
        let device = device.to_owned();
        self.list.iter().filter(move |p| p.device == device)
    }

    /// The `n` processes of `device` that used the most device memory (at their peak), most
    /// first.
    pub fn top_by_peak(&self, device: &str, n: usize) -> Vec<&Process> {
        let mut v: Vec<&Process> = self.on(device).collect();
        v.sort_by(|a, b| b.peak_memory().cmp(&a.peak_memory()).then(a.first_ns().cmp(&b.first_ns())));
        v.truncate(n);
        v
    }

    /// The `n` processes of `device` alive now that use the most device memory now, most first
    /// (ties: the lower pid).
    pub fn top_alive(&self, device: &str, n: usize) -> Vec<&Process> {
        let mut v: Vec<&Process> = self.on(device).filter(|p| p.alive).collect();
        v.sort_by(|a, b| b.latest().memory_bytes.cmp(&a.latest().memory_bytes).then(a.pid.cmp(&b.pid)));
        v.truncate(n);
        v
    }

    /// Was `p` listed in its device's first snapshot of a run: already running when the run
    /// started (its first time is the run's, not its own start)?
    pub fn listed_from_start(&self, p: &Process) -> bool {
        self.firsts.iter().any(|(d, _, t)| *d == p.device && *t == p.first_ns())
    }

    /// Files one snapshot of the device the run names `device` (see the module docs).
    pub fn ingest(&mut self, snap: &ProcessSnapshot, device: &str, host: &dyn Host) {
        if !self.firsts.iter().any(|(d, r, _)| d == device && *r == snap.run) {
            self.firsts.push((device.to_owned(), snap.run, snap.at_ns));
        }
        let of_device = |p: &Process| p.alive && p.run == snap.run && p.device == device;
        for p in self.list.iter_mut().filter(|p| of_device(p)) {
            let listed = snap.processes.iter().any(|u| u.pid == p.pid);
            let reused = listed && p.host_start.is_some() && host.start_time(p.pid) != p.host_start;
            if !listed || reused {
                p.alive = false;
            }
        }
        for u in &snap.processes {
            let sample = ProcessSample {
                t_ns: snap.at_ns,
                memory_bytes: u.memory_bytes,
                shared_bytes: u.shared_bytes,
                engines: u.engines,
            };
            let carried = self.at_stop.contains(&(device.to_owned(), u.pid));
            let going_on = |p: &Process| {
                carried
                    && !p.alive
                    && p.run != snap.run
                    && p.device == device
                    && p.pid == u.pid
                    && p.host_start == host.start_time(u.pid)
            };
            if let Some(p) = self.list.iter_mut().rev().find(|p| going_on(p))
                && p.last_ns() < sample.t_ns
            {
                p.run = snap.run;
                p.alive = true;
                p.samples.push(sample);
                self.samples += 1;
                continue;
            }
            match self.list.iter_mut().find(|p| of_device(p) && p.pid == u.pid) {
                Some(p) if p.last_ns() < sample.t_ns => {
                    p.samples.push(sample);
                    self.samples += 1;
                }
                Some(_) => {}
                None => {
                    self.list.push(Process {
                        run: snap.run,
                        device: device.to_owned(),
                        pid: u.pid,
                        command: host.command(u.pid),
                        samples: vec![sample],
                        alive: true,
                        host_start: host.start_time(u.pid),
                    });
                    self.samples += 1;
                }
            }
        }
        // Only the next run's first snapshot of the device continues a process.
        self.at_stop.retain(|(d, _)| d != device);
        self.enforce_bounds();
    }

    /// Files a snapshot of the run `info` describes, its device named as the run names it;
    /// false (nothing filed) when the snapshot is not of that run or names no device of it.
    pub fn ingest_of_run(&mut self, snap: &ProcessSnapshot, info: Option<&RunInfo>, host: &dyn Host) -> bool {
        let Some(device) = info.filter(|i| i.run == snap.run).and_then(|i| i.devices.get(snap.target)) else {
            return false;
        };
        self.ingest(snap, device, host);
        true
    }

    /// Run `run` stopped: its processes end.
    pub fn run_stopped(&mut self, run: u64) {
        self.at_stop.clear();
        for p in self.list.iter_mut().filter(|p| p.run == run && p.alive) {
            p.alive = false;
            self.at_stop.push((p.device.clone(), p.pid));
        }
    }

    fn enforce_bounds(&mut self) {
        while self.list.len() > MAX_PROCESSES {
            let i = self.list.iter().position(|p| !p.alive).unwrap_or(0);
            self.samples -= self.list.remove(i).samples.len();
        }
        while self.samples > MAX_SAMPLES {
            let Some(p) = self.list.iter_mut().max_by_key(|p| p.samples.len()) else { break };
            let before = p.samples.len();
            let last = p.samples.last().copied();
            let mut k = 0;
            p.samples.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            if let Some(last) = last
                && p.samples.last() != Some(&last)
            {
                p.samples.push(last);
            }
            self.samples -= before - p.samples.len();
            if before == p.samples.len() {
                break;
            }
        }
    }
}

/// A column of the process table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessColumn {
    /// The pid.
    Pid,
    /// The command.
    Command,
    /// Device memory now (its newest sample).
    Memory,
    /// Shared device memory now.
    Shared,
    /// The engines it uses now.
    Engines,
    /// When it was first listed.
    Since,
}

impl ProcessColumn {
    /// Every column, in the table's order.
    pub const ALL: [ProcessColumn; 6] = [
        ProcessColumn::Pid,
        ProcessColumn::Command,
        ProcessColumn::Memory,
        ProcessColumn::Shared,
        ProcessColumn::Engines,
        ProcessColumn::Since,
    ];

    /// Its heading.
    pub fn title(self) -> &'static str {
        match self {
            ProcessColumn::Pid => "PID",
            ProcessColumn::Command => "Command",
            ProcessColumn::Memory => "Memory",
            ProcessColumn::Shared => "Shared",
            ProcessColumn::Engines => "Engines",
            ProcessColumn::Since => "Since",
        }
    }

    /// How two processes compare by this column (ties: the earlier first seen, then the pid).
    pub fn compare(self, a: &Process, b: &Process) -> Ordering {
        let by = match self {
            ProcessColumn::Pid => a.pid.cmp(&b.pid),
            ProcessColumn::Command => a.command_text().cmp(b.command_text()),
            ProcessColumn::Memory => a.latest().memory_bytes.cmp(&b.latest().memory_bytes),
            ProcessColumn::Shared => a.latest().shared_bytes.cmp(&b.latest().shared_bytes),
            ProcessColumn::Engines => a.engines_text().cmp(&b.engines_text()),
            ProcessColumn::Since => a.first_ns().cmp(&b.first_ns()),
        };
        by.then(a.first_ns().cmp(&b.first_ns())).then(a.pid.cmp(&b.pid))
    }
}

/// `rows` sorted by `column`, ascending or not.
pub fn sorted(mut rows: Vec<&Process>, column: ProcessColumn, ascending: bool) -> Vec<&Process> {
    rows.sort_by(|a, b| if ascending { column.compare(a, b) } else { column.compare(b, a) });
    rows
}

#[cfg(test)]
#[path = "processes_tests.rs"]
mod tests;
