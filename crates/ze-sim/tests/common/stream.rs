//! Raw helpers for the time-based streamer (event pool, event, open, wait, read, Calculate,
//! close), and the tour every test of it shares, in-process or through the real loader.

use level_zero_sys::*;

use super::{R, Raw, ok};

fn opt<T>(f: Option<T>, name: &str) -> T {
    f.unwrap_or_else(|| panic!("{name} is missing from the Api table"))
}

/// What an open streamer was given back.
pub struct Opened {
    pub streamer: zet_metric_streamer_handle_t,
    pub period_ns: u32,
    pub notify_every: u32,
}

impl Raw {
    pub fn event_pool(&self, c: ze_context_handle_t, flags: u32) -> R<ze_event_pool_handle_t> {
        let desc = ze_event_pool_desc_t { flags, count: 1, ..Default::default() };
        let mut p = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer; no device list.
        ok(unsafe { opt(self.api.zeEventPoolCreate, "zeEventPoolCreate")(c, &desc, 0, std::ptr::null_mut(), &mut p) })?;
        Ok(p)
    }
    pub fn event(&self, pool: ze_event_pool_handle_t) -> R<ze_event_handle_t> {
        let desc = ze_event_desc_t {
            index: 0,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
            ..Default::default()
        };
        let mut e = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        ok(unsafe { opt(self.api.zeEventCreate, "zeEventCreate")(pool, &desc, &mut e) })?;
        Ok(e)
    }
    pub fn destroy_event(&self, e: ze_event_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { opt(self.api.zeEventDestroy, "zeEventDestroy")(e) })
    }
    pub fn destroy_pool(&self, p: ze_event_pool_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { opt(self.api.zeEventPoolDestroy, "zeEventPoolDestroy")(p) })
    }
    pub fn wait(&self, e: ze_event_handle_t, timeout_ns: u64) -> ze_result_t {
        // SAFETY: plain handle call.
        unsafe { opt(self.api.zeEventHostSynchronize, "zeEventHostSynchronize")(e, timeout_ns) }
    }
    pub fn reset(&self, e: ze_event_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { opt(self.api.zeEventHostReset, "zeEventHostReset")(e) })
    }
    pub fn open(
        &self,
        c: ze_context_handle_t,
        d: ze_device_handle_t,
        g: zet_metric_group_handle_t,
        period_ns: u32,
        notify_every: u32,
        e: ze_event_handle_t,
    ) -> R<Opened> {
        let mut desc = zet_metric_streamer_desc_t {
            samplingPeriod: period_ns,
            notifyEveryNReports: notify_every,
            ..Default::default()
        };
        let mut s = std::ptr::null_mut();
        // SAFETY: valid descriptor and out-pointer.
        ok(unsafe { opt(self.api.zetMetricStreamerOpen, "zetMetricStreamerOpen")(c, d, g, &mut desc, e, &mut s) })?;
        Ok(Opened { streamer: s, period_ns: desc.samplingPeriod, notify_every: desc.notifyEveryNReports })
    }
    /// Size query, then data: the result of the data call and the bytes read.
    pub fn read(&self, s: zet_metric_streamer_handle_t) -> R<(ze_result_t, Vec<u8>)> {
        let f = opt(self.api.zetMetricStreamerReadData, "zetMetricStreamerReadData");
        let mut size = 0usize;
        // SAFETY: size query.
        ok(unsafe { f(s, u32::MAX, &mut size, std::ptr::null_mut()) })?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds `size` bytes.
        let r = unsafe { f(s, u32::MAX, &mut size, buf.as_mut_ptr()) };
        if r != ZE_RESULT_SUCCESS && r != ZE_RESULT_WARNING_DROPPED_DATA {
            return Err(r);
        }
        buf.truncate(size);
        Ok((r, buf))
    }
    pub fn close_streamer(&self, s: zet_metric_streamer_handle_t) -> R<()> {
        // SAFETY: plain handle call.
        ok(unsafe { opt(self.api.zetMetricStreamerClose, "zetMetricStreamerClose")(s) })
    }
    /// Calculate with the multiple-set function: the values as f64, the set count.
    pub fn calculate_sets(&self, g: zet_metric_group_handle_t, raw: &[u8]) -> R<(Vec<f64>, u32)> {
        let (sets, counts, values) = self.calculate_sets_into(g, raw, None)?;
        assert_eq!(counts.iter().sum::<u32>() as usize, values.len());
        Ok((values.iter().map(|v| v.as_f64().expect("known type")).collect(), sets))
    }
    /// Calculate with the multiple-set function into a buffer of `room` values (`None`: as many
    /// as the count query asks for, which comes first): the sets given, each set's count and the
    /// values written.
    pub fn calculate_sets_into(
        &self,
        g: zet_metric_group_handle_t,
        raw: &[u8],
        room: Option<u32>,
    ) -> R<(u32, Vec<u32>, Vec<zet_typed_value_t>)> {
        let f = opt(self.api.zetMetricGroupCalculateMultipleMetricValuesExp, "CalculateMultiple");
        let (mut sets, mut total) = (0u32, 0u32);
        let ty = ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES;
        // SAFETY: count query.
        ok(unsafe {
            f(g, ty, raw.len(), raw.as_ptr(), &mut sets, &mut total, std::ptr::null_mut(), std::ptr::null_mut())
        })?;
        total = room.unwrap_or(total);
        let mut counts = vec![0u32; sets as usize];
        let mut values = vec![zet_typed_value_t::default(); total as usize];
        // SAFETY: `counts` holds `sets` counts and `values` `total` values.
        ok(unsafe {
            f(g, ty, raw.len(), raw.as_ptr(), &mut sets, &mut total, counts.as_mut_ptr(), values.as_mut_ptr())
        })?;
        counts.truncate(sets as usize);
        values.truncate(total as usize);
        Ok((sets, counts, values))
    }
    /// Calculate with the single-set function.
    pub fn calculate(&self, g: zet_metric_group_handle_t, raw: &[u8]) -> R<Vec<f64>> {
        let f = opt(self.api.zetMetricGroupCalculateMetricValues, "zetMetricGroupCalculateMetricValues");
        let mut n = 0u32;
        let ty = ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES;
        // SAFETY: count query.
        ok(unsafe { f(g, ty, raw.len(), raw.as_ptr(), &mut n, std::ptr::null_mut()) })?;
        let mut values = vec![zet_typed_value_t::default(); n as usize];
        // SAFETY: a buffer of `n` values.
        ok(unsafe { f(g, ty, raw.len(), raw.as_ptr(), &mut n, values.as_mut_ptr()) })?;
        Ok(values[..n as usize].iter().map(|v| v.as_f64().expect("known type")).collect())
    }
}

