//! A corpus of hostile files and directories for every reader of outside bytes: oversized,
//! truncated, deeply nested, wrong types, huge counts, symbolic links and link loops, FIFOs and
//! devices, foreign or loose directories. Each case runs its reader in a child process (this
//! test binary again, running [`child`]), which reports the outcome and its peak RSS (`VmHWM`);
//! the parent asserts the named error and that the peak stayed within [`HEADROOM`] of what the
//! same child peaks at on a tiny good file.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use zescope_model::session::MAX_FILE_BYTES;
use zescope_model::session::autosave::{MAX_CHUNK_BYTES, scan_recoverable};
use zescope_sampler::layout::{LayoutSet, Owner};

/// How much more than the baseline a hostile file may make a reader peak at.
const HEADROOM_KB: u64 = 24 << 10;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hostile/checkpoint");
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/example-session.ron");

/// The child's side: run one reader on `HOSTILE_PATH` and print its outcome and peak RSS.
/// Ignored in an ordinary run (it checks nothing by itself); [`run`] runs it with `--ignored`.
#[test]
#[ignore = "the child process of the hostile-file tests, run by them with --ignored"]
fn child() {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} unset: a child process its parent test runs"));
    let (kind, path) = (var("HOSTILE_KIND"), PathBuf::from(var("HOSTILE_PATH")));
    let outcome = match kind.as_str() {
        "session" => zescope_model::session::load(&path)
            .map(|s| format!("{} streams", s.streams.len()))
            .map_err(|e| e.to_string()),
        "layouts" => {
            // `installed` reads $XDG_CONFIG_HOME/zescope/layouts, set by the parent.
            let (set, errors) = LayoutSet::installed();
            match errors.first() {
                Some(e) => Err(e.to_string()),
                None => Ok(format!("{} layouts", set.layouts.len())),
            }
        }
        "recovery" => scan_recoverable(&path)
            .and_then(|found| match found.first() {
                Some(r) => r.load().map(|s| format!("{} found, {} streams", found.len(), s.streams.len())),
                None => Ok("0 found".into()),
            })
            .map_err(|e| e.to_string()),
        other => panic!("unknown kind {other}"),
    };
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    match outcome {
        Ok(s) => println!("\nOUTCOME ok: {s}"),
        Err(e) => println!("\nOUTCOME err: {e}"),
    }
    println!("{hwm}");
}

/// Run [`child`] on `path`; returns its outcome line and peak RSS in kB.
fn run(kind: &str, path: &Path, config_home: Option<&Path>) -> (String, u64) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", &crate::test_name(module_path!(), "child"), "--ignored", "--nocapture", "--test-threads=1"])
        .env("HOSTILE_KIND", kind)
        .env("HOSTILE_PATH", path);
    if let Some(h) = config_home {
        cmd.env("XDG_CONFIG_HOME", h);
    }
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            let _ = child.wait();
            return ("hung for 60 s".into(), 0);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed on {}: {stdout}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let outcome = stdout.lines().find_map(|l| l.split_once("OUTCOME ").map(|x| x.1)).expect(&stdout).to_owned();
    let kb = stdout
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    (outcome, kb)
}

struct Case {
    name: &'static str,
    kind: &'static str,
    path: PathBuf,
    config_home: Option<PathBuf>,
    /// Every one of these must be in the error.
    expect: Vec<String>,
}

fn session_case(name: &'static str, dir: &Path, contents: &[u8], expect: &[&str]) -> Case {
    let path = dir.join(format!("{name}.ron"));
    std::fs::write(&path, contents).unwrap();
    Case { name, kind: "session", path, config_home: None, expect: expect.iter().map(|s| s.to_string()).collect() }
}

/// `prefix` followed by 100 000 opening brackets.
fn deep(prefix: &str, open: char) -> Vec<u8> {
    let mut s = prefix.to_owned();
    s.extend(std::iter::repeat_n(open, 100_000));
    s.into_bytes()
}

