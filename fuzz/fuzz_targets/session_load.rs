//! Fuzz the session loader: any bytes must give a session or an error, never a panic, a hang or
//! an unbounded allocation. A loaded session is also restored into a store, as opening does.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(session) = zescope::session::from_slice(data) {
            let mut store = zescope::store::Store::new(64 << 20);
            let _ = session.restore_into(&mut store);
        }
    });
}
