//! The CUDA backend of `ccl`: device discovery, NVRTC compilation, and [`Runtime`], which
//! implements the device abstraction [`ccl_backend::Gpu`] (compile, allocate, copy, launch, time)
//! on one CUDA device. It knows nothing about labeling.
//!
//! Built over `cudarc` with dynamic loading, so binaries start on machines without a CUDA driver.
//! `cudarc` panics when `libcuda` or `libnvrtc` is missing; every entry point here checks for the
//! libraries first and returns [`ccl_backend::Error::Unavailable`] instead.
//!
//! One file per job:
//! - `discovery`: whether the driver and NVRTC libraries load (and why not), the devices and
//!   their descriptions ([`DeviceDesc`]), and which device an address belongs to.
//! - `nvrtc`: compiling sources to PTX or a CUBIN, the architecture that matches a device, and
//!   the images the kernel cache stores.
//! - `events`: the timing events of a handle's marks, pooled, and the last mark, reused while no
//!   command went onto the stream.
//! - `memory`: the free list of dropped buffers a handle keeps, allocated and borrowed device
//!   memory, what the driver says about an address, and ccl's own stream-ordered memory pool.
//! - `runtime`: [`Runtime`], one device and a stream of its own; its child `gpu` implements
//!   [`ccl_backend::Gpu`] for it.
//! - `staging`: copies between pageable host memory and the device through page-locked buffers.

mod discovery;
mod events;
mod memory;
mod nvrtc;
mod runtime;
mod staging;

pub use discovery::{devices, driver_present, nvrtc_present, pointer_device, DeviceDesc};
pub use nvrtc::{compile_cubin, compile_ptx};
pub use runtime::Runtime;

use ccl_backend::Error;
use cudarc::driver::DriverError;

fn driver_error<'a>(device: &'a str, call: &'static str) -> impl FnOnce(DriverError) -> Error + 'a {
    move |e| Error::Call { device: device.to_string(), message: format!("CUDA driver call {call} failed: {e}") }
}

fn unavailable(reason: String) -> Error {
    Error::Unavailable { backend: "cuda", reason }
}
