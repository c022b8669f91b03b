#![forbid(unsafe_code)]
use std::process::ExitCode;

use clap::Parser;
use zescope::cli::Cli;
use zescope::signals::Termination;

/// mimalloc keeps freed memory for reuse where glibc's malloc returns a frame's large buffers
/// (plot meshes, tessellated vertices) to the kernel and faults them in again the next frame:
/// a quarter of a zoomed frame's time (docs/benchmarks.md; the benches use it too).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before anything else, and before any thread exists.
    let env = zescope_ze::prepare_environment();
    zescope_window::logwatch::init();
    if let Err(e) = env {
        log::warn!("{e}");
    }
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        if let Some(line) = zescope::live::no_display(|v| std::env::var_os(v)) {
            eprintln!("{line}");
            return ExitCode::FAILURE;
        }
        let source = cli.source;
        let connect =
            match cli.connect.clone().map(|a| zescope::live::client::Target::new(a, cli.token_file.as_deref())) {
                Some(Err(e)) => {
                    eprintln!("zescope: {e}");
                    return ExitCode::from(2);
                }
                c => c.and_then(Result::ok),
            };
        let remote = connect.as_ref().map(|_| zescope_window::connect::Remote {
            addr: cli.connect.clone().unwrap_or_default(),
            token_file: cli.token_file.clone(),
            layout: None,
        });
        return zescope_window::gui::run(zescope_window::gui::Launch {
            start_sampler: Box::new(move |options| match &connect {
                Some(target) => zescope::live::remote::spawn(target.clone(), options.waker),
                None => zescope_sampler::spawn_source(source, zescope::sim::built_in, options),
            }),
            connect: Box::new(|r, options| {
                let target = zescope::live::client::Target::new(r.addr.clone(), r.token_file.as_deref())?;
                Ok(zescope::live::remote::spawn(target, options.waker))
            }),
            built_in: zescope::sim::built_in,
            interrupt: Box::new(Termination::install()),
            file: cli.file,
            view: cli.view,
            remote,
        });
    };
    if cli.connect.is_some() {
        eprintln!("zescope: --connect opens the window; with `record`, give it after the command");
        return ExitCode::from(2);
    }
    if let Some(f) = &cli.file {
        eprintln!("zescope: {} opens in the window; it cannot be given with a command", f.display());
        return ExitCode::from(2);
    }
    // Taken and ignored before: `zescope --view v.ron record …` recorded the default groups.
    if cli.view.is_some() {
        eprintln!(
            "zescope: --view before the command lays out the window; `record --view FILE` records what a view names"
        );
        return ExitCode::from(2);
    }
    match zescope::commands::run(command, cli.source) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("zescope: {e}");
            ExitCode::FAILURE
        }
    }
}
