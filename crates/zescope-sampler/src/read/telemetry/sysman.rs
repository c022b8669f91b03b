//! Device telemetry through Sysman, for its way (`mod.rs`). One stream per
//! device ("Telemetry", layout and read path "sysman") whose series are the domains the driver
//! offers: frequency domains (actual, requested, TDP and efficient clock, throttle reasons),
//! power domains (watts from the energy counter, and the energy total since the run started),
//! temperature sensors, engine groups (utilisation from active time) and memory modules (used,
//! total, read and write bandwidth).
//!
//! Every piece is optional: one the driver does not offer, or whose first read fails, is left out
//! and named once in the run's notices; one that fails later gives no values from then on (one
//! notice). Only ZE_RESULT_ERROR_DEVICE_LOST ends the run. Telemetry is read at most every
//! [`MIN_PERIOD`] (Sysman queries are slower than a memory read, and the values do not move
//! faster). Counters (energy, active time, bytes) that go backwards — they wrapped, or the
//! driver reset them — or leap beyond what the device can do give no value for that read, and the
//! next read goes on from the new value (`counters`: one notice per domain the first time); the
//! energy total misses that interval. A piece a driver answers with nothing usable — no sensors,
//! memory bandwidth counters and maximum all zero — is left out with one notice.

use std::time::{Duration, Instant};

use level_zero_sys::*;

use crate::layout::Kind;
use zescope_ze::{Device, Domain, Sysman, ZeError};

use super::counters::{Anchor, Ceiling};
use crate::host::monotonic_ns;
use crate::protocol::SeriesInfo;
use crate::protocol::telemetry::throttle_description;
use crate::read::batch::Pieces;

/// Time between the deadlines of two telemetry reads (the sampling interval when that is longer;
/// each read on the first tick within half an interval of its deadline).
pub(crate) const MIN_PERIOD: Duration = Duration::from_millis(100);

enum Source {
    Freq(Domain<zes_freq_handle_t>),
    Power { d: Domain<zes_pwr_handle_t>, energy: Anchor, ceiling: Ceiling, total_j: f64 },
    Temp(Domain<zes_temp_handle_t>),
    Engine { d: Domain<zes_engine_handle_t>, active: Anchor },
    Memory { d: Domain<zes_mem_handle_t>, bandwidth: Option<(Anchor, Anchor, Ceiling)> },
}

impl Source {
    /// The run had a hole since the last read: no rate from the next (`Anchor::after_hole`).
    fn after_hole(&mut self) {
        match self {
            Source::Power { energy, .. } => energy.after_hole(),
            Source::Engine { active, .. } => active.after_hole(),
            Source::Memory { bandwidth: Some((r, w, _)), .. } => {
                r.after_hole();
                w.after_hole();
            }
            _ => {}
        }
    }

    /// Reads whose counter went backwards or leapt, so far.
    fn reanchored(&self) -> u64 {
        match self {
            Source::Power { energy, .. } => energy.reanchored,
            Source::Engine { active, .. } => active.reanchored,
            Source::Memory { bandwidth: Some((r, w, _)), .. } => r.reanchored + w.reanchored,
            _ => 0,
        }
    }
}

/// Engine utilisation above this (%) is a counter that leapt; up to it, a driver's two clocks
/// disagreeing slightly (shown as 100 %).
const BUSY_CEILING: Ceiling = Ceiling(150.0);

struct Item {
    source: Source,
    /// Its first column in the row.
    first: usize,
    /// How many columns it fills.
    columns: usize,
    /// What it is, for the notice when it stops answering.
    label: String,
    on: bool,
    /// A notice said its counter went backwards or leapt.
    told_reanchor: bool,
}

/// Reads the telemetry of one device at each tick (at most every `MIN_PERIOD`).
pub(crate) struct TelemetryReader {
    items: Vec<Item>,
    row: Vec<f64>,
    period: Duration,
    /// Half the run's interval: a tick this much before a read's deadline takes it (ticks come
    /// a little late or early; the deadline is on the grid of the first read).
    slack: Duration,
    last_read: Option<Instant>,
    /// The next read's deadline: the first read's time plus whole periods.
    due: Option<Instant>,
}

