//! The built-in model: what `SimConfig::default()` describes and what zescope shows as its
//! simulated device when no configuration is given. Its catalogue is shaped as a real driver
//! publishes one (a group's sampling type a bit field; see docs/ze-sim.md):
//!
//! - "ze-sim GPU" (2100 MHz) with one sub-device "ze-sim GPU tile 0": `ComputeBasic` (domain 0,
//!   one DMA-BUF for the group, and time-based: the streamer reads it too), `MemoryTraffic`
//!   (domain 1, each metric exports the shared DMA-BUF, and time-based), `EuStallSampling`
//!   (domain 100, an IP-sampling group as compute-runtime publishes it: time-based only, the
//!   instruction pointer and nine stall counts per sample, exporting nothing), `RenderBasic`
//!   (domain 3, time-based streamer only) and `KernelTrace` (domain 100 after `EuStallSampling`,
//!   tracer-based: the workload writes kernel events into its exported memory, read with the
//!   metric tracer; the EU's sampling serves one of the two at a time); the tile has its own
//!   `ComputeBasic`, `EuStallSampling` and `RenderBasic`.
//! - The GPU at PCI address 0000:03:00.0 (its tile shares it), the NPU at 0000:00:0b.0.
//! - "ze-sim NPU" (1400 MHz): `NpuActivity` (domain 0, one DMA-BUF) and `NocTraffic` (domain 1,
//!   time-based streamer only).
//!
//! Every domain's first group can be read by the streamer, as Intel's
//! conformance suite assumes of a device (it opens a streamer on the first group of each domain).

use crate::config::{
    DeviceConfig, DeviceKind, Export, Faults, GroupConfig, MetricConfig, MetricsEnable, Quirks, Signal, SimConfig,
    SysmanConfig,
};

