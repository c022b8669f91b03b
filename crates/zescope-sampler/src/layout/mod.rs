//! Decoding exported memory is data, not code.
//!
//! The extension leaves the bytes of exported memory to each implementation, so zescope reads
//! them through a *layout*: a RON file (`assets/layouts/*.ron`, documented in
//! `docs/layout-format.md`) that says which driver/device/group it fits, where an optional
//! seqlock word and device timestamp are, and, per counter, its offset, value type, kind
//! (cumulative → plotted as a rate; gauge → as is; busy → a share of the time, %; state → as
//! is, drawn as steps), unit and scale. Supporting a new driver is a
//! new file, not new code. [`decode`] turns a layout into a bounds-checked [`decode::Decoder`]
//! for one buffer.
//!
//! Layout files come from driver packages and users, so loading treats them as untrusted: a
//! file is read only when it is a regular file of at most [`MAX_LAYOUT_FILE`] bytes (checked
//! before reading; the read stops at the limit plus one byte), and parsing it allocates at most
//! a few times its size (the text, then the parsed names and counters: about 4× the file size
//! in all). Every error names the file (and RON's line and column or the layout and field).
//!
//! A layout without `magic` whose `matches` accept every driver (`()`, or `driver: Any` with no
//! device or group, `"*"` counting as none) would decode any buffer of any driver as its
//! counters: such a *catch-all* is logged as a warning when loaded, listed by `zescope doctor`,
//! and applies only to the simulated driver unless the file sets `allow_any_driver: true`.

pub mod decode;
pub mod glob;
pub mod kinds;

use serde::{Deserialize, Serialize};

pub use decode::{Decoder, DecoderField, LayoutError};

/// Layouts shipped with zescope (compiled in, so an installed binary needs no data files).
pub const BUILT_IN: &[(&str, &str)] = &[
    ("ze-sim-groups.ron", include_str!("../../../../assets/layouts/ze-sim-groups.ron")),
    ("ze-sim-generic.ron", include_str!("../../../../assets/layouts/ze-sim-generic.ron")),
];

/// Where one driver's exported memory keeps its counters (one entry of a layout file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// Unique name, shown in the diagnostics and in `StreamInfo::layout`.
    pub name: String,
    /// What the layout is for (free text).
    #[serde(default)]
    pub description: String,
    /// The layout applies when any of these matches.
    pub matches: Vec<Match>,
    /// A u32 the buffer must hold, to catch a layout applied to the wrong memory.
    #[serde(default)]
    pub magic: Option<Magic>,
    /// Offset of a u64 sequence word: odd while the producer writes; a snapshot is torn-free when
    /// it reads the same even value before and after copying the data.
    #[serde(default)]
    pub seqlock: Option<usize>,
    /// Where the device timestamp is; without one, samples are stamped with the host's time of the
    /// read.
    #[serde(default)]
    pub timestamp: Option<Timestamp>,
    /// Where the counters are.
    pub counters: Counters,
    /// Lets a catch-all match (any driver, no device, no group) without `magic` apply to real
    /// drivers too (see the module docs).
    #[serde(default)]
    pub allow_any_driver: bool,
}

/// Largest layout file zescope reads.
pub const MAX_LAYOUT_FILE: u64 = 4 << 20;

/// Which buffers a layout is for. Unset fields match anything; `device` and `group` are globs
/// (`*`, `?`) on the names the driver reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Match {
    /// Which drivers: any, the simulated one, or by UUID prefix.
    pub driver: DriverMatch,
    /// Glob on the device name.
    pub device: Option<String>,
    /// Glob on the metric group name.
    pub group: Option<String>,
}

/// Which driver a layout is for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum DriverMatch {
    /// Every driver.
    #[default]
    Any,
    /// zescope's simulated driver.
    Simulated,
    /// A driver whose UUID (as printed by `zescope list`) starts with this.
    UuidPrefix(String),
}

/// A u32 at `offset` that must equal `value`, or the buffer is rejected.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Magic {
    /// Byte offset of the u32.
    pub offset: usize,
    /// The value it must hold.
    pub value: u32,
}

/// Where a buffer keeps its device timestamp and how to read it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timestamp {
    /// Offset of a u64 device timestamp.
    pub offset: usize,
    /// Device timer ticks per second (1e9 for nanoseconds).
    pub ticks_per_second: f64,
    /// How many low bits of the word the device timer fills (64 when unset): a timer narrower
    /// than its word wraps at 2^valid_bits, and the bits above are ignored.
    #[serde(default)]
    pub valid_bits: Option<u32>,
}

impl Timestamp {
    /// The bits of the raw word that hold time.
    pub fn mask(&self) -> u64 {
        match self.valid_bits {
            Some(b) if b < 64 => (1u64 << b) - 1,
            _ => u64::MAX,
        }
    }
}

