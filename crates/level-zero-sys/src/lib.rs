//! Raw FFI to oneAPI Level Zero for zescope: `#[repr(C)]` types, constants, the `Api` table
//! of entry points loaded at run time, and the driver DDI tables a simulated driver fills.
//!
//! - [`types`]: core and tools types of the Level Zero 1.4 headers (Debian's loader 1.8.12).
//! - [`exp`]: experimental types the 1.4 headers lack (metric export memory, runtime metric
//!   groups, runtime enable/disable of metrics), written by hand from the specification.
//! - [`api`]: the `Api` table; `Api::load()` dlopens `libze_loader.so.1` (no link-time
//!   dependency, so programs using this crate start on machines without Level Zero).
//! - [`ddi`]: DDI tables, generated from the headers by `gen/ddi.py`.
//!
//! This layer is thin on purpose (as in `ash` or `nvml-wrapper-sys`): no ownership, no
//! error types beyond loading. The safe layer lives in zescope's `src/ze`.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

pub mod api;
pub mod ddi;
pub mod exp;
pub mod types;

pub use api::*;
pub use exp::*;
pub use types::*;
