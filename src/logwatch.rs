//! The process's logger: env_logger (`RUST_LOG`, `warn` by default), wrapped to count the errors
//! the file-dialog library (rfd) logs. rfd's blocking dialogs answer "no file" both when the user
//! cancels and when no dialog could be shown (no portal, no zenity): the only sign of the second
//! is an error it logs, so the window reads [`dialog_errors`] around each dialog.
//!
//! It also drops one message that is not an error: `zescope serve` gives its listening socket a
//! receive timeout (so that accepted connections inherit it), which makes the HTTP server's idle
//! `accept` time out every few seconds, and tiny_http logs each of those as an error.

use std::sync::atomic::{AtomicU64, Ordering};

static DIALOG_ERRORS: AtomicU64 = AtomicU64::new(0);

/// How many errors rfd has logged so far in this process.
pub fn dialog_errors() -> u64 {
    DIALOG_ERRORS.load(Ordering::Relaxed)
}

struct Watch(env_logger::Logger);

impl log::Log for Watch {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        is_dialog_error(metadata) || self.0.enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if is_idle_accept(record) {
            return;
        }
        if is_dialog_error(record.metadata()) {
            DIALOG_ERRORS.fetch_add(1, Ordering::Relaxed);
        }
        if self.0.enabled(record.metadata()) {
            self.0.log(record);
        }
    }

    fn flush(&self) {
        self.0.flush();
    }
}

fn is_dialog_error(m: &log::Metadata<'_>) -> bool {
    m.level() == log::Level::Error && (m.target() == "rfd" || m.target().starts_with("rfd::"))
}

/// tiny_http's "Error accepting new client: … (os error 11)": the accept timeout of an idle
/// listener (EAGAIN), not a failure.
fn is_idle_accept(r: &log::Record<'_>) -> bool {
    r.target().starts_with("tiny_http") && r.args().to_string().ends_with(&format!("(os error {})", libc::EAGAIN))
}

/// Installs the logger (once, at start; a second call changes nothing).
pub fn init() {
    let logger = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).build();
    let max = logger.filter().max(log::LevelFilter::Error);
    if log::set_boxed_logger(Box::new(Watch(logger))).is_ok() {
        log::set_max_level(max);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_of_the_dialog_library_are_counted_and_others_are_not() {
        super::init();
        let before = super::dialog_errors();
        log::error!(target: "zescope::record", "not a dialog error");
        log::warn!(target: "rfd", "a warning is not a failure");
        assert_eq!(super::dialog_errors(), before);
        log::error!(target: "rfd::backend::xdg_desktop_portal", "Failed to pick file with zenity");
        assert_eq!(super::dialog_errors(), before + 1);
    }

    #[test]
    fn only_the_idle_accept_timeout_of_the_http_server_is_dropped() {
        let check = |e: i32| {
            let args = format!("Error accepting new client: {}", std::io::Error::from_raw_os_error(e));
            super::is_idle_accept(&log::Record::builder().target("tiny_http").args(format_args!("{args}")).build())
        };
        assert!(check(libc::EAGAIN));
        assert!(!check(libc::EMFILE), "running out of file descriptors is an error");
    }
}
