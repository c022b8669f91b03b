//! What the GUI needs from the desktop: a display to open a window on, and a backend for the
//! Open/Save file dialogs. rfd (zescope's dialogs) asks the xdg-desktop-portal FileChooser over
//! D-Bus and falls back to running `zenity`, so either one is enough; without both, the window
//! asks for paths with its own prompt (`zescope-window`'s `path_prompt.rs`).
//!
//! Both are WARN at worst: `zescope list`, `record`, `export` and `doctor` run without them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Check;

/// The portal's D-Bus service, activated on demand by the session bus.
const PORTAL_SERVICE: &str = "org.freedesktop.portal.Desktop.service";
const FILE_CHOOSER: &str = "org.freedesktop.impl.portal.FileChooser";

/// What decides whether a window can open.
#[derive(Clone, Debug, Default)]
pub(crate) struct DisplayEnv {
    pub wayland_display: Option<String>,
    pub display: Option<String>,
    pub runtime_dir: Option<PathBuf>,
    /// Where local X servers put their sockets (`/tmp/.X11-unix`).
    pub x11_socket_dir: PathBuf,
}

impl DisplayEnv {
    pub(crate) fn from_env() -> DisplayEnv {
        let var = |k| std::env::var(k).ok().filter(|v: &String| !v.is_empty());
        DisplayEnv {
            wayland_display: var("WAYLAND_DISPLAY"),
            display: var("DISPLAY"),
            runtime_dir: var("XDG_RUNTIME_DIR").map(PathBuf::from),
            x11_socket_dir: PathBuf::from("/tmp/.X11-unix"),
        }
    }
}

/// The local socket of an X display name (`:0`, `unix:1.0`), or `None` for a network display
/// (`localhost:10.0`, as `ssh -X` sets), which cannot be checked by a file.
pub(crate) fn x11_socket(display: &str, socket_dir: &Path) -> Result<Option<PathBuf>, String> {
    let (host, rest) = display.rsplit_once(':').ok_or_else(|| format!("DISPLAY={display:?} has no ':'"))?;
    let number = rest.split('.').next().unwrap_or("");
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("DISPLAY={display:?} has no display number"));
    }
    if host.is_empty() || host == "unix" {
        Ok(Some(socket_dir.join(format!("X{number}"))))
    } else if host.starts_with('/') {
        // launchd-style full socket path
        Ok(Some(PathBuf::from(display)))
    } else {
        Ok(None)
    }
}

pub(super) fn display_check(env: &DisplayEnv) -> Check {
    const NAME: &str = "display";
    let mut found = Vec::new();
    let mut broken = Vec::new();
    if let Some(w) = &env.wayland_display {
        let socket =
            if w.starts_with('/') { Some(PathBuf::from(w)) } else { env.runtime_dir.as_ref().map(|d| d.join(w)) };
        match socket {
            Some(s) if s.exists() => found.push(format!("Wayland {}", s.display())),
            Some(s) => broken.push(format!("WAYLAND_DISPLAY={w} but {} does not exist", s.display())),
            None => broken.push(format!("WAYLAND_DISPLAY={w} but XDG_RUNTIME_DIR is not set")),
        }
    }
    if let Some(d) = &env.display {
        match x11_socket(d, &env.x11_socket_dir) {
            Ok(Some(s)) if s.exists() => found.push(format!("X11 {d} ({})", s.display())),
            Ok(Some(s)) => broken.push(format!("DISPLAY={d} but {} does not exist", s.display())),
            Ok(None) => found.push(format!("X11 {d} over the network (not checked)")),
            Err(e) => broken.push(e),
        }
    }
    match (found.is_empty(), broken.is_empty()) {
        (false, true) => Check::ok(NAME, found.join("; ")),
        (false, false) => Check::ok(NAME, format!("{} (also: {})", found.join("; "), broken.join("; "))),
        (true, false) => Check::warn(
            NAME,
            format!("{}: the window cannot open (the command-line commands work)", broken.join("; ")),
            "start zescope from the desktop session's own terminal, or set DISPLAY / WAYLAND_DISPLAY to its values",
        ),
        (true, true) => Check::warn(
            NAME,
            "neither WAYLAND_DISPLAY nor DISPLAY is set: the window cannot open \
             (`zescope list`, `record` and `doctor` work without one)",
            "run zescope in a desktop session; over SSH use `ssh -X`; without a screen: xvfb-run zescope",
        ),
    }
}

