//! `zescope doctor`: every check of `zescope-doctor` printed with its fix; status 1 when one fails.

use std::process::ExitCode;

use zescope_ze::Source;

/// Runs the checks on `source` and prints them.
pub fn main(source: Source) -> ExitCode {
    let checks = zescope_doctor::run(source, crate::sim::built_in);
    print!("{}", zescope_doctor::render(source, &checks));
    super::status(zescope_doctor::failed(&checks))
}
