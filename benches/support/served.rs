//! What the benches of `zescope serve` share (`serve.rs`, `live.rs`): the built binary serving
//! the simulated device at 1 kHz on a loopback port of its own, and a scrape of its `/metrics`.

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

/// The value of the metric `name` (no labels) in a scraped page.
pub fn value(page: &str, name: &str) -> f64 {
    page.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} missing from the scrape"))
}

/// Starts `zescope --source sim serve --listen 127.0.0.1:0 --interval 1ms`, waits until the
/// run's health is served (the first health window), then one more second.
pub fn start() -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zescope"))
        .args(["--source", "sim", "serve", "--listen", "127.0.0.1:0", "--interval", "1ms"])
        .env_remove("ZE_SIM_CONFIG")
        .stdout(Stdio::piped())
        .spawn()
        .expect("zescope serve starts");
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
    std::thread::sleep(Duration::from_secs(1));
    (child, addr)
}