/// A frequency in MHz, or NaN where the driver says "unknown" (negative).
fn mhz(v: f64) -> f64 {
    if v >= 0.0 { v } else { f64::NAN }
}

fn series(name: String, description: &str, unit: &str) -> SeriesInfo {
    SeriesInfo { name, description: description.to_owned(), unit: unit.to_owned(), kind: Kind::Gauge, wrap: None }
}

fn engine_name(kind: zes_engine_group_t, counts: &mut [u32; 16]) -> String {
    let single = |what: &str, counts: &mut [u32; 16]| {
        let k = counts[kind as usize % 16];
        counts[kind as usize % 16] += 1;
        format!("{what} engine {k}")
    };
    match kind {
        ZES_ENGINE_GROUP_ALL => "All engines".into(),
        ZES_ENGINE_GROUP_COMPUTE_ALL => "Compute engines".into(),
        ZES_ENGINE_GROUP_MEDIA_ALL => "Media engines".into(),
        ZES_ENGINE_GROUP_COPY_ALL => "Copy engines".into(),
        ZES_ENGINE_GROUP_RENDER_ALL => "Render engines".into(),
        ZES_ENGINE_GROUP_3D_ALL => "3D engines".into(),
        ZES_ENGINE_GROUP_3D_RENDER_COMPUTE_ALL => "3D, render and compute engines".into(),
        ZES_ENGINE_GROUP_COMPUTE_SINGLE => single("Compute", counts),
        ZES_ENGINE_GROUP_RENDER_SINGLE => single("Render", counts),
        ZES_ENGINE_GROUP_MEDIA_DECODE_SINGLE => single("Media decode", counts),
        ZES_ENGINE_GROUP_MEDIA_ENCODE_SINGLE => single("Media encode", counts),
        ZES_ENGINE_GROUP_COPY_SINGLE => single("Copy", counts),
        ZES_ENGINE_GROUP_MEDIA_ENHANCEMENT_SINGLE => single("Media enhancement", counts),
        ZES_ENGINE_GROUP_3D_SINGLE => single("3D", counts),
        other => format!("Engine group {other}"),
    }
}

fn temp_name(kind: zes_temp_sensors_t) -> String {
    match kind {
        ZES_TEMP_SENSORS_GLOBAL => "Device temperature".into(),
        ZES_TEMP_SENSORS_GPU => "GPU temperature".into(),
        ZES_TEMP_SENSORS_MEMORY => "Memory temperature".into(),
        ZES_TEMP_SENSORS_GLOBAL_MIN => "Device temperature (min)".into(),
        ZES_TEMP_SENSORS_GPU_MIN => "GPU temperature (min)".into(),
        ZES_TEMP_SENSORS_MEMORY_MIN => "Memory temperature (min)".into(),
        other => format!("Temperature sensor {other}"),
    }
}

/// " (tile N)" for a domain of a sub-device.
fn tile(on_sub: ze_bool_t, id: u32) -> String {
    if on_sub != 0 { format!(" (tile {id})") } else { String::new() }
}

