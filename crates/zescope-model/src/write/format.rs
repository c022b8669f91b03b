//! The file formats zescope writes, behind one trait: each format is a [`Format`] in its own file
//! of this module, listed once in [`FORMATS`] (`mod.rs`). `zescope export` takes one option per format
//! (`--KEY FILE`, in the list's order) and the window offers the formats that say
//! [`Format::in_window`] in File → Export and the pane menus, by their [`Scope`]; both write
//! through [`Format::write`], from the same [`Input`].

use std::collections::BTreeMap;
use std::path::Path;

use zescope_store::{Store, StreamId};

use super::WriteSpec;
use crate::session::Session;
use crate::view::{SeriesEntry, SeriesKey};

/// What a format holds, which decides where the window offers it and how its files are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The panes as drawn: all of them stacked (File → Export) or one (its pane menu).
    Picture,
    /// The panes' series' samples: the visible series only, or every one.
    Samples,
    /// Everything the session holds, whatever the panes show.
    Session,
}

/// What a format writes from: the session restored into a store, the panes chosen and the range.
pub struct Input<'a> {
    /// The samples.
    pub store: &'a Store,
    /// The panes (with their series, colours and hidden ones), the range and the markers.
    pub spec: &'a WriteSpec,
    /// The session the store holds (its head: runs, devices, markers, when it was recorded).
    pub session: &'a Session,
    /// The session's streams in the store, in the session's order.
    pub streams: &'a [StreamId],
    /// Every series the session holds.
    pub series: &'a BTreeMap<SeriesKey, SeriesEntry>,
    /// An image's size in pixels; `None`: [`super::default_size`].
    pub size: Option<(u32, u32)>,
}

/// One file format. Its answer is the line the user is told: "a.png (1600x800)", "a.csv (1200
/// rows)"; an error names the problem (the file, or why there is nothing to write).
pub trait Format: Sync {
    /// The command line's word for it (`zescope export --KEY FILE`), also the format's key.
    fn key(&self) -> &'static str;
    /// `zescope export --help`'s value name for the file ("PNG", "OUT.om").
    fn value_name(&self) -> &'static str;
    /// `zescope export --help`'s description of the option.
    fn help(&self) -> &'static str;
    /// The file name extension, without the dot (added to a path chosen without one).
    fn extension(&self) -> &'static str;
    /// A short name for menus: "All panes as PNG…", "Visible data as CSV…".
    fn name(&self) -> &'static str;
    /// What file dialogs call it: "PNG image", "Perfetto trace".
    fn title(&self) -> &'static str;
    /// What it holds.
    fn scope(&self) -> Scope;
    /// Whether the window offers it (the command line offers every format).
    fn in_window(&self) -> bool {
        true
    }
    /// Writes `input` to `path`; `progress` hears the share done (0.0 to 1.0) now and then.
    fn write(&self, input: &Input<'_>, path: &Path, progress: &dyn Fn(f32)) -> Result<String, String>;
}

impl std::fmt::Debug for dyn Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

impl PartialEq for dyn Format {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn Format {}

#[cfg(test)]
mod tests {
    use super::super::{FORMATS, format};

    #[test]
    fn keys_and_extensions_name_one_format_each() {
        let mut keys: Vec<&str> = FORMATS.iter().map(|f| f.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), FORMATS.len(), "a key names one format");
        for f in FORMATS {
            assert_eq!(format(f.key()), Some(f));
            assert!(!f.extension().starts_with('.') && !f.extension().is_empty(), "{f:?}");
        }
        assert_eq!(format("bmp"), None);
    }
}