fn sparse(path: &Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

fn session_cases(dir: &Path) -> Vec<Case> {
    let example = std::fs::read(EXAMPLE).unwrap();
    let mut cases = vec![
        session_case("truncated", dir, &example[..example.len() / 2], &["line", "column"]),
        session_case("deeply_nested", dir, &deep("(format: \"zescope-session\", version: 1, x: ", '['), &["line 1"]),
        session_case(
            "wrong_type",
            dir,
            &String::from_utf8_lossy(&example).replacen("version: 1", "version: \"1\"", 1).into_bytes(),
            &["line 4", "Expected integer"],
        ),
        session_case(
            "huge_count",
            dir,
            &String::from_utf8_lossy(&example)
                .replacen("samples: 201", "samples: 18446744073709551615", 1)
                .into_bytes(),
            &["streams[0].raw.chunks", "18446744073709551615 samples"],
        ),
        session_case("binary", dir, &[0xff, 0xfe, 0, 1, 2, 3], &["not text (invalid UTF-8 at byte 0)"]),
    ];
    let big = dir.join("oversized.ron");
    sparse(&big, MAX_FILE_BYTES + 1);
    cases.push(Case {
        name: "oversized",
        kind: "session",
        expect: vec![big.display().to_string(), "more than such a file may have".into()],
        path: big,
        config_home: None,
    });
    let (a, b) = (dir.join("loop-a.ron"), dir.join("loop-b.ron"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    cases.push(Case {
        name: "link_loop",
        kind: "session",
        expect: vec![a.display().to_string(), "cannot open".into()],
        path: a,
        config_home: None,
    });
    let fifo = dir.join("fifo.ron");
    mkfifo(&fifo);
    let zero = dir.join("zero.ron");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for (name, p) in [("fifo", fifo), ("dev_zero", zero)] {
        cases.push(Case {
            name,
            kind: "session",
            expect: vec![p.display().to_string(), "is not a regular file".into()],
            path: p,
            config_home: None,
        });
    }
    cases
}

/// A config home whose layout directory holds one file `name` made by `make`.
fn layout_case(name: &'static str, dir: &Path, make: impl FnOnce(&Path), expect: &[&str]) -> Case {
    let home = dir.join(format!("home-{name}"));
    let layouts = home.join("zescope/layouts");
    std::fs::create_dir_all(&layouts).unwrap();
    let file = layouts.join(format!("{name}.ron"));
    make(&file);
    let mut expect: Vec<String> = expect.iter().map(|s| s.to_string()).collect();
    expect.push(file.display().to_string());
    Case { name, kind: "layouts", path: file, config_home: Some(home), expect }
}

fn layout_cases(dir: &Path) -> Vec<Case> {
    vec![
        layout_case("layout_oversized", dir, |p| sparse(p, (4 << 20) + 1), &["larger than 4 MiB"]),
        layout_case("layout_fifo", dir, mkfifo, &["not a regular file"]),
        layout_case(
            "layout_nested",
            dir,
            |p| std::fs::write(p, deep("Layout(name: \"n\", x: ", '[')).unwrap(),
            &["1:"],
        ),
        layout_case(
            "layout_wrong_type",
            dir,
            |p| {
                std::fs::write(p, "Layout(name: 3, matches: [()], counters: MetricOrder(first: 0, stride: 8))").unwrap()
            },
            &["string"],
        ),
        layout_case(
            "layout_huge_offset",
            dir,
            |p| {
                let text = "Layout(name: \"h\", matches: [(group: Some(\"G\"))], \
                            counters: MetricOrder(first: 18446744073709551616, stride: 8))";
                std::fs::write(p, text).unwrap()
            },
            &["1:"],
        ),
        layout_case("layout_link_loop", dir, |p| std::os::unix::fs::symlink(p, p).unwrap(), &["cannot open"]),
    ]
}

/// A private autosave root holding a copy of the checkpoint fixture in `entry/`.
fn recovery_root(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let root = dir.join(format!("root-{name}"));
    let entry = root.join("123-456");
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
    for e in std::fs::read_dir(FIXTURE).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, entry.join(p.file_name().unwrap())).unwrap();
    }
    (root, entry)
}

fn recovery_case(name: &'static str, dir: &Path, spoil: impl FnOnce(&Path, &Path), expect: &[&str]) -> Case {
    let (root, entry) = recovery_root(dir, name);
    spoil(&root, &entry);
    Case {
        name,
        kind: "recovery",
        path: root,
        config_home: None,
        expect: expect.iter().map(|s| s.to_string()).collect(),
    }
}

fn edit_checkpoint(entry: &Path, from: &str, to: &str) {
    let p = entry.join("checkpoint.ron");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

fn recovery_cases(dir: &Path) -> Vec<Case> {
    vec![
        recovery_case(
            "root_loose",
            dir,
            |root, _| std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o777)).unwrap(),
            &["writable by group or others", "chmod go-w"],
        ),
        recovery_case(
            "chunk_twice",
            dir,
            |_, e| edit_checkpoint(e, "\"c-0-0-4096.txt\",", "\"c-0-0-4096.txt\", \"c-0-0-4096.txt\","),
            &["chunk_files[0]", "named twice"],
        ),
        recovery_case(
            "chunk_link",
            dir,
            |_, e| {
                std::fs::rename(e.join("c-0-0-4096.txt"), e.join("elsewhere")).unwrap();
                std::os::unix::fs::symlink("elsewhere", e.join("c-0-0-4096.txt")).unwrap();
            },
            &["c-0-0-4096.txt", "symbolic link"],
        ),
        recovery_case(
            "chunk_oversized",
            dir,
            |_, e| sparse(&e.join("c-0-0-4096.txt"), (64 << 20) + 1),
            &["c-0-0-4096.txt", "more than such a file may have"],
        ),
        recovery_case(
            "chunk_outside",
            dir,
            |_, e| edit_checkpoint(e, "\"c-0-0-4096.txt\"", "\"../../etc/passwd\""),
            &["chunk_files[0]", "is not a chunk file"],
        ),
        recovery_case(
            "checkpoint_nested",
            dir,
            |_, e| std::fs::write(e.join("checkpoint.ron"), deep("(format: \"zescope-autosave\", x: ", '[')).unwrap(),
            &["checkpoint.ron, line 1"],
        ),
        recovery_case(
            "checkpoint_huge_count",
            dir,
            |_, e| edit_checkpoint(e, "samples: 4200", "samples: 18446744073709551615"),
            &["checkpoint.ron: streams[0].raw.chunks", "18446744073709551615 samples"],
        ),
    ]
}

