use super::*;
use zescope_sampler::{RunConfig, StreamInfo};

fn run(streams: usize) -> RunInfo {
    RunInfo {
        run: 1,
        config: RunConfig {
            targets: Vec::new(),
            interval: Duration::from_millis(1),
            via: Default::default(),
            telemetry: false,
        },
        devices: Vec::new(),
        simulated: true,
        streams: (0..streams)
            .map(|index| StreamInfo {
                index,
                target: 0,
                device: "d".into(),
                group: format!("g{index}"),
                layout: "l".into(),
                series: Vec::new(),
                read_path: zescope_sampler::ReadPath::Mapped,
            })
            .collect(),
        imports: 0,
        notices: Vec::new(),
    }
}

/// `n` rows of `stream` sampled `age` ago.
fn rows_aged(stream: usize, n: usize, age: Duration) -> SampleBatch {
    let t0 = zescope_sampler::monotonic_ns() - age.as_nanos() as i64;
    SampleBatch {
        run: 1,
        stream,
        timestamps: (0..n as i64).map(|i| t0 + i).collect(),
        values: vec![1.0; n],
        gap_before: false,
    }
}

/// `n` fresh rows of `stream`.
fn rows(stream: usize, n: usize) -> SampleBatch {
    rows_aged(stream, n, Duration::ZERO)
}

fn batch_of(m: &Message) -> wire::Batch {
    wire::decode_batch(&m.clone().into_data()).unwrap()
}

#[test]
fn events_are_numbered_without_holes_and_batches_carry_their_streams_ordinals() {
    let feed = Feed::batching(1 << 20, access::Access::loopback_only(), Duration::ZERO);
    assert!(feed.hello(Duration::ZERO, 2).is_none());
    feed.started(&run(2), &[]);
    assert!(feed.hello(Duration::ZERO, 2).is_some());
    feed.batch(&rows(0, 3));
    feed.event(&Event::Notice("n".into()));
    feed.batch(&rows(1, 2));
    feed.batch(&rows(0, 4));
    feed.batch(&rows(9, 4)); // no such stream: not the run's, dropped
    let t = feed.take(0, usize::MAX, Duration::ZERO);
    assert_eq!((t.gap, t.first, t.frames.len(), t.ended), (None, 0, 4, false));
    let b: Vec<(u64, usize, u64)> =
        [0, 2, 3].iter().map(|&i| batch_of(&t.frames[i])).map(|b| (b.seq, b.samples.stream, b.first)).collect();
    assert_eq!(b, [(0, 0, 0), (2, 1, 0), (3, 0, 3)]);
    // Resuming after the second: the third and fourth.
    let t = feed.take(2, usize::MAX, Duration::ZERO);
    assert_eq!((t.first, t.frames.len()), (2, 2));
    feed.end();
    assert!(feed.take(4, usize::MAX, Duration::ZERO).ended);
    assert!(feed.take(3, usize::MAX, Duration::ZERO).ended, "the last one taken: nothing comes after");
    assert!(!feed.take(2, 1, Duration::ZERO).ended, "one taken, one left to send");
}

#[test]
fn the_oldest_go_first_and_a_viewer_that_asks_for_them_is_told() {
    let one = crate::live::packed::batch(0, 0, &rows(0, 10)).len();
    let feed = Feed::batching(3 * one, access::Access::loopback_only(), Duration::ZERO);
    feed.started(&run(1), &[]);
    for _ in 0..5 {
        feed.batch(&rows(0, 10));
    }
    assert_eq!(feed.span(), (2, 5));
    let t = feed.take(0, usize::MAX, Duration::ZERO);
    assert_eq!((t.gap, t.first, t.frames.len()), (Some((0, 2)), 2, 3));
    assert_eq!(batch_of(&t.frames[0]).first, 20, "ordinals count the samples no longer held");
    // A take of at most one frame's bytes still takes one.
    assert_eq!(feed.take(2, 1, Duration::ZERO).frames.len(), 1);
}

#[test]
fn at_most_max_viewers_watch_and_a_place_comes_back() {
    let feed = Feed::new(1 << 20, access::Access::loopback_only());
    let places: Vec<Watching> = (0..MAX_VIEWERS).map(|_| feed.watch().expect("a place")).collect();
    assert!(feed.watch().is_none());
    drop(places);
    assert_eq!(feed.viewers(), 0);
    assert!(feed.watch().is_some());
}

