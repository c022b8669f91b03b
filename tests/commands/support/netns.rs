//! A test host of this test process's own: a network namespace joined to this machine by a veth
//! pair with a /30 of its own (`ip netns` + `ip link`, as root). A test that needs a peer beyond
//! loopback talks only to this host's address and runs its client inside the namespace
//! ([`TestHost::exec`]); it never targets any other address, this machine's own NICs included.
//! The namespace and the pair go when the [`TestHost`] is dropped (on a panic too); those left by
//! a test process that was killed are removed by the next one.

use std::net::Ipv4Addr;
use std::process::Command;

/// Namespaces this module makes are named this, then the pid of the test process that made them.
const PREFIX: &str = "zescope-host-";

/// A network namespace with a veth pair: `host_side` (this machine's end) and `guest` (the
/// namespace's end) on one /30.
pub struct TestHost {
    name: String,
    link: String,
    /// This machine's end of the pair: what a server binds to for the namespace to reach it.
    pub host_side: Ipv4Addr,
    /// The namespace's end of the pair: the peer address a server sees.
    pub guest: Ipv4Addr,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("`ip` cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Removes the namespaces of test processes that have ended (their veth pairs go with them).
fn sweep_dead() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else { return };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = ip(&["netns", "del", name]);
        }
    }
}

impl TestHost {
    /// Makes the namespace and the pair; `Err` says why it cannot (not root, no `ip netns`).
    /// One per test process at a time (the names come from the pid).
    pub fn make() -> Result<TestHost, String> {
        sweep_dead();
        let pid = std::process::id();
        let name = format!("{PREFIX}{pid}");
        // A pid names the link (≤ 15 bytes: "zsh" + up to 7 digits + "h"/"g") and picks one of the
        // 16384 /30s of 10.213.0.0/16, so concurrent test processes do not share a subnet.
        let (link, peer) = (format!("zsh{pid}h"), format!("zsh{pid}g"));
        let n = pid % 16384;
        let base = [10, 213, (n / 64) as u8, (n % 64 * 4) as u8];
        let host_side = Ipv4Addr::new(base[0], base[1], base[2], base[3] + 1);
        let guest = Ipv4Addr::new(base[0], base[1], base[2], base[3] + 2);
        // A namespace of this pid's that outlived an earlier process with the same pid.
        let _ = ip(&["netns", "del", &name]);
        ip(&["netns", "add", &name])?;
        // From here on, dropping the host removes what was made.
        let host = TestHost { name, link, host_side, guest };
        let ns = host.name.as_str();
        ip(&["link", "add", &host.link, "type", "veth", "peer", "name", &peer, "netns", ns])?;
        ip(&["addr", "add", &format!("{host_side}/30"), "dev", &host.link])?;
        ip(&["link", "set", &host.link, "up"])?;
        ip(&["-n", ns, "addr", "add", &format!("{guest}/30"), "dev", &peer])?;
        ip(&["-n", ns, "link", "set", &peer, "up"])?;
        ip(&["-n", ns, "link", "set", "lo", "up"])?;
        Ok(host)
    }

    /// `cmd` (its program, arguments and environment) run inside the namespace.
    pub fn exec(&self, cmd: &Command) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(cmd.get_program()).args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.link]);
        let _ = ip(&["netns", "del", &self.name]);
    }
}