/// The telemetry stream of `device`: a reader and its series, or `None` when the device offers
/// none (why is in `notices`: one line for the pieces the driver offers none of, one for each it
/// refused). An error only for a lost device.
pub(crate) fn plan(
    device: &Device,
    interval: Duration,
    notices: &mut Vec<String>,
) -> Result<Option<(TelemetryReader, Vec<SeriesInfo>)>, ZeError> {
    let sysman = match Sysman::open(device) {
        Ok(s) => s,
        Err(e) if crate::optional::is_fatal(&e) => return Err(e),
        Err(e) => {
            notices.push(crate::optional::off("telemetry (Sysman)", &e));
            return Ok(None);
        }
    };
    let mut b = Builder { items: Vec::new(), series: Vec::new(), notices, absent: Vec::new() };
    b.frequency(&sysman)?;
    b.power(&sysman)?;
    b.temperature(&sysman)?;
    b.engines(&sysman)?;
    b.memory(&sysman)?;
    let Builder { items, mut series, notices, absent } = b;
    // One line for what an NPU, say, has none of ("no power domains, temperature sensors or
    // memory modules"), where each was a warning of its own.
    if let Some((last, rest)) = absent.split_last() {
        let list = match rest {
            [] => last.to_string(),
            _ => format!("{} or {last}", rest.join(", ")),
        };
        notices.push(format!("telemetry: the driver offers no {list}"));
    }
    if items.is_empty() {
        return Ok(None);
    }
    // Names must be unique within the stream.
    for i in 1..series.len() {
        let mut n = 2;
        let base = series[i].name.clone();
        while series[..i].iter().any(|s| s.name == series[i].name) {
            series[i].name = format!("{base} ({n})");
            n += 1;
        }
    }
    let row = vec![f64::NAN; series.len()];
    Ok(Some((TelemetryReader::new(items, row, interval), series)))
}

struct Builder<'a> {
    items: Vec<Item>,
    series: Vec<SeriesInfo>,
    notices: &'a mut Vec<String>,
    /// The pieces the driver offers none of, said in one notice at the end.
    absent: Vec<&'static str>,
}

