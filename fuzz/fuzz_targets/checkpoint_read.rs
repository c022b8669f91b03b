//! Fuzz the autosave checkpoint reader (what crash recovery runs on `checkpoint.ron` and its
//! chunk files). The input is the checkpoint's text, then, each after a NUL byte, the contents
//! of the chunk files it names, handed out in the order they are asked for (a missing one is an
//! I/O error, as on disk). Any input must give a session or a named error, never a panic.

use zescope::session::{SessionError, autosave::checkpoint_from_text};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let mut parts = data.split(|&b| b == 0);
        let Some(Ok(text)) = parts.next().map(std::str::from_utf8) else { return };
        let result = checkpoint_from_text("fuzz/checkpoint.ron", text, |name| {
            let missing = || SessionError::NotASession(format!("{name}: no such chunk file"));
            let bytes = parts.next().ok_or_else(missing)?;
            String::from_utf8(bytes.to_vec()).map_err(|_| missing())
        });
        if let Ok(session) = result {
            let mut store = zescope::store::Store::new(64 << 20);
            let _ = session.restore_into(&mut store);
        }
    });
}
