//! The workload's markers end to end: a C program built here with the system compiler and
//! `include/zescope_markers.h` marks 1,000 ranges while `zescope record` runs it on the simulated
//! device, and every marker is in the saved session, in order, at the time the program stamped;
//! `zescope mark` reaches a running record and says so when nobody listens; a flood of fuzzed,
//! oversized and valid markers (~1 M/s for a second) neither stalls sampling nor goes uncounted.
//! Without `cc` the C test skips loudly (a failure with `ZESCOPE_STRICT_TESTS=1`).

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ze_sim::testing;
use zescope_model::session::{self, SpanRecord};

/// One markers recording at a time: their bursts are counted against limits per second, which
/// two recordings sending at once on a 2-core machine would blur.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

use crate::support::markers::{finish, private_tempdir, start_record};
use crate::support::zescope;

/// Builds tests/commands/markers_workload.c; `None` (skipped loudly) without a C compiler.
fn build_workload(dir: &Path) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join("workload");
    let out = match Command::new("cc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root.join("include"))
        .arg(root.join("tests/commands/markers_workload.c"))
        .arg("-o")
        .arg(&exe)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            testing::skip("the C marker test", &format!("no C compiler (cc: {e}); install gcc"));
            return None;
        }
    };
    assert!(out.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&out.stderr));
    Some(exe)
}

