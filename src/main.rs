#![forbid(unsafe_code)]
use std::process::ExitCode;

use clap::Parser;
use zescope::cli::{Cli, Command};
use zescope::record::record;
use zescope::signals::Termination;

/// mimalloc keeps freed memory for reuse where glibc's malloc returns a frame's large buffers
/// (plot meshes, tessellated vertices) to the kernel and faults them in again the next frame:
/// a quarter of a zoomed frame's time (docs/benchmarks.md; the benches use it too).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before anything else, and before any thread exists.
    let env = zescope::ze::prepare_environment();
    zescope::logwatch::init();
    if let Err(e) = env {
        log::warn!("{e}");
    }
    let cli = Cli::parse();
    let Some(command) = cli.command else { return zescope::gui::run(cli.source, cli.file, cli.view) };
    if let Some(f) = &cli.file {
        eprintln!("zescope: {} opens in the window; it cannot be given with a command", f.display());
        return ExitCode::from(2);
    }
    match command {
        Command::List { metrics, groups } => {
            match zescope::list::list(cli.source, &zescope::list::ListOptions { metrics, groups }) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("zescope: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Doctor => {
            let checks = zescope::doctor::run(cli.source, zescope::sim::built_in);
            print!("{}", zescope::doctor::render(cli.source, &checks));
            if zescope::doctor::failed(&checks) { ExitCode::FAILURE } else { ExitCode::SUCCESS }
        }
        Command::Record(options) => {
            let stop = Termination::install();
            let args = options.into_args(cli.source);
            match record(&args, &stop) {
                Ok(summary) => {
                    let written: Vec<String> =
                        args.out.iter().chain(&args.perfetto).map(|p| p.display().to_string()).collect();
                    println!("{summary}; wrote {}", written.join(", "));
                    for e in &summary.errors {
                        eprintln!("zescope: {e}");
                    }
                    let workload_failed = summary.workload.is_some_and(|s| !s.success());
                    if summary.errors.is_empty() && !workload_failed { ExitCode::SUCCESS } else { ExitCode::FAILURE }
                }
                Err(e) => {
                    eprintln!("zescope: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Mark { begin, end, name } => {
            use zescope::markers::Kind;
            let kind = if begin {
                Kind::Begin
            } else if end {
                Kind::End
            } else {
                Kind::Instant
            };
            match zescope::markers::mark(kind, &name) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("zescope: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Serve(options) => {
            let stop = Termination::install();
            let args = options.into_args(cli.source);
            // stdout may be a pipe its reader closed (a supervisor that read the address): never
            // a reason to fail.
            let say = |line: String| {
                let mut out = std::io::stdout();
                let _ =
                    std::io::Write::write_all(&mut out, line.as_bytes()).and_then(|()| std::io::Write::flush(&mut out));
            };
            let listening = |addr| say(format!("zescope: serving http://{addr}/metrics\n"));
            match zescope::serve::serve(&args, &stop, listening) {
                Ok(summary) => {
                    say(format!("zescope: served {} samples, {} markers\n", summary.samples, summary.markers));
                    if summary.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
                }
                Err(e) => {
                    eprintln!("zescope: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Export(options) => match zescope::export::run(&options.into(), &mut |n| eprintln!("zescope: {n}")) {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("zescope: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