impl Default for SimConfig {
    fn default() -> Self {
        let m = |name: &str, description: &str, signal| MetricConfig {
            name: name.into(),
            description: description.into(),
            signal,
        };
        let compute = || GroupConfig {
            name: "ComputeBasic".into(),
            description: "Engine activity, clocks and power (exported as one DMA-BUF; time-based too)".into(),
            domain: 0,
            export: Export::Group,
            metrics: vec![
                m("GpuTime", "Time the compute engine was busy", Signal::GpuTime),
                m("GpuBusyCycles", "Cycles the compute engine was busy", Signal::BusyCycles),
                m("GpuFrequency", "Current GPU core frequency", Signal::FrequencyMhz),
                m("GpuUtilization", "Share of time the GPU was busy", Signal::UtilizationPercent),
                m("GpuPower", "Package power", Signal::PowerWatts),
            ],
            synthetic_counters: 0,
            stream: true,
            tracer: false,
        };
        let memory = GroupConfig {
            name: "MemoryTraffic".into(),
            description: "Device memory traffic (each metric exports the shared DMA-BUF; time-based too)".into(),
            domain: 1,
            export: Export::PerMetric,
            metrics: vec![
                m("BytesRead", "Bytes read from device memory", Signal::BytesRead),
                m("BytesWritten", "Bytes written to device memory", Signal::BytesWritten),
                m("MemoryTemperature", "Memory temperature", Signal::MemoryTemperatureC),
            ],
            synthetic_counters: 0,
            stream: true,
            tracer: false,
        };
        let render = GroupConfig {
            name: "RenderBasic".into(),
            description: "Render engine activity (time-based streamer only, no exported memory)".into(),
            domain: 3,
            export: Export::None,
            metrics: vec![
                m("RenderBusyTime", "Time the render engine was busy", Signal::GpuTime),
                m("RenderBusyCycles", "Cycles the render engine was busy", Signal::BusyCycles),
                m("RenderFrequency", "Render engine frequency", Signal::FrequencyMhz),
                m("RenderUtilization", "Share of time the render engine was busy", Signal::UtilizationPercent),
                m("L3BytesRead", "Bytes read through L3", Signal::BytesRead),
            ],
            synthetic_counters: 0,
            stream: true,
            tracer: false,
        };
        let stall = crate::catalog::eu_stall_sampling;
        let trace = GroupConfig {
            name: "KernelTrace".into(),
            description: "Kernel events written into exported memory (tracer-based: read with the metric tracer)"
                .into(),
            domain: crate::catalog::EU_SAMPLING_DOMAIN,
            export: Export::Group,
            metrics: vec![
                m("KernelStart", "A kernel began (value: its id)", Signal::KernelStart),
                m("KernelBytes", "Bytes the kernels wrote so far (wraps at 2^32)", Signal::KernelBytes),
                m("KernelMarker", "A marker the kernel wrote (timestamp only)", Signal::KernelMarker),
                m("KernelEnd", "A kernel ended (value: its id)", Signal::KernelEnd),
            ],
            synthetic_counters: 0,
            stream: false,
            tracer: true,
        };
        let gpu = DeviceConfig {
            name: "ze-sim GPU".into(),
            kind: DeviceKind::Gpu,
            vendor_id: 0x8086,
            device_id: 0x5a51,
            core_clock_mhz: 2100,
            groups: vec![compute(), memory.clone(), stall(), render.clone(), trace],
            sub_devices: vec![DeviceConfig {
                name: "ze-sim GPU tile 0".into(),
                kind: DeviceKind::Gpu,
                vendor_id: 0x8086,
                device_id: 0x5a51,
                core_clock_mhz: 2100,
                // A tile streams time-based and samples instruction pointers as its root does
                // (Intel's GPU driver lists the same metric sets on the root device and on each
                // tile).
                groups: vec![compute(), stall(), render],
                sub_devices: Vec::new(),
                pci_bdf: None,
            }],
            pci_bdf: Some("0000:03:00.0".into()),
        };
        let npu = DeviceConfig {
            name: "ze-sim NPU".into(),
            kind: DeviceKind::Npu,
            vendor_id: 0x8086,
            device_id: 0x5a5e,
            core_clock_mhz: 1400,
            groups: vec![
                GroupConfig {
                    name: "NpuActivity".into(),
                    description: "Inference engine activity (exported as one DMA-BUF)".into(),
                    domain: 0,
                    export: Export::Group,
                    metrics: vec![
                        m("NpuBusyTime", "Time the inference engine was busy", Signal::GpuTime),
                        m("Inferences", "Inferences completed", Signal::Inferences),
                        m("NpuUtilization", "Share of time the NPU was busy", Signal::UtilizationPercent),
                        m("NpuPower", "NPU power", Signal::PowerWatts),
                    ],
                    synthetic_counters: 0,
                    stream: false,
                    tracer: false,
                },
                GroupConfig {
                    name: "NocTraffic".into(),
                    description: "Network-on-chip traffic (time-based streamer only, no exported memory)".into(),
                    domain: 1,
                    export: Export::None,
                    metrics: vec![
                        m("NocBytesRead", "Bytes read over the NoC", Signal::BytesRead),
                        m("NocBytesWritten", "Bytes written over the NoC", Signal::BytesWritten),
                        m("NocInferences", "Inferences completed", Signal::Inferences),
                    ],
                    synthetic_counters: 0,
                    stream: true,
                    tracer: false,
                },
            ],
            sub_devices: Vec::new(),
            pci_bdf: Some("0000:00:0b.0".into()),
        };
        SimConfig {
            seed: 1,
            update_period_us: 1000,
            metrics: MetricsEnable::Env,
            driver_version: 0x0001_0000,
            devices: vec![gpu, npu],
            faults: Faults::default(),
            quirks: Quirks::default(),
            empty_entry_points: Vec::new(),
            driver_uuid_tag: 0,
            streamer_buffer_reports: 16384,
            tracer_events_per_tick: 8,
            tracer_ring_events: 16384,
            sysman: SysmanConfig::default(),
            profile: None,
            catalog: crate::catalog::Catalog::Builtin,
            unreadable_group: false,
        }
    }
}
