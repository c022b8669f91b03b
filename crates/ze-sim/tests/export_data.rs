//! `zetMetricGroupGetExportDataExp` (`ZET_experimental_metric_export_data`), in-process through
//! `zeDriverGetExtensionFunctionAddress`: the size query, the export of a streamer's raw data
//! in ze-sim's documented arrangement (`ze_sim::export_data`), a buffer too small, null
//! pointers and a handle that is no group.

mod common;

use common::fixture::fixture;
use level_zero_sys::*;

type GetExportData =
    unsafe extern "C" fn(zet_metric_group_handle_t, *const u8, usize, *mut usize, *mut u8) -> ze_result_t;

/// A little-endian reader over the export data.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn string(&mut self) -> String {
        let n = self.u32() as usize;
        String::from_utf8(self.take(n).to_vec()).unwrap()
    }
}

#[test]
fn a_streamers_raw_data_is_exported_with_its_groups_description() {
    let f = fixture(|_| {});
    let f_ptr = f.raw.extension(f.drv, c"zetMetricGroupGetExportDataExp").expect("offered by name");
    // SAFETY: the driver's zetMetricGroupGetExportDataExp, of this signature.
    let export: GetExportData = unsafe { std::mem::transmute(f_ptr) };
    let (c, d, g, _) = f.running_group("RenderBasic");
    let o = f.raw.open(c, d, g, 1_000_000, 1, std::ptr::null_mut()).unwrap();
    let mut raw = Vec::new();
    common::wait_until("a report", || {
        raw = f.raw.read(o.streamer).unwrap().1;
        !raw.is_empty()
    });
    f.raw.close_streamer(o.streamer).unwrap();

    let mut size = 0usize;
    // SAFETY: a group handle, `raw` of its length, a size query.
    let r = unsafe { export(g, raw.as_ptr(), raw.len(), &mut size, std::ptr::null_mut()) };
    assert_eq!(r, ZE_RESULT_SUCCESS);
    assert!(size > raw.len(), "{size} bytes for {} of raw data", raw.len());
    let mut short = vec![0u8; size - 1];
    let mut less = size - 1;
    // SAFETY: `short` holds `less` bytes.
    let r = unsafe { export(g, raw.as_ptr(), raw.len(), &mut less, short.as_mut_ptr()) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT, "a buffer one byte short");
    let mut data = vec![0u8; size + 16];
    let mut more = data.len();
    // SAFETY: `data` holds `more` bytes.
    let r = unsafe { export(g, raw.as_ptr(), raw.len(), &mut more, data.as_mut_ptr()) };
    assert_eq!((r, more), (ZE_RESULT_SUCCESS, size), "a larger buffer: the bytes written");

    let mut rd = Reader(&data[..size]);
    assert_eq!(rd.take(8), ze_sim::export_data::MAGIC);
    assert_eq!(rd.u32(), ze_sim::export_data::VERSION);
    let info = f.raw.group(g).unwrap();
    let (device_id, domain, sampling) = (rd.u32(), rd.u32(), rd.u32());
    let mut props = ze_device_properties_t { stype: ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ..Default::default() };
    // SAFETY: a device handle and a valid properties struct.
    assert_eq!(unsafe { (f.raw.api.zeDeviceGetProperties)(d, &mut props) }, ZE_RESULT_SUCCESS);
    assert_eq!(device_id, props.deviceId, "the device's id");
    assert_eq!(sampling, info.sampling);
    assert_eq!(rd.string(), "RenderBasic");
    assert_eq!(domain, info.domain);
    let metrics = f.raw.metrics(g).unwrap();
    assert_eq!(rd.u32() as usize, metrics.len());
    for &m in &metrics {
        let (name, ty, _) = f.raw.metric(m).unwrap();
        assert_eq!(rd.string(), name);
        assert_eq!(rd.u32(), ty);
        let (_result, _unit) = (rd.u32(), rd.string());
    }
    assert_eq!(rd.u64() as usize, raw.len());
    assert_eq!(rd.take(raw.len()), &raw[..], "the raw data as given");
    assert!(rd.0.is_empty(), "nothing after the raw data");

    // Null pointers and a handle that is no group.
    // SAFETY: each call breaks one pointer rule on purpose; the driver checks before use.
    unsafe {
        assert_eq!(
            export(g, std::ptr::null(), 4, &mut size, std::ptr::null_mut()),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        assert_eq!(
            export(g, raw.as_ptr(), raw.len(), std::ptr::null_mut(), std::ptr::null_mut()),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER
        );
        let mut s = 0;
        assert_eq!(
            export(std::ptr::null_mut(), raw.as_ptr(), raw.len(), &mut s, std::ptr::null_mut()),
            ZE_RESULT_ERROR_INVALID_NULL_HANDLE
        );
        assert_ne!(
            export(d.cast(), raw.as_ptr(), raw.len(), &mut s, std::ptr::null_mut()),
            ZE_RESULT_SUCCESS,
            "a device handle"
        );
    }
    f.clean_teardown(c, d);
    assert!(f.sim.report().is_clean(), "{:?}", f.sim.report());
}
