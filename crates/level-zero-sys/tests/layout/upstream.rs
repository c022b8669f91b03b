//! The hand-written types against the headers of the upstream release kept in `third_party/`
//! (extracted into `target/`).

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use level_zero_sys::*;

use super::skip;

/// The upstream release whose headers the hand-written types are compared with.
const UPSTREAM: &str = "1.32.0";

/// `include/` of `third_party/level-zero-v1.32.0.tar.gz`, extracted once into
/// `target/level-zero-v1.32.0/include` (into a private directory first, then renamed into place,
/// so test binaries running side by side never see half of it).
fn upstream_headers() -> Result<std::path::PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let archive = root.join(format!("third_party/level-zero-v{UPSTREAM}.tar.gz"));
    let target = std::env::var_os("CARGO_TARGET_DIR").map(std::path::PathBuf::from).unwrap_or(root.join("target"));
    let dest = target.join(format!("level-zero-v{UPSTREAM}/include"));
    if dest.join("ze_api.h").exists() {
        return Ok(dest);
    }
    if !archive.exists() {
        return Err(format!("{} is missing", archive.display()));
    }
    let tmp = target.join(format!("level-zero-v{UPSTREAM}/include-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let out = Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&tmp)
        .arg(format!("level-zero-{UPSTREAM}/include"))
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !out.status.success() {
        return Err(format!("tar failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    // A concurrent extraction may have won the rename; either way `dest` is complete.
    let _ = std::fs::rename(tmp.join(format!("level-zero-{UPSTREAM}/include")), &dest);
    let _ = std::fs::remove_dir_all(&tmp);
    if dest.join("ze_api.h").exists() { Ok(dest) } else { Err(format!("{} was not extracted", dest.display())) }
}

/// The hand-written types of `exp.rs`, `tracer.rs`, `pci.rs` and `api.rs` (metric export memory,
/// runtime metric groups, runtime enable/disable, `zeInitDrivers`, the metric tracer and decoder
/// with their DDI tables, the PCI properties extension, the Sysman process state) against the official headers of the upstream release (which have
/// `zet_export_dma_buf_exp_properties_t` since 1.29): sizes, offsets, structure types, flags,
/// metric types, and the C signatures of the entry points the `Api` declares for them.
#[test]
fn hand_written_types_match_the_upstream_headers() {
    let include = match upstream_headers() {
        Ok(d) => d,
        Err(e) => return skip(&format!("the v{UPSTREAM} headers: {e}")),
    };
    let layouts = vec![
        layout!(zet_metric_group_type_exp_t { stype, pNext, r#type }),
        layout!(zet_export_dma_buf_exp_properties_t { stype, pNext, fd, size }),
        layout!(ze_init_driver_type_desc_t { stype, pNext, flags }),
        layout!(zet_metric_tracer_exp_desc_t { stype, pNext, notifyEveryNBytes }),
        layout!(zet_metric_entry_exp_t { value, timeStamp, metricIndex, onSubdevice, subdeviceId }),
        layout!(zet_metric_tracer_exp_dditable_t {
            pfnCreateExp,
            pfnDestroyExp,
            pfnEnableExp,
            pfnDisableExp,
            pfnReadDataExp,
            pfnDecodeExp
        }),
        layout!(zet_metric_decoder_exp_dditable_t { pfnCreateExp, pfnDestroyExp, pfnGetDecodableMetricsExp }),
        layout!(ze_pci_ext_properties_t { stype, pNext, address, maxSpeed }),
        layout!(ze_pci_address_ext_t { domain, bus, device, function }),
        layout!(ze_pci_speed_ext_t { genVersion, width, maxBandwidth }),
        layout!(zes_process_state_t { stype, pNext, processId, memSize, sharedSize, engines }),
        layout!(ze_event_pool_counter_based_exp_desc_t { stype, pNext, flags }),
    ];
    macro_rules! c {
        ($($n:ident),* $(,)?) => { vec![$((stringify!($n), $n as u64)),*] };
    }
    let constants = c![
        ZET_STRUCTURE_TYPE_METRIC_GROUP_TYPE_EXP,
        ZET_STRUCTURE_TYPE_EXPORT_DMA_EXP_PROPERTIES,
        ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF,
        ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED,
        ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER,
        ZET_METRIC_GROUP_TYPE_EXP_FLAG_MARKER,
        ZET_METRIC_TYPE_EXP_EXPORT_DMA_BUF,
        ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC,
        ZE_INIT_DRIVER_TYPE_FLAG_GPU,
        ZE_INIT_DRIVER_TYPE_FLAG_NPU,
        ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED,
        ZE_RESULT_ERROR_UNSUPPORTED_VERSION,
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
        ZE_RESULT_ERROR_UNINITIALIZED,
        ZEL_HANDLE_DEVICE,
        ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED,
        ZET_STRUCTURE_TYPE_METRIC_TRACER_EXP_DESC,
        ZET_METRIC_TRACER_EXP_VERSION_1_0,
        ZET_METRIC_TYPE_EVENT_EXP_TIMESTAMP,
        ZET_METRIC_TYPE_EVENT_EXP_START,
        ZET_METRIC_TYPE_EVENT_EXP_END,
        ZET_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE,
        ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES,
        ZES_STRUCTURE_TYPE_PROCESS_STATE,
        ZES_ENGINE_TYPE_FLAG_COMPUTE,
        ZES_ENGINE_TYPE_FLAG_DMA,
        ZES_ENGINE_TYPE_FLAG_RENDER,
        ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC,
        ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE,
        ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_NON_IMMEDIATE,
    ];
    // The C signature of each entry point, as the Rust `pfn::` type declares it: compiling fails
    // if the header's declaration differs.
    let signatures = [
        ("zetDeviceEnableMetricsExp", "ze_result_t (*)(zet_device_handle_t)"),
        ("zetDeviceDisableMetricsExp", "ze_result_t (*)(zet_device_handle_t)"),
        (
            "zetMetricGroupCreateExp",
            "ze_result_t (*)(zet_device_handle_t, const char*, const char*, zet_metric_group_sampling_type_flags_t, \
             zet_metric_group_handle_t*)",
        ),
        (
            "zetMetricGroupAddMetricExp",
            "ze_result_t (*)(zet_metric_group_handle_t, zet_metric_handle_t, size_t*, char*)",
        ),
        ("zetMetricGroupCloseExp", "ze_result_t (*)(zet_metric_group_handle_t)"),
        ("zetMetricGroupDestroyExp", "ze_result_t (*)(zet_metric_group_handle_t)"),
        ("zeInitDrivers", "ze_result_t (*)(uint32_t*, ze_driver_handle_t*, ze_init_driver_type_desc_t*)"),
        ("zesInit", "ze_result_t (*)(zes_init_flags_t)"),
        (
            "zeEventPoolCreate",
            "ze_result_t (*)(ze_context_handle_t, const ze_event_pool_desc_t*, uint32_t, ze_device_handle_t*, \
             ze_event_pool_handle_t*)",
        ),
        ("zeEventPoolDestroy", "ze_result_t (*)(ze_event_pool_handle_t)"),
        ("zeEventCreate", "ze_result_t (*)(ze_event_pool_handle_t, const ze_event_desc_t*, ze_event_handle_t*)"),
        ("zeEventDestroy", "ze_result_t (*)(ze_event_handle_t)"),
        ("zeEventHostSynchronize", "ze_result_t (*)(ze_event_handle_t, uint64_t)"),
        ("zeEventQueryStatus", "ze_result_t (*)(ze_event_handle_t)"),
        ("zeEventHostReset", "ze_result_t (*)(ze_event_handle_t)"),
        (
            "zetMetricStreamerOpen",
            "ze_result_t (*)(zet_context_handle_t, zet_device_handle_t, zet_metric_group_handle_t, \
             zet_metric_streamer_desc_t*, ze_event_handle_t, zet_metric_streamer_handle_t*)",
        ),
        ("zetMetricStreamerReadData", "ze_result_t (*)(zet_metric_streamer_handle_t, uint32_t, size_t*, uint8_t*)"),
        ("zetMetricStreamerClose", "ze_result_t (*)(zet_metric_streamer_handle_t)"),
        (
            "zetMetricGroupCalculateMetricValues",
            "ze_result_t (*)(zet_metric_group_handle_t, zet_metric_group_calculation_type_t, size_t, const uint8_t*, \
             uint32_t*, zet_typed_value_t*)",
        ),
        (
            "zetMetricGroupCalculateMultipleMetricValuesExp",
            "ze_result_t (*)(zet_metric_group_handle_t, zet_metric_group_calculation_type_t, size_t, const uint8_t*, \
             uint32_t*, uint32_t*, uint32_t*, zet_typed_value_t*)",
        ),
        ("zeDeviceGetGlobalTimestamps", "ze_result_t (*)(ze_device_handle_t, uint64_t*, uint64_t*)"),
        (
            "zetMetricTracerCreateExp",
            "ze_result_t (*)(zet_context_handle_t, zet_device_handle_t, uint32_t, zet_metric_group_handle_t*, \
             zet_metric_tracer_exp_desc_t*, ze_event_handle_t, zet_metric_tracer_exp_handle_t*)",
        ),
        ("zetMetricTracerDestroyExp", "ze_result_t (*)(zet_metric_tracer_exp_handle_t)"),
        ("zetMetricTracerEnableExp", "ze_result_t (*)(zet_metric_tracer_exp_handle_t, ze_bool_t)"),
        ("zetMetricTracerDisableExp", "ze_result_t (*)(zet_metric_tracer_exp_handle_t, ze_bool_t)"),
        ("zetMetricTracerReadDataExp", "ze_result_t (*)(zet_metric_tracer_exp_handle_t, size_t*, uint8_t*)"),
        (
            "zetMetricDecoderCreateExp",
            "ze_result_t (*)(zet_metric_tracer_exp_handle_t, zet_metric_decoder_exp_handle_t*)",
        ),
        ("zetMetricDecoderDestroyExp", "ze_result_t (*)(zet_metric_decoder_exp_handle_t)"),
        (
            "zetMetricDecoderGetDecodableMetricsExp",
            "ze_result_t (*)(zet_metric_decoder_exp_handle_t, uint32_t*, zet_metric_handle_t*)",
        ),
        (
            "zetMetricTracerDecodeExp",
            "ze_result_t (*)(zet_metric_decoder_exp_handle_t, size_t*, uint8_t*, uint32_t, zet_metric_handle_t*, \
             uint32_t*, uint32_t*, uint32_t*, zet_metric_entry_exp_t*)",
        ),
        ("zeDevicePciGetPropertiesExt", "ze_result_t (*)(ze_device_handle_t, ze_pci_ext_properties_t*)"),
        ("zesDeviceProcessesGetState", "ze_result_t (*)(zes_device_handle_t, uint32_t*, zes_process_state_t*)"),
    ];
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdbool.h>\n#include <ze_api.h>\n#include <zet_api.h>\n\
         #include <zet_ddi.h>\n#include <zes_api.h>\n#include <loader/ze_loader.h>\n",
    );
    for (f, sig) in &signatures {
        c += &format!("_Static_assert(__builtin_types_compatible_p(__typeof__(&{f}), {sig}), \"{f} is not {sig}\");\n");
    }
    c += "int main(void) {\n";
    for (name, _, fields) in &layouts {
        c += &format!("printf(\"{name} %zu\\n\", sizeof({name}));\n");
        for (f, _) in fields {
            c += &format!("printf(\"{name}.{f} %zu\\n\", offsetof({name}, {f}));\n");
        }
    }
    for (name, _) in &constants {
        c += &format!("printf(\"{name} %llu\\n\", (unsigned long long)({name}));\n");
    }
    c += "return 0; }\n";
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (src, exe) = (dir.join("upstream.c"), dir.join("upstream"));
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = match Command::new(&cc).arg("-I").arg(&include).arg(&src).arg("-o").arg(&exe).output() {
        Ok(o) => o,
        Err(e) => return skip(&format!("cannot run {cc}: {e}")),
    };
    assert!(
        out.status.success(),
        "the hand-written declarations differ from the v{UPSTREAM} headers:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let values: BTreeMap<&str, u64> =
        text.lines().filter_map(|l| l.split_once(' ').map(|(k, v)| (k, v.parse().unwrap_or(u64::MAX)))).collect();
    let mut mismatches = Vec::new();
    let mut compared = 0;
    let mut check = |key: String, rust: u64| {
        compared += 1;
        match values.get(key.as_str()) {
            Some(&v) if v == rust => {}
            other => mismatches.push(format!("{key}: Rust {rust}, C {other:?}")),
        }
    };
    for (name, size, fields) in &layouts {
        check(name.to_string(), *size as u64);
        for (f, off) in fields {
            check(format!("{name}.{f}"), *off as u64);
        }
    }
    for (name, v) in &constants {
        check(name.to_string(), *v);
    }
    assert!(mismatches.is_empty(), "differences from the v{UPSTREAM} headers:\n{}", mismatches.join("\n"));
    let fields: usize = layouts.iter().map(|(_, _, f)| f.len()).sum();
    assert_eq!(compared, layouts.len() + fields + constants.len());
    assert_eq!(layouts.len(), 12, "every hand-written struct and table is compared");
}
