//! A C client written against the official headers (`/usr/include/level_zero`, Debian's
//! libze-dev) that follows the extension's sample code — export properties queried through the
//! `pNext` chain BEFORE any activation, the fd imported as is, the import freed — runs against
//! `libze_sim.so` through the real loader. By default it finds every exporter (the tracer-based
//! `KernelTrace` among them, whose memory is a ring of kernel events); with the quirk
//! `export_only_while_active` it finds none (what a driver allocating at activation does).

use std::path::{Path, PathBuf};
use std::process::Command;

use ze_sim::{Report, testing};

/// Compiles `tests/c/sample_client.c` into `dir`; Err says why it cannot.
fn compile(dir: &Path) -> Result<PathBuf, String> {
    if !Path::new("/usr/include/level_zero/zet_api.h").exists() {
        return Err("the Level Zero headers (libze-dev) are not installed".into());
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/sample_client.c");
    let exe = dir.join("sample_client");
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lze_loader")
        .output()
        .map_err(|e| format!("cannot run cc: {e}"))?;
    if !out.status.success() {
        // A compiler that runs but rejects the program is a failure, not a skip.
        panic!("cc failed on {}:\n{}", src.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(exe)
}

/// Runs the client with `config` (RON) and returns (stdout, report).
fn run(exe: &Path, so: &Path, dir: &Path, config: &str) -> (String, Report) {
    let cfg = dir.join("config.ron");
    let report = dir.join("report.ron");
    std::fs::write(&cfg, config).unwrap();
    let _ = std::fs::remove_file(&report);
    let out = Command::new(exe)
        .env("ZE_ENABLE_ALT_DRIVERS", so)
        .env("ZET_ENABLE_METRICS", "1")
        .env("ZE_SIM_CONFIG", &cfg)
        .env("ZE_SIM_REPORT", &report)
        .output()
        .expect("run the C client");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the C client failed ({}):\n{stdout}\n{stderr}", out.status);
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("no report ({e}):\n{stderr}"));
    (stdout, ron::from_str(&text).unwrap())
}

#[test]
fn a_c_client_following_the_spec_sample_finds_the_exported_fds() {
    if let Err(why) = testing::loader_available() {
        return testing::skip("the C client test", &why);
    }
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip("the C client test", &why),
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let exe = match compile(dir) {
        Ok(exe) => exe,
        Err(why) => return testing::skip("the C client test", &why),
    };

    let (out, report) = run(&exe, &so, dir, "()");
    assert!(report.is_clean(), "{report:?}");
    let magic = format!("magic {:08x}", ze_sim::export::MAGIC);
    for exporter in
        ["group ComputeBasic fd ", "metric BytesRead fd ", "metric MemoryTemperature fd ", "group NpuActivity fd "]
    {
        let line =
            out.lines().find(|l| l.starts_with(exporter)).unwrap_or_else(|| panic!("{exporter}… missing:\n{out}"));
        assert!(line.ends_with(&magic), "{line}");
    }
    // The tracer-based group exports its ring of kernel events (its own magic, see ze_sim::ring).
    let trace = out.lines().find(|l| l.starts_with("group KernelTrace fd ")).unwrap_or_else(|| panic!("{out}"));
    assert!(trace.ends_with(&format!("magic {:08x}", ze_sim::ring::RING_MAGIC)), "{trace}");
    assert!(out.contains("exporters found: 6"), "{out}");

    let (out, report) = run(&exe, &so, dir, "(quirks: (export_only_while_active: true))");
    assert!(report.is_clean(), "{report:?}");
    assert!(out.contains("group ComputeBasic fd -1 (no exported memory)"), "{out}");
    assert!(out.contains("exporters found: 0"), "{out}");
}