impl Builder<'_> {
    /// The domains of one piece, or a notice and none.
    fn domains<T>(&mut self, piece: &'static str, r: Result<Vec<T>, ZeError>) -> Result<Vec<T>, ZeError> {
        match r {
            Ok(v) if v.is_empty() => {
                self.absent.push(piece);
                Ok(v)
            }
            Ok(v) => Ok(v),
            Err(e) if crate::optional::is_fatal(&e) => Err(e),
            // compute-runtime since 2026-05 gives engine groups only to root.
            Err(e) if e.code == ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS => {
                self.notices.push(format!(
                    "telemetry of {piece} is off for this run: the driver gives them only to a privileged user \
                     ({} answered {}); `zescope doctor` names the capability or setting that enables them",
                    e.call,
                    e.name()
                ));
                Ok(Vec::new())
            }
            Err(e) => {
                self.notices.push(crate::optional::off(&format!("telemetry of {piece}"), &e));
                Ok(Vec::new())
            }
        }
    }

    /// The first read of a domain: Ok(Some) to keep it, Ok(None) (and a notice) to leave it out.
    fn first<T>(&mut self, label: &str, r: Result<T, ZeError>) -> Result<Option<T>, ZeError> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(e) if crate::optional::is_fatal(&e) => Err(e),
            Err(e) => {
                self.notices.push(crate::optional::off(&format!("telemetry of {label}"), &e));
                Ok(None)
            }
        }
    }

    fn push(&mut self, source: Source, label: String, series: Vec<SeriesInfo>) {
        let first = self.series.len();
        self.items.push(Item { source, first, columns: series.len(), label, on: true, told_reanchor: false });
        self.series.extend(series);
    }

    fn frequency(&mut self, s: &Sysman) -> Result<(), ZeError> {
        for (d, p) in self.domains("frequency domains", s.frequency_domains())? {
            let what = match p.r#type {
                ZES_FREQ_DOMAIN_GPU => "GPU frequency".to_owned(),
                ZES_FREQ_DOMAIN_MEMORY => "Memory frequency".to_owned(),
                other => format!("Frequency domain {other}"),
            } + &tile(p.onSubdevice, p.subdeviceId);
            if self.first(&what, d.state())?.is_none() {
                continue;
            }
            let reasons = what.replace("frequency", "throttle reasons");
            let series = vec![
                series(format!("{what} actual"), "Actual clock (zesFrequencyGetState)", "MHz"),
                series(format!("{what} requested"), "Clock requested by the driver or the user", "MHz"),
                series(format!("{what} TDP"), "Highest clock within the thermal design power", "MHz"),
                series(format!("{what} efficient"), "Efficient minimum clock", "MHz"),
                // A bitmask of reasons: a state (drawn as steps, never averaged), not a quantity.
                SeriesInfo { kind: Kind::State, ..series(reasons, &throttle_description(), "") },
            ];
            self.push(Source::Freq(d), what, series);
        }
        Ok(())
    }

    fn power(&mut self, s: &Sysman) -> Result<(), ZeError> {
        let domains = self.domains("power domains", s.power_domains())?;
        let n = domains.len();
        for (i, (d, p)) in domains.into_iter().enumerate() {
            let what = match (p.onSubdevice != 0, n) {
                (true, _) => format!("Tile {} power", p.subdeviceId),
                (false, 1) => "Package power".to_owned(),
                (false, _) => format!("Power domain {i}"),
            };
            let Some(e) = self.first(&what, d.energy())? else { continue };
            let energy = what.replace("power", "energy").replace("Power domain", "Energy of power domain");
            let series = vec![
                series(what.clone(), "Power from the energy counter (zesPowerGetEnergyCounter)", "W"),
                series(energy, "Energy used since the run started", "J"),
            ];
            let (energy, ceiling) = (Anchor::new(e.energy, e.timestamp), Ceiling::power(p.maxLimit, p.defaultLimit));
            self.push(Source::Power { d, energy, ceiling, total_j: 0.0 }, what, series);
        }
        Ok(())
    }

    fn temperature(&mut self, s: &Sysman) -> Result<(), ZeError> {
        for (d, p) in self.domains("temperature sensors", s.temperature_sensors())? {
            let what = temp_name(p.r#type) + &tile(p.onSubdevice, p.subdeviceId);
            if self.first(&what, d.celsius())?.is_none() {
                continue;
            }
            self.push(Source::Temp(d), what.clone(), vec![series(what, "zesTemperatureGetState", "°C")]);
        }
        Ok(())
    }

    fn engines(&mut self, s: &Sysman) -> Result<(), ZeError> {
        let mut counts = [0u32; 16];
        for (d, p) in self.domains("engine groups", s.engine_groups())? {
            let what = engine_name(p.r#type, &mut counts) + &tile(p.onSubdevice, p.subdeviceId);
            let Some(a) = self.first(&what, d.activity())? else { continue };
            let name = format!("{what} utilisation");
            let series = vec![series(name, "Share of time busy (zesEngineGetActivity)", "%")];
            self.push(Source::Engine { d, active: Anchor::new(a.activeTime, a.timestamp) }, what, series);
        }
        Ok(())
    }

    fn memory(&mut self, s: &Sysman) -> Result<(), ZeError> {
        let modules = self.domains("memory modules", s.memory_modules())?;
        let n = modules.len();
        for (i, (d, p)) in modules.into_iter().enumerate() {
            let what =
                if n == 1 { "Memory".to_owned() } else { format!("Memory {i}") } + &tile(p.onSubdevice, p.subdeviceId);
            if self.first(&what, d.state())?.is_none() {
                continue;
            }
            let mut series = vec![
                series(format!("{what} used"), "Allocated bytes (zesMemoryGetState: size - free)", "B"),
                series(format!("{what} total"), "Allocatable bytes (zesMemoryGetState)", "B"),
            ];
            // Bandwidth where the driver has it (many do not): two more columns.
            let bandwidth = match d.bandwidth() {
                // Some cards answer with every counter and the maximum at zero: nothing to plot.
                Ok(b) if b.readCounter == 0 && b.writeCounter == 0 && b.maxBandwidth == 0 => {
                    self.notices.push(format!(
                        "telemetry of {what} bandwidth is off: zesMemoryGetBandwidth answers zero counters and no \
                         maximum bandwidth"
                    ));
                    None
                }
                Ok(b) => {
                    series.push(self::series(format!("{what} read bandwidth"), "zesMemoryGetBandwidth", "B/s"));
                    series.push(self::series(format!("{what} write bandwidth"), "zesMemoryGetBandwidth", "B/s"));
                    let (r, w) = (Anchor::new(b.readCounter, b.timestamp), Anchor::new(b.writeCounter, b.timestamp));
                    Some((r, w, Ceiling::bandwidth(b.maxBandwidth)))
                }
                Err(e) if crate::optional::is_fatal(&e) => return Err(e),
                Err(e) => {
                    self.notices.push(crate::optional::off(&format!("telemetry of {what} bandwidth"), &e));
                    None
                }
            };
            self.push(Source::Memory { d, bandwidth }, what, series);
        }
        Ok(())
    }
}

impl TelemetryReader {
    fn new(items: Vec<Item>, row: Vec<f64>, interval: Duration) -> TelemetryReader {
        let period = interval.max(MIN_PERIOD);
        TelemetryReader { items, row, period, slack: interval / 2, last_read: None, due: None }
    }

    /// When its next read is due (`None` before the first: at once).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.due
    }

    /// One read when its deadline has come, within half an interval: a sample appended to
    /// `pieces`. Returns the samples added (0 or 1). The deadlines are the first read's time
    /// plus whole periods, so reads keep `MIN_PERIOD` (or the interval) on average whatever the
    /// ticks' jitter: a read due "100 ms after the last" missed every other tick of a 100 ms run
    /// that came a little early (6.5 reads a second). A domain that stops answering is turned
    /// off with a notice; only a lost device is an error.
    pub(crate) fn read(
        &mut self,
        now: Instant,
        notices: &mut Vec<String>,
        pieces: &mut Pieces,
    ) -> Result<u64, ZeError> {
        if self.due.is_some_and(|due| now + self.slack < due) {
            return Ok(0);
        }
        // As long a wait as makes a hole in a stream, or a pause.
        let hole = crate::timing::hole(self.period);
        if self.last_read.is_some_and(|t| now.duration_since(t) > hole) {
            self.items.iter_mut().for_each(|i| i.source.after_hole());
        }
        self.last_read = Some(now);
        self.due = Some(crate::timing::next_deadline(self.due, now, self.period));
        self.row.fill(f64::NAN);
        for item in &mut self.items {
            if !item.on {
                continue;
            }
            let out = &mut self.row[item.first..item.first + item.columns];
            match read_item(&mut item.source, out) {
                Ok(()) if item.source.reanchored() > 0 && !item.told_reanchor => {
                    item.told_reanchor = true;
                    notices.push(format!(
                        "telemetry of {}: a counter went backwards or leapt beyond what the device can do (the \
                         driver reset it, or misread it); such reads are left empty and counting goes on from the \
                         new value",
                        item.label
                    ));
                }
                Ok(()) => {}
                Err(e) if crate::optional::is_fatal(&e) => return Err(e),
                Err(e) => {
                    item.on = false;
                    out.fill(f64::NAN);
                    notices.push(crate::optional::off(&format!("telemetry of {}", item.label), &e));
                }
            }
        }
        Ok(pieces.push(monotonic_ns(), &self.row) as u64)
    }
}

