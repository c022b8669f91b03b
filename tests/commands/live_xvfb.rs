//! The window on a remote run, as a user sees it: `zescope --connect` under Xvfb, watching a
//! `serve` in another process through a TCP relay the test holds down for a while mid-run. What
//! is on the screen is read back with OCR (tesseract): REMOTE and the server's address while the
//! link is up, "reconnecting" while it is down. After the run, the window's own session — saved
//! with Ctrl+Shift+S and the path prompt, keys sent with xdotool — holds every sample the server
//! saved (`--save`), value for value: nothing was lost across the cut.
//!
//! Needs Xvfb, ImageMagick's `import`, xdotool and tesseract (`apt install xvfb imagemagick
//! xdotool tesseract-ocr`); without them it skips loudly (a failure under
//! ZESCOPE_STRICT_TESTS=1). The screenshots are kept beside the smoke test's
//! (`target/zescope-remote-{up,down,back}.png`) to look at.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ze_sim::testing;

use crate::live::{Relay, Serve};
use crate::support::have;
use crate::support::xvfb::Xvfb;

/// Where a screenshot named `name` is kept.
fn kept(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().join(format!("zescope-remote-{name}.png"))
}

/// A part of the window read with OCR: its status bar, or the middle, where the path prompt
/// opens.
#[derive(Clone, Copy)]
enum Area {
    StatusBar,
    Middle,
}

/// The window's geometry on `display` (x, y, width, height): the largest window named
/// `zescope…`, or `None` before it is mapped.
fn window_geometry(display: &str) -> Option<(i64, i64, i64, i64)> {
    let out = Command::new("xdotool")
        .args(["search", "--name", "^zescope", "getwindowgeometry", "--shell", "%@"])
        .env("DISPLAY", display)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (mut best, mut cur) = (None::<(i64, i64, i64, i64)>, [0i64; 4]);
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else { continue };
        let Ok(v) = value.trim().parse::<i64>() else { continue };
        match key {
            "X" => cur[0] = v,
            "Y" => cur[1] = v,
            "WIDTH" => cur[2] = v,
            "HEIGHT" => {
                cur[3] = v;
                if best.is_none_or(|b| b.2 * b.3 < cur[2] * cur[3]) {
                    best = Some((cur[0], cur[1], cur[2], cur[3]));
                }
            }
            _ => {}
        }
    }
    best.filter(|b| b.2 > 0 && b.3 > 0)
}

impl Area {
    /// The crops (`convert -crop`) read for this area of a window at `g`, their texts joined.
    /// The status bar: the window's lowest 34 px, and its lowest 64 (where it wraps onto a
    /// second line, the first one is cut by the shorter crop) — a low strip, not more:
    /// tesseract's page layout reads a taller one that holds a plot's grid as a picture and
    /// returns no text at all for it, now and then.
    fn crops(self, g: (i64, i64, i64, i64)) -> Vec<String> {
        let (x, y, w, h) = g;
        match self {
            Area::StatusBar => [34, 64].iter().map(|&bar| format!("{w}x{bar}+{x}+{}", y + h - bar)).collect(),
            Area::Middle => vec![format!("800x300+{}+{}", x + (w - 800).max(0) / 2, y + (h - 300).max(0) / 2)],
        }
    }
}

/// The text in `area` of the window: a screenshot into `png`, that area read by tesseract (at
/// twice the size, where its reading of the window's small type is reliable; a part, not the
/// whole screen, so reading it takes the server less of the machine's CPU). Empty while no
/// window is mapped.
fn screen_text(display: &str, png: &Path, area: Area) -> String {
    let Some(geometry) = window_geometry(display) else { return String::new() };
    let status = Command::new("import").args(["-display", display, "-window", "root"]).arg(png).status().unwrap();
    assert!(status.success(), "import failed");
    let big = png.with_extension("x2.png");
    let mut text = String::new();
    for crop in area.crops(geometry) {
        let status = Command::new("convert")
            .arg(png)
            .args(["-crop", &crop, "+repage", "-resize", "200%"])
            .arg(&big)
            .status()
            .unwrap();
        assert!(status.success(), "convert failed");
        let out = Command::new("tesseract").arg(&big).arg("-").stderr(Stdio::null()).output().unwrap();
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        text.push('\n');
    }
    let _ = std::fs::remove_file(&big);
    text
}