#[test]
fn rows_wait_for_a_full_batch_or_their_time_and_never_pass_another_event() {
    let feed = Feed::batching(1 << 20, access::Access::loopback_only(), Duration::from_secs(3600));
    feed.started(&run(2), &[]);
    for _ in 0..100 {
        feed.batch(&rows(0, 3));
    }
    feed.batch(&rows(1, 2));
    let t = feed.take(0, usize::MAX, Duration::ZERO);
    let got: Vec<(usize, u64, usize)> =
        t.frames.iter().map(batch_of).map(|b| (b.samples.stream, b.first, b.samples.timestamps.len())).collect();
    assert_eq!(got, [(0, 0, BATCH_ROWS)], "one full batch; the rest waits");
    // Another event sends what waits first, in the order the streams are numbered.
    feed.event(&Event::Notice("n".into()));
    let mut gap = rows(0, 2);
    gap.gap_before = true;
    feed.batch(&rows(0, 1));
    feed.batch(&gap);
    feed.end();
    let t = feed.take(1, usize::MAX, Duration::ZERO);
    let n = t.frames.len();
    let batches: Vec<(usize, u64, usize, bool)> = t
        .frames
        .iter()
        .filter(|f| f.is_binary())
        .map(batch_of)
        .map(|b| (b.samples.stream, b.first, b.samples.timestamps.len(), b.samples.gap_before))
        .collect();
    assert_eq!(
        batches,
        [(0, 256, 44, false), (1, 0, 2, false), (0, 300, 1, false), (0, 301, 2, true)],
        "a gap starts a batch of its own; the end sends the rest"
    );
    assert!(t.frames[2].is_text() && n == 5 && t.ended);
}

#[test]
fn rows_that_waited_their_time_go_though_nothing_more_comes() {
    let feed = Feed::batching(1 << 20, access::Access::loopback_only(), Duration::from_millis(20));
    feed.started(&run(1), &[]);
    feed.batch(&rows(0, 3));
    assert!(feed.take(0, usize::MAX, Duration::ZERO).frames.is_empty(), "they wait");
    std::thread::sleep(Duration::from_millis(40));
    let t = feed.take(0, usize::MAX, Duration::ZERO);
    assert_eq!(t.frames.iter().map(batch_of).map(|b| b.samples.timestamps.len()).collect::<Vec<_>>(), [3]);
}

#[test]
fn rows_count_their_age_from_their_samples_time() {
    let feed = Feed::batching(1 << 20, access::Access::loopback_only(), Duration::from_millis(500));
    feed.started(&run(2), &[]);
    // A batch the sampler gathered over the last second: old enough already, sent as it comes.
    feed.batch(&rows_aged(0, 3, Duration::from_secs(1)));
    // Fresh rows, and rows stamped ahead of the host's clock (a device clock mapped a little
    // ahead): they wait, the latter from when they came in.
    feed.batch(&rows(1, 2));
    let ahead = SampleBatch { timestamps: vec![zescope_sampler::monotonic_ns() + 60_000_000_000], ..rows(1, 1) };
    feed.batch(&ahead);
    let t = feed.take(0, usize::MAX, Duration::ZERO);
    let got: Vec<(usize, usize)> =
        t.frames.iter().map(batch_of).map(|b| (b.samples.stream, b.samples.timestamps.len())).collect();
    assert_eq!(got, [(0, 3)]);
    // A viewer waiting for more is woken when they are due, not at the end of its wait.
    let asked = Instant::now();
    let t = feed.take(1, usize::MAX, Duration::from_secs(30));
    let waited = asked.elapsed();
    let got: Vec<(usize, usize)> =
        t.frames.iter().map(batch_of).map(|b| (b.samples.stream, b.samples.timestamps.len())).collect();
    assert_eq!(got, [(1, 3)]);
    assert!(waited >= Duration::from_millis(400) && waited < Duration::from_secs(20), "woken after {waited:?}");
}

#[test]
fn a_viewer_s_ping_is_answered_as_it_comes_not_after_the_feed_s_next_event() {
    // An idle feed (a run, no events): the viewer's thread waits on the feed; a ping must not
    // wait for the feed's next event or the thread's timeout (50 ms) to be answered, or the
    // window's "rtt" tells the server's waiting, not the link.
    let feed = Feed::new(1 << 20, access::Access::loopback_only());
    feed.started(&run(1), &[]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (socket, peer) = listener.accept().unwrap();
    let server = Arc::clone(&feed);
    let request = viewer::Request { from: 0, feed: None, protocol: 2 };
    let thread = std::thread::spawn(move || viewer::watch(&server, socket, peer, &request));
    client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut ws = tungstenite::WebSocket::from_raw_socket(client, tungstenite::protocol::Role::Client, None);
    assert!(ws.read().unwrap().is_text(), "the hello");
    let mut rtts: Vec<Duration> = (0..10)
        .map(|i| {
            std::thread::sleep(Duration::from_millis(7 + 3 * i));
            let sent = Instant::now();
            ws.send(Message::Ping(Vec::new().into())).unwrap();
            match ws.read().unwrap() {
                Message::Pong(_) => sent.elapsed(),
                m => panic!("only the pong can come from an idle feed, not {m:?}"),
            }
        })
        .collect();
    rtts.sort();
    // Waiting for the feed, the answers would spread over the 50 ms wait (median ~25 ms).
    assert!(rtts[5] < Duration::from_millis(10), "pings answered after {rtts:?}");
    feed.end();
    drop(ws);
    thread.join().unwrap();
}
