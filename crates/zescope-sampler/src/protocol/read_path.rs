//! The one vocabulary of how zescope reads: [`ReadPath`], how a stream is read, named as
//! sessions, `serve`, the command line and the window name it; and [`Via`], the way a run asks
//! its groups to be read (`--via`), whose words are the ways' own.
//!
//! A way is a reader of the sampler, one `read::Way` in its own folder of
//! `crates/zescope-sampler/src/read/`: exported memory, the time-based streamer, the metric
//! tracer, Sysman telemetry. Exported memory reaches the host by one of three read paths,
//! decided per buffer when it is imported: three read paths of one way, "export".

/// How a stream's values are read: one of three read paths into exported memory, the time-based
/// metric streamer, Sysman telemetry, or the metric tracer. Shown and compared by
/// [`ReadPath::name`], the strings zescope has always written ("mmap", "file read", "device
/// copy", "streamer", "sysman") and "tracer"; grouped into ways by [`ReadPath::way`] ("export",
/// "streamer", "sysman", "tracer": `serve`'s `source` label and `--via`'s words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadPath {
    /// Exported memory, `mmap(PROT_READ, MAP_SHARED)` of the DMA-BUF, reads bracketed by
    /// DMA_BUF_IOCTL_SYNC.
    Mapped,
    /// Exported memory that is a regular file or a memfd not sealed against shrinking: a
    /// mapping could fault (SIGBUS) if it shrank, so each read is a `pread`.
    FileRead,
    /// Exported memory that cannot be mapped: each read copies the import into host memory on
    /// the device.
    DeviceCopy,
    /// The time-based metric streamer (`zetMetricStreamer*`).
    Streamer,
    /// Device telemetry through Sysman.
    Sysman,
    /// The metric tracer and its decoder (`zetMetricTracer*`, `zetMetricDecoder*`): each
    /// decoded event a sample at its own time.
    Tracer,
}

impl ReadPath {
    /// Every read path, in the order above.
    pub const ALL: [ReadPath; 6] = [
        ReadPath::Mapped,
        ReadPath::FileRead,
        ReadPath::DeviceCopy,
        ReadPath::Streamer,
        ReadPath::Sysman,
        ReadPath::Tracer,
    ];

    /// The name zescope shows and writes: "mmap", "file read", "device copy", "streamer",
    /// "sysman", "tracer".
    pub fn name(self) -> &'static str {
        match self {
            ReadPath::Mapped => "mmap",
            ReadPath::FileRead => "file read",
            ReadPath::DeviceCopy => "device copy",
            ReadPath::Streamer => "streamer",
            ReadPath::Sysman => "sysman",
            ReadPath::Tracer => "tracer",
        }
    }

    /// The read path named `name` (the inverse of [`ReadPath::name`]).
    pub fn from_name(name: &str) -> Option<ReadPath> {
        ReadPath::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Is it one of the ways into exported memory?
    pub fn is_exported_memory(self) -> bool {
        matches!(self, ReadPath::Mapped | ReadPath::FileRead | ReadPath::DeviceCopy)
    }

    /// Its way: "export" for the three into exported memory, else its name ("streamer",
    /// "sysman", "tracer"). `serve` labels series with it (`source`), and `--via` takes it.
    pub fn way(self) -> &'static str {
        if self.is_exported_memory() { "export" } else { self.name() }
    }

    /// How a group read this way is shown beside it: what its stream's `layout` says of how it
    /// is read (the streamer's "streamer (1 ms, 4 reports per notification)", the tracer's
    /// "tracer (32 KiB per notification)", any way's own words), except for exported memory,
    /// whose layout names the memory's format rather than the way: "exported memory".
    pub fn shown(self, layout: &str) -> &str {
        if self.is_exported_memory() { Via::Export.describe() } else { layout }
    }

    /// The choice that asks for its way (`None` for Sysman: telemetry is asked for on its own,
    /// not as a way to read groups).
    pub fn via(self) -> Option<Via> {
        match self {
            ReadPath::Mapped | ReadPath::FileRead | ReadPath::DeviceCopy => Some(Via::Export),
            ReadPath::Streamer => Some(Via::Streamer),
            ReadPath::Tracer => Some(Via::Tracer),
            ReadPath::Sysman => None,
        }
    }
}

