//! The process's logger: env_logger (`RUST_LOG`, `warn` by default), wrapped to count the errors
//! the file-dialog library (rfd) logs. rfd's blocking dialogs answer "no file" both when the user
//! cancels and when no dialog could be shown (no portal, no zenity): the only sign of the second
//! is an error it logs, so the window reads [`dialog_errors`] around each dialog.

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
}