#[test]
fn hostile_files_give_named_errors_within_a_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.ron");
    std::fs::copy(EXAMPLE, &good).unwrap();
    let (outcome, baseline) = run("session", &good, None);
    assert!(outcome.starts_with("ok:"), "{outcome}");
    let mut cases = session_cases(dir.path());
    cases.extend(layout_cases(dir.path()));
    cases.extend(recovery_cases(dir.path()));
    let mut failures = Vec::new();
    for c in &cases {
        let (outcome, kb) = run(c.kind, &c.path, c.config_home.as_deref());
        eprintln!("{}: {outcome} ({kb} kB)", c.name);
        let named = outcome.starts_with("err:") && c.expect.iter().all(|e| outcome.contains(e.as_str()));
        if !named || kb > baseline + HEADROOM_KB {
            failures
                .push(format!("{}: {outcome} (peak {kb} kB, baseline {baseline} kB; expected {:?})", c.name, c.expect));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_good_checkpoint_is_recovered_from_a_private_root() {
    let dir = tempfile::tempdir().unwrap();
    let (root, _) = recovery_root(dir.path(), "good");
    let found = scan_recoverable(&root).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].load().unwrap().streams[0].data.raw.timestamps.len(), 4200);
}

// A checkpoint's chunk files may hold what a session file may.
const _: () = assert!(MAX_CHUNK_BYTES >= MAX_FILE_BYTES);