fn read_item(source: &mut Source, out: &mut [f64]) -> Result<(), ZeError> {
    match source {
        Source::Freq(d) => {
            let s = d.state()?;
            out[0] = mhz(s.actual);
            out[1] = mhz(s.request);
            out[2] = mhz(s.tdp);
            out[3] = mhz(s.efficient);
            out[4] = s.throttleReasons as f64;
        }
        Source::Power { d, energy, ceiling, total_j } => {
            let e = d.energy()?;
            // µJ per µs is W.
            let (watts, delta) = energy.advance(e.energy, e.timestamp, 1.0, *ceiling);
            out[0] = watts;
            *total_j += delta.map_or(0.0, |d| d as f64 / 1e6);
            out[1] = *total_j;
        }
        Source::Temp(d) => out[0] = d.celsius()?,
        Source::Engine { d, active } => {
            let a = d.activity()?;
            let (busy, _) = active.advance(a.activeTime, a.timestamp, 100.0, BUSY_CEILING);
            out[0] = share(busy);
        }
        Source::Memory { d, bandwidth } => {
            let s = d.state()?;
            out[0] = s.size.saturating_sub(s.free) as f64;
            out[1] = s.size as f64;
            if let Some((r, w, ceiling)) = bandwidth {
                let b = d.bandwidth()?;
                // µs timestamps: bytes per µs × 1e6 is bytes per second.
                out[2] = r.advance(b.readCounter, b.timestamp, 1e6, *ceiling).0;
                out[3] = w.advance(b.writeCounter, b.timestamp, 1e6, *ceiling).0;
            }
        }
    }
    Ok(())
}

