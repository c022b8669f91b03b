//! The sampler thread's loop: wait for the next command or deadline, handle it, deliver events.
//! (`handle.rs` starts it and holds its channels.)

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};

use zescope_ze::Loader;

use super::handle::{Opener, Options};
use super::host;
use super::optional::NOTICE_LOG_TARGET;
use super::outbox::Outbox;
use super::protocol::*;
use super::run::Run;
use super::teardown::{self, Pending};
use super::timing::Ticker;
use super::{claims, errors, inventory, setup};

struct State {
    options: Options,
    opener: Opener,
    loader: Option<Loader>,
    /// What earlier teardowns could not release (a failed free, a refused disable); retried, in
    /// the teardown's order, at each stop, start and at exit.
    pending: Vec<Pending>,
    run: Option<Run>,
    ticker: Option<Ticker>,
    paused: bool,
    next_run: u64,
    next_flush: Instant,
    next_stats: Instant,
    window: Window,
    /// Whole-run read counters, reported in `Health`.
    samples: u64,
    torn: u64,
    unchanged: u64,
    clock_resets: u64,
    dropped_reports: u64,
    /// Times the thread woke since the run started (`Health::wakeups`).
    wakeups: u64,
}

/// Counters at the start of the current health window.
struct Window {
    at: Instant,
    ticks: u64,
    /// The ticker's skipped deadlines then.
    skipped: u64,
    cpu: Duration,
}

/// The reads a second ticker `t` did since `w`: the requested rate times the share of the
/// deadlines that passed for which a read was done (over the run so far when none passed since
/// `w`). Counted by deadlines, not over the window's wall time: 10 reads at 10 Hz in a window of
/// 1.012 s are 10 Hz, not 9.88.
fn achieved_hz(t: &Ticker, w: &Window) -> f64 {
    let share = |ticks: u64, skipped: u64| match ticks + skipped {
        0 => 1.0,
        deadlines => ticks as f64 / deadlines as f64,
    };
    let (ticks, skipped) = (t.ticks.saturating_sub(w.ticks), t.skipped.saturating_sub(w.skipped));
    let share = if ticks + skipped > 0 { share(ticks, skipped) } else { share(t.ticks, t.skipped) };
    share / t.interval().as_secs_f64()
}

enum Flow {
    Continue,
    Exit,
}

fn open(opener: &mut Opener, outbox: &mut Outbox) -> Option<Loader> {
    match std::panic::catch_unwind(AssertUnwindSafe(opener)) {
        Ok(Ok(l)) => Some(l),
        Ok(Err(e)) => {
            outbox.push(Event::Error(errors::source(&e)));
            None
        }
        Err(_) => {
            outbox.push(Event::Error(internal("opening the source panicked")));
            None
        }
    }
}

pub(crate) fn sampler_main(mut opener: Opener, options: Options, commands: Receiver<Command>, events: Sender<Event>) {
    host::precise_timers();
    super::dmabuf::test_hook::panic_before_free(options.panic_before_free);
    super::dmabuf::test_hook::fail_munmap(options.fail_munmap);
    super::read::streamer::test_hook::poll_every_tick(options.poll_streamer);
    let mut outbox = Outbox::new(events, options.max_waiting_values).with_waker(options.waker.clone());
    for e in &options.layout_errors {
        outbox.push(Event::Error(errors::layout(format!("{e} (the file is ignored)"))));
    }
    let loader = open(&mut opener, &mut outbox);
    let now = Instant::now();
    let mut st = State {
        options,
        opener,
        pending: Vec::new(),
        loader,
        run: None,
        ticker: None,
        paused: false,
        next_run: 1,
        next_flush: now,
        next_stats: now,
        window: Window { at: now, ticks: 0, skipped: 0, cpu: host::thread_cpu_time() },
        samples: 0,
        torn: 0,
        unchanged: 0,
        clock_resets: 0,
        dropped_reports: 0,
        wakeups: 0,
    };
    st.send_inventory(&mut outbox);
    loop {
        let deadline = st.next_deadline();
        let flow = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let (received, notified) = st.wait(&commands, deadline);
            st.wakeups += 1;
            let flow = match received {
                Ok(c) => st.handle(c, &mut outbox),
                Err(RecvTimeoutError::Timeout) => Flow::Continue,
                Err(RecvTimeoutError::Disconnected) => Flow::Exit,
            };
            st.on_time(Instant::now(), notified, &mut outbox);
            flow
        }));
        match flow {
            Ok(Flow::Continue) => {}
            Ok(Flow::Exit) => break,
            Err(_) => {
                // A panic inside the sampler: the run ends through the same teardown.
                st.stop_run(StopReason::Error, &mut outbox);
                outbox.push(Event::Error(internal("the sampler hit an internal error; the run was stopped")));
            }
        }
        outbox.flush();
    }
    st.stop_run(StopReason::Shutdown, &mut outbox);
    st.retry_pending(&mut outbox);
    // The last chance: what is still left is said, then left to the driver's own cleanup.
    let left: Vec<String> = st.pending.iter().map(Pending::describe).collect();
    if !left.is_empty() {
        report_teardown(left, &mut outbox);
    }
    for p in std::mem::take(&mut st.pending) {
        p.abandon();
    }
    outbox.drain(Event::ShutDown, Duration::from_millis(500));
}

