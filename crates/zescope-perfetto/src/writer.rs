//! [`TraceWriter`]: packets appended to any `Write` as they are made, nothing of the trace held.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::fields::{annotation, clock_snapshot, counter, defaults, event, event_defaults, packet, trace, track};
use crate::wire;

/// The sequence of every packet that is not a counter row: track descriptors, slices, instants,
/// the clock snapshot. It keeps no incremental state.
const EVENTS_SEQUENCE: u32 = 1;

/// A clock of the machine, as Perfetto's `BuiltinClock` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// `CLOCK_REALTIME`: wall-clock time since the Unix epoch.
    Realtime = 1,
    /// `CLOCK_MONOTONIC`: every timestamp this writer writes is on it.
    Monotonic = 3,
    /// `CLOCK_BOOTTIME`: monotonic time including suspend; Perfetto's default trace clock.
    Boottime = 6,
}

/// A track (its `uuid`), as [`TraceWriter::track`] and [`TraceWriter::counter_track`] return it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrackId(u64);

/// A value of a debug annotation (shown as an event's arguments).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text.
    Text(String),
    /// A signed integer.
    Int(i64),
    /// True or false.
    Bool(bool),
    /// Named values, nested.
    Dict(Vec<(String, Value)>),
}

/// Counter tracks whose values are written together, one packet per time
/// ([`TraceWriter::counters`]); made by [`TraceWriter::counter_set`].
#[derive(Debug)]
pub struct CounterSet {
    sequence: u32,
    tracks: Vec<TrackId>,
}

impl CounterSet {
    /// How many values each row takes.
    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    /// A set of no tracks (never made: [`TraceWriter::counter_set`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty()
    }
}

/// Writes a Perfetto trace (a `Trace` message: a run of `TracePacket`s) to `W` packet by packet.
/// Every timestamp is in ns on `CLOCK_MONOTONIC`; a [`TraceWriter::clock_snapshot`] relates it to
/// the machine's other clocks. Give it a buffered writer: it writes each packet with one call.
pub struct TraceWriter<W: Write> {
    out: W,
    /// The packet being built.
    packet: Vec<u8>,
    /// A nested message being built (a track event, a descriptor).
    body: Vec<u8>,
    /// A message nested in `body`.
    inner: Vec<u8>,
    next_uuid: u64,
    next_sequence: u32,
    /// Children made so far per parent track: the next child's rank.
    children: HashMap<u64, i32>,
    bytes: u64,
}

impl<W: Write> TraceWriter<W> {
    /// A writer of an empty trace to `out`.
    pub fn new(out: W) -> TraceWriter<W> {
        TraceWriter {
            out,
            packet: Vec::with_capacity(4096),
            body: Vec::with_capacity(4096),
            inner: Vec::with_capacity(256),
            next_uuid: 1,
            next_sequence: EVENTS_SEQUENCE + 1,
            children: HashMap::new(),
            bytes: 0,
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Writes the packet built in `self.packet` as one `Trace.packet` field.
    fn emit(&mut self) -> io::Result<()> {
        // The field's tag and length, on the stack: this runs once a sample.
        let mut head = [0u8; 11];
        head[0] = (trace::PACKET << 3 | 2) as u8;
        let (mut n, mut len) = (1, self.packet.len() as u64);
        while len >= 0x80 {
            head[n] = (len as u8) | 0x80;
            len >>= 7;
            n += 1;
        }
        head[n] = len as u8;
        self.out.write_all(&head[..=n])?;
        self.out.write_all(&self.packet)?;
        self.bytes += (n + 1 + self.packet.len()) as u64;
        self.packet.clear();
        Ok(())
    }

    /// A clock snapshot: the same instant read on each of `clocks` (ns), so Perfetto maps
    /// `CLOCK_MONOTONIC` onto the others and merges this trace with others of the same machine
    /// and boot. `primary`: the clock the trace's timeline is shown in (Perfetto's default,
    /// `CLOCK_BOOTTIME`, when `None`; then the snapshot must hold it).
    pub fn clock_snapshot(&mut self, clocks: &[(Clock, u64)], primary: Option<Clock>) -> io::Result<()> {
        self.body.clear();
        for &(clock, t) in clocks {
            self.inner.clear();
            wire::uint(&mut self.inner, clock_snapshot::CLOCK_ID, clock as u64);
            wire::uint(&mut self.inner, clock_snapshot::TIMESTAMP, t);
            wire::bytes(&mut self.body, clock_snapshot::CLOCKS, &self.inner);
        }
        if let Some(p) = primary {
            wire::uint(&mut self.body, clock_snapshot::PRIMARY_TRACE_CLOCK, p as u64);
        }
        wire::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(EVENTS_SEQUENCE));
        wire::bytes(&mut self.packet, packet::CLOCK_SNAPSHOT, &self.body);
        self.emit()
    }

    /// A new track's uuid and its descriptor's common fields in `self.body`.
    fn descriptor(&mut self, parent: Option<TrackId>, name: &str, description: &str) -> TrackId {
        let id = TrackId(self.next_uuid);
        self.next_uuid += 1;
        self.body.clear();
        wire::uint(&mut self.body, track::UUID, id.0);
        wire::string(&mut self.body, track::NAME, name);
        if let Some(p) = parent {
            wire::uint(&mut self.body, track::PARENT_UUID, p.0);
            let rank = self.children.entry(p.0).or_insert(0);
            wire::uint(&mut self.body, track::SIBLING_ORDER_RANK, *rank as u64);
            *rank += 1;
        }
        if !description.is_empty() {
            wire::string(&mut self.body, track::DESCRIPTION, description);
        }
        id
    }

    fn emit_descriptor(&mut self) -> io::Result<()> {
        wire::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(EVENTS_SEQUENCE));
        wire::bytes(&mut self.packet, packet::TRACK_DESCRIPTOR, &self.body);
        self.emit()
    }

