use std::process::ExitCode;

use clap::Parser;
use zescope::cli::{Cli, Command};
use zescope::record::{RecordArgs, record};
use zescope::signals::Termination;

fn main() -> ExitCode {
    // Before anything else, and before any thread exists.
    let env = zescope::ze::prepare_environment();
    zescope::logwatch::init();
    if let Err(e) = env {
        log::warn!("{e}");
    }
    let cli = Cli::parse();
    let Some(command) = cli.command else { return zescope::gui::run(cli.source, cli.file) };
    if let Some(f) = &cli.file {
        eprintln!("zescope: {} opens in the window; it cannot be given with a command", f.display());
        return ExitCode::from(2);
    }
    match command {
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
        Command::Doctor => {
            let checks = zescope::doctor::run(cli.source);
            print!("{}", zescope::doctor::render(cli.source, &checks));
            if zescope::doctor::failed(&checks) { ExitCode::FAILURE } else { ExitCode::SUCCESS }
        }
        Command::Record { device, groups, metrics, custom_group, interval, via, duration, out } => {
            let stop = Termination::install();
            let args =
                RecordArgs { source: cli.source, device, groups, metrics, custom_group, interval, via, duration, out };
            match record(&args, &stop) {
                Ok(summary) => {
                    println!("{summary}; wrote {}", args.out.display());
                    for e in &summary.errors {
                        eprintln!("zescope: {e}");
                    }
                    if summary.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
                }
                Err(e) => {
                    eprintln!("zescope: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Export { session, pane, range, size, png, svg, csv } => {
            let args = zescope::export::ExportArgs { session, pane, range, size, png, svg, csv };
            match zescope::export::run(&args) {
                Ok(summary) => {
                    println!("{summary}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("zescope: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