/// Where a layout's counters are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Counters {
    /// Each counter spelled out.
    Explicit(Vec<Counter>),
    /// Counters follow the group's metrics in order, `stride` bytes apart from `first`; value
    /// type, kind and unit come from each metric's properties (result type; the kind from the
    /// metric type and unit, `kinds::exported_kind`: EVENT and THROUGHPUT metrics are
    /// cumulative, DURATION in a unit of time is busy time, RAW and FLAG are states, TIMESTAMP
    /// metrics are left out).
    MetricOrder {
        /// Byte offset of the first metric's value.
        first: usize,
        /// Bytes from one metric's value to the next (not 0).
        stride: usize,
    },
}

/// One counter of an `Explicit` layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counter {
    /// The metric's name as the driver reports it.
    pub metric: String,
    /// Byte offset of the raw value in the buffer.
    pub offset: usize,
    /// How the raw value is stored (little-endian).
    pub value: ValueType,
    /// Cumulative (plotted as a rate), gauge, busy time (plotted as a share, %) or state.
    pub kind: Kind,
    /// Unit of the scaled value (a unit of time for `Busy`).
    pub unit: String,
    /// Multiplies the raw value (e.g. 0.001 to turn mW into W).
    #[serde(default = "one")]
    pub scale: f64,
}

fn one() -> f64 {
    1.0
}

/// How a raw value is stored: unsigned, signed or floating point, by bit width (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValueType {
    /// Unsigned 8-bit.
    U8,
    /// Unsigned 16-bit.
    U16,
    /// Unsigned 32-bit.
    U32,
    /// Unsigned 64-bit.
    U64,
    /// Signed 32-bit.
    I32,
    /// Signed 64-bit.
    I64,
    /// IEEE 754 single precision.
    F32,
    /// IEEE 754 double precision.
    F64,
}

impl ValueType {
    /// Bytes the value takes.
    pub fn width(self) -> usize {
        match self {
            ValueType::U8 => 1,
            ValueType::U16 => 2,
            ValueType::U32 | ValueType::I32 | ValueType::F32 => 4,
            ValueType::U64 | ValueType::I64 | ValueType::F64 => 8,
        }
    }

    /// The modulus at which an unsigned counter wraps, for rate computation.
    pub fn wrap(self) -> Option<f64> {
        match self {
            ValueType::U8 => Some(256.0),
            ValueType::U16 => Some(65536.0),
            ValueType::U32 => Some(4294967296.0),
            ValueType::U64 => Some(18446744073709551616.0),
            _ => None,
        }
    }
}

/// How a counter's values are meant: a running total, a level, time busy or a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Only grows (wrapping at the type's width); shown as a rate per second.
    Cumulative,
    /// A level; shown as is.
    Gauge,
    /// A running total of time busy, in a unit of time ("ns", "us", "ms", "s": the counter's
    /// unit); shown as the share of the elapsed time it grew by, in %. Wraps as `Cumulative`.
    Busy,
    /// A state: an identifier, a flag, a raw reading (a context id, a throttle flag). Shown as
    /// read and drawn as steps; never turned into a rate, summed or averaged.
    State,
}

impl Kind {
    /// Is the raw value a running total (cumulative counter, busy time), which wraps at its
    /// type's width?
    pub fn is_running_total(self) -> bool {
        matches!(self, Kind::Cumulative | Kind::Busy)
    }
}

/// What the selection knows about the buffer's owner.
pub struct Owner<'a> {
    /// True for zescope's simulated driver.
    pub simulated: bool,
    /// The driver's UUID as lowercase hex.
    pub driver_uuid: &'a str,
    /// The device's name.
    pub device: &'a str,
    /// The metric group's name.
    pub group: &'a str,
}

impl Match {
    fn matches(&self, t: &Owner) -> bool {
        let driver = match &self.driver {
            DriverMatch::Any => true,
            DriverMatch::Simulated => t.simulated,
            DriverMatch::UuidPrefix(p) => t.driver_uuid.starts_with(p.as_str()),
        };
        driver
            && self.device.as_deref().is_none_or(|g| glob::matches(g, t.device))
            && self.group.as_deref().is_none_or(|g| glob::matches(g, t.group))
    }

    /// Accepts every buffer of every driver: any driver, no device or group pattern (`*` is no
    /// pattern).
    pub fn is_catch_all(&self) -> bool {
        let open = |g: &Option<String>| g.as_deref().is_none_or(|g| g.chars().all(|c| c == '*'));
        self.driver == DriverMatch::Any && open(&self.device) && open(&self.group)
    }

