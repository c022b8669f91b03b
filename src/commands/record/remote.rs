//! `record --connect HOST:PORT`: a `zescope serve`'s run recorded from its live feed
//! (`docs/live-protocol.md`), through zescope's client (`crate::live::client`), which hands over
//! the feed as the sampler's own events: the session goes through the same `Recorder` (the
//! model's ingest) as a local recording, a CSV through the same writer. The link dropping is said
//! on stderr and the client reconnects and resumes by itself; samples the server no longer held
//! are a gap in the file. Recording ends when the served run ends, after `--duration` (counted
//! from the first hello), or on SIGINT/SIGTERM; everything received is written.

use std::time::{Duration, Instant};

use super::{Out, RecordArgs, Summary, csv_out::CsvOut};
use crate::commands::headless::say;
use crate::live::client::{Follower, Got, Target};
use crate::signals::Termination;
use zescope_sampler::{Inventory, RunInfo};

/// How often a CSV is flushed and a session checkpointed.
const FLUSH: Duration = Duration::from_secs(1);

/// Records the remote run at `addr` into `args.out`.
pub fn record(args: &RecordArgs, addr: &str, stop: &Termination) -> Result<Summary, String> {
    let Some(path) = args.out.clone() else { return Err("--connect needs --out".into()) };
    let target = Target::new(addr.to_owned(), args.token_file.as_deref())?;
    let session = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("ron"));
    let mut follower = Follower::connect(target)?;
    say(&format!("zescope: recording the run served at {addr}"));
    let mut out: Option<Out> = None;
    let mut run: Option<RunInfo> = None;
    let mut summary = Summary { marker_cap: args.markers.per_session, ..Summary::default() };
    let mut started: Option<Instant> = None;
    // The first and last time of the samples received (the server's clock).
    let mut span: Option<(i64, i64)> = None;
    let mut flushed = Instant::now();
    let over = |started: Option<Instant>| started.is_some_and(|s| s.elapsed() >= args.duration);
    loop {
        let next = {
            let s = started;
            follower.next(&|| stop.requested() || over(s))
        };
        let Some(got) = next else { break };
        match got {
            Got::Started(info, devices) => {
                if out.is_none() {
                    out = Some(if session {
                        let inventory = Inventory { source: None, devices };
                        Out::Session(Box::new(args.recorder(path.clone(), inventory)?))
                    } else {
                        let file = std::fs::File::create(&path)
                            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                        Out::Csv(Box::new(CsvOut::new(file, path.clone(), args.markers.per_session)))
                    });
                } else if !session {
                    summary.errors.push("the server started another run; a CSV holds one run, so it ends here".into());
                    break;
                }
                if let Some(o) = out.as_mut() {
                    o.header(&info)?;
                }
                started.get_or_insert_with(Instant::now);
                summary.notices.extend(info.notices.iter().cloned());
                run = Some(*info);
            }
            Got::Samples(b) => {
                if let (Some(o), Some(info)) = (out.as_mut(), run.as_ref()) {
                    o.rows(info, &b).map_err(|e| format!("writing {}: {e}", path.display()))?;
                    summary.count(info, &b);
                    if let (Some(&first), Some(&last)) = (b.timestamps.first(), b.timestamps.last()) {
                        span = Some(span.map_or((first, last), |(a, z)| (a.min(first), z.max(last))));
                    }
                }
            }
            Got::Marker(kind, t_ns, name) => {
                if let Some(o) = out.as_mut() {
                    o.marker_at(kind, t_ns, &name);
                    summary.markers += 1;
                }
            }
            Got::Health(h) => summary.health = Some(h),
            Got::Notice(_, m) => {
                zescope_sampler::say_notice(&m);
                summary.notices.push(m);
            }
            Got::Error(m) => {
                eprintln!("zescope: {addr}: {m}");
                summary.errors.push(m);
            }
            Got::Stopped(r, _) => {
                if let Some(o) = out.as_mut() {
                    o.stopped(r);
                }
            }
            Got::Link(Some(why)) => eprintln!("zescope: {addr}: {why}; reconnecting"),
            Got::Link(None) => eprintln!("zescope: {addr}: reconnected, resuming"),
            Got::Unreachable(why) => eprintln!("zescope: {why}; still trying"),
        }
        if flushed.elapsed() >= FLUSH
            && let Some(o) = out.as_mut()
        {
            flushed = Instant::now();
            o.flush()?;
        }
    }
    summary.interrupted = stop.requested();
    summary.elapsed = started.map(|s| s.elapsed()).unwrap_or_default();
    summary.served =
        Some(span.map_or(Duration::ZERO, |(a, z)| Duration::from_nanos(z.saturating_sub(a).max(0) as u64)));
    let Some(mut o) = out else {
        return Err(format!("{addr}: the server's run never started"));
    };
    o.finish()?;
    Ok(summary)
}
