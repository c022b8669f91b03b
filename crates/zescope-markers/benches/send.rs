//! What a workload pays per marker: `Markers::instant` when nobody listens (the common case:
//! zescope is not running) and when zescope listens (a datagram to a socket someone drains).
//! The no-listener case reads the clock and compares it with the next time to retry the connect;
//! no syscall but the vDSO clock read. The listening case includes the `send` syscall and the
//! copy into the receiver's queue (a thread here drains it as zescope's listener would).
//!
//!     cargo bench -p zescope-markers --bench send

use std::hint::black_box;
use std::os::unix::net::UnixDatagram;

use criterion::{Criterion, criterion_group, criterion_main};
use zescope_markers::Sender;

fn send(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("zm-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("markers.sock");
    let _ = std::fs::remove_file(&path);

    let nobody = Sender::connect_to(Some(path.clone()));
    c.bench_function("markers/instant_nobody_listens", |b| b.iter(|| nobody.instant(black_box("phase 2"))));

    let rx = UnixDatagram::bind(&path).unwrap();
    let drain = std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok(n) = rx.recv(&mut buf) {
            if &buf[..n] == b"stop" {
                break;
            }
        }
    });
    let listened = Sender::connect_to(Some(path.clone()));
    c.bench_function("markers/instant_listened", |b| b.iter(|| listened.instant(black_box("phase 2"))));
    let stop = UnixDatagram::unbound().unwrap();
    stop.send_to(b"stop", &path).unwrap();
    drain.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, send);
criterion_main!(benches);