    /// How specific the match is: more fields set wins.
    fn specificity(&self) -> u32 {
        u32::from(self.driver != DriverMatch::Any)
            + u32::from(self.device.is_some())
            + 2 * u32::from(self.group.is_some())
    }
}

/// Why a layout file was rejected.
#[derive(Debug, thiserror::Error)]
#[error("layout file {origin}: {message}")]
pub struct LayoutFileError {
    /// The file's path (or built-in name).
    pub origin: String,
    /// What is wrong with it, naming the layout and field where it can.
    pub message: String,
}

/// All known layouts, in priority order.
#[derive(Clone, Debug, Default)]
pub struct LayoutSet {
    /// Each layout with the file it came from, highest priority first.
    pub layouts: Vec<(String, Layout)>,
}

impl LayoutSet {
    /// The built-in layouts.
    pub fn built_in() -> LayoutSet {
        let mut set = LayoutSet::default();
        for (name, text) in BUILT_IN {
            set.add_file(name, text).expect("built-in layouts parse (checked by tests)");
        }
        set
    }

    /// The built-in layouts, then the system's (`/usr/share/zescope/layouts/*.ron`, where a
    /// package puts layouts for more drivers), then the user's
    /// (`$XDG_CONFIG_HOME/zescope/layouts/*.ron`): later ones win at equal specificity. Files
    /// that cannot be used are skipped and returned as errors to show.
    pub fn installed() -> (LayoutSet, Vec<LayoutFileError>) {
        let mut set = LayoutSet::built_in();
        let mut errors = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from("/usr/share/zescope/layouts")];
        if let Some(d) = user_dir() {
            dirs.push(d);
        }
        for dir in dirs {
            if let Ok(entries) = std::fs::read_dir(&dir) {
                let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
                paths.sort();
                for p in paths.into_iter().filter(|p| p.extension().is_some_and(|x| x == "ron")) {
                    let origin = p.display().to_string();
                    let r = read_layout_file(&p).and_then(|text| set.add_file(&origin, &text));
                    if let Err(e) = r {
                        errors.push(e);
                    }
                }
            }
        }
        (set, errors)
    }

    /// Adds the layouts of one RON file (a single `Layout` or a list of them). Later files take
    /// precedence over earlier ones at equal specificity.
    pub fn add_file(&mut self, origin: &str, text: &str) -> Result<usize, LayoutFileError> {
        let err = |message: String| LayoutFileError { origin: origin.to_owned(), message };
        if text.len() as u64 > MAX_LAYOUT_FILE {
            return Err(err("larger than 4 MiB; not a layout".into()));
        }
        let parsed: Vec<Layout> = match ron::from_str::<Vec<Layout>>(text) {
            Ok(v) => v,
            Err(list_err) => match ron::from_str::<Layout>(text) {
                Ok(l) => vec![l],
                Err(_) if text.trim_start().starts_with('[') => return Err(err(list_err.to_string())),
                Err(e) => return Err(err(e.to_string())),
            },
        };
        for l in &parsed {
            l.check().map_err(|m| err(format!("layout {:?}: {m}", l.name)))?;
            if l.is_catch_all() {
                log::warn!("layout file {origin}: {}", l.catch_all_warning());
            }
        }
        let n = parsed.len();
        for l in parsed.into_iter().rev() {
            self.layouts.insert(0, (origin.to_owned(), l));
        }
        Ok(n)
    }

    /// The catch-all layouts (see the module docs), with the file each came from.
    pub fn catch_alls(&self) -> impl Iterator<Item = (&str, &Layout)> {
        self.layouts.iter().filter(|(_, l)| l.is_catch_all()).map(|(o, l)| (o.as_str(), l))
    }

    /// The layout [`LayoutSet::select`] picks for `t`, when one of its matches names `t`'s group:
    /// a catch-all layout does not describe the events a tracer-based group's memory holds.
    pub fn select_naming_group(&self, t: &Owner) -> Option<&Layout> {
        self.select(t).filter(|l| l.matches.iter().any(|m| m.group.is_some() && m.matches(t)))
    }

    /// The best layout for `t`: the most specific match; among equals, the one added last. A
    /// catch-all match of a layout without `magic` applies to the simulated driver only, unless
    /// the layout says `allow_any_driver: true`.
    pub fn select(&self, t: &Owner) -> Option<&Layout> {
        let mut best: Option<(u32, &Layout)> = None;
        for (_, l) in &self.layouts {
            // A catch-all without magic is for the simulated driver unless the file allows more.
            let allowed = |m: &Match| l.magic.is_some() || !m.is_catch_all() || l.allow_any_driver || t.simulated;
            let usable = |m: &&Match| allowed(m) && m.matches(t);
            if let Some(s) = l.matches.iter().filter(usable).map(Match::specificity).max()
                && best.is_none_or(|(b, _)| s > b)
            {
                best = Some((s, l));
            }
        }
        best.map(|(_, l)| l)
    }
}

