//! The names of the entry points this driver implements, and which of them the export-memory
//! path (enumeration, group and metric properties, context, activation, import, free) does not
//! need (the time-based streamer's calls among them).

pub(crate) const IMPLEMENTED: &[&str] = &[
    "zeInit",
    "zeDriverGet",
    "zeDriverGetApiVersion",
    "zeDriverGetProperties",
    "zeDriverGetExtensionProperties",
    "zeDriverGetExtensionFunctionAddress",
    "zeDeviceGet",
    "zeDeviceGetSubDevices",
    "zeDeviceGetProperties",
    "zeDeviceGetStatus",
    "zeDeviceGetGlobalTimestamps",
    "zeContextCreate",
    "zeContextDestroy",
    "zeMemAllocDevice",
    "zeMemAllocHost",
    "zeMemFree",
    "zeCommandListCreateImmediate",
    "zeCommandListAppendMemoryCopy",
    "zeCommandListDestroy",
    "zetMetricGroupGet",
    "zetMetricGroupGetProperties",
    "zetMetricGet",
    "zetMetricGetProperties",
    "zetContextActivateMetricGroups",
    "zetMetricGroupCreateExp",
    "zetMetricGroupAddMetricExp",
    "zetMetricGroupCloseExp",
    "zetMetricGroupDestroyExp",
    "zetDeviceEnableMetricsExp",
    "zetDeviceDisableMetricsExp",
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
];

pub(crate) const OPTIONAL: &[&str] = &[
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
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_entry_points_are_implemented_ones() {
        for name in OPTIONAL {
            assert!(IMPLEMENTED.contains(name), "{name}");
        }
    }
}