/// Below this wait, the thread sleeps to the deadline and then polls for commands instead of
/// blocking on the channel: a channel wait spins and yields before it sleeps, which at 10 kHz
/// would cost a good share of a core. Commands then wait at most this long.
const POLL_BELOW: Duration = Duration::from_millis(2);

/// The next command, or `Timeout` at `deadline`.
fn wait(commands: &Receiver<Command>, deadline: Instant) -> Result<Command, RecvTimeoutError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left > POLL_BELOW {
        return commands.recv_deadline(deadline);
    }
    if !left.is_zero() {
        std::thread::sleep(left);
    }
    commands.try_recv().map_err(timeout_or_gone)
}

/// When `run` is next read: its ticker's deadline, and in a run read in batches also when a way
/// asks (telemetry's period: `read::Way::next_due`).
fn read_deadline(run: &Run, t: &Ticker) -> Instant {
    let due = if t.is_batched() { run.next_due() } else { None };
    due.map_or(t.next_deadline(), |d| d.min(t.next_deadline()))
}

fn timeout_or_gone(e: TryRecvError) -> RecvTimeoutError {
    match e {
        TryRecvError::Empty => RecvTimeoutError::Timeout,
        TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
    }
}

fn report_teardown(failures: Vec<String>, outbox: &mut Outbox) {
    if !failures.is_empty() {
        outbox.push(Event::Error(SamplerError {
            kind: ErrorKind::Teardown,
            message: format!("the run ended, but releasing it failed: {}", failures.join("; ")),
            hint: Some("if the device misbehaves, restart zescope".into()),
        }));
    }
}

fn internal(m: &str) -> SamplerError {
    SamplerError {
        kind: ErrorKind::Internal,
        message: m.into(),
        hint: Some("please report this as a zescope bug".into()),
    }
}

impl State {
    /// When the thread must wake next: the run's next read or health report. Samples read are
    /// sent at the first read after the batch period (a run read in batches: after each read),
    /// so sending costs no wakeup of its own.
    fn next_deadline(&self) -> Instant {
        let idle = Instant::now() + Duration::from_millis(250);
        match (&self.run, &self.ticker) {
            (Some(run), Some(t)) if !self.paused => read_deadline(run, t).min(self.next_stats),
            (Some(_), _) => self.next_stats.min(idle),
            _ => idle,
        }
    }

    /// The next command, or `Timeout` at `deadline`. A run read in batches whose streamer has a
    /// notification event sleeps on the event instead (`zeEventHostSynchronize` with a timeout
    /// up to the deadline: a command then waits at most a batch interval); `true` says the
    /// notification came.
    fn wait(&mut self, commands: &Receiver<Command>, deadline: Instant) -> (Result<Command, RecvTimeoutError>, bool) {
        let batched = !self.paused && self.ticker.as_ref().is_some_and(Ticker::is_batched);
        if let (true, Some(run)) = (batched, &mut self.run) {
            let now = match commands.try_recv() {
                Err(TryRecvError::Empty) => Instant::now(),
                got => return (got.map_err(timeout_or_gone), false),
            };
            if let Some(notified) = run.wait_notified(deadline.saturating_duration_since(now)) {
                return (commands.try_recv().map_err(timeout_or_gone), notified);
            }
        }
        (wait(commands, deadline), false)
    }

    fn send_inventory(&mut self, outbox: &mut Outbox) {
        if self.run.is_some() {
            // Listing may enable/disable metrics on devices: not while a run holds one.
            return outbox.push(Event::Error(errors::config("stop the run before refreshing the device list", None)));
        }
        if let Some(l) = &self.loader {
            let inv = inventory::build(l, &self.options.layouts, self.options.requested, &mut self.pending);
            outbox.push(Event::Inventory(inv));
        }
    }