/// Read a layout file: a regular file of at most [`MAX_LAYOUT_FILE`] bytes, checked before
/// reading, as UTF-8 text.
pub fn read_layout_file(path: &std::path::Path) -> Result<String, LayoutFileError> {
    use std::io::Read;
    let err = |message: String| LayoutFileError { origin: path.display().to_string(), message };
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
    let f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| err(format!("cannot open: {e}")))?;
    let meta = f.metadata().map_err(|e| err(format!("cannot stat: {e}")))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    if meta.len() > MAX_LAYOUT_FILE {
        return Err(err(format!("{} bytes, larger than 4 MiB; not a layout", meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_LAYOUT_FILE + 1).read_to_end(&mut bytes).map_err(|e| err(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_LAYOUT_FILE {
        return Err(err("grew beyond 4 MiB while being read; not a layout".into()));
    }
    String::from_utf8(bytes)
        .map_err(|e| err(format!("not text (invalid UTF-8 at byte {})", e.utf8_error().valid_up_to())))
}

impl Layout {
    /// No `magic`, and a match that accepts every driver (see the module docs).
    pub fn is_catch_all(&self) -> bool {
        self.magic.is_none() && self.matches.iter().any(Match::is_catch_all)
    }

    /// What the log and `zescope doctor` say about a catch-all layout.
    pub fn catch_all_warning(&self) -> String {
        let scope = if self.allow_any_driver {
            "applies to EVERY driver (allow_any_driver: true)"
        } else {
            "applies to the simulated driver only (set allow_any_driver: true to use it for others)"
        };
        format!(
            "layout {:?} has no magic and matches any driver: it would decode any buffer as its counters; it {scope}",
            self.name
        )
    }

    /// Checks what can be checked without a buffer.
    fn check(&self) -> Result<(), String> {
        if self.matches.is_empty() {
            return Err("`matches` is empty: the layout would never apply".into());
        }
        if let Some(ts) = &self.timestamp
            && !(ts.ticks_per_second.is_finite() && ts.ticks_per_second > 0.0)
        {
            return Err(format!("timestamp.ticks_per_second = {} must be a positive number", ts.ticks_per_second));
        }
        if let Some(ts) = &self.timestamp
            && ts.valid_bits.is_some_and(|b| !(8..=64).contains(&b))
        {
            return Err(format!("timestamp.valid_bits = {:?} must be between 8 and 64", ts.valid_bits));
        }
        match &self.counters {
            Counters::Explicit(cs) => {
                if cs.is_empty() {
                    return Err("`counters` is empty".into());
                }
                for c in cs {
                    if !c.scale.is_finite() {
                        return Err(format!("counter {:?}: scale must be finite", c.metric));
                    }
                    if c.kind == Kind::Busy && kinds::unit_seconds(&c.unit).is_none() {
                        return Err(format!(
                            "counter {:?}: kind Busy needs a unit of time (\"ns\", \"us\", \"ms\" or \"s\"), not {:?}",
                            c.metric, c.unit
                        ));
                    }
                }
            }
            Counters::MetricOrder { stride, .. } if *stride == 0 => {
                return Err("MetricOrder stride must not be 0".into());
            }
            Counters::MetricOrder { .. } => {}
        }
        Ok(())
    }
}

/// The user's layout directory, `$XDG_CONFIG_HOME/zescope/layouts` (`~/.config/…` when that is
/// unset); `None` without a home directory.
pub fn user_dir() -> Option<std::path::PathBuf> {
    directories::ProjectDirs::from("", "", "zescope").map(|d| d.config_dir().join("layouts"))
}

/// Where to add a layout, for hints: the user's real layout directory (`dir`, from [`user_dir`])
/// and the installed copies of the built-in ones to start from; no source-tree paths.
pub fn where_to_add(dir: Option<&std::path::Path>) -> String {
    let dir = dir.map_or("$XDG_CONFIG_HOME/zescope/layouts".to_owned(), |d| d.display().to_string());
    format!("{dir}/ (start from a copy in /usr/share/zescope/layouts/; `man zescope` describes the files)")
}

#[cfg(test)]
mod where_tests {
    use super::where_to_add;

    #[test]
    fn the_hint_names_the_real_directory_and_no_source_tree_path() {
        let dir = std::path::Path::new("/srv/cfg/zescope/layouts");
        let hint = where_to_add(Some(dir));
        assert!(hint.starts_with("/srv/cfg/zescope/layouts/"), "{hint}");
        assert!(!hint.contains("docs/") && !hint.contains("~/.config"), "{hint}");
        assert!(where_to_add(None).contains("$XDG_CONFIG_HOME"));
    }
}
