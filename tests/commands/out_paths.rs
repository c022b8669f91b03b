//! Where a recording goes: a session file `record --out` (sampling here or `--connect`ed to a
//! serve) or `serve --save` cannot write is refused before a sample is taken, naming the file and
//! the folder, and nothing is left behind; a folder that takes the file keeps no probe either.

use crate::support::zescope;

/// The command's stdout and stderr, after it ended with an error.
fn refused(args: &[&str]) -> (String, String) {
    let out = zescope().args(["--source", "sim"]).args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} ran");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_session_file_in_a_missing_folder_is_refused_before_sampling() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let file = missing.join("run.ron");
    let path = file.to_str().unwrap();
    let (stdout, stderr) = refused(&["record", "--duration", "2s", "--out", path]);
    let want = format!("cannot write --out: {path}: cannot be written in {}: No such file", missing.display());
    assert!(stderr.contains(&want), "{stderr}");
    assert!(!stdout.contains("recorded"), "it sampled first: {stdout}");
    let (_, stderr) = refused(&["serve", "--listen", "127.0.0.1:0", "--save", path]);
    assert!(stderr.contains(&want.replace("--out", "--save")), "{stderr}");
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 0, "nothing is left behind");
}

#[test]
fn a_folder_that_takes_the_file_keeps_only_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.ron");
    let out = zescope()
        .args(["--source", "sim", "record", "--duration", "200ms", "--out", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["run.ron"], "the write check leaves no temporary file");
}

#[test]
fn a_remote_recording_to_a_missing_folder_is_refused_before_its_first_sample() {
    let serve = crate::support::serve::Serve::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone");
    let file = missing.join("remote.ron");
    let path = file.to_str().unwrap();
    let at = serve.addr.to_string();
    let (stdout, stderr) = refused(&["record", "--connect", &at, "--duration", "2s", "--out", path]);
    let want = format!("cannot write --out: {path}: cannot be written in {}: No such file", missing.display());
    assert!(stderr.contains(&want), "{stderr}");
    assert!(!stdout.contains("recorded"), "it recorded first: {stdout}");
    serve.stop();
}

/// The window's own options before a command are refused, not ignored: `zescope --view v.ron
/// record …` recorded the default groups without a word (record takes `--view` after its name);
/// `--connect` and a session file were refused already.
#[test]
fn the_windows_options_before_a_command_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let view = dir.path().join("v.ron");
    std::fs::write(&view, r#"(version: 1, name: "v", panes: [(series: [(group: "ComputeBasic", metric: "*")])])"#)
        .unwrap();
    let out = dir.path().join("run.ron");
    let (o, e) = (out.to_str().unwrap(), view.to_str().unwrap());
    for (args, says) in [
        (vec!["--view", e, "record", "--duration", "1s", "--out", o], "`record --view FILE` records what a view names"),
        (vec!["--connect", "127.0.0.1:9", "record", "--duration", "1s", "--out", o], "give it after the command"),
    ] {
        let (stdout, stderr) = refused(&args);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stdout.contains("recorded"), "{args:?} sampled: {stdout}");
    }
    assert!(!out.exists(), "nothing written");
}
