use std::process::ExitCode;

use clap::Parser;
use zescope::cli::{Cli, Command};

fn main() -> ExitCode {
    // Before anything else, and before any thread exists.
    zescope::ze::prepare_environment();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::List { metrics: false }) {
        Command::List { metrics } => match zescope::list::list(cli.source, metrics) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("zescope: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
