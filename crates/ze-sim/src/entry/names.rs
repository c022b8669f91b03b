//! The names of the entry points this driver implements, and which of them the export-memory
//! path (enumeration, group and metric properties, context, activation, import, free) does not
//! need (the time-based streamer's and the metric tracer's calls among them).

/// The entry points the export-memory path needs.
pub(crate) const REQUIRED: &[&str] = &[
    "zeInit",
    "zeDriverGet",
    "zeDriverGetApiVersion",
    "zeDriverGetProperties",
    "zeDeviceGet",
    "zeDeviceGetSubDevices",
    "zeDeviceGetProperties",
    "zeContextCreate",
    "zeContextDestroy",
    "zeMemAllocDevice",
    "zeMemFree",
    "zetMetricGroupGet",
    "zetMetricGroupGetProperties",
    "zetMetricGet",
    "zetMetricGetProperties",
    "zetContextActivateMetricGroups",
];

/// Every entry point this driver implements: the required ones, then the optional ones.
pub(crate) static IMPLEMENTED: std::sync::LazyLock<Vec<&str>> =
    std::sync::LazyLock::new(|| REQUIRED.iter().chain(OPTIONAL).copied().collect());

/// The implemented entry points the export-memory path does not need.
pub(crate) const OPTIONAL: &[&str] = &[
    "zeInitDrivers",
    "zeDriverGetExtensionProperties",
    "zeDriverGetExtensionFunctionAddress",
    "zeDeviceGetStatus",
    "zeDeviceGetGlobalTimestamps",
    "zeMemAllocHost",
    "zeCommandListCreateImmediate",
    "zeCommandListAppendMemoryCopy",
    "zeCommandListDestroy",
    "zetMetricGroupCreateExp",
    "zetMetricGroupAddMetricExp",
    "zetMetricGroupCloseExp",
    "zetMetricGroupDestroyExp",
    "zetDeviceEnableMetricsExp",
    "zetDeviceDisableMetricsExp",
    "zetDeviceGetConcurrentMetricGroupsExp",
    "zetMetricGroupGetGlobalTimestampsExp",
    "zetMetricGroupGetExportDataExp",
    "zeEventPoolCreate",
    "zeEventPoolDestroy",
    "zeEventCreate",
    "zeEventDestroy",
    "zeEventHostSynchronize",
    "zeEventQueryStatus",
    "zeEventHostReset",
    "zetMetricStreamerOpen",
    "zetMetricStreamerReadData",
    "zetMetricStreamerClose",
    "zetMetricGroupCalculateMetricValues",
    "zetMetricGroupCalculateMultipleMetricValuesExp",
    "zesInit",
    "zesDriverGet",
    "zesDeviceGet",
    "zesDeviceGetProperties",
    "zesDeviceEnumFrequencyDomains",
    "zesFrequencyGetProperties",
    "zesFrequencyGetState",
    "zesDeviceEnumPowerDomains",
    "zesPowerGetProperties",
    "zesPowerGetEnergyCounter",
    "zesDeviceEnumTemperatureSensors",
    "zesTemperatureGetProperties",
    "zesTemperatureGetState",
    "zesDeviceEnumEngineGroups",
    "zesEngineGetProperties",
    "zesEngineGetActivity",
    "zesDeviceEnumMemoryModules",
    "zesMemoryGetProperties",
    "zesMemoryGetState",
    "zesMemoryGetBandwidth",
    "zesDeviceProcessesGetState",
    "zeDevicePciGetPropertiesExt",
    "zetMetricTracerCreateExp",
    "zetMetricTracerDestroyExp",
    "zetMetricTracerEnableExp",
    "zetMetricTracerDisableExp",
    "zetMetricTracerReadDataExp",
    "zetMetricDecoderCreateExp",
    "zetMetricDecoderDestroyExp",
    "zetMetricDecoderGetDecodableMetricsExp",
    "zetMetricTracerDecodeExp",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_entry_point_is_both_required_and_optional() {
        for name in OPTIONAL {
            assert!(!REQUIRED.contains(name), "{name}");
        }
        let mut all = IMPLEMENTED.clone();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), REQUIRED.len() + OPTIONAL.len());
    }
}
