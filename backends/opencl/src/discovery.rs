//! Finding OpenCL devices, and saying precisely why there are none.

use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::CL_DEVICE_NOT_FOUND;

use crate::atomics::Atomics;
use crate::ptxas::Ptxas;
use crate::{call_error, driver_lock};
use ccl_backend::Result;

/// Whether a device is a GPU, a CPU or something else (accelerator, custom).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// `CL_DEVICE_TYPE_GPU`.
    Gpu,
    /// `CL_DEVICE_TYPE_CPU`.
    Cpu,
    /// Any other device type.
    Other,
}

/// Description of one OpenCL device, addressed by platform and device index.
#[derive(Clone, Debug)]
pub struct DeviceDesc {
    /// Index of the platform in `clGetPlatformIDs` order.
    pub platform: usize,
    /// Index of the device within its platform.
    pub device: usize,
    /// Platform name, e.g. "Portable Computing Language".
    pub platform_name: String,
    /// Device name.
    pub name: String,
    /// Device vendor.
    pub vendor: String,
    /// Driver version string.
    pub driver_version: String,
    /// GPU, CPU or other.
    pub kind: DeviceKind,
    /// The ptxas that assembles this device's programs: NVIDIA OpenCL (`cl_nv_compiler_options`)
    /// where a CUDA toolkit's ptxas is found (see [`crate::ptxas`]).
    pub ptxas: Option<&'static Ptxas>,
    /// How its kernels make their relaxed atomic loads and stores.
    pub atomics: Atomics,
}

/// Lists every device of every OpenCL platform.
///
/// Returns [`ccl_backend::Error::Unavailable`] when the loader or any platform is missing, and
/// when no platform has a device because POCL could not create its kernel cache folder (then
/// saying which folder, why, and that `POCL_CACHE_DIR` fixes it).
pub fn devices() -> Result<Vec<DeviceDesc>> {
    let _serialised = driver_lock();
    let platforms = opencl3::platform::get_platforms().map_err(|e| call_error("OpenCL", "clGetPlatformIDs", e))?;
    let mut out = Vec::new();
    let mut why_none = None;
    for (p, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().unwrap_or_default();
        // A platform with no device answers CL_DEVICE_NOT_FOUND: that is not an error here.
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) if e.0 == CL_DEVICE_NOT_FOUND => Vec::new(),
            Err(e) => return Err(call_error(&platform_name, "clGetDeviceIDs", e)),
        };
        if ids.is_empty() && platform_name.contains("Portable Computing Language") {
            why_none = why_none.or_else(pocl_cache_problem);
        }
        for (d, id) in ids.into_iter().enumerate() {
            out.push(describe(p, d, &platform_name, Device::new(id)));
        }
    }
    match why_none {
        Some(reason) if out.is_empty() => Err(ccl_backend::Error::Unavailable { backend: "opencl", reason }),
        _ => Ok(out),
    }
}

/// Why POCL offers no device when it cannot create its kernel cache folder: POCL (3.x) makes
/// `POCL_CACHE_DIR`, else `$XDG_CACHE_HOME/pocl/kcache`, else `$HOME/.cache/pocl/kcache`, else
/// `/tmp/pocl/kcache`, and without it reports no device at all. `None` when that folder can be
/// made (the cause is elsewhere).
fn pocl_cache_problem() -> Option<String> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let (folder, from) = match (var("POCL_CACHE_DIR"), var("XDG_CACHE_HOME"), var("HOME")) {
        (Some(dir), _, _) => (dir, "POCL_CACHE_DIR"),
        (None, Some(xdg), _) => (xdg.join("pocl/kcache"), "XDG_CACHE_HOME"),
        (None, None, Some(home)) => (home.join(".cache/pocl/kcache"), "HOME"),
        (None, None, None) => ("/tmp/pocl/kcache".into(), "HOME unset"),
    };
    let e = std::fs::create_dir_all(&folder).err()?;
    Some(format!(
        "POCL (the Portable Computing Language platform) offers no device because it cannot create its kernel \
         cache folder {} (from {from}): {e}; set POCL_CACHE_DIR to a folder you can write, e.g. \
         POCL_CACHE_DIR=/tmp/pocl-cache-$USER",
        folder.display()
    ))
}

/// The device takes NVIDIA's compiler options (`cl_nv_compiler_options`): NVIDIA's OpenCL.
pub(crate) fn takes_nv_options(dev: &Device) -> bool {
    dev.extensions().is_ok_and(|e| e.split_whitespace().any(|x| x == "cl_nv_compiler_options"))
}

pub(crate) fn describe(platform: usize, device: usize, platform_name: &str, dev: Device) -> DeviceDesc {
    let ty = dev.dev_type().unwrap_or(0);
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Other
    };
    let nvidia = takes_nv_options(&dev);
    DeviceDesc {
        platform,
        device,
        platform_name: platform_name.trim().to_string(),
        name: dev.name().unwrap_or_default().trim().to_string(),
        vendor: dev.vendor().unwrap_or_default().trim().to_string(),
        driver_version: dev.driver_version().unwrap_or_default().trim().to_string(),
        kind,
        ptxas: if nvidia { Ptxas::installed() } else { None },
        atomics: Atomics::of(&dev, nvidia),
    }
}

/// The ICD loader library `opencl3` opens (it also tries the `;`-separated paths of
/// `OPENCL_DYLIB_PATH` first).
const LOADER: &str = if cfg!(target_os = "windows") {
    "OpenCL.dll"
} else if cfg!(target_os = "macos") {
    "/System/Library/Frameworks/OpenCL.framework/OpenCL"
} else {
    "libOpenCL.so.1"
};

/// Why the ICD loader could not be loaded: absent, or present but broken (the dynamic linker's
/// message, e.g. "invalid ELF header" or "file too short").
pub(crate) fn loader_problem() -> String {
    let mut candidates: Vec<String> = std::env::var("OPENCL_DYLIB_PATH")
        .map(|v| v.split(';').filter(|p| !p.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    candidates.push(LOADER.to_string());
    match ccl_backend::broken_library(&candidates) {
        Some((candidate, text)) => format!("the OpenCL ICD loader {candidate} could not be loaded: {text}"),
        None => format!("the OpenCL ICD loader ({LOADER}) is not installed or not on the library path"),
    }
}

/// Why the loader found no platform, naming where it looked: `OCL_ICD_VENDORS` (a folder or
/// one `.icd` file) and `OCL_ICD_FILENAMES` when set, else `/etc/OpenCL/vendors`.
pub(crate) fn no_platform_reason() -> String {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut places = Vec::new();
    if let Some(files) = var("OCL_ICD_FILENAMES") {
        places.push(format!("the drivers in OCL_ICD_FILENAMES={files}"));
    }
    match var("OCL_ICD_VENDORS") {
        Some(dir) => places.push(format!("the .icd files in OCL_ICD_VENDORS={dir}")),
        None => places.push("the .icd files in /etc/OpenCL/vendors".to_string()),
    }
    format!("no OpenCL platform: the ICD loader found no usable driver in {}", places.join(" or "))
}