#[test]
fn the_recovery_scan_never_follows_links_nor_locks_inside_them() {
    let dir = tempfile::tempdir().unwrap();
    let (root, entry) = recovery_root(dir.path(), "links");
    // A link in the root to a directory elsewhere that holds a checkpoint.
    let outside = dir.path().join("outside");
    std::fs::rename(&entry, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("999-1")).unwrap();
    // A link to a file and a plain file: not directories.
    std::os::unix::fs::symlink("/etc/hostname", root.join("999-2")).unwrap();
    std::fs::write(root.join("999-3"), "x").unwrap();
    assert!(scan_recoverable(&root).unwrap().is_empty());
    assert!(!outside.join("lock").exists(), "no lock was created through the link");
    assert!(outside.join("checkpoint.ron").exists(), "nothing behind the link was removed");
    // A planted `lock` link inside a real entry is not followed either.
    let (root, entry) = recovery_root(dir.path(), "lock-link");
    let victim = dir.path().join("victim");
    std::os::unix::fs::symlink(&victim, entry.join("lock")).unwrap();
    assert!(scan_recoverable(&root).unwrap().is_empty());
    assert!(!victim.exists(), "the lock link's target was not created");
    // A checkpoint that is a link is left alone.
    let (root, entry) = recovery_root(dir.path(), "cp-link");
    std::fs::rename(entry.join("checkpoint.ron"), dir.path().join("cp.ron")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("cp.ron"), entry.join("checkpoint.ron")).unwrap();
    assert!(scan_recoverable(&root).unwrap().is_empty());
    assert!(entry.exists(), "an entry with a linked checkpoint is not deleted");
}

#[test]
fn a_fifo_planted_as_the_lock_does_not_block_the_recovery_scan() {
    let dir = tempfile::tempdir().unwrap();
    let (root, entry) = recovery_root(dir.path(), "lock-fifo");
    std::fs::remove_file(entry.join("lock")).ok();
    mkfifo(&entry.join("lock"));
    // Opening a FIFO for writing waits for a reader, which never comes: the scan runs on a
    // thread so that a blocked open fails this test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(scan_recoverable(&root).map(|v| v.len()).map_err(|e| e.to_string())));
    let found = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the recovery scan blocked on a FIFO");
    assert_eq!(found, Ok(0), "an entry whose lock is a FIFO is not recoverable");
    assert!(entry.join("checkpoint.ron").exists(), "the entry is left alone");
}

#[test]
fn a_catch_all_layout_is_for_the_simulated_driver_unless_the_file_says_otherwise() {
    let real = Owner { simulated: false, driver_uuid: "8086", device: "Arc", group: "ComputeBasic" };
    let sim = Owner { simulated: true, ..real };
    let text = "Layout(name: \"any\", matches: [()], counters: MetricOrder(first: 0, stride: 8))";
    let mut set = LayoutSet::default();
    set.add_file("any.ron", text).unwrap();
    assert!(set.select(&real).is_none(), "refused for a real driver");
    assert_eq!(set.select(&sim).unwrap().name, "any");
    assert_eq!(set.catch_alls().count(), 1);
    for spelled in ["[(driver: Any)]", "[(device: Some(\"*\"), group: Some(\"**\"))]"] {
        let mut set = LayoutSet::default();
        set.add_file("any.ron", &text.replace("[()]", spelled)).unwrap();
        assert!(set.select(&real).is_none(), "{spelled} is a catch-all");
    }
    let mut set = LayoutSet::default();
    set.add_file("any.ron", &text.replace("counters", "allow_any_driver: true, counters")).unwrap();
    assert_eq!(set.select(&real).unwrap().name, "any", "allowed explicitly");
    assert_eq!(set.catch_alls().count(), 1, "still listed");
    let mut set = LayoutSet::default();
    set.add_file("m.ron", &text.replace("counters", "magic: Some((offset: 0, value: 7)), counters")).unwrap();
    assert!(set.select(&real).is_some(), "a magic makes it safe");
    assert_eq!(set.catch_alls().count(), 0);
    let mut set = LayoutSet::default();
    set.add_file("g.ron", &text.replace("[()]", "[(group: Some(\"Compute*\"))]")).unwrap();
    assert!(set.select(&real).is_some(), "a group pattern narrows it");
}
