//! The only place zescope touches exported memory: duplicate the implementation's fd, map the
//! buffer read-only (or read it with `pread`, or copy it through the device), take seqlocked
//! snapshots, and release everything — in [`Buffers::release`].
//!
//! Rules kept here (see `../shared/seed` and DESIGN.md):
//! - the implementation's fd is never closed, never wrapped in `OwnedFd`/`File`, never handed to
//!   anything that may close it: imports and mappings use dups (F_DUPFD_CLOEXEC), and a dup is
//!   closed (on drop) only if it was never seen closed by a driver and is still the same file —
//!   a driver may close the fd it imports, at the import or at `zeMemFree`, so the dup is checked
//!   right after each of those calls and, once seen closed, never closed by zescope (its number
//!   may by then name another descriptor of the same buffer); the import's dup lives until
//!   after the free;
//! - a buffer is imported last, after its host access (mapping, file read or device-copy staging) is
//!   set up, so no error path has an import to free;
//! - buffers are identified by the file behind the fd (`fstat` dev+ino), never by fd number;
//! - nothing here can fault: a file that may shrink is never mapped (see `buffers`);
//! - a failed free keeps its buffer (and its dup), as does host memory whose free failed, and
//!   without every one of them freed there is no [`BuffersReleased`] proof, so the exporter is
//!   not torn down under a live import; the release works in place, so a panic part way
//!   through it leaves every import not yet freed listed, and an import dropped while alive
//!   (a panic, a free refused for good) keeps its dup and mapping rather than closing them;
//! - every type here holds raw pointers, so none is `Send` or `Sync`: the memory is touched by
//!   the sampler thread only.

mod buffer;
mod buffers;
mod fd;

pub(crate) use buffer::ReadError;
pub(crate) use buffers::{Buffers, BuffersReleased, ImportError, test_hook};
pub(crate) use fd::{file_id, file_size};

// The types that hold mappings and imports stay on the sampler thread.
static_assertions::assert_not_impl_any!(Buffers: Send, Sync);
static_assertions::assert_not_impl_any!(buffer::ImportedBuffer: Send, Sync);
