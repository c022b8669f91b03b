//! The commands that run without a window, one file each, each a thin shell over the libraries:
//! it takes its options as the command line parsed them ([`crate::cli`]), calls the library that
//! does the work, prints what the user is told and answers the exit status. [`run`] is the one
//! place that picks the command and prints its error.
//!
//! - [`list`]: drivers, devices and metric groups as text (`zescope-ze`).
//! - [`record`]: sample headless into a session, a CSV or a Perfetto trace (`zescope-sampler`,
//!   `zescope-model`).
//! - [`serve`]: the same run published for Prometheus over HTTP.
//! - [`export`]: files from a saved session (`zescope_model::write`).
//! - [`mark`]: one marker sent to a running zescope (`zescope-markers`).
//! - [`doctor`]: the checks of `zescope-doctor`, printed.
//!
//! `record` and `serve` share the run loop in `headless.rs` and the target choice in `pick.rs`.

pub mod doctor;
pub mod export;
mod headless;
pub mod list;
pub mod mark;
pub mod otlp;
pub mod pick;
pub mod record;
pub mod serve;

use std::process::ExitCode;

use zescope_ze::Source;

use crate::cli::Command;

/// Runs `command` on `source`: the exit status, or the error to print (`zescope: ERROR`, status 1).
pub fn run(command: Command, source: Source) -> Result<ExitCode, String> {
    match command {
        Command::List { metrics, groups, from } => list::main(from.or(source), &list::ListOptions { metrics, groups }),
        Command::Doctor { from } => Ok(doctor::main(from.or(source))),
        Command::Record(options) => record::main(&options.into_args(source)),
        Command::Mark { begin, end, name } => mark::main(begin, end, &name),
        Command::Serve(options) => serve::main(&options.into_args(source)),
        Command::Export(options) => export::main(&options.into()),
    }
}

/// Success, unless `failed`.
fn status(failed: bool) -> ExitCode {
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
