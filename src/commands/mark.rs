//! `zescope mark`: one marker from the command line, with a clear error when nobody listens.

use std::io::ErrorKind;
use std::path::PathBuf;

use zescope_markers::Kind;

/// Sends the marker `name`: the start of a range with `begin`, its end with `end`, else an instant.
pub fn main(begin: bool, end: bool, name: &str) -> Result<std::process::ExitCode, String> {
    let kind = if begin {
        Kind::Begin
    } else if end {
        Kind::End
    } else {
        Kind::Instant
    };
    mark(kind, name)?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Sends `name` as `kind` to the socket `ZESCOPE_MARKERS` or `$XDG_RUNTIME_DIR` names; returns
/// that path, or why the marker could not be sent.
pub fn mark(kind: Kind, name: &str) -> Result<PathBuf, String> {
    let path = zescope_model::markers::socket_path().ok_or("cannot tell where zescope listens (no user id)")?;
    zescope_markers::send_once(&path, kind, name).map_err(|e| match e.kind() {
        ErrorKind::NotFound | ErrorKind::ConnectionRefused => format!(
            "no zescope listens for markers at {} (start zescope, `zescope record` or `zescope serve`, or set {} \
             to the path it printed)",
            path.display(),
            zescope_model::markers::ENV
        ),
        ErrorKind::WouldBlock => {
            format!("zescope's marker queue at {} is full; the marker was dropped", path.display())
        }
        ErrorKind::InvalidInput => format!("{name:?}: {e}"),
        _ => format!("cannot send the marker to {}: {e}", path.display()),
    })?;
    Ok(path)
}
