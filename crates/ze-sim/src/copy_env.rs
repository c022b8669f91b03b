//! Which environment variables this copy of the driver reads.
//!
//! Two copies of `libze_sim.so` can live in one process (a GPU driver and an NPU driver, as on
//! laptops with both; the loader is given both through `ZE_ENABLE_ALT_DRIVERS`). Each copy is a
//! separate library with its own state, and finds its own file with `dladdr`. A copy whose file
//! is `lib<name>.so` has the STEM `<name>` uppercased with every non-alphanumeric character as
//! `_` (`libze_sim_npu.so` → `ZE_SIM_NPU`), and reads `ZE_SIM_CONFIG_<STEM>` and
//! `ZE_SIM_REPORT_<STEM>` first, falling back to `ZE_SIM_CONFIG` / `ZE_SIM_REPORT`. Linked into
//! a program (the `rlib`), there is no stem and only the plain names are read.

use std::ffi::{CStr, OsString};
use std::sync::OnceLock;

/// The STEM of the shared library this code is in, if it is one (`lib*.so*`).
pub(crate) fn stem() -> Option<&'static str> {
    static STEM: OnceLock<Option<String>> = OnceLock::new();
    STEM.get_or_init(|| own_file_name().and_then(|n| stem_of(&n))).as_deref()
}

fn own_file_name() -> Option<String> {
    // SAFETY: all-zero bytes are a valid Dl_info (null pointers).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = stem as fn() -> Option<&'static str> as *const libc::c_void;
    // SAFETY: dladdr only reads the address and fills our struct.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the dynamic linker.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    path.rsplit('/').next().map(str::to_owned)
}

/// `libze_sim_npu.so` → `ZE_SIM_NPU`; `None` for anything not named `lib*.so*`.
pub(crate) fn stem_of(file_name: &str) -> Option<String> {
    let rest = file_name.strip_prefix("lib")?;
    let end = rest.find(".so")?;
    let name = &rest[..end];
    if name.is_empty() {
        return None;
    }
    Some(name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect())
}

/// The value of `<base>_<STEM>` if set and non-empty, else of `base`; with the name it came from.
pub(crate) fn var(base: &str) -> Option<(String, OsString)> {
    if let Some(stem) = stem() {
        let name = format!("{base}_{stem}");
        if let Some(v) = std::env::var_os(&name).filter(|v| !v.is_empty()) {
            return Some((name, v));
        }
    }
    std::env::var_os(base).map(|v| (base.to_owned(), v))
}

/// The UUID tag a copy uses when its config leaves `driver_uuid_tag` at 0: 0 for `libze_sim.so`
/// and in-process, else a hash of the stem (never 0), so two copies differ without configs.
pub(crate) fn default_uuid_tag() -> u32 {
    match stem() {
        None | Some("ZE_SIM") => 0,
        Some(s) => {
            // FNV-1a, 32 bits.
            let h = s.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193));
            h.max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stem_of;

    #[test]
    fn stems_follow_the_file_name() {
        assert_eq!(stem_of("libze_sim.so").as_deref(), Some("ZE_SIM"));
        assert_eq!(stem_of("libze_sim_npu.so").as_deref(), Some("ZE_SIM_NPU"));
        assert_eq!(stem_of("libze-sim.gpu.so.1").as_deref(), Some("ZE_SIM_GPU"));
        assert_eq!(stem_of("zescope"), None);
        assert_eq!(stem_of("lib.so"), None);
    }
}
