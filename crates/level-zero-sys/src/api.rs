//! The `Api` table: one typed function pointer per Level Zero entry point zescope calls.
//!
//! Two things fill it: `Api::load()` resolves the symbols of the real loader
//! (`libze_loader.so.1`, opened at run time so the binary starts without Level Zero), and the
//! simulated driver (`ze-sim`) hands out a table of its own functions. Everything above this
//! crate calls through an `Api` and does not know which one it has.
//!
//! Entry points newer than the 1.4 headers are optional: `zeInitDrivers` (1.10; loader 1.18 and
//! newer export it, Debian's 1.8.12 does not), `zesInit` (Sysman, 1.5), and the experimental
//! metric functions, which newer loaders export and which every driver may also offer through
//! `zeDriverGetExtensionFunctionAddress`. A loader's export takes the application's (loader)
//! handles; the driver's function takes the driver's own: zescope's `crates/zescope-ze` keeps them apart.
//!
//! The time-based streamer's calls (event pools and events, `zetMetricStreamer*`, Calculate) are
//! in every loader zescope supports, but optional here all the same: only the export-memory path
//! is required, and a driver may leave their slots empty.
//!
//! `zeDevicePciGetPropertiesExt` (the PCI properties extension) and `zesDeviceProcessesGetState`
//! (Sysman) are in the 1.4 headers, but a driver may leave their slots empty: optional too.
//!
//! The metric tracer and decoder (`zetMetricTracer*Exp`, `zetMetricDecoder*Exp`, API 1.10) exist
//! only as exports of newer loaders (1.32 has them, Debian's 1.8.12 does not), which reach a
//! driver through its `zetGetMetricTracerExpProcAddrTable` / `zetGetMetricDecoderExpProcAddrTable`
//! tables; where the loader lacks them their fields are `None`.

use core::ffi::{c_char, c_void};

use crate::pci::*;
use crate::stream::*;
use crate::sysman::*;
use crate::tracer::*;
use crate::types::*;

macro_rules! api_table {
    (
        required { $( $req:ident ( $($rp:ident : $rt:ty),* $(,)? ); )* }
        optional { $( $opt:ident ( $($op:ident : $ot:ty),* $(,)? ); )* }
    ) => {
        /// Function pointer types, named after the entry point: `pfn::zeInit` is `zeInit`'s.
        pub mod pfn {
            use super::*;
            $(
                #[doc = concat!("The C signature of `", stringify!($req), "`.")]
                pub type $req = unsafe extern "C" fn($($rp: $rt),*) -> ze_result_t;
            )*
            $(
                #[doc = concat!("The C signature of `", stringify!($opt), "`.")]
                pub type $opt = unsafe extern "C" fn($($op: $ot),*) -> ze_result_t;
            )*
        }

        /// Entry points. Required ones exist in every Level Zero loader zescope supports;
        /// optional ones depend on the loader's version (and for experimental functions a
        /// missing symbol means: ask the driver with `zeDriverGetExtensionFunctionAddress`).
        #[derive(Clone)]
        pub struct Api {
            /// The library the pointers below point into, kept loaded for as long as any clone of
            /// this table lives (as ash's `Entry` does); `None` for a table of functions that live
            /// in the program itself (the in-process simulated driver).
            pub library: Option<std::sync::Arc<libloading::Library>>,
            $(
                #[doc = concat!("`", stringify!($req), "`, with the specification's contract.")]
                pub $req: pfn::$req,
            )*
            $(
                #[doc = concat!(
                    "`", stringify!($opt), "`, or `None` where the loader (or driver) does not ",
                    "provide it."
                )]
                pub $opt: Option<pfn::$opt>,
            )*
        }

        impl Api {
            fn resolve(lib: std::sync::Arc<libloading::Library>) -> Result<Api, LoadError> {
                Ok(Api {
                    library: Some(lib.clone()),
                    $( $req: {
                        // SAFETY: the symbol is looked up by its Level Zero name and typed with the
                        // signature the Level Zero headers give it.
                        let sym = unsafe {
                            lib.get::<pfn::$req>(concat!(stringify!($req), "\0").as_bytes())
                        };
                        *sym.map_err(|_| LoadError::MissingSymbol(stringify!($req)))?
                    }, )*
                    $( $opt: {
                        // SAFETY: as above; absence is allowed.
                        let sym = unsafe {
                            lib.get::<pfn::$opt>(concat!(stringify!($opt), "\0").as_bytes())
                        };
                        sym.ok().map(|s| *s)
                    }, )*
                })
            }
        }
    };
}

