//! Calculate: `zetMetricGroupCalculateMetricValues` and `...MultipleMetricValuesExp` over the
//! streamer's raw reports (`ops_stream.rs` documents their format).
//!
//! A call that asks for values and gives room for all of them is decoded straight into the
//! caller's array, one pass over the reports (each sub-device's set written beside the whole's);
//! the maximum-values type and a buffer too small for every set take the general path, which
//! builds the sets first and copies what fits. Both give the same values (a test pins it).

use level_zero_sys::*;

use crate::config::Signal;
use crate::instance::{Instance, MetricRef};
use crate::ops_driver::R;
use crate::ops_stream::{REPORT_MAGIC, report_words};

impl Instance {
    /// A Calculate call's checks before any report is read: its type, and that `raw` is whole
    /// reports of group `g` (their size in bytes).
    fn report_bytes(&self, g: usize, ty: zet_metric_group_calculation_type_t, raw: &[u8]) -> R<usize> {
        if ty > ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let report_bytes = 8 * report_words(self.groups[g].metrics.len());
        if !raw.len().is_multiple_of(report_bytes) {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        Ok(report_bytes)
    }

    /// Whether the report at the start of `r` is one of group `g`'s (its magic, metric count and
    /// group).
    fn is_report_of(&self, g: usize, r: &[u8]) -> bool {
        let word = |i: usize| u64::from_le_bytes(r[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let head = word(0);
        head as u32 == REPORT_MAGIC && (head >> 32) as usize == self.groups[g].metrics.len() && word(1) == g as u64 + 1
    }

    /// What Calculate's count query answers for `raw` of group `g`: the values one set holds,
    /// from the size alone (as Intel's driver does, `getCalculatedMetricCount`), after checking
    /// that `raw` is whole reports and that the first and last are this group's: a count query
    /// costs no decoding, so asking first and then calculating decodes once.
    pub(crate) fn calculate_count(&self, g: usize, ty: zet_metric_group_calculation_type_t, raw: &[u8]) -> R<usize> {
        let report_bytes = self.report_bytes(g, ty, raw)?;
        let grp = &self.groups[g];
        let reports = raw.len() / report_bytes;
        if reports > 0 && !(self.is_report_of(g, raw) && self.is_report_of(g, &raw[raw.len() - report_bytes..])) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        Ok(match ty {
            ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES if reports > 0 => grp.metrics.len(),
            ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES => 0,
            _ => reports * grp.metrics.len(),
        })
    }

    /// The value sets `zetMetricGroupCalculateMultipleMetricValuesExp` gives for group `g`: one
    /// per sub-device of a root device with several, else one.
    pub(crate) fn calculate_set_count(&self, g: usize) -> usize {
        self.devices[self.groups[g].device].subs.len().max(1)
    }

    /// Calculate: decodes whole raw reports of group `g` into one set of values (metric order,
    /// report after report). Anything that is not this group's reports is refused.
    pub(crate) fn calculate(
        &self,
        g: usize,
        ty: zet_metric_group_calculation_type_t,
        raw: &[u8],
    ) -> R<Vec<zet_typed_value_t>> {
        let report_bytes = self.report_bytes(g, ty, raw)?;
        let grp = &self.groups[g];
        let word = |r: &[u8], i: usize| u64::from_le_bytes(r[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        // How each metric's word reads, once a call rather than once a value.
        let reads: Vec<Read> = grp.metrics.iter().map(|m| Read::of(m.cfg.signal)).collect();
        let max_values = ty == ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES;
        let mut out = Vec::with_capacity(raw.len() / 8);
        let mut max = vec![f64::MIN; grp.metrics.len()];
        for r in raw.chunks_exact(report_bytes) {
            if !self.is_report_of(g, r) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            for (i, read) in reads.iter().enumerate() {
                let w = word(r, 2 + i);
                if max_values {
                    max[i] = max[i].max(read.value(w).as_f64().unwrap_or(0.0));
                    out.push(read.value(w));
                } else {
                    out.push(read.result(w));
                }
            }
        }
        if max_values && !out.is_empty() {
            let n = grp.metrics.len();
            let mut last: Vec<zet_typed_value_t> = out[out.len() - n..].to_vec();
            for (v, m) in last.iter_mut().zip(max) {
                *v = match v.r#type {
                    ZET_VALUE_TYPE_UINT64 => {
                        zet_typed_value_t { r#type: ZET_VALUE_TYPE_UINT64, value: zet_value_t { ui64: m as u64 } }
                    }
                    _ => zet_typed_value_t { r#type: ZET_VALUE_TYPE_FLOAT64, value: zet_value_t { fp64: m } },
                };
            }
            crate::catalog::retype(&grp.metrics, &mut last);
            return Ok(last);
        }
        Ok(out)
    }
}

/// How Calculate reads one metric's word of a report, as `streamer_advance` wrote it: counts,
/// times and built-in ids as integers, a built-in flag as bool8, any other level as f64 bits;
/// a modelled metric's value is then put in its result type (`catalog::retype`).
#[derive(Clone, Copy)]
enum Read {
    /// A built-in flag: bool8.
    Flag,
    /// An integer (u64); a modelled metric's in its result type.
    Integer(Option<crate::catalog::model::ResultType>),
    /// f64 bits; a modelled metric's in its result type.
    Float(Option<crate::catalog::model::ResultType>),
}

impl Read {
    fn of(sig: Signal) -> Read {
        let result = match sig {
            Signal::Modelled(m) => Some(m.result),
            _ => None,
        };
        if sig.result_type() == ZET_VALUE_TYPE_BOOL8 && sig.is_integer_level() {
            Read::Flag
        } else if sig == Signal::Timestamp || sig.is_cumulative() || sig.is_integer_level() {
            Read::Integer(result)
        } else {
            Read::Float(result)
        }
    }

    /// The word as the report holds it (before `retype`).
    #[inline]
    fn value(self, w: u64) -> zet_typed_value_t {
        match self {
            Read::Flag => {
                zet_typed_value_t { r#type: ZET_VALUE_TYPE_BOOL8, value: zet_value_t { b8: u8::from(w != 0) } }
            }
            Read::Integer(_) => zet_typed_value_t { r#type: ZET_VALUE_TYPE_UINT64, value: zet_value_t { ui64: w } },
            Read::Float(_) => {
                zet_typed_value_t { r#type: ZET_VALUE_TYPE_FLOAT64, value: zet_value_t { fp64: f64::from_bits(w) } }
            }
        }
    }

    /// The word as Calculate gives it: [`Read::value`] then `retype`, in one step.
    #[inline]
    fn result(self, w: u64) -> zet_typed_value_t {
        match self {
            Read::Integer(Some(r)) => r.encode(w as f64).0,
            Read::Float(Some(r)) => r.encode(f64::from_bits(w)).0,
            _ => self.value(w),
        }
    }
}

impl Instance {
    /// `zetMetricGroupCalculateMultipleMetricValuesExp`: one value set per sub-device of a root
    /// device with several (the device as a whole otherwise). Sub-device k of S reports the
    /// device's non-timestamp values scaled by `1 − k / (2S)`, event counts rounded down (the
    /// report's timestamp is the same in every set).
    pub(crate) fn calculate_sets(
        &self,
        g: usize,
        ty: zet_metric_group_calculation_type_t,
        raw: &[u8],
    ) -> R<Vec<Vec<zet_typed_value_t>>> {
        let whole = self.calculate(g, ty, raw)?;
        let grp = &self.groups[g];
        let subs = self.devices[grp.device].subs.len();
        if subs < 2 {
            return Ok(vec![whole]);
        }
        let n = grp.metrics.len();
        let sets = (0..subs)
            .map(|k| {
                let f = set_scale(k, subs);
                whole.iter().enumerate().map(|(i, v)| in_set(&grp.metrics[i % n], *v, f)).collect()
            })
            .collect();
        Ok(sets)
    }

    /// Calculate's values of every set straight into `out` (set after set, each as long), when
    /// the type is plain values and `out` holds every set: how many values each set holds, or
    /// `None` when the call must take the general path ([`Instance::calculate_sets`]). The same
    /// checks and the same values as that path.
    pub(crate) fn calculate_sets_into(
        &self,
        g: usize,
        ty: zet_metric_group_calculation_type_t,
        raw: &[u8],
        out: &mut [zet_typed_value_t],
    ) -> R<Option<usize>> {
        let report_bytes = self.report_bytes(g, ty, raw)?;
        let grp = &self.groups[g];
        let sets = self.calculate_set_count(g);
        let n = grp.metrics.len();
        let per_set = raw.len() / report_bytes * n;
        if ty != ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES || out.len() < sets * per_set {
            return Ok(None);
        }
        let reads: Vec<Read> = grp.metrics.iter().map(|m| Read::of(m.cfg.signal)).collect();
        let scales: Vec<f64> = (0..sets).map(|k| set_scale(k, sets)).collect();
        let (first, others) = out[..sets * per_set].split_at_mut(per_set);
        for (r, (report, whole)) in raw.chunks_exact(report_bytes).zip(first.chunks_exact_mut(n)).enumerate() {
            if !self.is_report_of(g, report) {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            let words = report[16..].chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            for ((read, w), v) in reads.iter().zip(words).zip(whole.iter_mut()) {
                *v = read.result(w);
            }
            if sets < 2 {
                continue;
            }
            // Every sub-device's set from the device's values (the first's in place).
            for (k, set) in others.chunks_exact_mut(per_set).enumerate() {
                for (i, (m, v)) in grp.metrics.iter().zip(&whole[..]).enumerate() {
                    set[r * n + i] = in_set(m, *v, scales[k + 1]);
                }
            }
            for (m, v) in grp.metrics.iter().zip(whole.iter_mut()) {
                *v = in_set(m, *v, scales[0]);
            }
        }
        Ok(Some(per_set))
    }
}

/// The factor sub-device `k` of `subs` scales the device's values by.
fn set_scale(k: usize, subs: usize) -> f64 {
    1.0 - k as f64 / (2.0 * subs as f64)
}

/// The device's value `v` of `metric` as a sub-device's set holds it: scaled by `f` (times and
/// states, ids and flags, are the same on every sub-device; counts stay integers, rounded down),
/// then in the metric's result type.
fn in_set(metric: &MetricRef, v: zet_typed_value_t, f: f64) -> zet_typed_value_t {
    let s = metric.cfg.signal;
    let scaled = if s == Signal::Timestamp || s.is_state() {
        v
    } else if v.r#type == ZET_VALUE_TYPE_UINT64 {
        zet_typed_value_t {
            r#type: ZET_VALUE_TYPE_UINT64,
            value: zet_value_t { ui64: (v.as_f64().unwrap_or(0.0) * f) as u64 },
        }
    } else {
        zet_typed_value_t { r#type: ZET_VALUE_TYPE_FLOAT64, value: zet_value_t { fp64: v.as_f64().unwrap_or(0.0) * f } }
    };
    crate::catalog::retyped(metric, scaled)
}