    fn handle(&mut self, c: Command, outbox: &mut Outbox) -> Flow {
        match c {
            Command::Refresh => {
                if self.loader.is_none() {
                    self.loader = open(&mut self.opener, outbox);
                }
                self.send_inventory(outbox);
            }
            Command::Sync(n) => outbox.push(Event::Synced(n)),
            Command::Start(cfg) => {
                self.stop_run(StopReason::Replaced, outbox);
                self.start_run(cfg, outbox);
            }
            Command::Stop => self.stop_run(StopReason::Requested, outbox),
            Command::SetInterval(i) => {
                let i = i.clamp(MIN_INTERVAL, MAX_INTERVAL);
                // A streamer samples at the period it was opened with (a tenth of the interval):
                // a run that streams a group starts again at the new interval, its streamers
                // opened at the new period. It kept the old one: the window said "10 kHz
                // requested" over 781 reports a second.
                let streams = |r: &Run| r.info.streams.iter().any(|s| s.read_path == ReadPath::Streamer);
                let again = self.run.as_ref().filter(|r| r.info.config.interval != i && streams(r));
                if let Some(cfg) = again.map(|r| RunConfig { interval: i, ..r.info.config.clone() }) {
                    self.stop_run(StopReason::Replaced, outbox);
                    self.start_run(cfg, outbox);
                    return Flow::Continue;
                }
                if let Some(t) = &mut self.ticker {
                    t.set_interval(i, Instant::now());
                }
                if let Some(r) = &mut self.run {
                    r.info.config.interval = i;
                }
            }
            Command::Pause => {
                // What was read before the pause goes out now, so every batch after it is data
                // read after the resume.
                if !self.paused
                    && let Some(run) = &mut self.run
                {
                    send_batches(run, outbox);
                }
                self.paused = true;
            }
            Command::Resume => {
                if self.paused {
                    self.paused = false;
                    if let (Some(r), Some(t)) = (&mut self.run, &mut self.ticker) {
                        r.mark_gap();
                        t.set_interval(t.interval(), Instant::now());
                    }
                }
            }
            Command::Shutdown => return Flow::Exit,
        }
        Flow::Continue
    }

    fn start_run(&mut self, mut cfg: RunConfig, outbox: &mut Outbox) {
        let Some(loader) = &self.loader else {
            outbox
                .push(Event::Error(errors::config("no source is open", Some("check the source and restart zescope"))));
            return;
        };
        cfg.interval = cfg.interval.clamp(MIN_INTERVAL, MAX_INTERVAL);
        let id = self.next_run;
        self.next_run += 1;
        // What an earlier run left is released first: its exporters may be the ones this run
        // activates.
        let mut errors = Vec::new();
        teardown::retry_all(&mut self.pending, &[], &mut errors);
        report_teardown(errors, outbox);
        if let Some(t) = cfg.targets.iter().find(|t| self.pending.iter().any(|p| p.blocks(t.device))) {
            let on = if cfg.targets.len() > 1 { format!("device {:?}", t.device) } else { "this device".to_owned() };
            return outbox.push(Event::Error(errors::config(
                format!(
                    "cannot start on {on}: exported memory of an earlier run could not be freed, so its metric \
                 groups must stay active"
                ),
                Some("zescope retries the free at each start and at exit; if it keeps failing, restart zescope"),
            )));
        }
        match setup::start(
            loader,
            (&self.options.layouts, self.options.batch_interval),
            &cfg,
            id,
            claims::SAMPLER_WAIT,
            &mut self.pending,
        ) {
            Ok(run) => {
                for n in &run.info.notices {
                    log::warn!(target: NOTICE_LOG_TARGET, "{n}");
                }
                outbox.push(Event::RunStarted(run.info.clone()));
                let now = Instant::now();
                self.ticker = Some(if run.read_in_batches() && !self.options.poll_streamer {
                    Ticker::batched(cfg.interval, self.options.batch_interval, now)
                } else {
                    Ticker::new(cfg.interval, now)
                });
                self.wakeups = 0;
                self.window = Window { at: now, ticks: 0, skipped: 0, cpu: host::thread_cpu_time() };
                self.samples = 0;
                self.torn = 0;
                self.unchanged = 0;
                self.clock_resets = 0;
                self.dropped_reports = 0;
                self.paused = false;
                self.run = Some(run);
            }
            Err(e) => outbox.push(Event::Error(e)),
        }
    }

    /// Sends what the run has read, tears it down, and reports how it ended.
    fn stop_run(&mut self, reason: StopReason, outbox: &mut Outbox) {
        // The run's last health, over its whole time, ahead of its stop: a run shorter than the
        // health period had none, and `record` said "too short for a rate" of 300 ms at 1 kHz.
        if let Some(last) = self.health(Instant::now(), outbox) {
            outbox.push_last_health(last);
        }
        let Some(mut run) = self.run.take() else { return };
        if reason != StopReason::Error {
            run.drain();
            for message in run.take_notices() {
                log::warn!(target: NOTICE_LOG_TARGET, "{message}");
                outbox.push(Event::Notice { run: run.info.run, message });
            }
        }
        send_batches(&mut run, outbox);
        let id = run.info.run;
        self.ticker = None;
        let t = run.stop();
        // Earlier leftovers, now that no run holds the device; then this run's. A disable left
        // by an earlier run waits while this run's own leftovers hold memory on its root device
        // (a refused disable, then a run on that device whose free failed).
        let mut errors = Vec::new();
        teardown::retry_all(&mut self.pending, &t.pending, &mut errors);
        report_teardown(errors, outbox);
        self.pending.extend(t.pending);
        report_teardown(t.errors, outbox);
        outbox.push(Event::RunStopped { run: id, reason });
    }

