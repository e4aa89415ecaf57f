//! How a device's kernels make the relaxed atomic loads and stores of the shared kernel sources
//! (`LOAD_RELAXED`, `STORE_LABEL`, ... in `kernels-cl/prelude.h`): where work-items read what
//! others write in the same launch, a plain access is a data race, undefined behaviour in the
//! OpenCL memory model, so each such access is atomic, in the cheapest way the device's OpenCL C
//! offers.

use std::fmt;

use opencl3::device::Device;

/// The kernels' atomic loads and stores on one device (the prelude's `ATOMICS` define).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Atomics {
    /// OpenCL C 1.2: read-modify-writes (`atomic_or(p, 0)` reads, `atomic_xchg` writes), the
    /// only atomic reads and writes that version has. Right on every device, and the slowest.
    ReadModifyWrite,
    /// NVIDIA's OpenCL by default: volatile stores (PTX's `st.volatile`, relaxed atomic stores at
    /// system scope in the PTX memory model) and PTX weak loads as inline assembly, as CUDA's
    /// kernels make them (see `kernels-cu/prelude.cuh` for why and what PTX promises).
    PtxWeak,
    /// NVIDIA's OpenCL with `CCL_ATOMIC_LOADS=strict` ([`ccl_backend::ATOMIC_LOADS_VAR`]):
    /// volatile loads and stores, PTX's `ld.volatile` and `st.volatile`, relaxed atomics at
    /// system scope.
    Ptx,
    /// OpenCL C 2.0, or 3.0 with device-scope atomics and acquire-release fences:
    /// `atomic_load_explicit` / `atomic_store_explicit` with `memory_order_relaxed`, built with
    /// `-cl-std=` this version (`CL2.0` or `CL3.0`).
    C11(&'static str),
}

/// The variable that overrides the choice, for tests and measurements: `rmw`, `ptx` or `c11`.
pub const ATOMICS_VAR: &str = "CCL_OPENCL_ATOMICS";

impl Atomics {
    /// What `dev` offers: NVIDIA's OpenCL takes PTX's accesses (weak loads unless
    /// [`ccl_backend::strict_loads`]); a device with OpenCL C
    /// 3.0 and the features `__opencl_c_atomic_scope_device` and
    /// `__opencl_c_atomic_order_acq_rel`, or with OpenCL C 2.x, C11 atomics; any other
    /// read-modify-writes. [`ATOMICS_VAR`] overrides it (`rmw`, `ptx`, `ptx-weak`, or `c11` where
    /// the device offers it; the PTX ones only compile on NVIDIA's OpenCL).
    pub fn of(dev: &Device, nvidia: bool) -> Atomics {
        let c11 = c11_version(dev);
        let chosen = match std::env::var(ATOMICS_VAR).ok().as_deref().map(str::trim) {
            Some("rmw") => Some(Atomics::ReadModifyWrite),
            Some("ptx") => Some(Atomics::Ptx),
            Some("ptx-weak") => Some(Atomics::PtxWeak),
            Some("c11") => c11.map(Atomics::C11),
            _ => None,
        };
        let ptx = if ccl_backend::strict_loads() { Atomics::Ptx } else { Atomics::PtxWeak };
        chosen.unwrap_or(if nvidia { ptx } else { c11.map_or(Atomics::ReadModifyWrite, Atomics::C11) })
    }

    /// The build options it adds: the prelude's `ATOMICS` define, and the language version C11
    /// atomics need.
    pub fn options(self) -> String {
        match self {
            Atomics::ReadModifyWrite => "-D ATOMICS=0".to_string(),
            Atomics::Ptx => "-D ATOMICS=1".to_string(),
            Atomics::PtxWeak => "-D ATOMICS=3".to_string(),
            Atomics::C11(std) => format!("-D ATOMICS=2 -cl-std={std}"),
        }
    }
}

impl fmt::Display for Atomics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atomics::ReadModifyWrite => f.write_str("OpenCL C 1.2 read-modify-write atomics"),
            Atomics::Ptx => f.write_str("PTX relaxed atomics"),
            Atomics::PtxWeak => f.write_str("PTX weak loads and relaxed stores"),
            Atomics::C11(std) => write!(f, "relaxed C11 atomics ({std})"),
        }
    }
}

/// The `-cl-std` of the newest OpenCL C of `dev` whose C11 atomics the kernels can use, if any.
fn c11_version(dev: &Device) -> Option<&'static str> {
    let three = dev.opencl_c_all_versions().is_ok_and(|all| all.iter().any(|v| major(v.version) == 3));
    if three {
        let features = dev.opencl_c_features().unwrap_or_default();
        let has = |name: &str| features.iter().any(|f| name_of(&f.name) == name);
        if has("__opencl_c_atomic_scope_device") && has("__opencl_c_atomic_order_acq_rel") {
            return Some("CL3.0");
        }
    }
    // CL_DEVICE_OPENCL_C_VERSION: "OpenCL C <major>.<minor> <vendor-specific>".
    let version = dev.opencl_c_version().unwrap_or_default();
    let number = version.trim().strip_prefix("OpenCL C ").unwrap_or("").split_whitespace().next().unwrap_or("");
    number.starts_with("2.").then_some("CL2.0")
}

/// The major number of a `cl_version` (10 bits of major, 10 of minor, 12 of patch).
fn major(version: u32) -> u32 {
    version >> 22
}

/// The text of a `cl_name_version` name (NUL-padded).
fn name_of(name: &[u8]) -> String {
    name.iter().take_while(|&&c| c != 0).map(|&c| c as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_names_decode() {
        assert_eq!(major(3 << 22 | 1 << 12), 3);
        let mut raw = [0u8; 64];
        raw[..30].copy_from_slice(b"__opencl_c_atomic_scope_device");
        assert_eq!(name_of(&raw), "__opencl_c_atomic_scope_device");
    }

    #[test]
    fn options_name_the_prelude_define_and_the_language() {
        assert_eq!(Atomics::ReadModifyWrite.options(), "-D ATOMICS=0");
        assert_eq!(Atomics::Ptx.options(), "-D ATOMICS=1");
        assert_eq!(Atomics::PtxWeak.options(), "-D ATOMICS=3");
        assert_eq!(Atomics::C11("CL3.0").options(), "-D ATOMICS=2 -cl-std=CL3.0");
    }
}