/// What the file dialogs could use.
#[derive(Clone, Debug, Default)]
pub(crate) struct DialogEnv {
    /// The portal's D-Bus service file, where one was found.
    pub portal_service: Option<PathBuf>,
    /// An `xdg-desktop-portal` process is running.
    pub portal_running: bool,
    /// Portal backends (`*.portal` files) that implement the FileChooser.
    pub file_chooser_backends: Vec<String>,
    /// A D-Bus session bus to reach the portal on.
    pub session_bus: bool,
    pub zenity: Option<PathBuf>,
}

impl DialogEnv {
    pub(crate) fn from_system() -> DialogEnv {
        let data_dirs = data_dirs();
        DialogEnv {
            portal_service: data_dirs
                .iter()
                .map(|d| d.join("dbus-1/services").join(PORTAL_SERVICE))
                .find(|p| p.exists()),
            portal_running: portal_running(Path::new("/proc")),
            file_chooser_backends: data_dirs
                .iter()
                .flat_map(|d| file_chooser_backends(&d.join("xdg-desktop-portal/portals")))
                .collect(),
            session_bus: std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty())
                || std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| Path::new(&d).join("bus").exists()),
            zenity: find_on_path("zenity", std::env::var_os("PATH")),
        }
    }
}

/// `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
fn data_dirs() -> Vec<PathBuf> {
    let v = std::env::var("XDG_DATA_DIRS").ok().filter(|v| !v.is_empty());
    let v = v.as_deref().unwrap_or("/usr/local/share:/usr/share");
    let mut dirs: Vec<PathBuf> = v.split(':').filter(|d| d.starts_with('/')).map(PathBuf::from).collect();
    if !dirs.iter().any(|d| d == Path::new("/usr/share")) {
        dirs.push(PathBuf::from("/usr/share"));
    }
    dirs
}

/// Names of the `*.portal` files in `dir` whose `Interfaces=` line lists the FileChooser.
pub(crate) fn file_chooser_backends(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "portal"))
        .filter(|e| {
            std::fs::read_to_string(e.path()).is_ok_and(|t| {
                t.lines().any(|l| {
                    l.trim_start()
                        .strip_prefix("Interfaces=")
                        .is_some_and(|i| i.split(';').any(|x| x.trim() == FILE_CHOOSER))
                })
            })
        })
        .map(|e| e.file_name().to_string_lossy().trim_end_matches(".portal").to_owned())
        .collect();
    v.sort();
    v
}

/// Is a process whose command is `xdg-desktop-portal` running? (Reads `/proc/*/cmdline`.)
pub(crate) fn portal_running(proc_dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(proc_dir) else { return false };
    entries.filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit())).any(
        |e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let arg0 = c.split(|&b| b == 0).next().unwrap_or(&[]);
                arg0.rsplit(|&b| b == b'/').next() == Some(b"xdg-desktop-portal".as_slice())
            })
        },
    )
}

/// The executable `name` in the directories of `path` (a `$PATH` value).
pub(crate) fn find_on_path(name: &str, path: Option<OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&path?)
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