/// An engine's busy share from its rate: never more than 100 % (a driver's two clocks may
/// disagree slightly), and no share where there is no rate (after a hole, a re-anchor or too
/// short a span; `f64::min` would make that NaN a full 100 %).
fn share(busy: f64) -> f64 {
    if busy > 100.0 { 100.0 } else { busy }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads at `ticks` (ms after a start, as a run's ticks come: a little late, a little
    /// early); how many read.
    fn reads_at(interval_ms: u64, ticks: impl Iterator<Item = f64>) -> u64 {
        let mut r = TelemetryReader::new(Vec::new(), Vec::new(), Duration::from_millis(interval_ms));
        let (start, mut pieces, mut notices) = (Instant::now(), Pieces::default(), Vec::new());
        ticks.map(|ms| r.read(start + Duration::from_secs_f64(ms / 1e3), &mut notices, &mut pieces).unwrap()).sum()
    }

    #[test]
    fn telemetry_keeps_its_period_whatever_the_ticks_jitter() {
        // Ticks 0.3 ms late then 0.2 ms late by turns: every 100 ms tick reads (it read 6.5 a
        // second: a tick 99.9 ms after the last read waited for the next).
        let jitter = |k: u64| if k.is_multiple_of(2) { 0.3 } else { 0.2 };
        assert_eq!(reads_at(100, (0..60).map(|k| k as f64 * 100.0 + jitter(k))), 60);
        // At 50 ms, every other tick; at 30 ms, ten reads a second on average (the ticks nearest
        // the deadlines), not every fourth tick (120 ms).
        assert_eq!(reads_at(50, (0..120).map(|k| k as f64 * 50.0 + jitter(k))), 60);
        assert_eq!(reads_at(30, (0..200).map(|k| k as f64 * 30.0 + jitter(k))), 60);
        // At 1 ms, one read each 100 ticks; after a stall of a second, the next tick reads and the
        // grid starts again from there.
        let ticks = (0..1000).chain(2000..3000).map(|k| k as f64 + jitter(k));
        assert_eq!(reads_at(1, ticks), 20);
    }

    #[test]
    fn a_missing_rate_is_no_share_and_a_share_never_passes_100() {
        assert!(share(f64::NAN).is_nan());
        assert_eq!(share(100.4), 100.0);
        assert_eq!(share(37.5), 37.5);
    }

    #[test]
    fn single_engines_are_numbered_per_kind() {
        let mut c = [0; 16];
        assert_eq!(engine_name(ZES_ENGINE_GROUP_COMPUTE_SINGLE, &mut c), "Compute engine 0");
        assert_eq!(engine_name(ZES_ENGINE_GROUP_COPY_SINGLE, &mut c), "Copy engine 0");
        assert_eq!(engine_name(ZES_ENGINE_GROUP_COMPUTE_SINGLE, &mut c), "Compute engine 1");
        assert_eq!(engine_name(ZES_ENGINE_GROUP_COMPUTE_ALL, &mut c), "Compute engines");
    }
}
