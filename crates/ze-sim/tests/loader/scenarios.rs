//! What each child process does through the real loader (see `loader.rs`).

use level_zero_sys::*;

use super::common::*;

/// The original tour: enumerate, query export properties through a chain with an unknown
/// stype, import a dup, read a counter that advances, see the IN_USE refusals while the import
/// is alive, free, and run-time enable/disable through the extension functions.
pub fn basic(mode: &str) {
    // SAFETY: the system's Level Zero loader, kept loaded by the table for the whole scenario.
    let api = unsafe { Api::load() }.expect("load libze_loader.so.1");
    let raw = Raw { api };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    let drivers = raw.drivers().unwrap();
    assert_eq!(drivers.len(), 1, "exactly the simulated driver");
    let drv = drivers[0];
    let devices = raw.devices(drv).unwrap();
    assert_eq!(devices.len(), 2);
    let d = devices[0];
    assert_eq!(raw.device_name(d).unwrap().0, "ze-sim GPU");
    assert_eq!(raw.sub_devices(d).unwrap().len(), 1);
    let g = raw.group_by_name(d, "ComputeBasic").unwrap();
    let info = raw.group(g).unwrap(); // chain: unknown stype → type → export
    assert_ne!(
        info.type_flags & ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF,
        0,
        "{mode}: type flag through the chain"
    );
    let c = raw.context(drv).unwrap();
    raw.activate(c, d, &[g]).unwrap();
    let e = raw.group(g).unwrap().export;
    assert!(e.fd >= 0 && e.size > 0, "{mode}: export properties fd {} size {}", e.fd, e.size);
    let dup = dup(e.fd);
    let p = raw.import(c, d, dup, e.size).expect("import a dup of the exported fd");
    let first = read_mapped_u64(dup, e.size, ze_sim::export::OFFSET_COUNTERS);
    // The workload's next tick may come late on a loaded machine: wait for it, within 30 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut later = first;
    while later <= first && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
        later = read_mapped_u64(dup, e.size, ze_sim::export::OFFSET_COUNTERS);
    }
    assert!(later > first, "{mode}: the GpuTime counter advances within 30 s ({first} -> {later})");
    assert_eq!(
        raw.activate(c, d, &[]),
        Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "{mode}: deactivation refused while imported"
    );
    assert_eq!(
        raw.device_exp(drv, zetDeviceDisableMetricsExp_NAME, d),
        Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
        "{mode}: runtime disable refused while imported"
    );
    raw.free(c, p).unwrap();
    close(dup);
    raw.activate(c, d, &[]).unwrap();
    // Runtime enable/disable through the extension functions, on the driver's device handle.
    raw.device_exp(drv, zetDeviceEnableMetricsExp_NAME, d).unwrap();
    raw.device_exp(drv, zetDeviceDisableMetricsExp_NAME, d).unwrap();
    let translated = raw.translate(ZEL_HANDLE_DEVICE, d.cast()).unwrap();
    if mode == "intercept" {
        assert_ne!(translated, d.cast(), "intercept mode wraps handles");
        // Without translation the driver rejects the loader's handle instead of misusing it.
        let f = raw.extension(drv, zetDeviceDisableMetricsExp_NAME).unwrap();
        // SAFETY: the driver's implementation of zetDeviceDisableMetricsExp.
        let f: pfn::zetDeviceDisableMetricsExp = unsafe { std::mem::transmute(f) };
        // SAFETY: any handle value is accepted and validated by the driver.
        assert_eq!(unsafe { f(d) }, ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    raw.destroy_context(c).unwrap();
}

/// What the loader answers for an entry point whose DDI slot the driver left null.
fn is_loader_answer_for_an_empty_slot(r: ze_result_t) -> bool {
    r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || r == ZE_RESULT_ERROR_UNINITIALIZED
}

/// Export path of the spec's sample on group `name` of device `d`: query BEFORE activation,
/// import a dup, activate, see the counters move, free, deactivate.
fn sample_code_path(raw: &Raw, drv: ze_driver_handle_t, d: ze_device_handle_t, name: &str, what: &str) {
    let g = raw.group_by_name(d, name).unwrap();
    let e = raw.group(g).unwrap().export;
    assert!(e.fd >= 0 && e.size > 0, "{what}: export before activation: fd {} size {}", e.fd, e.size);
    let c = raw.context(drv).unwrap();
    let dup = dup(e.fd);
    let p = raw.import(c, d, dup, e.size).expect("import a dup of the exported fd");
    raw.activate(c, d, &[g]).unwrap();
    let first = read_mapped_u64(dup, e.size, ze_sim::export::OFFSET_SEQUENCE);
    wait_until(&format!("{what}: snapshots are written"), || {
        read_mapped_u64(dup, e.size, ze_sim::export::OFFSET_SEQUENCE) > first
    });
    raw.free(c, p).unwrap();
    close(dup);
    raw.activate(c, d, &[]).unwrap();
    raw.destroy_context(c).unwrap();
}

/// Every optional entry point is empty: the loader answers for them, the export path works.
pub fn empty(mode: &str) {
    // SAFETY: as in `basic`.
    let raw = Raw { api: unsafe { Api::load() }.expect("load libze_loader.so.1") };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    let drv = raw.drivers().unwrap()[0];
    let d = raw.devices(drv).unwrap()[0];
    // SAFETY: plain handle call.
    let status = unsafe { (raw.api.zeDeviceGetStatus)(d) };
    assert!(is_loader_answer_for_an_empty_slot(status), "{mode}: zeDeviceGetStatus answered {status:#x}");
    let (mut host, mut dev) = (0, 0);
    // SAFETY: valid out-pointers.
    let ts = unsafe { (raw.api.zeDeviceGetGlobalTimestamps)(d, &mut host, &mut dev) };
    assert!(is_loader_answer_for_an_empty_slot(ts), "{mode}: zeDeviceGetGlobalTimestamps answered {ts:#x}");
    assert!(raw.extension(drv, zetDeviceEnableMetricsExp_NAME).is_err(), "{mode}: no extension functions");
    println!("{mode}: an empty slot answers {status:#x}");
    sample_code_path(&raw, drv, d, "ComputeBasic", mode);
}

/// Only `zetDeviceEnableMetricsExp` is empty: the extension lookup no longer returns it, and
/// still returns the others.
pub fn empty_extension(mode: &str) {
    // SAFETY: as in `basic`.
    let raw = Raw { api: unsafe { Api::load() }.expect("load libze_loader.so.1") };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    let drv = raw.drivers().unwrap()[0];
    assert!(raw.extension(drv, zetDeviceEnableMetricsExp_NAME).is_err(), "{mode}: emptied name returned");
    assert!(raw.extension(drv, zetDeviceDisableMetricsExp_NAME).is_ok(), "{mode}: other names still returned");
}

/// Two copies of the driver (GPU: `libze_sim.so`, NPU: `libze_sim_npu.so`), each with its own
/// configuration: distinct UUIDs with the ze-sim prefix, each copy's own settings in force.
pub fn two_copies(mode: &str) {
    // SAFETY: as in `basic`.
    let raw = Raw { api: unsafe { Api::load() }.expect("load libze_loader.so.1") };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    let drivers = raw.drivers().unwrap();
    assert_eq!(drivers.len(), 2, "{mode}: both copies are loaded");
    let mut uuids = Vec::new();
    let mut kinds = Vec::new();
    for &drv in &drivers {
        let mut p = ze_driver_properties_t { stype: ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, ..Default::default() };
        // SAFETY: valid properties struct.
        ok(unsafe { (raw.api.zeDriverGetProperties)(drv, &mut p) }).unwrap();
        assert_eq!(p.uuid.id[..8], 0x7a65_2d73_696d_0001u64.to_le_bytes(), "{mode}: the ze-sim prefix");
        uuids.push(p.uuid.id);
        let devices = raw.devices(drv).unwrap();
        let (name, kind) = raw.device_name(devices[0]).unwrap();
        // SAFETY: plain handle call.
        let status = unsafe { (raw.api.zeDeviceGetStatus)(devices[0]) };
        if kind == ZE_DEVICE_TYPE_VPU {
            assert_eq!((devices.len(), name.as_str()), (1, "ze-sim NPU copy"), "{mode}: the NPU copy's own config");
            assert!(is_loader_answer_for_an_empty_slot(status), "{mode}: the NPU copy leaves GetStatus empty");
            sample_code_path(&raw, drv, devices[0], "NpuOnly", mode);
        } else {
            assert_eq!((devices.len(), name.as_str()), (2, "ze-sim GPU"), "{mode}: the GPU copy's default config");
            assert_eq!(status, ZE_RESULT_SUCCESS, "{mode}: the GPU copy implements GetStatus");
            sample_code_path(&raw, drv, devices[0], "ComputeBasic", mode);
        }
        kinds.push(kind);
    }
    assert_ne!(uuids[0], uuids[1], "{mode}: the copies report distinct driver UUIDs");
    kinds.sort();
    assert_eq!(kinds, [ZE_DEVICE_TYPE_GPU, ZE_DEVICE_TYPE_VPU]);
}

/// The time-based streamer through the loader: the tour on the GPU's streamer-only group
/// (`stream_tour`: one deliberate refusal while open), then a streamer on the NPU's.
pub fn stream(mode: &str) {
    // SAFETY: as in `basic`.
    let raw = Raw { api: unsafe { Api::load() }.expect("load libze_loader.so.1") };
    // SAFETY: plain call.
    ok(unsafe { (raw.api.zeInit)(0) }).expect("zeInit through the loader");
    let drv = raw.drivers().unwrap()[0];
    let devices = raw.devices(drv).unwrap();
    super::common::stream::stream_tour(&raw, drv, devices[0], "RenderBasic", mode);
    let npu = devices[1];
    let g = raw.group_by_name(npu, "NocTraffic").unwrap();
    let c = raw.context(drv).unwrap();
    raw.activate(c, npu, &[g]).unwrap();
    let o = raw.open(c, npu, g, 100_000, 1, std::ptr::null_mut()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (_, bytes) = raw.read(o.streamer).unwrap();
    let values = raw.calculate(g, &bytes).unwrap();
    assert!(!values.is_empty(), "{mode}: NPU reports decode");
    raw.close_streamer(o.streamer).unwrap();
    raw.activate(c, npu, &[]).unwrap();
    raw.destroy_context(c).unwrap();
}
