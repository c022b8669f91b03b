//! The only place zescope touches exported memory: duplicate the implementation's fd, map the
//! buffer read-only (or read it with `pread`, or copy it through the device), take seqlocked
//! snapshots, and release everything — in [`Buffers::release`].
//!
//! Rules kept here (see `../shared/seed` and DESIGN.md):
//! - the implementation's fd is never closed, never wrapped in `OwnedFd`/`File`, never handed to
//!   anything that may close it: imports and mappings use dups (F_DUPFD_CLOEXEC), and a dup is
//!   closed (on drop) only if it is still open and still the same file — a driver may close the
//!   fd it imports, at the import or at `zeMemFree`; the import's dup lives until after the free;
//! - buffers are identified by the file behind the fd (`fstat` dev+ino), never by fd number;
//! - nothing here can fault: a file that may shrink is never mapped (see `buffers`);
//! - a failed free keeps its buffer, and without every buffer freed there is no
//!   [`BuffersReleased`] proof, so the exporter is not torn down under a live import;
//! - every type here holds raw pointers, so none is `Send` or `Sync`: the memory is touched by
//!   the sampler thread only.

mod buffer;
mod buffers;
mod fd;
pub mod os;

pub use buffer::ReadError;
pub use buffers::{Buffers, BuffersReleased, ImportError, test_hook};
pub use fd::{file_id, file_size};

// The types that hold mappings and imports stay on the sampler thread.
static_assertions::assert_not_impl_any!(Buffers: Send, Sync);
static_assertions::assert_not_impl_any!(buffer::ImportedBuffer: Send, Sync);
