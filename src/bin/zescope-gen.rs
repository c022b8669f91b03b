//! `zescope-gen OUT_DIR`: writes the man pages and shell completions of `zescope`, generated from
//! its clap definitions so they cannot drift from the real options, into
//! `OUT_DIR/man/*.1` and `OUT_DIR/completions/{zescope.bash,_zescope,zescope.fish}`.
//! `dist/build-deb.sh` runs it before packaging; the output is not kept in git.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use zescope::cli::Cli;

/// Sections clap does not know about, appended to `zescope(1)`.
const EXTRA: &str = r#".SH ENVIRONMENT
.TP
\fBZET_ENABLE_METRICS\fR
zescope sets it to 1 for itself unless you set it; drivers hide metric groups without it.
.TP
\fBZESCOPE_LEVEL_ZERO_LOADER\fR
The Level Zero loader library to open instead of libze_loader.so.1.
.TP
\fBZE_ENABLE_ALT_DRIVERS\fR
Read by the Level Zero loader: a comma-separated list of driver libraries (absolute paths) to use instead of the system's.
.TP
\fBZE_SIM_CONFIG\fR
A RON file configuring the built-in simulated driver (devices, groups, faults).
.TP
\fBZE_SIM_REPORT\fR
Where the simulated driver writes its report of rule violations and leaks at exit.
.SH FILES
.TP
\fI~/.config/zescope/layouts/*.ron\fR
Your layouts: how the exported memory of a driver's metric groups is decoded. They take precedence over the built-in ones.
.TP
\fI/usr/share/zescope/layouts/\fR
Copies of the built-in layouts, to start a new one from.
.SH DIAGNOSTICS
\fBzescope doctor\fR checks the Level Zero loader, drivers, metrics enable, metric groups and layouts, the i915/xe paranoid knobs, access to /dev/dri/renderD*, capabilities, the display and the file dialog backend, and prints the fix for every problem. It exits with status 1 when a check fails.
"#;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        eprintln!("usage: zescope-gen OUT_DIR   (writes OUT_DIR/man and OUT_DIR/completions)");
        return ExitCode::from(2);
    };
    match generate(Path::new(&out)) {
        Ok(files) => {
            for f in files {
                println!("{}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zescope-gen: writing into {}: {e}", Path::new(&out).display());
            ExitCode::FAILURE
        }
    }
}

fn generate(out: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let man = out.join("man");
    std::fs::create_dir_all(&man)?;
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build(); // gives subcommands their bin name ("zescope list") for the synopsis
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        // zescope-list(1) etc., as `man zescope-list` expects
        let sub = sub.clone().display_name(format!("zescope-{}", sub.get_name())).version(env!("CARGO_PKG_VERSION"));
        let page = clap_mangen::Man::new(sub).source(concat!("zescope ", env!("CARGO_PKG_VERSION")));
        files.push(page.generate_to(&man)?);
    }
    let page = man.join("zescope.1");
    let mut f = std::fs::File::create(&page)?;
    let m = clap_mangen::Man::new(cmd.clone());
    m.render_title(&mut f)?;
    m.render_name_section(&mut f)?;
    m.render_synopsis_section(&mut f)?;
    m.render_description_section(&mut f)?;
    m.render_options_section(&mut f)?;
    m.render_subcommands_section(&mut f)?;
    f.write_all(EXTRA.as_bytes())?;
    m.render_version_section(&mut f)?;
    files.push(page);

    let completions = out.join("completions");
    std::fs::create_dir_all(&completions)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        files.push(clap_complete::generate_to(shell, &mut cmd.clone(), "zescope", &completions)?);
    }
    Ok(files)
}
