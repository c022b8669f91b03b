//! What the benches of `zescope serve` share (`serve.rs`, `live.rs`, `otlp.rs`): the built binary
//! serving the simulated device at 1 kHz on a loopback port of its own, and a scrape of its
//! `/metrics`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `GET /metrics` over a fresh connection: the whole answer, head included.
pub fn scrape(addr: SocketAddr) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    Ok(text)
}

/// The value of the metric `name` (no labels) in a scraped page, if it is there.
#[allow(dead_code, reason = "not every bench that includes this module reads optional metrics")]
pub fn value_if(page: &str, name: &str) -> Option<f64> {
    page.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// The value of the metric `name` (no labels) in a scraped page.
#[allow(dead_code, reason = "not every bench that includes this module reads required metrics")]
pub fn value(page: &str, name: &str) -> f64 {
    value_if(page, name).unwrap_or_else(|| panic!("{name} missing from the scrape"))
}

/// Starts `zescope --source sim serve --listen 127.0.0.1:0 --interval 1ms`, waits until the
/// run's health is served (the first health window), then one more second.
#[allow(dead_code, reason = "not every bench that includes this module starts the default serve")]
pub fn start() -> (Child, SocketAddr) {
    start_with(&[], &[], Duration::from_secs(1))
}

/// As [`start`], with `args` after serve's own and `env` set, waiting `settle` after the first
/// health window.
pub fn start_with(args: &[&str], env: &[(&str, &str)], settle: Duration) -> (Child, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zescope"));
    command
        .args(["--source", "sim", "serve", "--listen", "127.0.0.1:0", "--interval", "1ms"])
        .args(args)
        .env_remove("ZE_SIM_CONFIG")
        .envs(env.iter().copied())
        .stdout(Stdio::piped());
    let mut child = command.spawn().expect("zescope serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("address line");
    let addr = line
        .trim()
        .strip_prefix("zescope: serving http://")
        .and_then(|a| a.strip_suffix("/metrics"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !scrape(addr).is_ok_and(|p| p.contains("zescope_sampler_ticks_total")) {
        assert!(Instant::now() < deadline, "serve never served its stats");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(settle);
    (child, addr)
}