/// Screenshots until the text in `area` passes `check` (then that text), or panics after a minute
/// with every text read, whether the X server `x` was still there and what `window` says of
/// itself.
fn wait_screen(
    x: &mut Xvfb,
    window: &mut Window,
    png: &Path,
    area: Area,
    what: &str,
    check: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut read = Vec::new();
    loop {
        let text = screen_text(&x.display, png, area);
        if check(&text) {
            return text;
        }
        read.push(text.trim().replace('\n', " | "));
        assert!(
            Instant::now() < deadline,
            "the screen never showed {what} ({}; {}); it read, screenshot after screenshot:\n{}",
            x.health(),
            window.state(),
            read.join("\n")
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn xdotool(display: &str, args: &[&str]) {
    let status = Command::new("xdotool").args(args).env("DISPLAY", display).status().unwrap();
    assert!(status.success(), "xdotool {args:?} failed");
}

/// The window's process and the file its stderr goes to; ended on drop, whatever the test's
/// outcome.
struct Window(Child, PathBuf);

impl Window {
    /// Whether it still runs (or how it ended) and its log, for a failure's message.
    fn state(&mut self) -> String {
        let running = match self.0.try_wait() {
            Ok(None) => "the window runs".to_owned(),
            Ok(Some(status)) => format!("the window ended: {status}"),
            Err(e) => format!("the window's state is unknown: {e}"),
        };
        let log = std::fs::read_to_string(&self.1).unwrap_or_else(|e| format!("(no log: {e})"));
        format!("{running}; its log:\n{log}")
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_remote_window_says_reconnecting_when_the_link_drops_and_holds_every_sample_after() {
    for tool in ["Xvfb", "import", "convert", "xdotool", "tesseract"] {
        if !have(tool) {
            let why = format!("{tool} is not installed (apt install xvfb imagemagick xdotool tesseract-ocr)");
            return testing::skip("the remote window under Xvfb", &why);
        }
    }
    let mut x = match Xvfb::start(1280, 860) {
        Ok(x) => x,
        Err(why) => return testing::skip("the remote window under Xvfb", &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("served.ron");
    let serve = Serve::start("127.0.0.1:0", &["--save", saved.to_str().unwrap()]);
    let relay = Relay::start(serve.addr);
    let addr = relay.addr.to_string();
    // The window's folder: its path prompt offers a file there.
    let here = dir.path().join("window");
    std::fs::create_dir(&here).unwrap();
    let log = dir.path().join("window.log");
    let app = crate::support::zescope()
        .args(["--connect", &addr])
        .current_dir(&here)
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("ZESCOPE_FILE_DIALOG", "prompt")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start zescope --connect");
    let mut app = Window(app, log);
    let up = kept("up");
    let port = relay.addr.port().to_string();
    // The status bar names the server with the link's figures once samples flow.
    let text = wait_screen(&mut x, &mut app, &up, Area::StatusBar, "REMOTE and the link's figures", |t| {
        t.contains("REMOTE") && t.contains(&port) && t.contains("rtt")
    });
    assert!(!text.contains("reconnecting"), "the link is up: {text}");
    // Mid-run, the link goes down, and stays down a while.
    relay.hold(true);
    let down = kept("down");
    let text =
        wait_screen(&mut x, &mut app, &down, Area::StatusBar, "\"reconnecting\"", |t| t.contains("reconnecting"));
    assert!(text.contains("REMOTE"), "still REMOTE while down: {text}");
    std::thread::sleep(Duration::from_secs(2));
    relay.hold(false);
    // Back: the link's figures again, "reconnecting" gone.
    let back = kept("back");
    wait_screen(&mut x, &mut app, &back, Area::StatusBar, "the link back", |t| {
        t.contains("REMOTE") && t.contains("rtt") && !t.contains("reconnecting")
    });
    std::thread::sleep(Duration::from_secs(1));
    let served_said = serve.stop();
    assert!(app.0.try_wait().unwrap().is_none(), "{}", app.state());

    // The window saves its session: Ctrl+Shift+S, the path prompt (a file in its folder), Enter.
    let out = Command::new("xdotool").args(["search", "--name", "^zescope"]).env("DISPLAY", &x.display).output();
    let ids = String::from_utf8_lossy(&out.unwrap().stdout).into_owned();
    let id = ids.lines().last().unwrap_or_else(|| panic!("no zescope window on {}", x.display)).trim().to_owned();
    xdotool(&x.display, &["windowfocus", "--sync", &id]);
    xdotool(&x.display, &["key", "--clearmodifiers", "ctrl+shift+s"]);
    let prompt = kept("save");
    wait_screen(&mut x, &mut app, &prompt, Area::Middle, "the save prompt", |t| t.contains("Save the session"));
    xdotool(&x.display, &["key", "Return"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let window = loop {
        let ron = std::fs::read_dir(&here)
            .unwrap()
            .map_while(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "ron"));
        if let Some(s) = ron.and_then(|p| zescope_model::session::load(&p).ok()) {
            break s;
        }
        assert!(Instant::now() < deadline, "the window saved no session in {}", here.display());
        std::thread::sleep(Duration::from_millis(200));
    };
    let served = zescope_model::session::load(&saved).unwrap();
    let rows = served.streams.first().map_or(0, |s| s.data.raw.timestamps.len());
    let streams: Vec<String> = served
        .streams
        .iter()
        .map(|s| {
            let t = &s.data.raw.timestamps;
            let span = t.last().zip(t.first()).map_or(0.0, |(l, f)| (l - f) as f64 / 1e9);
            format!("{} rows over {span:.3} s", t.len())
        })
        .collect();
    assert!(
        rows > 2000,
        "a run long enough to cut: {rows} rows of its first stream (streams saved: {streams:?}; the serve said:\n{served_said})"
    );
    assert_eq!(window.streams.len(), served.streams.len(), "the window holds the run's streams");
    for (i, (w, s)) in window.streams.iter().zip(&served.streams).enumerate() {
        let (w, s) = (&w.data.raw, &s.data.raw);
        assert!(
            w.timestamps == s.timestamps,
            "stream {i}: {} rows in the window, {} saved",
            w.timestamps.len(),
            s.timestamps.len()
        );
        let same = w.values.len() == s.values.len()
            && w.values.iter().zip(&s.values).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        assert!(same, "stream {i}: the same values");
    }
    eprintln!("screenshots: {} {} {} {}", up.display(), down.display(), back.display(), prompt.display());
}
