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
//! and handles that are not decodable metrics of this decoder (INVALID_ARGUMENT).

use level_zero_sys::*;

use crate::instance::Instance;
use crate::ops_driver::R;
use crate::ring::{self, RECORD_BYTES};

/// Raw data decoded for one call: every entry the caller asked for.
pub(crate) struct Decoded {
    /// One set per sub-device of the tracer's device (1 without).
    pub(crate) sets: usize,
    /// Entries in raw order: (set, entry, raw bytes up to and including its record).
    entries: Vec<(usize, zet_metric_entry_exp_t, usize)>,
}

/// What a decode call hands back.
#[derive(Debug)]
pub(crate) struct Output {
    /// Entries per set.
    pub(crate) per_set: Vec<u32>,
    /// The entries, set after set (empty for a count query).
    pub(crate) entries: Vec<zet_metric_entry_exp_t>,
    /// The entries in all (decoded, or available for a count query).
    pub(crate) total: u32,
    /// Raw bytes processed, when fewer entries were decoded than the data holds.
    pub(crate) processed: Option<usize>,
}

impl Decoded {
    /// The first `want` entries (0: a count query).
    pub(crate) fn take(&self, want: u32) -> Output {
        let mut per_set = vec![0u32; self.sets];
        if want == 0 {
            self.entries.iter().for_each(|(s, _, _)| per_set[*s] += 1);
            return Output { per_set, entries: Vec::new(), total: self.entries.len() as u32, processed: None };
        }
        let n = (want as usize).min(self.entries.len());
        let taken = &self.entries[..n];
        let processed = (n < self.entries.len()).then(|| taken.last().map_or(0, |e| e.2));
        let mut entries = Vec::with_capacity(n);
        for (set, count) in per_set.iter_mut().enumerate() {
            for (_, e, _) in taken.iter().filter(|(s, _, _)| *s == set) {
                entries.push(*e);
                *count += 1;
            }
        }
        Output { per_set, entries, total: n as u32, processed }
    }
}

impl Instance {
    /// Decodes `raw` for decoder `decoder`; `wanted[i]` is the (group, metric) of the caller's
    /// decodable handle `i` (None for a null handle, which asks for nothing).
    pub(crate) fn decode(&self, decoder: usize, raw: &[u8], wanted: &[Option<(usize, usize)>]) -> R<Decoded> {
        let d = self.decoders.get(&decoder).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        if wanted.iter().flatten().any(|(g, _)| !d.groups.contains(g)) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let records = ring::parse(raw).ok_or(ZE_RESULT_ERROR_INVALID_SIZE)?;
        let sets = d.sub_devices.max(1);
        let mut entries = Vec::with_capacity(records.len());
        for (k, r) in records.iter().enumerate() {
            let g =
                d.groups.iter().copied().find(|&g| ring::tag_of(g) == r.tag).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
            let metric = usize::from(r.metric);
            let set = usize::from(r.sub_device);
            if metric >= self.groups[g].metrics.len() || set >= sets {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            let Some(index) = wanted.iter().position(|&w| w == Some((g, metric))) else { continue };
            let on_sub = d.sub_devices > 0;
            let entry = zet_metric_entry_exp_t {
                value: zet_value_t { ui64: r.value },
                timeStamp: r.timestamp_ns,
                metricIndex: index as u32,
                onSubdevice: on_sub as ze_bool_t,
                subdeviceId: if on_sub { set as u32 } else { 0 },
            };
            entries.push((set, entry, (k + 1) * RECORD_BYTES));
        }
        Ok(Decoded { sets, entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: u32, ts: u64) -> zet_metric_entry_exp_t {
        zet_metric_entry_exp_t { timeStamp: ts, metricIndex: index, ..Default::default() }
    }

    #[test]
    fn a_count_query_counts_and_a_short_buffer_takes_the_first_entries_set_by_set() {
        let d =
            Decoded { sets: 2, entries: vec![(0, entry(0, 10), 32), (1, entry(1, 11), 64), (0, entry(2, 12), 128)] };
        let q = d.take(0);
        assert_eq!((q.total, q.per_set.clone(), q.entries.len(), q.processed), (3, vec![2, 1], 0, None));
        let two = d.take(2);
        assert_eq!((two.total, two.per_set.clone(), two.processed), (2, vec![1, 1], Some(64)));
        let all = d.take(10);
        assert_eq!(all.processed, None, "everything was decoded");
        let order: Vec<u64> = all.entries.iter().map(|e| e.timeStamp).collect();
        assert_eq!(order, [10, 12, 11], "set 0 first, each set in raw order");
    }
}
