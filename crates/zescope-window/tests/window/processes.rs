//! View → Processes, driven by egui_kittest against a real sampler thread on a private simulated
//! driver whose media process exits at 0.8 s and whose pid a new process takes at 2.4 s (more
//! than a snapshot period later, so a snapshot falls between, however the run is late): the
//! table lists the GPU's processes (pid, command or "(not on this host)", engines), the reused
//! pid as two rows, and a click on a heading sorts the rows by that column, again the other way.

use crate::support::pump;

use egui_kittest::kittest::Queryable;
use ze_sim::config::ProcessesConfig;
use zescope_model::view::processes::{NOT_ON_HOST, ProcessColumn};
use zescope_window::ZescopeApp;

const GPU: &str = "ze-sim GPU";

/// The GPU's process rows, top to bottom as drawn: each row's pid label's vertical position.
fn drawn_pids(h: &egui_kittest::Harness<'_, ZescopeApp>) -> Vec<u32> {
    let mut rows: Vec<(f32, u32)> = Vec::new();
    let pids: std::collections::BTreeSet<u32> = h.state().state.history.processes.on(GPU).map(|p| p.pid).collect();
    for pid in pids {
        for node in h.get_all_by_label(&pid.to_string()) {
            rows.push((node.rect().top(), pid));
        }
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    rows.into_iter().map(|(_, pid)| pid).collect()
}

fn reused_twice(a: &ZescopeApp) -> bool {
    let on_gpu: Vec<u32> = a.state.history.processes.on(GPU).map(|p| p.pid).collect();
    on_gpu.iter().any(|pid| on_gpu.iter().filter(|q| *q == pid).count() == 2)
}

#[test]
fn the_process_table_lists_each_process_once_and_sorts_by_a_clicked_column() {
    let sim = crate::support::sim(|c| {
        c.sysman.processes =
            ProcessesConfig { exit_at_ms: 800, reuse_at_ms: 2400, job_period_ms: 0, include_self: true };
    });
    let mut h = crate::support::harness_on(&sim);
    h.step();
    h.get_by_label("Start").click();
    pump(&mut h, "a pid listed again after its process exited", reused_twice);
    h.get_by_label("View").click();
    for _ in 0..10 {
        h.step();
        if h.query_by_label("Processes").is_some() {
            break;
        }
    }
    h.get_by_label("Processes").click();
    for _ in 0..4 {
        h.step();
    }
    assert!(h.state().windows.processes.open);
    h.get_by_label(GPU);

    // Every process of the GPU has its row; the reused pid two of them, one ended.
    let a = h.state();
    let processes: Vec<(u32, bool)> = a.state.history.processes.on(GPU).map(|p| (p.pid, p.alive)).collect();
    let me = std::process::id();
    assert!(processes.iter().any(|(p, _)| *p == me), "the application itself: {processes:?}");
    let drawn = drawn_pids(&h);
    assert_eq!(drawn.len(), processes.len(), "one row each: {drawn:?} for {processes:?}");
    assert!(h.get_all_by_label(NOT_ON_HOST).count() >= 3, "simulated pids are not this host's");
    h.get_by_label("media, copy");
    h.get_by_label("render");
    // The memory plot's lines are keyed: the processes most at their peak have their line's
    // colour beside their pid, one each, and no other row has one.
    let plotted = processes.len().min(zescope_window::windows::PLOTTED);
    let keys = h.get_all_by_label_contains("of the device memory plot").count();
    assert_eq!(keys, plotted, "one key per line");
    for i in 1..=plotted {
        h.get_by_label(&format!("line {i} of the device memory plot"));
    }

    // Sorted by memory, most first, to begin with; by pid once its heading is clicked, then the
    // other way round.
    assert_eq!(h.state().windows.processes.sort, (ProcessColumn::Memory, false));
    let memory_order: Vec<u32> = {
        let a = h.state();
        a.windows.processes.rows(&a.state.history.processes, GPU).iter().map(|p| p.pid).collect()
    };
    assert_eq!(drawn_pids(&h), memory_order, "the drawn order is the table's");
    h.get_by_label_contains("PID").click();
    h.step();
    h.step();
    let up = drawn_pids(&h);
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "ascending pids: {up:?}");
    assert_eq!(h.state().windows.processes.sort, (ProcessColumn::Pid, true));
    h.get_by_label_contains("PID").click();
    h.step();
    h.step();
    let down = drawn_pids(&h);
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "descending pids: {down:?}");
    assert_ne!(up, down);
    h.get_by_label("Memory").click();
    h.step();
    assert_eq!(h.state().windows.processes.sort, (ProcessColumn::Memory, false), "memory: most first");

    crate::support::quit_discarding(&mut h);
    assert!(sim.report().is_clean(), "{:?}", sim.report());
}
