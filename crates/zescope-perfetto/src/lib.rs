//! A small streaming writer of Perfetto traces (the protobuf format ui.perfetto.dev and
//! `trace_processor` read), for zescope's counters: tracks nested under parents, counter tracks
//! with units, slices and instants with arguments, and a clock snapshot.
//!
//! It writes exactly the fields it needs, by hand, with the field numbers of Perfetto's published
//! protos (`fields.rs` names each message and field): `TracePacket` with `timestamp`,
//! `timestamp_clock_id`, `trusted_packet_sequence_id`, `sequence_flags` and
//! `trace_packet_defaults`; `TrackDescriptor` with a `CounterDescriptor`; `TrackEvent` of type
//! `TYPE_COUNTER` (`double_counter_value` and `extra_double_counter_values`), `TYPE_SLICE_BEGIN`,
//! `TYPE_SLICE_END` and `TYPE_INSTANT` with `debug_annotations`; `ClockSnapshot`. Why not a
//! crate or generated code: `docs/dependencies.md`.
//!
//! Packets go to the writer as they are made; nothing of the trace is held, so a trace of any
//! size takes the memory of one packet. The values of one stream's series share a packet: a
//! [`CounterSet`] is a packet sequence whose `TrackEventDefaults` name its counter tracks (the
//! first as `track_uuid`, the rest as `extra_double_counter_track_uuids`), so a row costs its
//! timestamp and 10 bytes a value. A NaN (a series with no value at that time) is no point on
//! its track: that row names its tracks itself.
//!
//! ```no_run
//! use zescope_perfetto::{Clock, TraceWriter};
//! let file = std::io::BufWriter::new(std::fs::File::create("out.pftrace")?);
//! let mut w = TraceWriter::new(file);
//! w.clock_snapshot(&[(Clock::Monotonic, 1_000), (Clock::Boottime, 1_500)], None)?;
//! let gpu = w.track(None, "GPU", "")?;
//! let freq = w.counter_track(Some(gpu), "GPU/Telemetry/Frequency", "MHz", "")?;
//! let set = w.counter_set(&[freq])?;
//! w.counters(&set, 2_000, &[1300.0])?;
//! w.into_inner()?;
//! # Ok::<(), std::io::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

mod fields;
mod wire;
mod writer;

pub use writer::{Clock, CounterSet, TraceWriter, TrackId, Value};

#[cfg(test)]
mod tests;
