#!/usr/bin/env python3
"""Reads a Perfetto trace with Perfetto's own protos (PyPI `perfetto`: perfetto_trace_pb2) and
prints what `tests/commands/perfetto.rs` checks, as JSON on stdout:

- `counters`: per counter track (by name) its unit, parent names, sample count, first and last
  timestamp and value (also as the double's bits); values resolved as trace_processor resolves them (a TYPE_COUNTER event's
  `double_counter_value` on its track, `extra_double_counter_values` on the
  `extra_double_counter_track_uuids` of the event or of its sequence's TrackEventDefaults);
- `slices`: per slice track path (names from the root, joined with "/") a list with one entry
  per track of that path (in the order they were declared): its events in file order,
  [type, timestamp, name];
- `clocks`: the clock snapshot's clock ids and times; `primary`: its primary clock, if set;
- `metadata`: the debug annotations of the instants named "zescope session", flattened;
- `problems`: what trace_processor would reject (a packet on a sequence before its incremental
  state was cleared, a timestamp not on CLOCK_MONOTONIC, an event on an unknown track).

Exit status 3 when the `perfetto` package is missing (the test then skips, loudly).
"""

import json
import struct
import sys

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:  # pragma: no cover
    print(f"the python package `perfetto` is missing: {e}", file=sys.stderr)
    sys.exit(3)

MONOTONIC = 3
TE = pb.TrackEvent


def bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def annotations(items, prefix=""):
    out = {}
    for a in items:
        key = prefix + a.name
        if a.dict_entries:
            out.update(annotations(a.dict_entries, key + "."))
        elif a.HasField("string_value"):
            out[key] = a.string_value
        elif a.HasField("int_value"):
            out[key] = a.int_value
        elif a.HasField("bool_value"):
            out[key] = a.bool_value
        elif a.HasField("uint_value"):
            out[key] = a.uint_value
        elif a.HasField("double_value"):
            out[key] = a.double_value
    return out


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tracks = {}  # uuid -> descriptor
    defaults = {}  # sequence -> TracePacketDefaults
    cleared = set()
    problems = []
    counters = {}  # uuid -> [count, first_ts, first, last_ts, last]
    events = {}  # uuid -> [[type, ts, name]]
    clocks, primary, metadata = [], None, {}

    for p in trace.packet:
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
    for i, p in enumerate(trace.packet):
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            cleared.add(seq)
        if p.HasField("trace_packet_defaults"):
            defaults[seq] = p.trace_packet_defaults
        if p.HasField("clock_snapshot"):
            clocks = [[c.clock_id, c.timestamp] for c in p.clock_snapshot.clocks]
            if p.clock_snapshot.HasField("primary_trace_clock"):
                primary = p.clock_snapshot.primary_trace_clock
        if not p.HasField("track_event"):
            continue
        ev = p.track_event
        d = defaults.get(seq)
        if p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE and seq not in cleared:
            problems.append(f"packet {i}: sequence {seq} needs incremental state never cleared")
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (
            d.timestamp_clock_id if d is not None and d.HasField("timestamp_clock_id") else None)
        if clock != MONOTONIC:
            problems.append(f"packet {i}: timestamp on clock {clock}, not CLOCK_MONOTONIC")
        uuid = ev.track_uuid if ev.HasField("track_uuid") else (
            d.track_event_defaults.track_uuid if d is not None else 0)
        ts = p.timestamp
        if ev.type == TE.TYPE_COUNTER:
            values = [(uuid, ev.double_counter_value)]
            extra = list(ev.extra_double_counter_track_uuids) or (
                list(d.track_event_defaults.extra_double_counter_track_uuids) if d is not None else [])
            if len(extra) < len(ev.extra_double_counter_values):
                problems.append(f"packet {i}: more extra values than tracks")
            values += list(zip(extra, ev.extra_double_counter_values))
            for u, v in values:
                if u not in tracks or not tracks[u].HasField("counter"):
                    problems.append(f"packet {i}: a counter value for track {u}, not a counter track")
                    continue
                c = counters.setdefault(u, [0, ts, v, ts, v])
                c[0] += 1
                c[3], c[4] = ts, v
        else:
            if uuid not in tracks:
                problems.append(f"packet {i}: an event on unknown track {uuid}")
            kind = {TE.TYPE_SLICE_BEGIN: "begin", TE.TYPE_SLICE_END: "end", TE.TYPE_INSTANT: "instant"}.get(ev.type, str(ev.type))
            events.setdefault(uuid, []).append([kind, ts, ev.name])
            if ev.name == "zescope session":
                metadata = annotations(ev.debug_annotations)

    def path(uuid):
        names = []
        while uuid in tracks:
            names.append(tracks[uuid].name)
            uuid = tracks[uuid].parent_uuid if tracks[uuid].HasField("parent_uuid") else None
        return list(reversed(names))

    out = {
        "counters": {},
        "slices": {},
        "clocks": clocks,
        "primary": primary,
        "metadata": metadata,
        "problems": problems,
    }
    for u, (n, t0, v0, t1, v1) in counters.items():
        t = tracks[u]
        out["counters"][t.name] = {
            "unit": t.counter.unit_name,
            "parents": path(u)[:-1],
            "count": n,
            "first_ts": t0,
            "first": v0,
            "last_ts": t1,
            "last": v1,
            # The doubles' bits, compared exactly (JSON's decimal form need not round-trip).
            "first_bits": bits(v0),
            "last_bits": bits(v1),
        }
    for u in sorted(events):
        out["slices"].setdefault("/".join(path(u)), []).append(events[u])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
