//! `c/tracer_client.c`, compiled against the upstream 1.32 headers and linked with the upstream
//! loader, runs the conformance test's order against `libze_sim.so`: with the import freed
//! before deactivation the report is clean, also when it is freed first, the tracer still
//! enabled (the newer conformance order); deactivating first is refused and reported.

use std::path::{Path, PathBuf};
use std::process::Command;

use ze_sim::{Report, testing};

/// Compiles the client into `dir` against `include`, linked with the loader in `lib`.
fn compile(dir: &Path, include: &Path, lib: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/tracer_client.c");
    let exe = dir.join("tracer_client");
    let out = Command::new("cc")
        .args(["-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(include)
        .arg("-L")
        .arg(lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lze_loader")
        .output()
        .expect("run cc");
    // A compiler that runs but rejects the program is a failure, not a skip.
    assert!(out.status.success(), "cc failed on {}:\n{}", src.display(), String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs the client (with `arg`, if any) through the upstream loader: (stdout, report).
fn run(exe: &Path, so: &Path, lib: &Path, dir: &Path, arg: Option<&str>) -> (String, Report) {
    let report = dir.join(format!("report-{}.ron", arg.unwrap_or("default")));
    let out = Command::new(exe)
        .args(arg)
        .env("LD_LIBRARY_PATH", lib)
        .env("ZE_ENABLE_ALT_DRIVERS", so)
        .env("ZET_ENABLE_METRICS", "1")
        .env("ZE_SIM_REPORT", &report)
        .env_remove("ZE_SIM_CONFIG")
        .output()
        .expect("run the C client");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the C client failed ({}):\n{stdout}\n{stderr}", out.status);
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("no report ({e}):\n{stderr}"));
    (stdout, ron::from_str(&text).unwrap())
}

#[test]
fn a_c_client_in_the_conformance_order_through_the_upstream_loader() {
    let so = match testing::cdylib() {
        Ok(so) => so,
        Err(why) => return testing::skip("the tracer C client", &why),
    };
    let Some((lib, include)) = super::loaders::upstream_dirs() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let exe = compile(dir, &include, &lib);

    let (out, report) = run(&exe, &so, &lib, dir, None);
    assert!(report.is_clean(), "{report:?}\n{out}");
    for line in ["tracer group KernelTrace", "decodable metrics 4", "done"] {
        assert!(out.lines().any(|l| l == line), "{line:?} missing:\n{out}");
    }
    let entries = out.lines().find_map(|l| l.strip_prefix("entries ")?.strip_suffix(" match their records"));
    assert!(entries.and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n > 0), "{out}");
    assert!(out.contains(" before activation"), "{out}");

    // The conformance suite's newer order: the import freed first, then the decoder and the
    // tracer destroyed, then the deactivation (issue 41: ze-sim refused that free).
    let (out, report) = run(&exe, &so, &lib, dir, Some("free-first"));
    assert!(report.is_clean(), "{report:?}\n{out}");
    assert!(out.contains("import freed with the tracer enabled") && out.ends_with("done\n"), "{out}");

    let (out, report) = run(&exe, &so, &lib, dir, Some("free-after-deactivate"));
    assert!(out.contains("deactivation refused while the import lives") && out.ends_with("done\n"), "{out}");
    assert_eq!(report.violation_kinds(), ["teardown_with_live_import"], "{report:?}");
    assert!(report.leaks.is_empty(), "{report:?}");
}
