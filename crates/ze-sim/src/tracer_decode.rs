//! `zetMetricTracerDecodeExp`: the tracer's raw records (`crate::ring`) turned into
//! `zet_metric_entry_exp_t` entries.
//!
//! Each record of a metric the caller asked for (its decodable handle in `phMetrics`) becomes one
//! entry: the record's value (a u64, or a u32 zero-extended for a UINT32 metric), its timestamp,
//! `metricIndex` = the position of that metric's decodable handle in the caller's array, and the
//! sub-device (`onSubdevice` when the tracer's device has sub-devices). Records of metrics not
//! asked for are skipped. Entries come in sets, one per sub-device of the tracer's device (one
//! set for a device without), set after set, each in raw order.
//!
//! Counts: `*pMetricEntriesCount == 0` (or no entry buffer) asks for the number of entries and
//! sets; a smaller count than there are entries decodes the first ones (in raw order) and sets
//! `*pRawDataSize` to the bytes that covered them. Refused: raw data that is not whole records
//! (INVALID_SIZE), records of another tracer's groups or with a metric index the group lacks,
//! and handles that are not decodable metrics of this decoder (INVALID_ARGUMENT) — anywhere in
//! the data, also past the entries a short buffer takes.
//!
//! # Cost
//!
//! One pass over the records for a device without sub-devices, two with (the first counts each
//! set's entries so the second can place them set after set); entries are written straight into
//! the caller's buffer, and a record's metric is found through a table built per call (tag →
//! the caller's index of each metric), not by searching the handle array.

use level_zero_sys::*;

use crate::instance::Instance;
use crate::ops_driver::R;
use crate::ring::{self, RECORD_BYTES, TraceEvent};

/// What a decode call hands back besides the entries it wrote.
#[derive(Debug)]
pub(crate) struct Output {
    /// Entries per set (decoded, or available for a count query).
    pub(crate) per_set: Vec<u32>,
    /// The entries in all (decoded, or available for a count query).
    pub(crate) total: u32,
    /// Raw bytes processed, when fewer entries were decoded than the data holds.
    pub(crate) processed: Option<usize>,
}

/// No index: the caller did not ask for this metric.
const SKIP: u32 = u32::MAX;

impl Instance {
    /// The sets decoder `decoder` decodes into: one per sub-device of its tracer's device (1
    /// without).
    pub(crate) fn decoder_sets(&self, decoder: usize) -> R<usize> {
        Ok(self.decoders.get(&decoder).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?.sub_devices.max(1))
    }

    /// Decodes `raw` for decoder `decoder`; `wanted[i]` is the (group, metric) of the caller's
    /// decodable handle `i` (None for a null handle, which asks for nothing). With `out`, the
    /// first `out.len()` entries (in raw order) are written there set after set; without, the
    /// entries are only counted.
    pub(crate) fn decode(
        &self,
        decoder: usize,
        raw: &[u8],
        wanted: &[Option<(usize, usize)>],
        out: Option<&mut [zet_metric_entry_exp_t]>,
    ) -> R<Output> {
        let d = self.decoders.get(&decoder).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        if wanted.iter().flatten().any(|(g, _)| !d.groups.contains(g)) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if !raw.len().is_multiple_of(RECORD_BYTES) {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        // tag → the caller's index of each of that group's metrics (SKIP: not asked for).
        let max_tag = d.groups.iter().map(|&g| ring::tag_of(g) as usize).max().unwrap_or(0);
        let mut table: Vec<Option<Vec<u32>>> = vec![None; max_tag + 1];
        for &g in &d.groups {
            table[ring::tag_of(g) as usize] = Some(vec![SKIP; self.groups[g].metrics.len()]);
        }
        for (i, w) in wanted.iter().enumerate() {
            if let Some((g, m)) = *w
                && let Some(slot) = table[ring::tag_of(g) as usize].as_mut().and_then(|t| t.get_mut(m))
                && *slot == SKIP
            {
                *slot = i as u32;
            }
        }
        let sets = d.sub_devices.max(1);
        let on_sub = d.sub_devices > 0;
        // The caller's index of a record's metric, after checking the record belongs here.
        let index = |r: &TraceEvent| -> R<u32> {
            let metrics = table.get(r.tag as usize).and_then(|t| t.as_ref()).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
            match metrics.get(usize::from(r.metric)) {
                Some(&i) if usize::from(r.sub_device) < sets => Ok(i),
                _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            }
        };
        let entry = |r: &TraceEvent, i: u32| zet_metric_entry_exp_t {
            value: zet_value_t { ui64: r.value },
            timeStamp: r.timestamp_ns,
            metricIndex: i,
            onSubdevice: on_sub as ze_bool_t,
            subdeviceId: if on_sub { u32::from(r.sub_device) } else { 0 },
        };
        let record = |c: &[u8]| TraceEvent::from_bytes(c.try_into().expect("whole records"));
        let want = out.as_ref().map_or(usize::MAX, |o| o.len());
        let mut per_set = vec![0u32; sets];
        // `processed`: the bytes up to and including the last record taken, when a wanted record
        // was left out.
        let (mut total, mut processed, mut taken_end) = (0usize, None, 0usize);
        // One set: entries go out in raw order as they are found. Several: each set's share of
        // the first `want` entries is counted, then they are placed set after set.
        let (mut direct, placed) = match out {
            Some(o) if sets == 1 => (Some(o), None),
            o => (None, o),
        };
        for (k, c) in raw.chunks_exact(RECORD_BYTES).enumerate() {
            let r = record(c);
            let i = index(&r)?;
            if i == SKIP {
                continue;
            }
            if total == want {
                processed.get_or_insert(taken_end);
                continue;
            }
            if let Some(o) = direct.as_deref_mut() {
                o[total] = entry(&r, i);
            }
            per_set[usize::from(r.sub_device)] += 1;
            total += 1;
            taken_end = (k + 1) * RECORD_BYTES;
        }
        if let Some(out) = placed {
            let mut at: Vec<usize> = per_set
                .iter()
                .scan(0usize, |acc, &n| {
                    let start = *acc;
                    *acc += n as usize;
                    Some(start)
                })
                .collect();
            for c in raw[..processed.unwrap_or(raw.len())].chunks_exact(RECORD_BYTES) {
                let r = record(c);
                let i = index(&r)?;
                if i != SKIP {
                    let set = usize::from(r.sub_device);
                    out[at[set]] = entry(&r, i);
                    at[set] += 1;
                }
            }
        }
        Ok(Output { per_set, total: total as u32, processed })
    }
}
