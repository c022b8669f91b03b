//! The only place zescope touches exported memory: duplicate the implementation's fd, map the
//! buffer read-only (or copy it through the device when it cannot be mapped), take seqlocked
//! snapshots, and release everything — in that module's one release function.
//!
//! Rules kept here (see `../shared/seed` and DESIGN.md):
//! - the implementation's fd is never closed, never wrapped in `OwnedFd`/`File`, never handed to
//!   anything that may close it: imports and mappings use a `dup` (F_DUPFD_CLOEXEC), and the dup
//!   is closed afterwards only if it is still open and still the same file (a driver may have
//!   closed it during the import);
//! - buffers are identified by the file behind the fd (`fstat` dev+ino), never by fd number;
//! - every type here holds raw pointers, so none is `Send` or `Sync`: the memory is touched by
//!   the sampler thread only.

mod buffer;
mod fd;
pub mod os;

pub use buffer::{Buffers, BuffersReleased, ImportError};
pub use fd::{file_id, file_size};