impl std::fmt::Display for ReadPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a run reads its metric groups: each the best way it offers (`Auto`), or every group one
/// way of [`ReadPath`] (exported memory in whichever of its read paths a buffer allows). Saved
/// as the variant's name (settings, `RunConfig`) and as [`Via::name`] (sessions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Via {
    /// Exported memory where the group offers it, else the time-based streamer; the tracer for
    /// tracer-based groups.
    #[default]
    Auto,
    /// Exported memory only (a group that exports none cannot be read).
    Export,
    /// The time-based metric streamer only (`zetMetricStreamer*` + Calculate).
    Streamer,
    /// The metric tracer only (`zetMetricTracer*` + decoder): tracer-based groups.
    Tracer,
}

impl Via {
    /// Every choice, in the order the window and `--help` list them.
    pub const ALL: [Via; 4] = [Via::Auto, Via::Export, Via::Streamer, Via::Tracer];

    /// `auto`, or the way it asks for ([`ReadPath::way`]: `export`, `streamer`, `tracer`): the
    /// command line's and the session's word for it.
    pub fn name(self) -> &'static str {
        match ReadPath::ALL.into_iter().find(|p| p.via() == Some(self)) {
            Some(p) => p.way(),
            None => "auto",
        }
    }

    /// The choice named `name` (the inverse of [`Via::name`]).
    pub fn from_name(name: &str) -> Option<Via> {
        Via::ALL.into_iter().find(|v| v.name() == name)
    }

    /// "auto, export, streamer or tracer": every name, for a message.
    pub fn names() -> String {
        let names: Vec<&str> = Via::ALL.iter().map(|v| v.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }

    /// What the way reads with, for `--via`'s help: "exported memory", "the time-based metric
    /// streamer", "the metric tracer: tracer-based groups" ("the first way that reads the
    /// group" for `Via::Auto`).
    pub fn help(self) -> &'static str {
        match self {
            Via::Auto => "the first way that reads the group",
            Via::Export => "exported memory",
            Via::Streamer => "the time-based metric streamer",
            Via::Tracer => "the metric tracer: tracer-based groups",
        }
    }

    /// How a group read this way is described to the user: "exported memory", "streamer",
    /// "tracer" ("auto" for `Via::Auto`, which no group is read by).
    pub fn describe(self) -> &'static str {
        match self {
            Via::Export => "exported memory",
            v => v.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_paths_keep_the_names_zescope_has_always_shown() {
        let names: Vec<&str> = ReadPath::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["mmap", "file read", "device copy", "streamer", "sysman", "tracer"]);
        for p in ReadPath::ALL {
            assert_eq!(ReadPath::from_name(p.name()), Some(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!(ReadPath::from_name("map"), None);
        assert_eq!(ReadPath::ALL.iter().filter(|p| p.is_exported_memory()).count(), 3);
    }

    #[test]
    fn a_choice_is_named_by_the_way_it_asks_for() {
        let names: Vec<&str> = Via::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names, ["auto", "export", "streamer", "tracer"], "the words `--via` has always taken");
        assert_eq!(Via::names(), "auto, export, streamer or tracer");
        for v in Via::ALL {
            assert_eq!(Via::from_name(v.name()), Some(v));
        }
        assert_eq!(Via::from_name("sysman"), None, "telemetry is not a way to read groups");
        let ways: Vec<&str> = ReadPath::ALL.iter().map(|p| p.way()).collect();
        assert_eq!(ways, ["export", "export", "export", "streamer", "sysman", "tracer"]);
        for p in ReadPath::ALL {
            assert_eq!(p.via().map(Via::name), p.via().map(|_| p.way()), "{p}");
        }
        assert_eq!(ReadPath::Sysman.via(), None);
        let described: Vec<&str> = Via::ALL.iter().map(|v| v.describe()).collect();
        assert_eq!(described, ["auto", "exported memory", "streamer", "tracer"], "the window's words");
        let shown: Vec<&str> = ReadPath::ALL.iter().map(|p| p.shown("its layout")).collect();
        assert_eq!(
            shown,
            ["exported memory", "exported memory", "exported memory", "its layout", "its layout", "its layout"],
            "a way is shown by what its stream says of itself, exported memory by its way"
        );
    }
}
