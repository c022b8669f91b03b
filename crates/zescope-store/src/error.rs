//! Store errors.
//!
//! Every rejected input names what was wrong with it, so a caller (the sampler,
//! session loading) can log something a user can act on. Nothing in the store
//! panics on bad input: it returns one of these instead.

use super::{SeriesId, StreamId};

/// Why the store refused an operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// The stream id does not belong to this store.
    #[error("unknown stream {0:?}")]
    UnknownStream(StreamId),

    /// The series id does not belong to this store.
    #[error("unknown series {0:?}")]
    UnknownSeries(SeriesId),

    /// `end_stream` was called for this stream; it takes no more samples.
    #[error("stream {0:?} has ended and takes no more samples")]
    StreamEnded(StreamId),

    /// A row-major batch whose value count is not `timestamps * series`.
    #[error(
        "batch shape: {values} values for {timestamps} timestamps and {series} series \
         (expected {expected}: the value count must be timestamps x series)"
    )]
    BatchShape {
        /// Timestamps in the batch.
        timestamps: usize,
        /// Values in the batch.
        values: usize,
        /// Series of the stream.
        series: usize,
        /// `timestamps * series`.
        expected: usize,
    },

    /// Timestamps must strictly increase within a stream, across batches too.
    #[error(
        "timestamps must strictly increase: sample {index} of the batch is at {t} ns, \
         not after the previous sample at {prev} ns"
    )]
    NonMonotonic {
        /// Position of the offending sample in the batch.
        index: usize,
        /// The previous sample's time (ns).
        prev: i64,
        /// The offending sample's time (ns).
        t: i64,
    },

    /// Even after coarsening and evicting everything that may go, the data does
    /// not fit under the memory cap.
    #[error(
        "memory cap of {cap} bytes is too small: {needed} more bytes are needed with \
         {used} in use and nothing left to coarsen or evict ({stored} of the batch's \
         samples were stored)"
    )]
    CapTooSmall {
        /// The cap in bytes.
        cap: usize,
        /// Bytes in use.
        used: usize,
        /// More bytes the rest of the batch needs.
        needed: usize,
        /// Samples of the batch that were stored before the cap was hit.
        stored: usize,
    },

    /// A `StreamData` handed to `restore_stream` is inconsistent.
    #[error("invalid stream data: {0}")]
    InvalidData(String),
}
