//! Smoke test of the real binary in a real window: start `zescope` on the simulated device under
//! Xvfb, let it sample for a few seconds, take a screenshot of the screen, narrow the window to
//! 800 px (xdotool) and check it still draws at that size, end it with SIGTERM, and check a clean
//! exit and a clean report from the simulated driver. (Where the pane buttons land in a narrow
//! window is checked by `gui_resize.rs`: the real window exposes no widget positions.)
//!
//! Needs Xvfb, ImageMagick's `import`, xdotool and xwininfo (`apt install xvfb imagemagick
//! xdotool x11-utils`); without them it skips loudly (a failure under ZESCOPE_STRICT_TESTS=1). The screenshot goes to
//! `$ZESCOPE_SCREENSHOT` if set, else `target/zescope-screenshot.png` (the narrowed window beside
//! it, `*.narrow.png`):
//!
//!     ZESCOPE_SCREENSHOT=/tmp/zescope.png cargo test --test gui_xvfb -- --nocapture

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ze_sim::testing;

fn have(cmd: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {cmd}")).output().is_ok_and(|o| o.status.success())
}

struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Option<Xvfb> {
        for n in 0..20 {
            let num = 140 + (std::process::id() as usize + n) % 400;
            if Path::new(&format!("/tmp/.X11-unix/X{num}")).exists() {
                continue;
            }
            let child = Command::new("Xvfb")
                .arg(format!(":{num}"))
                .args(["-screen", "0", "1280x860x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if Path::new(&format!("/tmp/.X11-unix/X{num}")).exists() {
                    return Some(Xvfb { child, display: format!(":{num}") });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let mut c = child;
            let _ = c.kill();
        }
        None
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn png_size(path: &Path) -> Option<(u32, u32)> {
    let b = std::fs::read(path).ok()?;
    if b.len() < 24 || &b[1..4] != b"PNG" {
        return None;
    }
    Some((u32::from_be_bytes(b[16..20].try_into().ok()?), u32::from_be_bytes(b[20..24].try_into().ok()?)))
}

fn screenshot_path() -> PathBuf {
    std::env::var_os("ZESCOPE_SCREENSHOT").map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.ancestors().nth(3).unwrap().join("zescope-screenshot.png")
    })
}

/// The zescope window's id (xdotool, by its title).
fn window_id(display: &str) -> String {
    let out = Command::new("xdotool").args(["search", "--name", "^zescope$"]).env("DISPLAY", display).output().unwrap();
    let ids = String::from_utf8_lossy(&out.stdout);
    ids.lines().last().unwrap_or_else(|| panic!("no zescope window on {display}")).trim().to_owned()
}

/// A window's inner width and height (xwininfo).
fn window_size(display: &str, id: &str) -> Option<(u32, u32)> {
    let out = Command::new("xwininfo").args(["-id", id]).env("DISPLAY", display).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field =
        |name: &str| text.lines().find_map(|l| l.trim().strip_prefix(name)).and_then(|v| v.trim().parse::<u32>().ok());
    Some((field("Width:")?, field("Height:")?))
}

#[test]
fn the_window_runs_on_the_simulated_device_and_exits_cleanly_on_sigterm() {
    for tool in ["Xvfb", "import", "xdotool", "xwininfo"] {
        if !have(tool) {
            return testing::skip(
                "the Xvfb smoke test",
                &format!("{tool} is not installed (apt install xvfb imagemagick xdotool x11-utils)"),
            );
        }
    }
    let Some(x) = Xvfb::start() else {
        return testing::skip("the Xvfb smoke test", "Xvfb did not start");
    };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.ron");
    let mut app = crate::support::zescope()
        .args(["--source", "sim"])
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("ZE_SIM_REPORT", &report)
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env_remove("ZE_SIM_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start zescope");
    // Let it open the window and sample for a while.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(6) {
        if let Some(status) = app.try_wait().unwrap() {
            let out = app.wait_with_output().unwrap();
            panic!("zescope exited early with {status}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let shot = screenshot_path();
    let status = Command::new("import").args(["-display", &x.display, "-window", "root"]).arg(&shot).status().unwrap();
    assert!(status.success(), "import failed");
    assert_eq!(png_size(&shot), Some((1280, 860)), "a PNG of the screen at {}", shot.display());
    let bytes = std::fs::metadata(&shot).unwrap().len();
    assert!(bytes > 20_000, "the screenshot holds a drawn window, not a blank screen ({bytes} bytes)");
    eprintln!("screenshot: {}", shot.display());

    // Narrower: the window takes the new size and goes on drawing.
    let id = window_id(&x.display);
    let status = Command::new("xdotool").args(["windowsize", &id, "800", "600"]).env("DISPLAY", &x.display).status();
    assert!(status.unwrap().success(), "xdotool windowsize failed");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(window_size(&x.display, &id), Some((800, 600)), "the window was narrowed");
    let narrow = shot.with_extension("narrow.png");
    let status = Command::new("import").args(["-display", &x.display, "-window", &id]).arg(&narrow).status().unwrap();
    assert!(status.success(), "import of the narrowed window failed");
    assert_eq!(png_size(&narrow), Some((800, 600)));
    let bytes = std::fs::metadata(&narrow).unwrap().len();
    assert!(bytes > 10_000, "the narrowed window is drawn ({bytes} bytes)");
    assert!(app.try_wait().unwrap().is_none(), "zescope is still running after the resize");
    eprintln!("narrowed window: {}", narrow.display());

    assert!(Command::new("kill").arg("-TERM").arg(app.id().to_string()).status().unwrap().success());
    let t = Instant::now();
    while app.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(10), "zescope did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = app.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit status {}: {stderr}", out.status);
    assert!(!stderr.contains("did not finish its teardown"), "{stderr}");
    let text = std::fs::read_to_string(&report).expect("the simulated driver wrote its report at exit");
    let r: ze_sim::Report = ron::from_str(&text).unwrap();
    assert!(r.is_clean(), "{text}");
}