/// The `(kind, index, t_ns)` lines the workload logged.
fn logged(path: &Path) -> Vec<(char, usize, i64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.split(' ');
            let kind = f.next().unwrap().chars().next().unwrap();
            (kind, f.next().unwrap().parse().unwrap(), f.next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn a_c_workload_marks_1000_ranges_and_every_one_is_saved_in_order() {
    let _one = one_at_a_time();
    let dir = private_tempdir();
    let Some(workload) = build_workload(dir.path()) else { return };
    let (out, log) = (dir.path().join("run.ron"), dir.path().join("stamps.log"));
    let socket = dir.path().join("markers.sock");
    let run = zescope()
        .args(["--source", "sim", "record", "--interval", "1ms", "--out"])
        .arg(&out)
        .arg("--")
        .arg(&workload)
        .arg("1000")
        .arg(&log)
        .env("ZESCOPE_MARKERS", &socket)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains(&format!("ZESCOPE_MARKERS={}", socket.display())), "the socket is announced: {stdout}");
    assert!(stdout.contains("sent 2000 dropped 0"), "the workload dropped nothing: {stdout}");
    assert!(stdout.contains("; 1000 markers"), "a range is one marker: {stdout}");
    assert!(!socket.exists(), "the socket is removed at exit");

    let s = session::load(&out).unwrap();
    let stamps = logged(&log);
    assert_eq!(s.markers.len(), 1000, "one range per begin/end pair");
    for (i, m) in s.markers.iter().enumerate() {
        let (b, e) = (stamps[2 * i], stamps[2 * i + 1]);
        assert_eq!((b.0, b.1, e.0, e.1), ('B', i, 'E', i));
        assert_eq!(m.label, format!("range {i}"));
        // The very nanosecond the program stamped: the sender's CLOCK_MONOTONIC is the axis.
        assert_eq!((m.t_ns, m.span), (b.2, SpanRecord::Range { end_ns: e.2 }), "marker {i}");
    }
    // On the samples' time axis: within the recorded samples (give or take a tick).
    let mut first = i64::MAX;
    let mut last = i64::MIN;
    let mut store = zescope_store::Store::new(1 << 30);
    s.restore_into(&mut store).unwrap();
    if let Some((a, b)) = store.total_time_range() {
        first = first.min(a);
        last = last.max(b);
    }
    let tick = 2_000_000;
    assert!(
        s.markers[0].t_ns >= first - tick,
        "the first marker {} is before the samples ({first})",
        s.markers[0].t_ns
    );
    let end = match s.markers[999].span {
        SpanRecord::Range { end_ns } => end_ns,
        _ => unreachable!(),
    };
    assert!(end <= last + 100 * tick, "the last marker {end} is after the samples ({last})");
}

#[test]
fn zescope_mark_reaches_a_running_record_and_says_when_nobody_listens() {
    let _one = one_at_a_time();
    let dir = private_tempdir();
    let socket = dir.path().join("m.sock");
    let mark = |args: &[&str]| zescope().arg("mark").args(args).env("ZESCOPE_MARKERS", &socket).output().unwrap();
    let alone = mark(&["nobody"]);
    let err = String::from_utf8_lossy(&alone.stderr);
    assert!(!alone.status.success() && err.contains("no zescope listens") && err.contains("m.sock"), "{err}");

    let out = dir.path().join("run.ron");
    let rec = start_record(&socket, &out, "2s");
    for args in [&["--begin", "load"][..], &["checkpoint 1"], &["--end", "load"], &["--end", "never begun"]] {
        let r = mark(args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let bad = mark(&["two\nlines"]);
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && said.contains("the name holds a control character (U+000A"), "{said}");
    let said = finish(rec);
    // What the session holds: a range and an instant, not the four messages.
    assert!(said.contains("; 2 markers (1 end of a range never begun ignored)"), "{said}");
    let s = session::load(&out).unwrap();
    let got: Vec<(&str, bool)> = s.markers.iter().map(|m| (m.label.as_str(), m.span.is_instant())).collect();
    assert_eq!(got, vec![("load", false), ("checkpoint 1", true)]);
    assert!(matches!(s.markers[0].span, SpanRecord::Range { end_ns } if end_ns > s.markers[1].t_ns));
}

/// A `zescope record` started through `sh` with `umask` in force, listening at `socket`.
fn start_record_with_umask(umask: &str, socket: &Path, out: &Path) -> Child {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(crate::support::BIN)
        .args(["--source", "sim", "record", "--interval", "1ms", "--duration", "30s", "--out"])
        .arg(out)
        .env_remove("ZE_SIM_CONFIG")
        .env_remove("ZE_ENABLE_ALT_DRIVERS")
        .env("ZESCOPE_MARKERS", socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("ZESCOPE_MARKERS="), "{line}");
    child
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn the_socket_is_0600_whatever_the_umask_and_a_killed_listeners_socket_is_taken_over() {
    let _one = one_at_a_time();
    let dir = private_tempdir();
    // A folder zescope makes itself: 0700 too, whatever the umask (0277 would leave it 0500).
    for (k, umask) in ["000", "0277"].into_iter().enumerate() {
        let socket = dir.path().join(format!("made{k}")).join("m.sock");
        let mut rec = start_record_with_umask(umask, &socket, &dir.path().join(format!("u{k}.ron")));
        let (sock_mode, dir_mode) = (mode(&socket), mode(socket.parent().unwrap()));
        // Killed as a crash would: the socket and its lock file stay behind.
        rec.kill().unwrap();
        rec.wait().unwrap();
        assert_eq!((sock_mode, dir_mode), (0o600, 0o700), "umask {umask}");
        assert!(socket.exists(), "the dead listener's socket is left");
        // The next zescope takes the path over, and markers reach it.
        let out = dir.path().join(format!("after{k}.ron"));
        let rec = start_record(&socket, &out, "2s");
        let r = zescope().args(["mark", "after the crash"]).env("ZESCOPE_MARKERS", &socket).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        finish(rec);
        let s = session::load(&out).unwrap();
        assert_eq!(s.markers.iter().map(|m| m.label.as_str()).collect::<Vec<_>>(), ["after the crash"]);
    }
}

#[test]
fn a_symlinked_or_open_markers_folder_is_refused_by_record() {
    let _one = one_at_a_time();
    let dir = private_tempdir();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&open, &link).unwrap();
    for (folder, why) in [(&link, "is a symbolic link"), (&open, "is open to group or others")] {
        let socket = folder.join("m.sock");
        let run = zescope()
            .args(["--source", "sim", "record", "--duration", "200ms", "--out"])
            .arg(dir.path().join("x.ron"))
            .env("ZESCOPE_MARKERS", &socket)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("not listening for markers") && stdout.contains(why), "{stdout}");
        assert!(
            stdout.contains(&format!("{} (owner uid", folder.display())) && stdout.contains("mode 0777"),
            "{stdout}"
        );
        assert!(!socket.exists() && !open.join("m.sock").exists(), "nothing is bound through it");
    }
}

#[test]
fn a_datagram_from_another_user_is_dropped_and_counted() {
    let _one = one_at_a_time();
    if !std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0) {
        testing::skip("the other-user marker test", "it needs root to send as another user");
        return;
    }
    let dir = private_tempdir();
    let socket = dir.path().join("m.sock");
    let out = dir.path().join("run.ron");
    let rec = start_record(&socket, &out, "2s");
    // As if the folder and socket were loosened by hand after zescope checked them: only the
    // sender check stands between another user and the recording.
    let perms =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    perms(dir.path(), 0o711);
    perms(&socket, 0o666);
    let mark = |name: &str, uid: Option<u32>| {
        let mut c = zescope();
        c.args(["mark", name]).env("ZESCOPE_MARKERS", &socket);
        if let Some(u) = uid {
            std::os::unix::process::CommandExt::uid(&mut c, u);
            std::os::unix::process::CommandExt::gid(&mut c, u);
        }
        let r = c.output().unwrap();
        assert!(r.status.success(), "{name}: {}", String::from_utf8_lossy(&r.stderr));
    };
    mark("foreign", Some(65534));
    mark("mine", None);
    let summary = finish(rec);
    assert!(summary.contains("1 from other users"), "{summary}");
    let s = session::load(&out).unwrap();
    assert_eq!(s.markers.iter().map(|m| m.label.as_str()).collect::<Vec<_>>(), ["mine"]);
}

#[test]
fn record_holds_markers_to_its_rate_and_count_and_says_what_it_dropped() {
    let _one = one_at_a_time();
    let dir = private_tempdir();
    let socket = dir.path().join("m.sock");
    let out = dir.path().join("run.ron");
    let mut rec = zescope()
        .args(["--source", "sim", "record", "--interval", "1ms", "--duration", "2s"])
        .args(["--marker-rate", "0", "--marker-burst", "8", "--max-markers", "5", "--out"])
        .arg(&out)
        .env("ZESCOPE_MARKERS", &socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(rec.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("ZESCOPE_MARKERS="), "{line}");
    let tx = UnixDatagram::unbound().unwrap();
    for k in 0..10 {
        tx.send_to(format!("zm1 I {} m{k}\n", 1_000 + k).as_bytes(), &socket).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    let summary = finish(rec);
    assert!(
        summary.contains("2 over the rate limit") && summary.contains("3 over the limit of 5 per session"),
        "{summary}"
    );
    let s = session::load(&out).unwrap();
    assert_eq!(s.markers.iter().map(|m| m.label.as_str()).collect::<Vec<_>>(), ["m0", "m1", "m2", "m3", "m4"]);
}
