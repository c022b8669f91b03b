//! Markers from the running workload: a Unix datagram socket that the window, `record` and
//! `serve` listen on, in a small thread of its own (never the sampler's), handing what arrives
//! over a bounded channel to the loop that stores samples.
//!
//! The protocol, the Rust sender and the socket's path are in the `zescope-markers` crate
//! (`crates/zescope-markers`); `include/zescope_markers.h` is the same sender for C and C++.
//! docs/manual.md, "Markers", is the user's guide.
//!
//! Only the user's own processes can mark: the socket's folder must be a private directory of
//! the user's (`folder`), the socket is 0600 and one listener holds a path at a time
//! ([`bind`]), and every datagram's sender is checked (`sender`). How many markers are taken
//! is bounded ([`Limits`]).

mod bind;
mod folder;
mod limits;
mod listener;
mod sender;

pub use bind::{bind, lock_path};
pub use limits::Limits;
pub use listener::{Counts, Listener, Received};
pub use zescope_markers::protocol::MAX_NAME;
pub use zescope_markers::{ENV, Kind, socket_path};

#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use zescope_markers::protocol::{self, Kind, MAX_MESSAGE, Malformed};

    proptest! {
        /// Any bytes at all: a marker or a reason, never a panic; what parses is within bounds.
        #[test]
        fn any_datagram_parses_or_says_why(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            match protocol::parse(&bytes) {
                Ok(m) => {
                    prop_assert!(bytes.len() <= MAX_MESSAGE && !m.name.is_empty());
                    prop_assert!(m.t_ns <= i64::MAX as u64);
                }
                Err(Malformed::TooLong) => prop_assert!(bytes.len() > MAX_MESSAGE),
                Err(_) => {}
            }
        }

        /// Whatever name and time a sender encodes comes back as it was (names cut to 200 bytes).
        #[test]
        fn encoded_markers_parse_back(name in "[^\\p{Cc}]{1,80}", t in 0..=i64::MAX as u64, k in 0..3u8) {
            let kind = [Kind::Instant, Kind::Begin, Kind::End][k as usize];
            let mut buf = [0u8; MAX_MESSAGE];
            let n = protocol::encode(&mut buf, kind, t, &name);
            let m = protocol::parse(&buf[..n]).unwrap();
            prop_assert_eq!((m.kind, m.t_ns), (kind, t));
            prop_assert!(name.starts_with(m.name) && m.name.len() >= name.len().min(197));
        }
    }
}
