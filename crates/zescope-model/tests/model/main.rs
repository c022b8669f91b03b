//! The model's integration tests, one binary, each module a feature: images and CSV of panes
//! (`write`, `write_clip`), the phase table against a brute-force model (`phases`), busy time
//! and states through files and the phase table (`kinds`), session files — the processes they
//! keep (`processes`), autosave checkpoints (`autosave`), malformed files (`corpus`), a save
//! killed midway (`crash`), flipped bytes (`flips`) — and hostile input: crafted files and
//! folders with a peak memory bound (`hostile_files`), mutations of real files
//! (`hostile_mutations`).

mod autosave;
mod corpus;
mod crash;
mod flips;
mod hostile_files;
mod hostile_mutations;
mod kinds;
mod phases;
mod processes;
mod write;
mod write_clip;

/// The name the test harness gives test `name` of the module whose `module_path!()` is
/// `module` (its path without the binary's own name): what `--exact` takes when a test runs
/// another of its binary's tests as a child process.
pub fn test_name(module: &str, name: &str) -> String {
    let module = module.split_once("::").map_or("", |(_, m)| m);
    format!("{module}::{name}")
}

/// The checkpoints under `root` once the lock of an autosaver just dropped is free. Its lock
/// file is opened close-on-exec, but a child process another test of this binary is starting
/// (`crash`, `hostile_files`) holds a copy of the descriptor — and with it the lock — until its
/// exec, and a scan in that moment skips the directory as a running zescope's: the scan is
/// tried again for up to 5 s while it finds nothing.
pub fn recoverable_once_released(root: &std::path::Path) -> Vec<zescope_model::session::autosave::Recoverable> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let found = zescope_model::session::autosave::find_recoverable_in(root);
        if !found.is_empty() || std::time::Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
