//! Opening a session progressively ([`LoadJob`]): as soon as the file's head is read, the
//! window shows its streams, panes and markers, with the view fitted to the session's whole
//! time range; each frame then moves at most [`PIECES_PER_FRAME`] decoded pieces into the store
//! and asks for another frame until all are in. The status bar says "opening NAME … 37 %".
//!
//! A frame waits (at most [`WAIT`]) for its first piece, so every frame makes progress and the
//! pieces a frame applies do not depend on timing; decoding runs ahead of the window, so the
//! wait is short except for the head (reading and parsing the file).
//!
//! While a session opens:
//! - opening another one cancels this one and opens that;
//! - starting a run cancels it (the run replaces the recording, as it would once opened);
//! - saving is refused with a message (the file is only partly shown); writing a file (File → Export) writes
//!   what is shown;
//! - quitting or closing cancels it without asking: the data is all in its file.
//!
//! The session counts as saved (and becomes the current file) only once every sample is in.
//! A file found malformed part way keeps what was shown before the problem, with an error
//! naming it; that partial data is not the current file, so Save asks for a new name.
//!
//! This module holds the open in flight ([`Opening`]) and its bounds; what it does to the app
//! each frame (`start_opening`, `poll_opening` and what they call) is with the other file
//! commands in `actions.rs`.

use std::time::Duration;

use zescope_model::session::LoadJob;
use zescope_store::StreamId;

use super::dialogs::file_name;

/// Decoded pieces (a chunk of up to 4096 samples, or whole blocks of a wide one: about 4 MiB
/// each, 8 MiB at most: `session::PIECE_BYTES`) moved into the store per frame at most.
pub const PIECES_PER_FRAME: usize = 8;
/// Longest a frame waits for the open's next event.
pub const WAIT: Duration = Duration::from_secs(2);

/// An open in progress.
pub struct Opening {
    pub(crate) job: LoadJob,
    /// Store ids of the session's streams, once the head is in.
    pub(crate) ids: Vec<StreamId>,
    /// Per stream: it ends once its last piece is in.
    pub(crate) ended: Vec<bool>,
    /// Pieces still to come (`u64::MAX` until the head is in).
    pub(crate) left: u64,
}

impl Opening {
    /// Status bar text: "opening NAME … 37 %" (never 100 before the end).
    pub fn status(&self) -> String {
        let pct = (self.job.progress() * 100.0).floor().min(99.0);
        format!("opening {} … {pct:.0} %", file_name(self.job.path()))
    }
}
