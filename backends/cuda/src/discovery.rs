//! Finding CUDA devices: whether the driver and NVRTC libraries load (and why not), the devices
//! and their descriptions, and which device a memory address belongs to.

use ccl_backend::{Error, Result};

use crate::memory::query_memory;
use crate::{driver_error, unavailable};

/// Checks that the CUDA driver library (`libcuda`) can be loaded.
pub fn driver_present() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no CUDA call is made.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(unavailable(load_problem("cuda", "the CUDA driver library (libcuda.so.1)")))
    }
}

/// Checks that the NVRTC library (`libnvrtc`) can be loaded.
pub fn nvrtc_present() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no NVRTC call is made.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(unavailable(load_problem("nvrtc", "the NVRTC library (libnvrtc.so.13)")))
    }
}

/// Why no file of the names cudarc tries for `lib` could be loaded: none exists on the library
/// path, or one exists but is broken (the loader's message, e.g. "invalid ELF header").
fn load_problem(lib: &str, what: &str) -> String {
    match ccl_backend::broken_library(&cudarc::get_lib_name_candidates(lib)) {
        Some((candidate, text)) => format!("{what} was found as {candidate} but could not be loaded: {text}"),
        None => format!("{what} is not installed or not on the library path (LD_LIBRARY_PATH)"),
    }
}

/// Description of one CUDA device.
#[derive(Clone, Debug)]
pub struct DeviceDesc {
    /// CUDA device ordinal.
    pub ordinal: usize,
    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Driver version, e.g. "13.0".
    pub driver_version: String,
}

/// Lists every CUDA device.
pub fn devices() -> Result<Vec<DeviceDesc>> {
    use cudarc::driver::result;
    driver_present()?;
    result::init().map_err(driver_error("CUDA", "cuInit"))?;
    let n = result::device::get_count().map_err(|e| match e.0 {
        cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => unavailable("no CUDA device".into()),
        _ => driver_error("CUDA", "cuDeviceGetCount")(e),
    })?;
    (0..n).map(describe).collect()
}

/// A device's description, read without creating a context (contexts cost ~0.1 s each).
fn describe(ordinal: i32) -> Result<DeviceDesc> {
    use cudarc::driver::result::device;
    use cudarc::driver::sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    let err = driver_error("CUDA", "cuDeviceGet");
    let dev = device::get(ordinal).map_err(err)?;
    // SAFETY: `dev` is a valid device handle from cuDeviceGet.
    let attribute = |a| unsafe { device::get_attribute(dev, a) }.map_err(driver_error("CUDA", "cuDeviceGetAttribute"));
    let mut version = 0;
    // SAFETY: writes one int; the driver is initialised.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    Ok(DeviceDesc {
        ordinal: ordinal as usize,
        name: device::get_name(dev).map_err(driver_error("CUDA", "cuDeviceGetName"))?,
        compute_capability: (attribute(MAJOR)?, attribute(MINOR)?),
        driver_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
    })
}

/// The CUDA ordinal of the device whose memory `address` is (device or managed memory, e.g. a
/// CuPy array's or a PyTorch tensor's data pointer). An address the driver does not know, or
/// host memory, is an [`Error::InvalidMemory`].
pub fn pointer_device(address: u64) -> Result<usize> {
    driver_present()?;
    cudarc::driver::result::init().map_err(driver_error("CUDA", "cuInit"))?;
    let invalid = |reason| Error::InvalidMemory { device: "CUDA".into(), reason };
    match query_memory(address) {
        Ok(memory) if memory.on_device && memory.ordinal >= 0 => Ok(memory.ordinal as usize),
        Ok(_) => Err(invalid(format!("0x{address:x} is host memory, not the memory of a CUDA device"))),
        Err(e) => Err(invalid(format!("0x{address:x} is not CUDA device memory (cuPointerGetAttribute: {e})"))),
    }
}
