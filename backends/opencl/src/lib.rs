//! The OpenCL backend of `ccl`: device discovery, and [`Runtime`], which implements the device
//! abstraction [`ccl_backend::Gpu`] (compile, allocate, copy, launch, time) on one OpenCL device.
//! It knows nothing about labeling.
//!
//! Built over `opencl3` with its `dynamic` feature, so binaries start on machines without an
//! OpenCL ICD loader: every call then returns [`ccl_backend::Error::Unavailable`] with the
//! reason (loader missing or broken, no platform and where the loader looked).

mod atomics;
mod discovery;
mod pool;
pub mod ptxas;
mod runtime;
mod staging;

pub use atomics::{Atomics, ATOMICS_VAR};
pub use discovery::{devices, DeviceDesc, DeviceKind};
pub use ptxas::Ptxas;
pub use runtime::Runtime;

use ccl_backend::Error;
use opencl3::types::cl_int;

/// OpenCL error code when the ICD loader library could not be loaded (`opencl3` dynamic feature).
const LIBRARY_MISSING: cl_int = -2000;
/// `CL_PLATFORM_NOT_FOUND_KHR`: the loader found no platform.
const PLATFORM_NOT_FOUND: cl_int = -1001;

/// A failed OpenCL call as the backend error, naming `device`; a missing loader or platform is
/// [`Error::Unavailable`].
fn call_error(device: &str, call: &'static str, e: opencl3::error_codes::ClError) -> Error {
    let code: cl_int = e.0;
    match code {
        LIBRARY_MISSING => Error::Unavailable { backend: "opencl", reason: discovery::loader_problem() },
        PLATFORM_NOT_FOUND => Error::Unavailable { backend: "opencl", reason: discovery::no_platform_reason() },
        code => Error::Call {
            device: device.to_string(),
            message: format!("OpenCL call {call} failed: {code} ({})", opencl3::error_codes::error_text(code)),
        },
    }
}

/// Serialises platform discovery, context and queue creation and program builds: concurrent
/// first calls into the ICD loader and POCL from several threads crash (seen with ocl-icd 2.3
/// and POCL 3.1).
static DRIVER_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn driver_lock() -> std::sync::MutexGuard<'static, ()> {
    DRIVER_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
