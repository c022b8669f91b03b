//! Raw FFI to oneAPI Level Zero for zescope: `#[repr(C)]` types, constants, the `Api` table
//! of entry points loaded at run time, and the driver DDI tables a simulated driver fills.
//!
//! # What it is
//!
//! - [`types`]: core and tools types of the Level Zero 1.4 headers (Debian's loader 1.8.12),
//!   mirroring `ze_api.h`, `zet_api.h` and `loader/ze_loader.h` one to one.
//! - [`exp`]: experimental types the 1.4 headers lack (metric export memory, runtime metric
//!   groups, runtime enable/disable of metrics), written by hand from the specification.
//! - [`stream`]: the time-based metric streamer, event pools and events, and Calculate's typed
//!   values (1.4 headers).
//! - [`sysman`]: the Sysman (`zes_api.h`) telemetry types: frequency, power, temperature,
//!   engines, memory, the processes using a device (1.4 headers).
//! - [`pci`]: the PCI properties extension (`zeDevicePciGetPropertiesExt`): a device's PCI
//!   address (1.4 headers, compared with the 1.32 ones).
//! - [`tracer`]: the metric tracer and decoder (`ZET_experimental_metric_tracer`, 1.10), their
//!   descriptor, decoded entry, metric types and DDI tables, written by hand from the 1.32
//!   headers.
//! - [`api`]: the [`Api`] table; [`Api::load`] dlopens `libze_loader.so.1` (no link-time
//!   dependency, so programs using this crate start on machines without Level Zero).
//! - [`ddi`]: the driver-side DDI tables of `ze_ddi.h`, `zet_ddi.h` and `zes_ddi.h`, generated
//!   by `gen/ddi.py`.
//! - [`in_process`]: [`InProcess`], a driver linked into the program (ze-sim's table, handed in
//!   by the program that links it) with what keeps it valid.
//!
//! This layer is thin on purpose (as in `ash` or `nvml-wrapper-sys`): no ownership, no
//! error types beyond loading. The safe layer lives in zescope's `crates/zescope-ze`; the simulated
//! driver `ze-sim` fills an [`Api`] and the DDI tables with its own functions.
//!
//! # How to use it
//!
//! Get an [`Api`] ([`Api::load`] for the system loader, or an [`InProcess`] driver's), then call its
//! fields as the C functions of the same name: `zeInit`, `zeDriverGet`, … Required fields are
//! plain function pointers; optional ones (newer or experimental entry points) are `Option`s
//! that are `None` where the loader does not export them; the experimental metric functions can
//! also be asked of a driver with `zeDriverGetExtensionFunctionAddress` and the `*_NAME`
//! constants of [`exp`]. Extensible structs start with `stype`/`pNext`: `Default` zeroes a
//! struct of [`types`] (set `stype` yourself) and fills in `stype` for those of [`exp`].
//!
//! # Safety and threading
//!
//! Every entry point is an `unsafe extern "C" fn` with the contract of the Level Zero
//! specification: handles must be live ones of the same driver, pointers valid for what the C
//! API reads and writes, `stype` right. Level Zero entry points are thread-safe except where
//! the specification says otherwise; the metric export memory extension synchronizes nothing,
//! and its exported fd belongs to the driver (see [`exp`]). Nothing here enforces any of it:
//! that is the job of the safe layer above.
//!
//! # Testing
//!
//! `tests/layout/` compares the size and every field offset of each `#[repr(C)]` struct
//! (including every DDI table) with the C headers, compiled by the system C compiler against
//! `/usr/include/level_zero` (`libze-dev`); under `ZESCOPE_STRICT_TESTS=1` (CI) a missing
//! compiler or header fails instead of skipping. The entry points themselves are exercised by
//! ze-sim's and zescope's tests, through the real loader and in-process.
#![warn(missing_docs)]
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

pub mod api;
pub mod ddi;
pub mod exp;
pub mod in_process;
pub mod pci;
pub mod stream;
pub mod sysman;
pub mod tracer;
pub mod types;

pub use api::*;
pub use exp::*;
pub use in_process::*;
pub use pci::*;
pub use stream::*;
pub use sysman::*;
pub use tracer::*;
pub use types::*;
