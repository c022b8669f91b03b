//! Smoke test of the real binary in a real window: start `zescope` on the simulated device under
//! Xvfb, screenshot its window until every pane on screen shows pixels of its lines' colours
//! inside its plot (the places and colours from the window's debug log), narrow the window to
//! 800 px (xdotool) and check the same at that size, end it with SIGTERM, and check a clean exit
//! and a clean report from the simulated driver. (Where the pane buttons land in a narrow
//! window is checked by the window crate's `tests/window/resize.rs`: the real window exposes no
//! widget positions.)
//!
//! Needs Xvfb, ImageMagick's `import`, xdotool and xwininfo (`apt install xvfb imagemagick
//! xdotool x11-utils`); without them it skips loudly (a failure under ZESCOPE_STRICT_TESTS=1). The screenshot goes to
//! `$ZESCOPE_SCREENSHOT` if set, else `target/zescope-screenshot.png` (the narrowed window beside
//! it, `*.narrow.png`):
//!
//!     ZESCOPE_SCREENSHOT=/tmp/zescope.png cargo test --test commands xvfb -- --nocapture

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ze_sim::testing;

use crate::support::have;
use crate::support::xvfb::Xvfb;

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

/// One pane's plot as the window's debug log last gave it (`zescope_window::plots`): where it
/// is in the window and the colours its lines are drawn in.
#[derive(Debug)]
pub(crate) struct PlotSeen {
    pub(crate) pane: u64,
    pub(crate) rect: [f32; 4],
    pub(crate) colours: Vec<[u8; 3]>,
}

/// The last place of each pane's plot in `log` ("pane 1 plot at [[x0 y0] - [x1 y1]] colours
/// [[r, g, b, a], …]"), by pane.
pub(crate) fn plots_in_log(log: &str) -> Vec<PlotSeen> {
    let numbers = |t: &str| -> Vec<f32> {
        t.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse().ok())
            .collect()
    };
    let mut seen: Vec<PlotSeen> = Vec::new();
    for l in log.lines() {
        let Some((_, rest)) = l.split_once("pane ") else { continue };
        let Some((pane, rest)) = rest.split_once(" plot at ") else { continue };
        let Some((rect, colours)) = rest.split_once(" colours ") else { continue };
        let Ok(pane) = pane.trim().parse::<u64>() else { continue };
        let [x0, y0, x1, y1] = numbers(rect)[..] else { continue };
        let colours = numbers(colours).chunks_exact(4).map(|c| [c[0] as u8, c[1] as u8, c[2] as u8]).collect();
        let plot = PlotSeen { pane, rect: [x0, y0, x1, y1], colours };
        match seen.iter_mut().find(|p| p.pane == pane) {
            Some(p) => *p = plot,
            None => seen.push(plot),
        }
    }
    seen
}

/// Checks that every pane's plot wholly inside the window (`size`, less the status bar) has
/// pixels of its lines' colours in the screenshot `shot` of the window: the lines were drawn.
/// Returns how many panes were checked, or what is missing.
fn lines_in_every_pane(shot: &Path, plots: &[PlotSeen], size: (u32, u32)) -> Result<usize, String> {
    let inside: Vec<&PlotSeen> =
        plots.iter().filter(|p| p.rect[2] <= size.0 as f32 && p.rect[3] + 40.0 <= size.1 as f32).collect();
    if inside.is_empty() {
        return Err(format!("no pane's plot wholly inside the {size:?} window: {plots:?}"));
    }
    for p in &inside {
        let [x0, y0, x1, y1] = p.rect;
        let rect = (x0 as u32 + 2, y0 as u32 + 2, (x1 - x0) as u32 - 4, (y1 - y0) as u32 - 4);
        let near = |px: &[u8; 3]| p.colours.iter().any(|c| (0..3).all(|i| px[i].abs_diff(c[i]) <= 24));
        let lit = pixels(shot, rect).iter().flatten().filter(|px| near(px)).count();
        // A line across a few seconds of a minute's window: dozens of pixels at least.
        if lit < 30 {
            return Err(format!(
                "pane {}: {lit} pixels of its lines' colours {:?} in its plot {rect:?}",
                p.pane, p.colours
            ));
        }
    }
    Ok(inside.len())
}