    fn retry_pending(&mut self, outbox: &mut Outbox) {
        let mut errors = Vec::new();
        teardown::retry_all(&mut self.pending, &[], &mut errors);
        report_teardown(errors, outbox);
    }

    /// After a wakeup at `now` (`notified`: the streamer's notification woke it): the read if
    /// one is due, the device check, notices, sending and health.
    fn on_time(&mut self, now: Instant, notified: bool, outbox: &mut Outbox) {
        if self.run.is_none() {
            return;
        }
        let mut batch_read = false;
        if !self.paused
            && let (Some(run), Some(t)) = (&mut self.run, &mut self.ticker)
            && (now >= read_deadline(run, t) || notified)
        {
            batch_read = t.is_batched();
            let read = run.read();
            t.fire(Instant::now());
            match &mut self.options.panic_after_reads {
                Some(0) => {
                    self.options.panic_after_reads = None;
                    panic!("test hook: panic_after_reads");
                }
                Some(n) => *n -= 1,
                None => {}
            }
            match read {
                Ok(r) => {
                    self.samples += r.samples;
                    self.torn += r.torn;
                    self.unchanged += r.unchanged;
                    self.clock_resets += r.clock_resets;
                    self.dropped_reports += r.dropped_reports;
                }
                Err(e) => return self.end_with(e, outbox),
            }
        }
        let device = self.run.as_mut().map(|r| r.check_device(now));
        if let Some(Err(e)) = device {
            return self.end_with(e, outbox);
        }
        if let Some(run) = &mut self.run {
            let id = run.info.run;
            for message in run.take_notices() {
                log::warn!(target: NOTICE_LOG_TARGET, "{message}");
                outbox.push(Event::Notice { run: id, message });
            }
        }
        let pending = self.run.as_ref().map_or(0, |r| r.pending_samples());
        if now >= self.next_flush || pending >= 8192 || (batch_read && pending > 0) {
            self.next_flush = now + self.options.batch_period;
            if let Some(run) = &mut self.run {
                send_batches(run, outbox);
            }
        }
        if now >= self.next_stats {
            self.next_stats = now + self.options.health_period;
            self.push_stats(now, outbox);
        }
    }

    /// Ends the run after an error (through the one teardown), then reports the error.
    fn end_with(&mut self, e: SamplerError, outbox: &mut Outbox) {
        self.stop_run(StopReason::Error, outbox);
        outbox.push(Event::Error(e));
    }

    fn push_stats(&mut self, now: Instant, outbox: &mut Outbox) {
        if let Some(stats) = self.health(now, outbox) {
            outbox.push(Event::Health(stats));
        }
    }

    /// The run's health at `now` (its rate and CPU over the time since the last), or `None`
    /// without a run or time since.
    fn health(&mut self, now: Instant, outbox: &Outbox) -> Option<Health> {
        let (Some(run), Some(t)) = (&self.run, &self.ticker) else { return None };
        let dt = now.duration_since(self.window.at).as_secs_f64();
        if dt <= 0.0 {
            return None;
        }
        let cpu = host::thread_cpu_time();
        let stats = Health {
            run: run.info.run,
            requested_hz: 1.0 / t.interval().as_secs_f64(),
            achieved_hz: if self.paused { 0.0 } else { achieved_hz(t, &self.window) },
            ticks: t.ticks,
            batched: t.is_batched(),
            samples: self.samples,
            ticked_for: now.saturating_duration_since(t.started()),
            late_ticks: t.late,
            skipped_ticks: t.skipped,
            torn_reads: self.torn,
            unchanged_reads: self.unchanged,
            clock_resets: self.clock_resets,
            dropped_reports: self.dropped_reports,
            dropped_samples: outbox.dropped_samples,
            dropped_batches: outbox.dropped_batches,
            cpu_percent: (cpu.saturating_sub(self.window.cpu)).as_secs_f64() / dt * 100.0,
            wakeups: self.wakeups,
            latency: t.latency(),
        };
        self.window = Window { at: now, ticks: t.ticks, skipped: t.skipped, cpu };
        Some(stats)
    }
}

/// Sends what `run` has read since the last call (pause, flush period, stop).
fn send_batches(run: &mut Run, outbox: &mut Outbox) {
    for b in run.take_batches() {
        outbox.push(Event::Samples(b));
    }
    for p in run.take_processes() {
        outbox.push(Event::Processes(p));
    }
}
