//! Delivery of events without ever blocking the sampler on a slow consumer.
//!
//! Events go through a bounded channel with `try_send`. What does not fit waits here: sample
//! batches of the same stream are coalesced into one, and when the waiting samples exceed the
//! cap the oldest whole batches are dropped, counted, and the next batch of that stream is
//! marked `gap_before` so no line is drawn across the hole. Process snapshots wait too, at most
//! [`MAX_WAITING_PROCESSES`] of them (the oldest dropped first). Other events (errors, run
//! started/stopped) are never dropped; stats keep only the latest.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use crossbeam_channel::{SendTimeoutError, Sender, TrySendError};

use super::protocol::{Event, Health, SampleBatch};

/// Called (from the sampler thread) when events were delivered, with `true` when they were only
/// samples and stats: lets a UI sleep until there is something to show instead of polling (and
/// ignore mere data while its view is frozen).
pub type Waker = std::sync::Arc<dyn Fn(bool) + Send + Sync>;

/// Process snapshots (`Event::Processes`) that wait for a slow consumer at most: a minute of
/// one device's, read once a second.
pub(crate) const MAX_WAITING_PROCESSES: usize = 64;

pub(crate) struct Outbox {
    tx: Sender<Event>,
    queue: VecDeque<Event>,
    stats: Option<Health>,
    queued_values: usize,
    cap_values: usize,
    gap_next: HashSet<(u64, usize)>,
    pub dropped_samples: u64,
    pub dropped_batches: u64,
    waker: Option<Waker>,
}

impl Outbox {
    pub(crate) fn with_waker(mut self, waker: Option<Waker>) -> Outbox {
        self.waker = waker;
        self
    }

    pub(crate) fn new(tx: Sender<Event>, cap_values: usize) -> Outbox {
        Outbox {
            tx,
            queue: VecDeque::new(),
            stats: None,
            queued_values: 0,
            cap_values,
            gap_next: HashSet::new(),
            dropped_samples: 0,
            dropped_batches: 0,
            waker: None,
        }
    }

    pub(crate) fn push(&mut self, ev: Event) {
        match ev {
            Event::Samples(b) => self.push_samples(b),
            Event::Health(s) => self.stats = Some(s),
            Event::Processes(p) => {
                self.queue.push_back(Event::Processes(p));
                let waiting = self.queue.iter().filter(|e| matches!(e, Event::Processes(_))).count();
                if waiting > MAX_WAITING_PROCESSES
                    && let Some(i) = self.queue.iter().position(|e| matches!(e, Event::Processes(_)))
                {
                    self.queue.remove(i);
                }
            }
            other => self.queue.push_back(other),
        }
        self.flush();
    }

    /// A run's last health, queued in order (ahead of its stop, which a consumer may stop
    /// listening at) in place of a health still waiting for room.
    pub(crate) fn push_last_health(&mut self, s: crate::Health) {
        self.stats = None;
        self.queue.push_back(Event::Health(s));
        self.flush();
    }

    fn push_samples(&mut self, mut b: SampleBatch) {
        if b.timestamps.is_empty() {
            return;
        }
        if self.gap_next.remove(&(b.run, b.stream)) {
            b.gap_before = true;
        }
        self.queued_values += b.values.len();
        // Coalesce with the newest waiting batch of the same stream, unless another kind of event
        // sits between them.
        for ev in self.queue.iter_mut().rev() {
            match ev {
                Event::Samples(q) if q.run == b.run && q.stream == b.stream => {
                    if !b.gap_before {
                        q.timestamps.extend_from_slice(&b.timestamps);
                        q.values.extend_from_slice(&b.values);
                        self.enforce_cap();
                        return;
                    }
                    break;
                }
                Event::Samples(_) => continue,
                _ => break,
            }
        }
        self.queue.push_back(Event::Samples(b));
        self.enforce_cap();
    }

    fn enforce_cap(&mut self) {
        while self.queued_values > self.cap_values {
            let Some(i) = self.queue.iter().position(|e| matches!(e, Event::Samples(_))) else { break };
            if let Some(Event::Samples(old)) = self.queue.remove(i) {
                self.queued_values -= old.values.len();
                self.dropped_samples += old.timestamps.len() as u64;
                self.dropped_batches += 1;
                // The stream's next waiting (or future) batch no longer connects.
                let next = self.queue.iter_mut().skip(i).find_map(|e| match e {
                    Event::Samples(q) if q.run == old.run && q.stream == old.stream => Some(q),
                    _ => None,
                });
                match next {
                    Some(q) => q.gap_before = true,
                    None => {
                        self.gap_next.insert((old.run, old.stream));
                    }
                }
            }
        }
    }

    /// Sends what the channel takes now.
    pub(crate) fn flush(&mut self) {
        // (anything sent, anything but samples and stats sent)
        let mut sent = (false, false);
        self.send_waiting(&mut sent);
        if sent.0
            && let Some(w) = &self.waker
        {
            w(!sent.1);
        }
    }

    fn send_waiting(&mut self, sent: &mut (bool, bool)) {
        while let Some(ev) = self.queue.pop_front() {
            let values = if let Event::Samples(b) = &ev { b.values.len() } else { 0 };
            let other = !matches!(ev, Event::Samples(_) | Event::Processes(_));
            match self.tx.try_send(ev) {
                Ok(()) => {
                    self.queued_values -= values;
                    sent.0 = true;
                    sent.1 |= other;
                }
                Err(TrySendError::Full(ev)) => {
                    self.queue.push_front(ev);
                    return;
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.queue.clear();
                    self.queued_values = 0;
                    return;
                }
            }
        }
        if let Some(s) = self.stats.take() {
            match self.tx.try_send(Event::Health(s)) {
                Ok(()) => sent.0 = true,
                Err(TrySendError::Full(Event::Health(s))) => self.stats = Some(s),
                Err(_) => {}
            }
        }
    }