/// Screenshots the window `id` to `shot` until [`lines_in_every_pane`] holds for the plots the
/// log gives after byte `from` (60 s at most: a loaded machine draws late); returns the panes
/// checked.
fn wait_for_lines(display: &str, id: &str, shot: &Path, log: &Path, from: usize, size: (u32, u32)) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read(log).unwrap();
        let plots = plots_in_log(&String::from_utf8_lossy(&text[from.min(text.len())..]));
        // Before the window is mapped and drawn, `import` fails: that is waited for too.
        let out = Command::new("import").args(["-display", display, "-window", id]).arg(shot).output().unwrap();
        let drawn = if plots.is_empty() {
            Err("no pane's plot in the window's log yet".to_owned())
        } else if !out.status.success() {
            Err(format!("import failed: {}", String::from_utf8_lossy(&out.stderr)))
        } else {
            assert_eq!(png_size(shot), Some(size), "a PNG of the window at {}", shot.display());
            lines_in_every_pane(shot, &plots, size)
        };
        match drawn {
            Ok(n) => return n,
            Err(why) if Instant::now() > deadline => panic!("{why} (screenshot {})", shot.display()),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

#[test]
fn the_window_runs_on_the_simulated_device_and_exits_cleanly_on_sigterm() {
    for tool in ["Xvfb", "import", "xdotool", "xwininfo", "convert"] {
        if !have(tool) {
            return testing::skip(
                "the Xvfb smoke test",
                &format!("{tool} is not installed (apt install xvfb imagemagick xdotool x11-utils)"),
            );
        }
    }
    let mut x = match Xvfb::start(1280, 860) {
        Ok(x) => x,
        Err(why) => return testing::skip("the Xvfb smoke test", &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.ron");
    // Where each pane's plot is comes from the window's own debug log; it goes to a file, so a
    // full pipe never holds the window up.
    let log = dir.path().join("log.txt");
    let mut app = crate::support::zescope()
        .args(["--source", "sim"])
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("ZE_SIM_REPORT", &report)
        .env("RUST_LOG", "warn,zescope_window::plots=debug")
        .env_remove("ZE_SIM_CONFIG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start zescope");
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    // Its window, once it is there (60 s: a loaded machine starts it late).
    let deadline = Instant::now() + Duration::from_secs(60);
    let id = loop {
        if let Some(status) = app.try_wait().unwrap() {
            panic!("zescope exited early with {status} ({}): {}", x.health(), logged());
        }
        let out = Command::new("xdotool").args(["search", "--name", "^zescope$"]).env("DISPLAY", &x.display).output();
        if let Some(id) = out.ok().and_then(|o| String::from_utf8_lossy(&o.stdout).lines().last().map(str::to_owned)) {
            break id.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "no zescope window within 60 s: {}", logged());
        std::thread::sleep(Duration::from_millis(100));
    };
    // Every pane on screen draws its lines, sampled from the simulated device.
    let shot = screenshot_path();
    let size = window_size(&x.display, &id).expect("xwininfo gives the window's size");
    let panes = wait_for_lines(&x.display, &id, &shot, &log, 0, size);
    assert!(panes >= 2, "the default layout shows at least two panes whole at {size:?}: {panes}");
    eprintln!("screenshot: {} ({panes} panes with lines)", shot.display());

    // Narrower: the window takes the new size and goes on drawing every pane's lines.
    let from = std::fs::metadata(&log).unwrap().len() as usize;
    let status = Command::new("xdotool").args(["windowsize", &id, "800", "600"]).env("DISPLAY", &x.display).status();
    assert!(status.unwrap().success(), "xdotool windowsize failed");
    let deadline = Instant::now() + Duration::from_secs(30);
    while window_size(&x.display, &id) != Some((800, 600)) {
        assert!(Instant::now() < deadline, "the window was not narrowed: {:?}", window_size(&x.display, &id));
        std::thread::sleep(Duration::from_millis(100));
    }
    let narrow = shot.with_extension("narrow.png");
    let panes = wait_for_lines(&x.display, &id, &narrow, &log, from, (800, 600));
    assert!(app.try_wait().unwrap().is_none(), "zescope is still running after the resize");
    eprintln!("narrowed window: {} ({panes} panes with lines)", narrow.display());

    assert!(Command::new("kill").arg("-TERM").arg(app.id().to_string()).status().unwrap().success());
    let t = Instant::now();
    while app.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(30), "zescope did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = app.wait().unwrap();
    let stderr = logged();
    assert!(status.success(), "exit status {status}: {stderr}");
    assert!(!stderr.contains("did not finish its teardown"), "{stderr}");
    let text = std::fs::read_to_string(&report).expect("the simulated driver wrote its report at exit");
    let r: ze_sim::Report = ron::from_str(&text).unwrap();
    assert!(r.is_clean(), "{text}");
}

/// The pixels of `rect` (x, y, width, height) of the PNG at `png`, row by row (ImageMagick's
/// `convert … txt:`).
pub(crate) fn pixels(png: &Path, (x, y, w, h): (u32, u32, u32, u32)) -> Vec<Vec<[u8; 3]>> {
    let out = Command::new("convert")
        .arg(png)
        .args(["-crop", &format!("{w}x{h}+{x}+{y}"), "+repage", "-depth", "8", "txt:-"])
        .output()
        .expect("convert");
    assert!(out.status.success(), "convert: {}", String::from_utf8_lossy(&out.stderr));
    let mut rows = vec![vec![[0u8; 3]; w as usize]; h as usize];
    for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.starts_with('#')) {
        // "12,3: (255,255,255)  #FFFFFF  white"
        let Some((at, rest)) = line.split_once(':') else { continue };
        let Some((px, py)) = at.split_once(',') else { continue };
        let Some(hex) = rest.split_whitespace().find(|s| s.starts_with('#') && s.len() >= 7) else { continue };
        let c = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
        let (Ok(px), Ok(py)) = (px.trim().parse::<usize>(), py.trim().parse::<usize>()) else { continue };
        if py < rows.len() && px < rows[py].len() {
            rows[py][px] = [c(1), c(3), c(5)];
        }
    }
    rows
}

/// The overview strip, as a user sees it on the simulated device: its pixels form bands that
/// run across it (few connected shapes, nearly every column inked), not scattered dots.
#[test]
fn the_overview_strip_draws_bands_not_dots() {
    for tool in ["Xvfb", "import", "xdotool", "convert"] {
        if !have(tool) {
            return testing::skip(
                "the overview strip's screenshot",
                &format!("{tool} is not installed (apt install xvfb imagemagick xdotool)"),
            );
        }
    }
    let x = match Xvfb::start(1280, 860) {
        Ok(x) => x,
        Err(why) => return testing::skip("the overview strip's screenshot", &why),
    };
    let dir = tempfile::tempdir().unwrap();
    // Where the strip is drawn comes from the window's own debug log (the real window exposes no
    // widget positions); it goes to a file, so a full pipe never holds the window up.
    let log = dir.path().join("log.txt");
    let mut app = crate::support::zescope()
        .args(["--source", "sim"])
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("RUST_LOG", "warn,zescope_window::overview=debug")
        .env_remove("ZE_SIM_CONFIG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start zescope");
    std::thread::sleep(Duration::from_secs(6));
    assert!(app.try_wait().unwrap().is_none(), "zescope runs: {}", std::fs::read_to_string(&log).unwrap_or_default());
    let id = window_id(&x.display);
    // Kept beside the smoke test's screenshot, to look at.
    let shot = screenshot_path().with_extension("strip.png");
    let status = Command::new("import").args(["-display", &x.display, "-window", &id]).arg(&shot).status().unwrap();
    assert!(status.success(), "import failed");
    let _ = Command::new("kill").arg("-TERM").arg(app.id().to_string()).status();
    let _ = app.wait();

    // "strip at [[429.0 64.0] - [1264.0 120.0]]", the last one drawn.
    let text = std::fs::read_to_string(&log).unwrap();
    let line = text.lines().rev().find_map(|l| l.split_once("strip at ").map(|(_, r)| r.to_owned()));
    let line = line.unwrap_or_else(|| panic!("the strip was drawn: {text}"));
    let nums: Vec<f32> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    let [x0, y0, x1, y1] = nums[..] else { panic!("a rectangle: {line}") };
    // Inside the frame of the marked range (a 1 px stroke) and the rounded corners.
    let rect = (x0 as u32 + 3, y0 as u32 + 3, (x1 - x0) as u32 - 6, (y1 - y0) as u32 - 6);
    let rows = pixels(&shot, rect);
    let (w, h) = (rows[0].len(), rows.len());
    let mut counts = std::collections::HashMap::new();
    rows.iter().flatten().for_each(|p| *counts.entry(*p).or_insert(0usize) += 1);
    let bg = *counts.iter().max_by_key(|(_, n)| **n).unwrap().0;
    let ink: Vec<Vec<bool>> =
        rows.iter().map(|r| r.iter().map(|p| (0..3).any(|i| p[i].abs_diff(bg[i]) > 40)).collect()).collect();
    let inked = |c: usize| (0..h).any(|r| ink[r][c]);
    let columns: Vec<usize> = (0..w).filter(|&c| inked(c)).collect();
    assert!(columns.len() > w / 2, "the strip shows the history across it: {} of {w} columns inked", columns.len());
    let (first, last) = (columns[0], *columns.last().unwrap());
    // Holes between the first and last inked column. The strip joins columns with values less
    // than 1/BRIDGE_SHARE of the history apart, so a hole narrower than that is dots; one as wide
    // is a pause in the data (on a loaded machine the window's sampler can go without the CPU
    // for that long) and is drawn as the pause it was.
    let pause = w / zescope_window::overview::BRIDGE_SHARE;
    let mut holes = Vec::new();
    let mut run = 0usize;
    for c in first..=last {
        if inked(c) {
            if run > 0 {
                holes.push(run);
            }
            run = 0;
        } else {
            run += 1;
        }
    }
    let narrow: usize = holes.iter().filter(|&&n| n + 2 < pause).sum();
    let covered = 1.0 - narrow as f64 / (last - first + 1) as f64;
    assert!(
        covered > 0.95,
        "bands run on: {:.0} % of the columns between the first and last inked, less pauses of {pause} columns or more (holes {holes:?})",
        covered * 100.0
    );
    // Connected shapes of ink (8-neighbours): a band is one, dots are many.
    let mut seen = vec![vec![false; w]; h];
    let mut shapes = 0;
    for r in 0..h {
        for c in 0..w {
            if !ink[r][c] || seen[r][c] {
                continue;
            }
            shapes += 1;
            let mut stack = vec![(r, c)];
            seen[r][c] = true;
            while let Some((y, x)) = stack.pop() {
                for (dy, dx) in [(-1i32, -1i32), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)] {
                    let (ny, nx) = (y as i32 + dy, x as i32 + dx);
                    if ny >= 0 && nx >= 0 && (ny as usize) < h && (nx as usize) < w {
                        let (ny, nx) = (ny as usize, nx as usize);
                        if ink[ny][nx] && !seen[ny][nx] {
                            seen[ny][nx] = true;
                            stack.push((ny, nx));
                        }
                    }
                }
            }
        }
    }
    // Each pause splits every band once more; dots are hundreds of shapes.
    let pauses = holes.iter().filter(|&&n| n + 2 >= pause).count();
    assert!(shapes <= 24 * (1 + pauses), "{shapes} separate shapes of ink ({pauses} pauses): dots, not bands");
}
