//! The files the commands write, checked by name as they are parsed: each option writes one
//! format, and a file named for another format zescope writes is refused with the option (or
//! command) that writes that one. A name without an extension, or with one zescope does not
//! write, is taken as given (`record --out run.txt` is a CSV). `export`'s options, one per
//! format, are [`Outputs`].

use std::path::{Path, PathBuf};

use zescope_model::write::{FORMATS, Format, format, formats_named};

/// The extension of the file `s` names, in lower case ("" without one).
fn extension_of(s: &str) -> String {
    Path::new(s).extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default()
}

/// `record --out`: a session (.ron) or a CSV; a file named for another format zescope writes is
/// refused with the option that writes it (`--out run.pftrace` wrote a CSV that ui.perfetto.dev
/// could not open).
pub(super) fn parse_record_out(s: &str) -> Result<PathBuf, String> {
    let (path, ext) = (PathBuf::from(s), extension_of(s));
    // Perfetto's own tools name traces .perfetto-trace too.
    let named = if ext == "perfetto-trace" { "pftrace" } else { ext.as_str() };
    let instead = match formats_named(named).find(|f| f.extension() != "csv") {
        None => return Ok(path),
        Some(f) if f.key() == "perfetto" => {
            format!("a Perfetto trace is written by --perfetto {s} (with or without --out)")
        }
        Some(f) => format!(
            "a .{ext} file ({}) is written from a session: --out run.ron, then `zescope export run.ron --{} {s}`",
            f.title(),
            f.key()
        ),
    };
    Err(format!("--out writes a session (.ron) or a CSV (.csv); {instead}"))
}

/// `serve --save`: a session; a file named for a format `export` writes is refused with the
/// command that writes it from the session (`--save run.csv` wrote a session under a CSV's name).
pub(super) fn parse_session_out(s: &str) -> Result<PathBuf, String> {
    let (path, ext) = (PathBuf::from(s), extension_of(s));
    // The format named as its extension first (`--csv`, not `--csv-shown`, for a .csv).
    let writes = format(&ext).or_else(|| formats_named(&ext).next());
    match writes {
        Some(f) => Err(format!(
            "--save writes a session (.ron); a .{ext} file is written from it: --save run.ron, then `zescope export \
             run.ron --{} {s}`",
            f.key()
        )),
        None => Ok(path),
    }
}

/// `record --perfetto`: a trace, not a file named for a session or a CSV (which `--out` writes).
pub(super) fn parse_record_perfetto(s: &str) -> Result<PathBuf, String> {
    let (path, ext) = (PathBuf::from(s), extension_of(s));
    match ext.as_str() {
        "ron" => {
            Err(format!("--perfetto writes a Perfetto trace (.pftrace); a session (.ron) is written by --out {s}"))
        }
        "csv" => Err(format!("--perfetto writes a Perfetto trace (.pftrace); a CSV (.csv) is written by --out {s}")),
        _ => Ok(path),
    }
}

/// `export --KEY FILE`, for the format of `key` whose files end in `.extension`: a file named
/// for another format zescope writes is refused with the option that writes that one (`--png
/// x.svg` wrote a PNG under an SVG's name); any other name is taken as given.
fn named_for(key: &str, extension: &str, s: &str) -> Result<PathBuf, String> {
    let (path, ext) = (PathBuf::from(s), extension_of(s));
    if ext.is_empty() || ext == extension {
        return Ok(path);
    }
    if ext == "ron" {
        return Err(format!("{s} is named for a session: export writes from one, and --{key} writes a .{extension}"));
    }
    let writers: Vec<String> = formats_named(&ext).map(|f| format!("--{}", f.key())).collect();
    match writers.as_slice() {
        [] => Ok(path),
        [one] => Err(format!("{s} is a .{ext} name, which {one} writes; --{key} writes a .{extension}")),
        [most @ .., last] => Err(format!(
            "{s} is a .{ext} name, which {} or {last} write; --{key} writes a .{extension}",
            most.join(", ")
        )),
    }
}

/// The files `zescope export` writes: one `--KEY FILE` option per format of
/// [`zescope_model::write::FORMATS`], in its order, with the format's own value name and help.
#[derive(Clone, Debug, Default)]
pub struct Outputs(pub Vec<(&'static dyn Format, PathBuf)>);

impl clap::FromArgMatches for Outputs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Outputs(FORMATS.iter().filter_map(|&f| Some((f, m.get_one::<PathBuf>(f.key())?.clone()))).collect()))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for Outputs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        FORMATS.iter().fold(cmd, |cmd, f| {
            let (key, extension) = (f.key(), f.extension());
            cmd.arg(
                clap::Arg::new(key)
                    .long(key)
                    .value_name(f.value_name())
                    .value_parser(move |s: &str| named_for(key, extension, s))
                    .help(f.help()),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}