pub(super) fn dialog_check(env: &DialogEnv) -> Check {
    const NAME: &str = "file dialogs";
    let portal = env.portal_service.is_some() || env.portal_running;
    let mut notes = Vec::new();
    let portal_usable = if !portal {
        false
    } else if !env.session_bus {
        notes.push("xdg-desktop-portal is installed, but there is no D-Bus session bus to reach it".to_owned());
        false
    } else if env.file_chooser_backends.is_empty() && !env.portal_running {
        notes.push("xdg-desktop-portal is installed, but no backend provides its FileChooser".to_owned());
        false
    } else {
        true
    };
    if portal_usable {
        let how = match (&env.portal_service, env.portal_running) {
            (_, true) => "running".to_owned(),
            (Some(p), false) => format!("D-Bus activated from {}", p.display()),
            (None, false) => unreachable!("portal_usable needs one of them"),
        };
        let backends = if env.file_chooser_backends.is_empty() {
            String::new()
        } else {
            format!(", FileChooser by {}", env.file_chooser_backends.join(", "))
        };
        return Check::ok(NAME, format!("xdg-desktop-portal ({how}{backends})"));
    }
    if let Some(z) = &env.zenity {
        notes.insert(0, format!("zenity ({})", z.display()));
        return Check::ok(NAME, notes.join("; "));
    }
    notes.insert(
        0,
        "no file dialog backend: the window asks for file paths with its own prompt instead of a dialog".into(),
    );
    Check::warn(
        NAME,
        notes.join("; "),
        "sudo apt install xdg-desktop-portal xdg-desktop-portal-gtk (in a desktop session), or: sudo apt install zenity",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    #[test]
    fn x11_display_names() {
        let d = Path::new("/tmp/.X11-unix");
        assert_eq!(x11_socket(":0", d), Ok(Some(d.join("X0"))));
        assert_eq!(x11_socket(":1.0", d), Ok(Some(d.join("X1"))));
        assert_eq!(x11_socket("unix:12", d), Ok(Some(d.join("X12"))));
        assert_eq!(x11_socket("localhost:10.0", d), Ok(None));
        assert!(x11_socket("nonsense", d).is_err());
        assert!(x11_socket(":x", d).is_err());
    }

    #[test]
    fn display_found_missing_and_unset() {
        let dir = tempfile::tempdir().unwrap();
        let x11 = dir.path().join("x11");
        std::fs::create_dir(&x11).unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(x11.join("X0")).unwrap();
        let _wl = std::os::unix::net::UnixListener::bind(dir.path().join("wayland-0")).unwrap();
        let env = |w: Option<&str>, d: Option<&str>| DisplayEnv {
            wayland_display: w.map(str::to_owned),
            display: d.map(str::to_owned),
            runtime_dir: Some(dir.path().to_owned()),
            x11_socket_dir: x11.clone(),
        };
        let c = display_check(&env(None, Some(":0")));
        assert_eq!(c.status, Status::Ok, "{c:?}");
        assert!(c.detail.contains("X11 :0"));
        assert_eq!(display_check(&env(Some("wayland-0"), None)).status, Status::Ok);
        // a stale DISPLAY alone is a warning naming the missing socket
        let c = display_check(&env(None, Some(":7")));
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("X7 does not exist"), "{c:?}");
        // one working display is enough
        assert_eq!(display_check(&env(Some("wayland-9"), Some(":0"))).status, Status::Ok);
        let c = display_check(&env(None, None));
        assert_eq!(c.status, Status::Warn);
        assert!(c.fix.unwrap().contains("xvfb-run zescope"));
    }

    #[test]
    fn dialog_backends() {
        let none = DialogEnv::default();
        let c = dialog_check(&none);
        assert_eq!(c.status, Status::Warn);
        assert!(c.fix.unwrap().contains("apt install zenity"));
        let zenity = DialogEnv { zenity: Some("/usr/bin/zenity".into()), ..Default::default() };
        assert_eq!(dialog_check(&zenity).status, Status::Ok);
        let portal = DialogEnv {
            portal_service: Some("/usr/share/dbus-1/services/org.freedesktop.portal.Desktop.service".into()),
            file_chooser_backends: vec!["gtk".into()],
            session_bus: true,
            ..Default::default()
        };
        let c = dialog_check(&portal);
        assert_eq!(c.status, Status::Ok);
        assert!(c.detail.contains("FileChooser by gtk"), "{c:?}");
        // installed but unreachable: no session bus, no zenity
        let c = dialog_check(&DialogEnv { session_bus: false, ..portal.clone() });
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("no D-Bus session bus"), "{c:?}");
        // no FileChooser backend
        let c = dialog_check(&DialogEnv { file_chooser_backends: vec![], ..portal });
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("no backend provides its FileChooser"), "{c:?}");
    }

    #[test]
    fn finds_portal_files_processes_and_programs() {
        let dir = tempfile::tempdir().unwrap();
        let portals = dir.path().join("portals");
        std::fs::create_dir(&portals).unwrap();
        std::fs::write(
            portals.join("gtk.portal"),
            "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.gtk\n\
             Interfaces=org.freedesktop.impl.portal.FileChooser;org.freedesktop.impl.portal.AppChooser;\n",
        )
        .unwrap();
        std::fs::write(portals.join("wlr.portal"), "[portal]\nInterfaces=org.freedesktop.impl.portal.Screenshot;\n")
            .unwrap();
        assert_eq!(file_chooser_backends(&portals), ["gtk"]);

        let proc_dir = dir.path().join("proc");
        std::fs::create_dir_all(proc_dir.join("12")).unwrap();
        std::fs::write(proc_dir.join("12/cmdline"), b"/usr/libexec/xdg-desktop-portal-gtk\0").unwrap();
        assert!(!portal_running(&proc_dir));
        std::fs::create_dir_all(proc_dir.join("13")).unwrap();
        std::fs::write(proc_dir.join("13/cmdline"), b"/usr/libexec/xdg-desktop-portal\0--verbose\0").unwrap();
        assert!(portal_running(&proc_dir));

        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("zenity"), "#!/bin/sh\n").unwrap();
        assert_eq!(find_on_path("zenity", Some(bin.clone().into_os_string())), None, "not executable");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("zenity"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_on_path("zenity", Some(bin.clone().into_os_string())), Some(bin.join("zenity")));
        assert_eq!(find_on_path("zenity", None), None);
    }
}