api_table! {
    required {
        zeInit(flags: ze_init_flags_t);
        zeDriverGet(pCount: *mut u32, phDrivers: *mut ze_driver_handle_t);
        zeDriverGetApiVersion(hDriver: ze_driver_handle_t, version: *mut ze_api_version_t);
        zeDriverGetProperties(hDriver: ze_driver_handle_t, pDriverProperties: *mut ze_driver_properties_t);
        zeDriverGetExtensionProperties(
            hDriver: ze_driver_handle_t,
            pCount: *mut u32,
            pExtensionProperties: *mut ze_driver_extension_properties_t,
        );
        zeDriverGetExtensionFunctionAddress(
            hDriver: ze_driver_handle_t,
            name: *const c_char,
            ppFunctionAddress: *mut *mut c_void,
        );
        zeDeviceGet(hDriver: ze_driver_handle_t, pCount: *mut u32, phDevices: *mut ze_device_handle_t);
        zeDeviceGetSubDevices(
            hDevice: ze_device_handle_t,
            pCount: *mut u32,
            phSubdevices: *mut ze_device_handle_t,
        );
        zeDeviceGetProperties(hDevice: ze_device_handle_t, pDeviceProperties: *mut ze_device_properties_t);
        zeDeviceGetStatus(hDevice: ze_device_handle_t);
        zeDeviceGetGlobalTimestamps(
            hDevice: ze_device_handle_t,
            hostTimestamp: *mut u64,
            deviceTimestamp: *mut u64,
        );
        zeContextCreate(
            hDriver: ze_driver_handle_t,
            desc: *const ze_context_desc_t,
            phContext: *mut ze_context_handle_t,
        );
        zeContextDestroy(hContext: ze_context_handle_t);
        zeMemAllocDevice(
            hContext: ze_context_handle_t,
            device_desc: *const ze_device_mem_alloc_desc_t,
            size: usize,
            alignment: usize,
            hDevice: ze_device_handle_t,
            pptr: *mut *mut c_void,
        );
        zeMemAllocHost(
            hContext: ze_context_handle_t,
            host_desc: *const ze_host_mem_alloc_desc_t,
            size: usize,
            alignment: usize,
            pptr: *mut *mut c_void,
        );
        zeMemFree(hContext: ze_context_handle_t, ptr: *mut c_void);
        zeCommandListCreateImmediate(
            hContext: ze_context_handle_t,
            hDevice: ze_device_handle_t,
            altdesc: *const ze_command_queue_desc_t,
            phCommandList: *mut ze_command_list_handle_t,
        );
        zeCommandListAppendMemoryCopy(
            hCommandList: ze_command_list_handle_t,
            dstptr: *mut c_void,
            srcptr: *const c_void,
            size: usize,
            hSignalEvent: ze_event_handle_t,
            numWaitEvents: u32,
            phWaitEvents: *mut ze_event_handle_t,
        );
        zeCommandListDestroy(hCommandList: ze_command_list_handle_t);
        zetMetricGroupGet(
            hDevice: zet_device_handle_t,
            pCount: *mut u32,
            phMetricGroups: *mut zet_metric_group_handle_t,
        );
        zetMetricGroupGetProperties(
            hMetricGroup: zet_metric_group_handle_t,
            pProperties: *mut zet_metric_group_properties_t,
        );
        zetMetricGet(
            hMetricGroup: zet_metric_group_handle_t,
            pCount: *mut u32,
            phMetrics: *mut zet_metric_handle_t,
        );
        zetMetricGetProperties(hMetric: zet_metric_handle_t, pProperties: *mut zet_metric_properties_t);
        zetContextActivateMetricGroups(
            hContext: zet_context_handle_t,
            hDevice: zet_device_handle_t,
            count: u32,
            phMetricGroups: *mut zet_metric_group_handle_t,
        );
    }
    optional {
        zeInitDrivers(
            pCount: *mut u32,
            phDrivers: *mut ze_driver_handle_t,
            desc: *mut ze_init_driver_type_desc_t,
        );
        zesInit(flags: zes_init_flags_t);
        zesDriverGet(pCount: *mut u32, phDrivers: *mut zes_driver_handle_t);
        zesDeviceGet(hDriver: zes_driver_handle_t, pCount: *mut u32, phDevices: *mut zes_device_handle_t);
        zesDeviceGetProperties(hDevice: zes_device_handle_t, pProperties: *mut zes_device_properties_t);
        zesDeviceEnumFrequencyDomains(hDevice: zes_device_handle_t, pCount: *mut u32, phFrequency: *mut zes_freq_handle_t);
        zesFrequencyGetProperties(hFrequency: zes_freq_handle_t, pProperties: *mut zes_freq_properties_t);
        zesFrequencyGetState(hFrequency: zes_freq_handle_t, pState: *mut zes_freq_state_t);
        zesDeviceEnumPowerDomains(hDevice: zes_device_handle_t, pCount: *mut u32, phPower: *mut zes_pwr_handle_t);
        zesPowerGetProperties(hPower: zes_pwr_handle_t, pProperties: *mut zes_power_properties_t);
        zesPowerGetEnergyCounter(hPower: zes_pwr_handle_t, pEnergy: *mut zes_power_energy_counter_t);
        zesDeviceEnumTemperatureSensors(hDevice: zes_device_handle_t, pCount: *mut u32, phTemperature: *mut zes_temp_handle_t);
        zesTemperatureGetProperties(hTemperature: zes_temp_handle_t, pProperties: *mut zes_temp_properties_t);
        zesTemperatureGetState(hTemperature: zes_temp_handle_t, pTemperature: *mut f64);
        zesDeviceEnumEngineGroups(hDevice: zes_device_handle_t, pCount: *mut u32, phEngine: *mut zes_engine_handle_t);
        zesEngineGetProperties(hEngine: zes_engine_handle_t, pProperties: *mut zes_engine_properties_t);
        zesEngineGetActivity(hEngine: zes_engine_handle_t, pStats: *mut zes_engine_stats_t);
        zesDeviceEnumMemoryModules(hDevice: zes_device_handle_t, pCount: *mut u32, phMemory: *mut zes_mem_handle_t);
        zesMemoryGetProperties(hMemory: zes_mem_handle_t, pProperties: *mut zes_mem_properties_t);
        zesMemoryGetState(hMemory: zes_mem_handle_t, pState: *mut zes_mem_state_t);
        zesMemoryGetBandwidth(hMemory: zes_mem_handle_t, pBandwidth: *mut zes_mem_bandwidth_t);
        zesDeviceProcessesGetState(
            hDevice: zes_device_handle_t,
            pCount: *mut u32,
            pProcesses: *mut zes_process_state_t,
        );
        zeDevicePciGetPropertiesExt(hDevice: ze_device_handle_t, pPciProperties: *mut ze_pci_ext_properties_t);
        zelLoaderGetVersions(num_elems: *mut usize, versions: *mut zel_component_version_t);
        zelLoaderTranslateHandle(
            handleType: zel_handle_type_t,
            handleIn: *mut c_void,
            handleOut: *mut *mut c_void,
        );
        zetMetricGroupCreateExp(
            hDevice: zet_device_handle_t,
            pName: *const c_char,
            pDescription: *const c_char,
            samplingType: zet_metric_group_sampling_type_flags_t,
            phMetricGroup: *mut zet_metric_group_handle_t,
        );
        zetMetricGroupAddMetricExp(
            hMetricGroup: zet_metric_group_handle_t,
            hMetric: zet_metric_handle_t,
            pErrorStringSize: *mut usize,
            pErrorString: *mut c_char,
        );
        zetMetricGroupCloseExp(hMetricGroup: zet_metric_group_handle_t);
        zetMetricGroupDestroyExp(hMetricGroup: zet_metric_group_handle_t);
        zetDeviceEnableMetricsExp(hDevice: zet_device_handle_t);
        zetDeviceDisableMetricsExp(hDevice: zet_device_handle_t);
        zeEventPoolCreate(
            hContext: ze_context_handle_t,
            desc: *const ze_event_pool_desc_t,
            numDevices: u32,
            phDevices: *mut ze_device_handle_t,
            phEventPool: *mut ze_event_pool_handle_t,
        );
        zeEventPoolDestroy(hEventPool: ze_event_pool_handle_t);
        zeEventCreate(hEventPool: ze_event_pool_handle_t, desc: *const ze_event_desc_t, phEvent: *mut ze_event_handle_t);
        zeEventDestroy(hEvent: ze_event_handle_t);
        zeEventHostSynchronize(hEvent: ze_event_handle_t, timeout: u64);
        zeEventQueryStatus(hEvent: ze_event_handle_t);
        zeEventHostReset(hEvent: ze_event_handle_t);
        zetMetricStreamerOpen(
            hContext: zet_context_handle_t,
            hDevice: zet_device_handle_t,
            hMetricGroup: zet_metric_group_handle_t,
            desc: *mut zet_metric_streamer_desc_t,
            hNotificationEvent: ze_event_handle_t,
            phMetricStreamer: *mut zet_metric_streamer_handle_t,
        );
        zetMetricStreamerReadData(
            hMetricStreamer: zet_metric_streamer_handle_t,
            maxReportCount: u32,
            pRawDataSize: *mut usize,
            pRawData: *mut u8,
        );
        zetMetricStreamerClose(hMetricStreamer: zet_metric_streamer_handle_t);
        zetMetricGroupCalculateMetricValues(
            hMetricGroup: zet_metric_group_handle_t,
            r#type: zet_metric_group_calculation_type_t,
            rawDataSize: usize,
            pRawData: *const u8,
            pMetricValueCount: *mut u32,
            pMetricValues: *mut zet_typed_value_t,
        );
        zetMetricGroupCalculateMultipleMetricValuesExp(
            hMetricGroup: zet_metric_group_handle_t,
            r#type: zet_metric_group_calculation_type_t,
            rawDataSize: usize,
            pRawData: *const u8,
            pSetCount: *mut u32,
            pTotalMetricValueCount: *mut u32,
            pMetricCounts: *mut u32,
            pMetricValues: *mut zet_typed_value_t,
        );
        zetMetricTracerCreateExp(
            hContext: zet_context_handle_t,
            hDevice: zet_device_handle_t,
            metricGroupCount: u32,
            phMetricGroups: *mut zet_metric_group_handle_t,
            desc: *mut zet_metric_tracer_exp_desc_t,
            hNotificationEvent: ze_event_handle_t,
            phMetricTracer: *mut zet_metric_tracer_exp_handle_t,
        );
        zetMetricTracerDestroyExp(hMetricTracer: zet_metric_tracer_exp_handle_t);
        zetMetricTracerEnableExp(hMetricTracer: zet_metric_tracer_exp_handle_t, synchronous: ze_bool_t);
        zetMetricTracerDisableExp(hMetricTracer: zet_metric_tracer_exp_handle_t, synchronous: ze_bool_t);
        zetMetricTracerReadDataExp(
            hMetricTracer: zet_metric_tracer_exp_handle_t,
            pRawDataSize: *mut usize,
            pRawData: *mut u8,
        );
        zetMetricDecoderCreateExp(
            hMetricTracer: zet_metric_tracer_exp_handle_t,
            phMetricDecoder: *mut zet_metric_decoder_exp_handle_t,
        );
        zetMetricDecoderDestroyExp(phMetricDecoder: zet_metric_decoder_exp_handle_t);
        zetMetricDecoderGetDecodableMetricsExp(
            hMetricDecoder: zet_metric_decoder_exp_handle_t,
            pCount: *mut u32,
            phMetrics: *mut zet_metric_handle_t,
        );
        zetMetricTracerDecodeExp(
            phMetricDecoder: zet_metric_decoder_exp_handle_t,
            pRawDataSize: *mut usize,
            pRawData: *mut u8,
            metricsCount: u32,
            phMetrics: *mut zet_metric_handle_t,
            pSetCount: *mut u32,
            pMetricEntriesCountPerSet: *mut u32,
            pMetricEntriesCount: *mut u32,
            pMetricEntries: *mut zet_metric_entry_exp_t,
        );
    }
}

