//! A derived series made in the real window, as a user makes it: `zescope --source sim` under
//! Xvfb; View → New derived series… (menu entries found on the screen by OCR, clicked with
//! xdotool), the definition typed into the editor and Enter. The series is then in a pane's legend
//! (read back by OCR) and its line is drawn (pixels of the colour the pane's plot gained, from the
//! window's debug log). Saved with Ctrl+S and the path prompt, the session holds it, each value
//! twice the utilisation at the same time; the session reopened in a new window shows it, legend
//! and line.
//!
//! Needs Xvfb, ImageMagick, xdotool and tesseract (`apt install xvfb imagemagick xdotool
//! tesseract-ocr`); without them it skips loudly (a failure under ZESCOPE_STRICT_TESTS=1). The
//! screenshots are kept beside the smoke test's (`target/zescope-derived-*.png`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ze_sim::testing;

use crate::support::have;
use crate::support::xvfb::Xvfb;
use crate::xvfb::{PlotSeen, pixels, plots_in_log};

const DEFINITION: &str = "twice=ComputeBasic/GpuUtilization * 2";
/// The editor is 560 px wide (`windows/derived.rs`), its title "Derived series" centred: its
/// close button is this far right of the middle of the title's first word.
const CLOSE_FROM_TITLE: i32 = 293;

fn kept(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().join(format!("zescope-derived-{name}.png"))
}

fn xdotool(display: &str, args: &[&str]) {
    let status = Command::new("xdotool").args(args).env("DISPLAY", display).status().unwrap();
    assert!(status.success(), "xdotool {args:?} failed");
}

fn screenshot(display: &str, png: &Path) {
    let status = Command::new("import").args(["-display", display, "-window", "root"]).arg(png).status().unwrap();
    assert!(status.success(), "import failed");
}

/// A word read on the screen, with its middle in screen pixels.
type Word = (String, i32, i32);

/// The words tesseract reads in `area` (WxH+X+Y) of `png`, with their middles in screen pixels.
fn words(png: &Path, area: (u32, u32, u32, u32)) -> Vec<Word> {
    let (w, h, x, y) = area;
    let big = png.with_extension("x3.png");
    let status = Command::new("convert")
        .arg(png)
        .args(["-crop", &format!("{w}x{h}+{x}+{y}"), "+repage", "-resize", "300%"])
        .arg(&big)
        .status()
        .unwrap();
    assert!(status.success(), "convert failed");
    let out = Command::new("tesseract").arg(&big).args(["-", "tsv"]).stderr(Stdio::null()).output().unwrap();
    let _ = std::fs::remove_file(&big);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<i32>().ok());
            let text = f.get(11)?.trim();
            (!text.is_empty()).then(|| {
                let (l, t, ww, hh) = (n(6)?, n(7)?, n(8)?, n(9)?);
                Some((text.to_owned(), x as i32 + (l + ww / 2) / 3, y as i32 + (t + hh / 2) / 3))
            })?
        })
        .collect()
}

/// Screenshots until a word starting with `word` is read in `area`; its middle.
fn find_word(display: &str, png: &Path, area: (u32, u32, u32, u32), word: &str) -> (i32, i32) {
    seek_word(display, png, area, word, Duration::from_secs(60))
        .unwrap_or_else(|seen| panic!("never read {word:?} in {area:?} of {}: {seen:?}", png.display()))
}