/// The tour of a streamable group `name` on device `d`: the period and report count written
/// back, the event signaled after N reports, reports that decode with both Calculate functions
/// (timestamp first and rising by one period), a second streamer on the device refused, one
/// deactivation while open refused (ONE `teardown_with_open_streamer` violation), then the
/// clean teardown. `what` names the run in messages.
pub fn stream_tour(raw: &Raw, drv: ze_driver_handle_t, d: ze_device_handle_t, name: &str, what: &str) {
    let g = raw.group_by_name(d, name).unwrap();
    let info = raw.group(g).unwrap();
    assert_eq!(
        info.sampling & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED,
        ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED,
        "{what}"
    );
    let metrics = raw.metrics(g).unwrap();
    let (first, first_type, _) = raw.metric(metrics[0]).unwrap();
    assert_eq!((first.as_str(), first_type), ("QueryBeginTime", ZET_METRIC_TYPE_TIMESTAMP), "{what}: timestamp first");
    let c = raw.context(drv).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let pool = raw.event_pool(c, ZE_EVENT_POOL_FLAG_HOST_VISIBLE).unwrap();
    let e = raw.event(pool).unwrap();
    let o = raw.open(c, d, g, 1_000_000, 4, e).unwrap();
    assert_eq!((o.period_ns, o.notify_every), (1_280_000, 4), "{what}: rounded period written back");
    assert_eq!(
        raw.open(c, d, g, 1_000_000, 4, std::ptr::null_mut()).err(),
        Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "{what}: one streamer per device"
    );
    assert_eq!(raw.wait(e, 2_000_000_000), ZE_RESULT_SUCCESS, "{what}: notified within 2 s");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (r, bytes) = raw.read(o.streamer).unwrap();
    assert_eq!(r, ZE_RESULT_SUCCESS, "{what}");
    let (values, sets) = raw.calculate_sets(g, &bytes).unwrap();
    assert_eq!(sets, 1);
    let n = metrics.len();
    assert!(values.len() >= 4 * n && values.len() % n == 0, "{what}: {} values for {n} metrics", values.len());
    let stamps: Vec<f64> = values.chunks(n).map(|r| r[0]).collect();
    for w in stamps.windows(2) {
        assert_eq!(w[1] - w[0], o.period_ns as f64, "{what}: one report per period");
    }
    assert_eq!(raw.calculate(g, &bytes).unwrap(), values, "{what}: both Calculate functions agree");
    assert_eq!(
        raw.calculate(g, &bytes[..bytes.len() - 1]).err(),
        Some(ZE_RESULT_ERROR_INVALID_SIZE),
        "{what}: a torn report is refused"
    );
    // The count query checks without decoding (the first and the last report), as the data call
    // checks every report: another group's first or last report is refused by both.
    let report = bytes.len() / stamps.len();
    for at in [8, bytes.len() - report + 8] {
        let mut foreign = bytes.clone();
        foreign[at] ^= 0x40;
        assert_eq!(
            raw.calculate(g, &foreign).err(),
            Some(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            "{what}: a report of another group at byte {at} is refused"
        );
    }
    assert_eq!(
        raw.activate(c, d, &[]).err(),
        Some(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "{what}: deactivation refused while open"
    );
    raw.close_streamer(o.streamer).unwrap();
    raw.destroy_event(e).unwrap();
    raw.destroy_pool(pool).unwrap();
    raw.activate(c, d, &[]).unwrap();
    raw.destroy_context(c).unwrap();
}
