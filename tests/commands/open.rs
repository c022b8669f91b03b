//! `zescope FILE.ron` opens a session in the window; a path that is not there is refused before
//! any window opens, with what is wrong.

#[test]
fn a_missing_session_file_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.ron");
    let out =
        crate::support::zescope().arg(&missing).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("no such file: {}", missing.display())), "{stderr}");

    let out = crate::support::zescope().arg("lsit").env_remove("DISPLAY").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("lsit is neither a file nor a command (commands: list, record, mark, serve, doctor, export)"),
        "{stderr}"
    );
}