    /// A track for slices and instants (or a parent of other tracks), under `parent`; its
    /// children are shown in the order they are made.
    pub fn track(&mut self, parent: Option<TrackId>, name: &str, description: &str) -> io::Result<TrackId> {
        let id = self.descriptor(parent, name, description);
        wire::uint(&mut self.body, track::CHILD_ORDERING, track::ORDERING_EXPLICIT);
        self.emit_descriptor()?;
        Ok(id)
    }

    /// A counter track under `parent`, its values in `unit` (the unit's name; "ns" and "B" are
    /// also given as Perfetto's time and size units).
    pub fn counter_track(
        &mut self,
        parent: Option<TrackId>,
        name: &str,
        unit: &str,
        description: &str,
    ) -> io::Result<TrackId> {
        let id = self.descriptor(parent, name, description);
        self.inner.clear();
        let builtin = match unit {
            "ns" => Some(counter::UNIT_TIME_NS),
            "B" => Some(counter::UNIT_SIZE_BYTES),
            "" => Some(counter::UNIT_COUNT),
            _ => None,
        };
        if let Some(u) = builtin {
            wire::uint(&mut self.inner, counter::UNIT, u);
        }
        if !unit.is_empty() {
            wire::string(&mut self.inner, counter::UNIT_NAME, unit);
        }
        wire::bytes(&mut self.body, track::COUNTER, &self.inner);
        self.emit_descriptor()?;
        Ok(id)
    }