    /// At shutdown: waits (up to `timeout` in total) for the consumer to take what is queued,
    /// then sends `last`.
    pub(crate) fn drain(&mut self, last: Event, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        self.queue.push_back(last);
        while let Some(ev) = self.queue.pop_front() {
            match self.tx.send_deadline(ev, deadline) {
                Ok(()) => {}
                Err(SendTimeoutError::Timeout(_) | SendTimeoutError::Disconnected(_)) => return,
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(stream: usize, n: usize, t0: i64) -> Event {
        Event::Samples(SampleBatch {
            run: 1,
            stream,
            timestamps: (0..n as i64).map(|i| t0 + i).collect(),
            values: vec![1.0; n * 2],
            gap_before: false,
        })
    }

    #[test]
    fn a_full_channel_coalesces_then_drops_whole_batches_and_counts_them() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let mut o = Outbox::new(tx, 100);
        o.push(batch(0, 10, 0)); // goes into the channel
        o.push(batch(0, 10, 10)); // waits
        o.push(batch(0, 10, 20)); // coalesced with the waiting one
        assert_eq!(o.waiting(), 1);
        assert_eq!((o.dropped_samples, o.dropped_batches), (0, 0));
        for k in 3..8 {
            o.push(batch(0, 10, k * 10)); // 20 + 10k values waiting: over the cap of 100 → drops
        }
        assert!(o.dropped_batches >= 1, "over the cap, whole batches are dropped");
        assert_eq!(o.dropped_samples % 10, 0, "only whole batches");
        // The consumer catches up: what arrives after the drop is marked as a gap.
        let mut got = Vec::new();
        while let Ok(e) = rx.try_recv() {
            got.push(e);
            o.flush();
        }
        let gaps = got.iter().filter(|e| matches!(e, Event::Samples(b) if b.gap_before)).count();
        assert_eq!(gaps, 1);
        let delivered: usize = got.iter().map(|e| if let Event::Samples(b) = e { b.timestamps.len() } else { 0 }).sum();
        assert_eq!(delivered as u64 + o.dropped_samples, 80, "every sample is delivered or counted as dropped");
    }

    #[test]
    fn errors_are_never_dropped_and_stats_keep_the_latest() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let mut o = Outbox::new(tx, 10);
        o.push(batch(0, 5, 0));
        o.push(Event::RunStopped { run: 1, reason: super::super::protocol::StopReason::Requested });
        for k in 1..20 {
            o.push(batch(0, 5, k * 5));
        }
        o.push(Event::Health(Health { ticks: 1, ..Default::default() }));
        o.push(Event::Health(Health { ticks: 2, ..Default::default() }));
        let mut got = Vec::new();
        while let Ok(e) = rx.try_recv() {
            got.push(e);
            o.flush();
        }
        assert!(got.iter().any(|e| matches!(e, Event::RunStopped { .. })));
        let stats: Vec<u64> =
            got.iter().filter_map(|e| if let Event::Health(s) = e { Some(s.ticks) } else { None }).collect();
        assert_eq!(stats, [2]);
    }

    #[test]
    fn the_waker_hears_of_deliveries_and_whether_they_were_only_data() {
        let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let c = calls.clone();
        let (tx, rx) = crossbeam_channel::bounded(8);
        let mut o =
            Outbox::new(tx, 1000).with_waker(Some(std::sync::Arc::new(move |only| c.lock().unwrap().push(only))));
        o.push(batch(0, 2, 0));
        o.push(Event::RunStopped { run: 1, reason: super::super::protocol::StopReason::Requested });
        o.push(Event::Health(Health::default()));
        assert_eq!(*calls.lock().unwrap(), [true, false, true]);
        while rx.try_recv().is_ok() {}
        o.flush();
        assert_eq!(calls.lock().unwrap().len(), 3, "nothing delivered, nobody woken");
    }

    #[test]
    fn waiting_process_snapshots_are_bounded_oldest_first_and_are_data() {
        use super::super::protocol::processes::ProcessSnapshot;
        let (tx, rx) = crossbeam_channel::bounded(1);
        let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let c = calls.clone();
        let mut o =
            Outbox::new(tx, 1000).with_waker(Some(std::sync::Arc::new(move |only| c.lock().unwrap().push(only))));
        let snap = |at_ns| Event::Processes(ProcessSnapshot { run: 1, target: 0, at_ns, processes: Vec::new() });
        for t in 0..(MAX_WAITING_PROCESSES as i64 + 10) {
            o.push(snap(t));
        }
        assert_eq!(*calls.lock().unwrap(), [true], "one delivery, of data only");
        assert_eq!(o.waiting(), MAX_WAITING_PROCESSES, "the rest wait, bounded");
        let mut got = Vec::new();
        loop {
            while let Ok(Event::Processes(p)) = rx.try_recv() {
                got.push(p.at_ns);
            }
            if o.waiting() == 0 {
                break;
            }
            o.flush();
        }
        assert_eq!(got[0], 0, "the first went straight through");
        assert_eq!(got[1], 10, "the oldest waiting ones were dropped");
        assert_eq!(got.len(), MAX_WAITING_PROCESSES + 1);
        assert!(got.windows(2).all(|w| w[0] < w[1]), "in order");
    }
}