/// `ze_init_driver_type_flags_t` (Level Zero 1.10): which kinds of driver `zeInitDrivers` starts.
pub type ze_init_driver_type_flags_t = u32;
/// `ZE_INIT_DRIVER_TYPE_FLAG_GPU`: start GPU drivers.
pub const ZE_INIT_DRIVER_TYPE_FLAG_GPU: ze_init_driver_type_flags_t = 1 << 0;
/// `ZE_INIT_DRIVER_TYPE_FLAG_NPU`: start NPU drivers.
pub const ZE_INIT_DRIVER_TYPE_FLAG_NPU: ze_init_driver_type_flags_t = 1 << 1;
/// `ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC` (0x00020021): the `stype` of a
/// [`ze_init_driver_type_desc_t`].
pub const ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC: ze_structure_type_t = 0x0002_0021;

/// `zes_init_flags_t` (Sysman, Level Zero 1.5); no flag is defined yet: pass 0.
pub type zes_init_flags_t = u32;

/// `ze_init_driver_type_desc_t` (Level Zero 1.10), the descriptor of `zeInitDrivers`. Not in the
/// 1.4 headers; compared with the 1.32 headers by `tests/layout/`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_init_driver_type_desc_t {
    /// Must be [`ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC`] (what `Default` sets).
    pub stype: ze_structure_type_t,
    /// The next struct of the chain, or null.
    pub pNext: *const c_void,
    /// `ZE_INIT_DRIVER_TYPE_FLAG_*` bits: the kinds of driver to start.
    pub flags: ze_init_driver_type_flags_t,
}

