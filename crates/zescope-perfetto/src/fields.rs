//! The field numbers written, from Perfetto's published protos (`protos/perfetto/trace/…`, as
//! the PyPI package `perfetto` ships them in `perfetto_trace_pb2`). Only the fields zescope writes
//! are here; each module is one message.

/// `Trace` (`trace.proto`): a file is a `Trace`, a run of `packet` fields.
pub(crate) mod trace {
    /// `repeated TracePacket packet = 1`.
    pub(crate) const PACKET: u32 = 1;
}

/// `TracePacket` (`trace_packet.proto`).
pub(crate) mod packet {
    /// `optional ClockSnapshot clock_snapshot = 6`.
    pub(crate) const CLOCK_SNAPSHOT: u32 = 6;
    /// `optional uint64 timestamp = 8`.
    pub(crate) const TIMESTAMP: u32 = 8;
    /// `uint32 trusted_packet_sequence_id = 10`.
    pub(crate) const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    /// `TrackEvent track_event = 11`.
    pub(crate) const TRACK_EVENT: u32 = 11;
    /// `optional uint32 sequence_flags = 13`.
    pub(crate) const SEQUENCE_FLAGS: u32 = 13;
    /// `optional uint32 timestamp_clock_id = 58`.
    pub(crate) const TIMESTAMP_CLOCK_ID: u32 = 58;
    /// `optional TracePacketDefaults trace_packet_defaults = 59`.
    pub(crate) const TRACE_PACKET_DEFAULTS: u32 = 59;
    /// `TrackDescriptor track_descriptor = 60`.
    pub(crate) const TRACK_DESCRIPTOR: u32 = 60;
    /// `SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
    pub(crate) const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
    /// `SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
    pub(crate) const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
}

/// `TracePacketDefaults` (`trace_packet_defaults.proto`).
pub(crate) mod defaults {
    /// `optional uint32 timestamp_clock_id = 58`.
    pub(crate) const TIMESTAMP_CLOCK_ID: u32 = 58;
    /// `optional TrackEventDefaults track_event_defaults = 11`.
    pub(crate) const TRACK_EVENT_DEFAULTS: u32 = 11;
}

/// `TrackEventDefaults` (`track_event.proto`).
pub(crate) mod event_defaults {
    /// `optional uint64 track_uuid = 11`.
    pub(crate) const TRACK_UUID: u32 = 11;
    /// `repeated uint64 extra_double_counter_track_uuids = 45`.
    pub(crate) const EXTRA_DOUBLE_COUNTER_TRACK_UUIDS: u32 = 45;
}

/// `TrackDescriptor` (`track_descriptor.proto`).
pub(crate) mod track {
    /// `optional uint64 uuid = 1`.
    pub(crate) const UUID: u32 = 1;
    /// `string name = 2`.
    pub(crate) const NAME: u32 = 2;
    /// `optional uint64 parent_uuid = 5`.
    pub(crate) const PARENT_UUID: u32 = 5;
    /// `optional CounterDescriptor counter = 8`.
    pub(crate) const COUNTER: u32 = 8;
    /// `optional ChildTracksOrdering child_ordering = 11`.
    pub(crate) const CHILD_ORDERING: u32 = 11;
    /// `optional int32 sibling_order_rank = 12`.
    pub(crate) const SIBLING_ORDER_RANK: u32 = 12;
    /// `optional string description = 14`.
    pub(crate) const DESCRIPTION: u32 = 14;
    /// `ChildTracksOrdering.EXPLICIT`: children in `sibling_order_rank` order.
    pub(crate) const ORDERING_EXPLICIT: u64 = 3;
}

/// `CounterDescriptor` (`counter_descriptor.proto`).
pub(crate) mod counter {
    /// `optional Unit unit = 3`.
    pub(crate) const UNIT: u32 = 3;
    /// `optional string unit_name = 6`.
    pub(crate) const UNIT_NAME: u32 = 6;
    /// `Unit.UNIT_TIME_NS`.
    pub(crate) const UNIT_TIME_NS: u64 = 1;
    /// `Unit.UNIT_COUNT`.
    pub(crate) const UNIT_COUNT: u64 = 2;
    /// `Unit.UNIT_SIZE_BYTES`.
    pub(crate) const UNIT_SIZE_BYTES: u64 = 3;
}

/// `TrackEvent` (`track_event.proto`).
pub(crate) mod event {
    /// `repeated DebugAnnotation debug_annotations = 4`.
    pub(crate) const DEBUG_ANNOTATIONS: u32 = 4;
    /// `optional Type type = 9`.
    pub(crate) const TYPE: u32 = 9;
    /// `optional uint64 track_uuid = 11`.
    pub(crate) const TRACK_UUID: u32 = 11;
    /// `string name = 23`.
    pub(crate) const NAME: u32 = 23;
    /// `double double_counter_value = 44`.
    pub(crate) const DOUBLE_COUNTER_VALUE: u32 = 44;
    /// `repeated uint64 extra_double_counter_track_uuids = 45` (a row's own, over the defaults').
    pub(crate) const EXTRA_DOUBLE_COUNTER_TRACK_UUIDS: u32 = 45;
    /// `repeated double extra_double_counter_values = 46` (not packed: proto2).
    pub(crate) const EXTRA_DOUBLE_COUNTER_VALUES: u32 = 46;
    /// `Type.TYPE_SLICE_BEGIN`.
    pub(crate) const TYPE_SLICE_BEGIN: u64 = 1;
    /// `Type.TYPE_SLICE_END`.
    pub(crate) const TYPE_SLICE_END: u64 = 2;
    /// `Type.TYPE_INSTANT`.
    pub(crate) const TYPE_INSTANT: u64 = 3;
    /// `Type.TYPE_COUNTER`.
    pub(crate) const TYPE_COUNTER: u64 = 4;
}

/// `DebugAnnotation` (`debug_annotation.proto`).
pub(crate) mod annotation {
    /// `bool bool_value = 2`.
    pub(crate) const BOOL_VALUE: u32 = 2;
    /// `int64 int_value = 4`.
    pub(crate) const INT_VALUE: u32 = 4;
    /// `string string_value = 6`.
    pub(crate) const STRING_VALUE: u32 = 6;
    /// `string name = 10`.
    pub(crate) const NAME: u32 = 10;
    /// `repeated DebugAnnotation dict_entries = 11`.
    pub(crate) const DICT_ENTRIES: u32 = 11;
}

/// `ClockSnapshot` (`clock_snapshot.proto`).
pub(crate) mod clock_snapshot {
    /// `repeated Clock clocks = 1`.
    pub(crate) const CLOCKS: u32 = 1;
    /// `optional BuiltinClock primary_trace_clock = 2`.
    pub(crate) const PRIMARY_TRACE_CLOCK: u32 = 2;
    /// `Clock.clock_id = 1`.
    pub(crate) const CLOCK_ID: u32 = 1;
    /// `Clock.timestamp = 2`.
    pub(crate) const TIMESTAMP: u32 = 2;
}