    /// Counter tracks whose values come together (one stream's series): a packet sequence of
    /// their own whose defaults name the tracks, so a row is its time and its values (10 bytes
    /// a value). Refuses an empty list.
    pub fn counter_set(&mut self, tracks: &[TrackId]) -> io::Result<CounterSet> {
        let Some((first, rest)) = tracks.split_first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a counter set needs at least one track"));
        };
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.inner.clear();
        wire::uint(&mut self.inner, event_defaults::TRACK_UUID, first.0);
        for t in rest {
            wire::uint(&mut self.inner, event_defaults::EXTRA_DOUBLE_COUNTER_TRACK_UUIDS, t.0);
        }
        self.body.clear();
        wire::uint(&mut self.body, defaults::TIMESTAMP_CLOCK_ID, Clock::Monotonic as u64);
        wire::bytes(&mut self.body, defaults::TRACK_EVENT_DEFAULTS, &self.inner);
        wire::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(sequence));
        wire::uint(&mut self.packet, packet::SEQUENCE_FLAGS, packet::SEQ_INCREMENTAL_STATE_CLEARED);
        wire::bytes(&mut self.packet, packet::TRACE_PACKET_DEFAULTS, &self.body);
        self.emit()?;
        Ok(CounterSet { sequence, tracks: tracks.to_vec() })
    }

    /// One row of a counter set: `values[k]` for its `k`-th track at `t_ns`. A NaN is no value
    /// (a series with nothing at that time): its track gets no point, since a counter track has
    /// no gap and a NaN is no value anything took; a row of NaN only writes nothing. A row of
    /// another length than the set's is refused.
    pub fn counters(&mut self, set: &CounterSet, t_ns: u64, values: &[f64]) -> io::Result<()> {
        if values.len() != set.tracks.len() || values.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a row of {} values for a counter set of {} tracks", values.len(), set.tracks.len()),
            ));
        }
        if values.iter().any(|v| v.is_nan()) {
            return self.counters_in_part(set, t_ns, values);
        }
        let (first, rest) = values.split_first().expect("not empty");
        wire::uint(&mut self.packet, packet::TIMESTAMP, t_ns);
        wire::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(set.sequence));
        wire::uint(&mut self.packet, packet::SEQUENCE_FLAGS, packet::SEQ_NEEDS_INCREMENTAL_STATE);
        // The track event straight into the packet (this runs once a sample): its length is
        // known, the type (2 bytes) and a tag of 2 bytes + 8 per value.
        let body = 2 + 10 * values.len();
        wire::len_head(&mut self.packet, packet::TRACK_EVENT, body);
        let start = self.packet.len();
        wire::uint(&mut self.packet, event::TYPE, event::TYPE_COUNTER);
        wire::double(&mut self.packet, event::DOUBLE_COUNTER_VALUE, *first);
        for &v in rest {
            wire::double(&mut self.packet, event::EXTRA_DOUBLE_COUNTER_VALUES, v);
        }
        debug_assert_eq!(self.packet.len() - start, body);
        self.emit()
    }

    /// A row with NaNs: the values there are, each with its track named in the event (which
    /// stands instead of the set's defaults for this row).
    fn counters_in_part(&mut self, set: &CounterSet, t_ns: u64, values: &[f64]) -> io::Result<()> {
        let mut there = set.tracks.iter().zip(values).filter(|(_, v)| !v.is_nan());
        let Some((first_track, first)) = there.next() else { return Ok(()) };
        self.body.clear();
        wire::uint(&mut self.body, event::TYPE, event::TYPE_COUNTER);
        wire::uint(&mut self.body, event::TRACK_UUID, first_track.0);
        wire::double(&mut self.body, event::DOUBLE_COUNTER_VALUE, *first);
        self.inner.clear();
        for (t, &v) in there {
            wire::uint(&mut self.body, event::EXTRA_DOUBLE_COUNTER_TRACK_UUIDS, t.0);
            wire::double(&mut self.inner, event::EXTRA_DOUBLE_COUNTER_VALUES, v);
        }
        self.body.extend_from_slice(&self.inner);
        wire::uint(&mut self.packet, packet::TIMESTAMP, t_ns);
        wire::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(set.sequence));
        wire::uint(&mut self.packet, packet::SEQUENCE_FLAGS, packet::SEQ_NEEDS_INCREMENTAL_STATE);
        wire::bytes(&mut self.packet, packet::TRACK_EVENT, &self.body);
        self.emit()
    }

    /// A track event on `track` at `t_ns`, its body (after type and track) already in `self.body`.
    fn emit_event(&mut self, t_ns: u64) -> io::Result<()> {
        wire::uint(&mut self.packet, packet::TIMESTAMP, t_ns);
        wire::uint(&mut self.packet, packet::TIMESTAMP_CLOCK_ID, Clock::Monotonic as u64);
        wire::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(EVENTS_SEQUENCE));
        wire::bytes(&mut self.packet, packet::TRACK_EVENT, &self.body);
        self.emit()
    }

    fn event_head(&mut self, kind: u64, track: TrackId, name: Option<&str>, args: &[(String, Value)]) {
        self.body.clear();
        wire::uint(&mut self.body, event::TYPE, kind);
        wire::uint(&mut self.body, event::TRACK_UUID, track.0);
        if let Some(n) = name {
            wire::string(&mut self.body, event::NAME, n);
        }
        for (k, v) in args {
            self.inner.clear();
            encode_annotation(&mut self.inner, k, v);
            wire::bytes(&mut self.body, event::DEBUG_ANNOTATIONS, &self.inner);
        }
    }

    /// The start of a slice named `name` on `track` at `t_ns`, with `args`. Slices on one track
    /// must nest: one that begins inside another ends before it.
    pub fn slice_begin(&mut self, track: TrackId, t_ns: u64, name: &str, args: &[(String, Value)]) -> io::Result<()> {
        self.event_head(event::TYPE_SLICE_BEGIN, track, Some(name), args);
        self.emit_event(t_ns)
    }

    /// The end of the newest open slice on `track`, at `t_ns`.
    pub fn slice_end(&mut self, track: TrackId, t_ns: u64) -> io::Result<()> {
        self.event_head(event::TYPE_SLICE_END, track, None, &[]);
        self.emit_event(t_ns)
    }

    /// An instant named `name` on `track` at `t_ns`, with `args`.
    pub fn instant(&mut self, track: TrackId, t_ns: u64, name: &str, args: &[(String, Value)]) -> io::Result<()> {
        self.event_head(event::TYPE_INSTANT, track, Some(name), args);
        self.emit_event(t_ns)
    }

    /// Flushes the writer underneath.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The writer underneath (flushed).
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A `DebugAnnotation` named `name` holding `value`.
fn encode_annotation(out: &mut Vec<u8>, name: &str, value: &Value) {
    wire::string(out, annotation::NAME, name);
    match value {
        Value::Text(s) => wire::string(out, annotation::STRING_VALUE, s),
        Value::Int(i) => wire::int(out, annotation::INT_VALUE, *i),
        Value::Bool(b) => wire::uint(out, annotation::BOOL_VALUE, u64::from(*b)),
        Value::Dict(entries) => {
            for (k, v) in entries {
                let mut entry = Vec::new();
                encode_annotation(&mut entry, k, v);
                wire::bytes(out, annotation::DICT_ENTRIES, &entry);
            }
        }
    }
}