/// [`find_word`] for at most `within`: the word's middle, or the words read last.
fn seek_word(
    display: &str,
    png: &Path,
    area: (u32, u32, u32, u32),
    word: &str,
    within: Duration,
) -> Result<(i32, i32), Vec<Word>> {
    let deadline = Instant::now() + within;
    loop {
        screenshot(display, png);
        let seen = words(png, area);
        if let Some((_, x, y)) = seen.iter().find(|(t, _, _)| t.starts_with(word)) {
            return Ok((*x, *y));
        }
        if Instant::now() >= deadline {
            return Err(seen);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Types `text` into the field at `(x, y)` until the screen shows `shown` in `area`, at most three
/// times. The click is given time to land before the keys: on a loaded machine a press, its
/// release and the first keys can reach the window in one frame, and one run of the whole suite
/// beside two busy loops read "e=ComputeBasic/GpuUtilization * 2twic" (the caret back at the
/// field's start after the first keys). Each try replaces the field's whole text (Ctrl+A).
fn type_into(display: &str, png: &Path, (x, y): (i32, i32), text: &str, area: (u32, u32, u32, u32), shown: &str) {
    let mut tries = Vec::new();
    for _ in 0..3 {
        xdotool(display, &["mousemove", &x.to_string(), &y.to_string(), "click", "1"]);
        std::thread::sleep(Duration::from_millis(500));
        xdotool(display, &["key", "--clearmodifiers", "ctrl+a"]);
        xdotool(display, &["type", "--delay", "20", text]);
        match seek_word(display, png, area, shown, Duration::from_secs(20)) {
            Ok(_) => {
                if !tries.is_empty() {
                    eprintln!("typed {text:?} again after the screen showed {tries:?}");
                }
                return;
            }
            Err(seen) => tries.push(seen.into_iter().map(|w| w.0).collect::<Vec<_>>().join(" ")),
        }
    }
    panic!("typed {text:?} three times and never read {shown:?} in {area:?} of {}: {tries:?}", png.display());
}

/// The screen's text (OCR) in the legend rows' column of the first panes.
fn legend_text(png: &Path) -> String {
    words(png, (560, 520, 320, 250)).into_iter().map(|w| w.0).collect::<Vec<_>>().join(" ")
}

/// Pixels of colour `c` in the plot of `p` in the screenshot `png` (within 24 per channel).
fn lit(png: &Path, p: &PlotSeen, c: [u8; 3]) -> usize {
    let [x0, y0, x1, y1] = p.rect;
    let rect = (x0 as u32 + 2, y0 as u32 + 2, (x1 - x0) as u32 - 4, (y1 - y0) as u32 - 4);
    pixels(png, rect).iter().flatten().filter(|px| (0..3).all(|i| px[i].abs_diff(c[i]) <= 24)).count()
}

/// Screenshots until the legend reads `Derived/twice` and a pane on screen (from the log after
/// byte `from`) draws dozens of pixels of a colour `fresh` accepts; that colour.
fn wait_plotted(display: &str, png: &Path, log: &Path, from: usize, fresh: impl Fn(&[u8; 3]) -> bool) -> [u8; 3] {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        screenshot(display, png);
        let text = std::fs::read(log).unwrap();
        let plots = plots_in_log(&String::from_utf8_lossy(&text[from.min(text.len())..]));
        let legend = legend_text(png);
        let on_screen = plots.iter().filter(|p| p.rect[3] < 760.0);
        let drawn = on_screen
            .flat_map(|p| p.colours.iter().filter(|c| fresh(c)).map(move |c| (p, *c)))
            .find(|(p, c)| lit(png, p, *c) >= 30);
        if let Some((_, c)) = drawn.filter(|_| legend.contains("Derived/twice")) {
            return c;
        }
        assert!(
            Instant::now() < deadline,
            "Derived/twice not in the legend and drawn ({}): legend read {legend:?}; plots {plots:?}",
            png.display()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Ends the window on drop, whatever the test's outcome.
struct Window(Child);

impl Drop for Window {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn window(x: &Xvfb, here: &Path, log: &Path, args: &[&str]) -> Window {
    let child = crate::support::zescope()
        .args(args)
        .current_dir(here)
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("ZESCOPE_FILE_DIALOG", "prompt")
        .env("RUST_LOG", "warn,zescope_window::plots=debug")
        .env_remove("ZE_SIM_CONFIG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start zescope");
    Window(child)
}

fn focus(display: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let id = loop {
        let out = Command::new("xdotool").args(["search", "--name", "^zescope"]).env("DISPLAY", display).output();
        if let Some(id) = out.ok().and_then(|o| String::from_utf8_lossy(&o.stdout).lines().last().map(str::to_owned)) {
            break id.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "no zescope window within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    xdotool(display, &["windowfocus", "--sync", &id]);
}

#[test]
fn a_derived_series_made_in_the_window_is_plotted_listed_saved_and_reopened() {
    for tool in ["Xvfb", "import", "convert", "xdotool", "tesseract"] {
        if !have(tool) {
            let why = format!("{tool} is not installed (apt install xvfb imagemagick xdotool tesseract-ocr)");
            return testing::skip("the derived series under Xvfb", &why);
        }
    }
    let x = match Xvfb::start(1280, 860) {
        Ok(x) => x,
        Err(why) => return testing::skip("the derived series under Xvfb", &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().join("window");
    std::fs::create_dir(&here).unwrap();
    let log = dir.path().join("window.log");
    let mut app = window(&x, &here, &log, &["--source", "sim"]);
    let d = x.display.as_str();

    // The run goes (its plots in the log), then View → New derived series….
    let shot = kept("live");
    let deadline = Instant::now() + Duration::from_secs(60);
    while plots_in_log(&std::fs::read_to_string(&log).unwrap_or_default()).is_empty() {
        assert!(Instant::now() < deadline, "no plot drawn: {}", std::fs::read_to_string(&log).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(200));
    }
    let before: Vec<[u8; 3]> =
        plots_in_log(&std::fs::read_to_string(&log).unwrap()).into_iter().flat_map(|p| p.colours).collect();
    focus(d);
    let (vx, vy) = find_word(d, &shot, (400, 30, 0, 0), "View");
    xdotool(d, &["mousemove", &vx.to_string(), &vy.to_string(), "click", "1"]);
    let (nx, ny) = find_word(d, &shot, (500, 500, 0, 0), "derived");
    xdotool(d, &["mousemove", &nx.to_string(), &ny.to_string(), "click", "1"]);
    // The editor's field (below its title), typed into; Enter once the screen shows the text,
    // and the editor lists the definition once it is added.
    let (tx, ty) = find_word(d, &shot, (900, 100, 250, 120), "Derived");
    focus(d);
    let editor = (900, 140, 250, 150);
    type_into(d, &shot, (tx - 100, ty + 34), DEFINITION, editor, "twice=ComputeBasic");
    xdotool(d, &["key", "Return"]);
    find_word(d, &shot, editor, "Derived/twice=ComputeBasic");
    // Closed (its close button, right of its title), so the pane below is seen whole.
    let close = (tx + CLOSE_FROM_TITLE).to_string();
    xdotool(d, &["mousemove", &close, &ty.to_string(), "click", "1"]);
    let from = std::fs::metadata(&log).unwrap().len() as usize;
    let colour = wait_plotted(d, &shot, &log, from, |c| !before.contains(c));
    eprintln!("live: Derived/twice drawn in {colour:?} ({})", shot.display());

    // Saved: Ctrl+S, the path prompt offers a file in the window's folder, Enter.
    focus(d);
    xdotool(d, &["key", "--clearmodifiers", "ctrl+s"]);
    find_word(d, &kept("save"), (800, 300, 240, 280), "Save");
    xdotool(d, &["key", "Return"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (path, session) = loop {
        let ron = std::fs::read_dir(&here)
            .unwrap()
            .map_while(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "ron"));
        if let Some((p, s)) = ron.and_then(|p| Some((p.clone(), zescope_model::session::load(&p).ok()?))) {
            break (p, s);
        }
        assert!(Instant::now() < deadline, "the window saved no session in {}", here.display());
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(Command::new("kill").arg("-TERM").arg(app.0.id().to_string()).status().unwrap().success());
    let _ = app.0.wait();
    // Its values: twice the utilisation at the same time, every one.
    let stream = |group: &str| session.streams.iter().find(|s| s.meta.group == group).unwrap();
    let (cb, dv) = (stream("ComputeBasic"), stream("Derived"));
    let col = cb.meta.series.iter().position(|m| m.metric == "GpuUtilization").unwrap();
    let width = cb.meta.series.len();
    let util: std::collections::HashMap<i64, f64> =
        cb.data.raw.timestamps.iter().enumerate().map(|(i, &t)| (t, cb.data.raw.values[i * width + col])).collect();
    assert!(dv.data.raw.timestamps.len() > 20, "{} derived samples", dv.data.raw.timestamps.len());
    for (i, t) in dv.data.raw.timestamps.iter().enumerate() {
        let (v, u) = (dv.data.raw.values[i], util[t]);
        assert!((v - 2.0 * u).abs() <= 1e-9 * u.abs().max(1.0), "at {t}: {v} vs 2 × {u}");
    }

    // Reopened in a new window: the legend names it and its line is drawn.
    let log2 = dir.path().join("reopened.log");
    let _app = window(&x, &here, &log2, &[path.to_str().unwrap()]);
    let shot = kept("reopened");
    let again = wait_plotted(d, &shot, &log2, 0, |c| *c == colour);
    eprintln!("reopened: Derived/twice drawn in {again:?} ({})", shot.display());
}
