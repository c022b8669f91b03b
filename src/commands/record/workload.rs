//! The command after `--`, looked for before anything is sampled or written: a program that
//! cannot be found is refused with the reason, and an earlier output at `--out` stays as it was
//! (it was truncated, and a two-sample session written over it, by a typo in the command).
//!
//! The search is the one `execvp` makes: a name with a `/` is a path; a bare name is looked for
//! in each directory of `PATH` (an empty entry is the current directory), the first regular file
//! with an execute bit wins. What only the exec itself can tell (a file of the wrong format, a
//! permission the bits do not show) is still said when the workload is started.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where `program` would be run from, or why it cannot be (for the user).
pub(super) fn find(program: &str) -> Result<PathBuf, String> {
    find_in(program, std::env::var_os("PATH").as_deref())
}

fn find_in(program: &str, path: Option<&std::ffi::OsStr>) -> Result<PathBuf, String> {
    if program.is_empty() {
        return Err("the command after -- is empty".into());
    }
    if program.contains('/') {
        let p = Path::new(program);
        return match runnable(p) {
            Ok(()) => Ok(p.to_path_buf()),
            Err(why) => Err(format!("cannot start {program}: {why}")),
        };
    }
    let dirs = path.map(std::env::split_paths).into_iter().flatten();
    for dir in dirs {
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        let candidate = dir.join(program);
        if runnable(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    Err(format!("cannot start {program}: no such program in PATH (give its path, as ./{program}, if it is here)"))
}

/// The status `record` exits with after workload `status`: its code, or 128 + the signal that
/// ended it (as a shell says it).
pub(super) fn exit_code(status: std::process::ExitStatus) -> std::process::ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    };
    std::process::ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}

/// Whether `p` is a file that may be executed, and if not why.
fn runnable(p: &Path) -> Result<(), String> {
    let m = std::fs::metadata(p).map_err(|e| e.to_string())?;
    if m.is_dir() {
        return Err("it is a directory".into());
    }
    if m.permissions().mode() & 0o111 == 0 {
        return Err("it is not executable (chmod +x)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::find_in;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_program_is_found_as_exec_would_find_it_or_refused_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let path = std::env::join_paths(["/nonexistent-dir".as_ref(), dir.path()]).unwrap();
        let path = Some(path.as_os_str());

        assert_eq!(find_in("tool", path), Ok(tool.clone()), "a bare name through PATH");
        assert_eq!(find_in(tool.to_str().unwrap(), None), Ok(tool.clone()), "a path as it is");
        let e = find_in("plain", path).unwrap_err();
        assert!(e.contains("cannot start plain: no such program in PATH"), "{e}");
        let e = find_in(plain.to_str().unwrap(), path).unwrap_err();
        assert!(e.ends_with("it is not executable (chmod +x)"), "{e}");
        let e = find_in(dir.path().to_str().unwrap(), path).unwrap_err();
        assert!(e.ends_with("it is a directory"), "{e}");
        let e = find_in("/nonexistent/prog", path).unwrap_err();
        assert!(e.starts_with("cannot start /nonexistent/prog: No such file"), "{e}");
        assert!(find_in("", path).is_err());
    }

    #[test]
    fn the_workloads_status_is_its_code_or_128_and_its_signal() {
        use std::os::unix::process::ExitStatusExt;
        use std::process::{ExitCode, ExitStatus};
        // Wait statuses as the kernel gives them: the code in the second byte, a signal in the first.
        assert_eq!(super::exit_code(ExitStatus::from_raw(3 << 8)), ExitCode::from(3));
        assert_eq!(super::exit_code(ExitStatus::from_raw(0)), ExitCode::from(0));
        // Killed by signal 9 (SIGKILL).
        assert_eq!(super::exit_code(ExitStatus::from_raw(9)), ExitCode::from(137));
    }
}