impl Default for ze_init_driver_type_desc_t {
    fn default() -> Self {
        Self { stype: ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, pNext: core::ptr::null(), flags: 0 }
    }
}

/// The loader's file name (SONAME) on Linux.
pub const LOADER_LIBRARY: &str = "libze_loader.so.1";

/// Why the Level Zero loader could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// `dlopen` failed: the library is not installed or not on the search path.
    LibraryNotFound {
        /// The file name or path given to `dlopen`.
        library: String,
        /// `dlopen`'s error, with its causes.
        reason: String,
    },
    /// The library was found but lacks an entry point every supported loader has (named here).
    MissingSymbol(&'static str),
}

impl core::fmt::Display for LoadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LoadError::LibraryNotFound { library, reason } => write!(
                f,
                "the Level Zero loader ({library}) could not be opened: {reason}. \
                 Install it (Debian/Ubuntu: `apt install libze1`) or add its directory to LD_LIBRARY_PATH"
            ),
            LoadError::MissingSymbol(name) => write!(
                f,
                "the Level Zero loader lacks the entry point {name}; it is too old or not a Level Zero loader"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

impl Api {
    /// Opens the system's Level Zero loader (`libze_loader.so.1`) and resolves its entry points.
    /// The library stays loaded while the table (or any clone of it) lives.
    ///
    /// # Safety
    /// As [`Api::load_from`].
    pub unsafe fn load() -> Result<Api, LoadError> {
        // SAFETY: the caller's contract.
        unsafe { Self::load_from(LOADER_LIBRARY) }
    }

    /// As `load`, from a given file name or path.
    ///
    /// # Safety
    /// Loading a library runs its initialisers, and calling through the table trusts that each
    /// symbol has the C signature the Level Zero headers give it: `library` must be a Level Zero
    /// loader (or a library built to its ABI), not any file. Drivers the loader starts may keep
    /// threads and handles: nothing obtained through the table may be used after the last clone
    /// of the table is dropped (zescope keeps one for the life of the process).
    pub unsafe fn load_from(library: &str) -> Result<Api, LoadError> {
        // RTLD_NODELETE: even when the last clone of the table is dropped, the loader stays
        // mapped — drivers it started may still run threads in it (and `zescope doctor` reads
        // which loader and layers were loaded from /proc/self/maps afterwards).
        let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL | libc::RTLD_NODELETE;
        // SAFETY: the caller guarantees this is a Level Zero loader, designed to be dlopen'ed by
        // applications; its initialisers only set up its own state.
        let lib = unsafe { libloading::os::unix::Library::open(Some(library), flags) }
            .map_err(|e| LoadError::LibraryNotFound { library: library.to_owned(), reason: dlopen_reason(&e) })?;
        Api::resolve(std::sync::Arc::new(lib.into()))
    }
}

/// libloading's error with its cause ("dlopen failed" alone does not say that the file is missing).
fn dlopen_reason(e: &libloading::Error) -> String {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason = format!("{reason}: {s}");
        source = s.source();
    }
    reason
}
