//! Device discovery and opening: every OpenCL device, every CUDA device and the CPU reference,
//! each with a stable identifier (`cpu`, `opencl:N`, `cuda:N`) that can be passed back, and an
//! opened GPU device ([`Opened`]) that labelers and binarizers share. Part of the device layer
//! (with [`crate::gpu`]); the [`crate::Device`] users hold is made on top of it.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::array::next_owner_id;
use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// The backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// The CPU reference labeler.
    Cpu,
    /// OpenCL, on any vendor's GPU or CPU.
    OpenCl,
    /// CUDA, on NVIDIA GPUs.
    Cuda,
}

impl BackendKind {
    /// `cpu`, `opencl` or `cuda` (as [`BackendError::Unavailable`](crate::BackendError::Unavailable)
    /// names a backend).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::OpenCl => "opencl",
            BackendKind::Cuda => "cuda",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of processor a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceType {
    /// A GPU.
    Gpu,
    /// A CPU (the reference, or an OpenCL CPU device such as POCL).
    Cpu,
    /// Anything else (OpenCL accelerators).
    Other,
}

/// A stable device identifier: `cpu`, `opencl:N` (N-th OpenCL device over all platforms, in
/// platform order) or `cuda:N` (CUDA ordinal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceId {
    /// The CPU reference.
    Cpu,
    /// The N-th OpenCL device.
    OpenCl(usize),
    /// The CUDA device with this ordinal.
    Cuda(usize),
}

impl DeviceId {
    /// The backend of this device.
    pub fn backend(self) -> BackendKind {
        match self {
            DeviceId::Cpu => BackendKind::Cpu,
            DeviceId::OpenCl(_) => BackendKind::OpenCl,
            DeviceId::Cuda(_) => BackendKind::Cuda,
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceId::Cpu => f.write_str("cpu"),
            DeviceId::OpenCl(i) => write!(f, "opencl:{i}"),
            DeviceId::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl FromStr for DeviceId {
    type Err = Error;

    /// Parses `cpu`, `opencl:N`, `cuda:N` (`opencl` and `cuda` alone mean index 0; `cpu:0` is
    /// `cpu`, any other CPU index is an error).
    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: &str| {
            Error::from(ccl_backend::Error::UnknownDevice { id: s.to_string(), reason: reason.to_string() })
        };
        let lower = s.trim().to_ascii_lowercase();
        let (backend, index) = match lower.split_once(':') {
            Some((b, i)) => (b, i.parse::<usize>().map_err(|_| bad("the index after ':' is not a number"))?),
            None => (lower.as_str(), 0),
        };
        match backend {
            "cpu" if index == 0 => Ok(DeviceId::Cpu),
            "cpu" => Err(bad("there is one CPU device, `cpu`")),
            "opencl" | "cl" => Ok(DeviceId::OpenCl(index)),
            "cuda" => Ok(DeviceId::Cuda(index)),
            _ => Err(bad("expected cpu, opencl:N or cuda:N")),
        }
    }
}

/// Description of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Identifier to pass back (`--device`).
    pub id: DeviceId,
    /// Device name.
    pub name: String,
    /// GPU, CPU or other.
    pub device_type: DeviceType,
    /// Platform (OpenCL) or API (CUDA) and driver version.
    pub driver: String,
}

impl DeviceInfo {
    /// The CPU reference device.
    pub fn cpu() -> Self {
        DeviceInfo {
            id: DeviceId::Cpu,
            name: "CPU reference (sequential union-find)".into(),
            device_type: DeviceType::Cpu,
            driver: format!("ccl {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.device_type {
            DeviceType::Gpu => "GPU",
            DeviceType::Cpu => "CPU",
            DeviceType::Other => "other",
        };
        write!(f, "{:<10} {:<5} {} [{}]", self.id.to_string(), kind, self.name, self.driver)
    }
}

/// Every device found, and why a backend offers none.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Devices, CUDA first, then OpenCL, then the CPU reference.
    pub devices: Vec<DeviceInfo>,
    /// Backends that offer no device, with the reason (library missing, no device).
    pub unavailable: Vec<(BackendKind, String)>,
}

#[cfg(feature = "opencl")]
fn opencl_devices() -> Result<Vec<(DeviceInfo, ccl_opencl::DeviceDesc)>> {
    let descs = ccl_opencl::devices()?;
    Ok(descs
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let info = DeviceInfo {
                id: DeviceId::OpenCl(i),
                name: d.name.clone(),
                device_type: match d.kind {
                    ccl_opencl::DeviceKind::Gpu => DeviceType::Gpu,
                    ccl_opencl::DeviceKind::Cpu => DeviceType::Cpu,
                    ccl_opencl::DeviceKind::Other => DeviceType::Other,
                },
                driver: format!(
                    "{}, driver {}{}, {}",
                    d.platform_name,
                    d.driver_version,
                    d.ptxas.map(|p| format!(", programs assembled by ptxas {}", p.release())).unwrap_or_default(),
                    d.atomics
                ),
            };
            (info, d)
        })
        .collect())
}

#[cfg(feature = "cuda")]
fn cuda_devices() -> Result<Vec<DeviceInfo>> {
    let descs = ccl_cuda::devices()?;
    Ok(descs
        .into_iter()
        .map(|d| DeviceInfo {
            id: DeviceId::Cuda(d.ordinal),
            name: d.name,
            device_type: DeviceType::Gpu,
            driver: format!(
                "CUDA driver {}, compute capability {}.{}",
                d.driver_version, d.compute_capability.0, d.compute_capability.1
            ),
        })
        .collect())
}

/// "is 1 OpenCL device (opencl:0)", "are 3 OpenCL devices (opencl:0 to opencl:2)".
#[cfg(any(feature = "opencl", feature = "cuda"))]
fn count_phrase(count: usize, name: &str, prefix: &str) -> String {
    match count {
        0 => format!("are no {name} devices"),
        1 => format!("is 1 {name} device ({prefix}:0)"),
        n => format!("are {n} {name} devices ({prefix}:0 to {prefix}:{})", n - 1),
    }
}

fn not_built(backend: BackendKind) -> Error {
    ccl_backend::Error::Unavailable {
        backend: backend.name(),
        reason: format!("ccl was built without the '{backend}' feature"),
    }
    .into()
}

/// The CUDA ordinal of the device whose memory `address` is: device (or managed) memory, such
/// as the data pointer of a CuPy array or a PyTorch CUDA tensor, so that `cuda:N` can label it
/// where it lies ([`crate::GpuLabeler::borrow_image`]). An address the CUDA driver does not
/// know, or host memory, is a [`BackendError::InvalidMemory`](crate::BackendError::InvalidMemory);
/// without CUDA (no driver, or built without the `cuda` feature), a
/// [`BackendError::Unavailable`](crate::BackendError::Unavailable).
pub fn cuda_pointer_device(address: u64) -> Result<usize> {
    #[cfg(feature = "cuda")]
    {
        Ok(ccl_cuda::pointer_device(address)?)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = address;
        Err(not_built(BackendKind::Cuda))
    }
}

/// Where and why this process could not keep a compiled kernel in the kernel cache
/// (`CCL_CACHE_DIR`, else `ccl/` in the user's cache folder), if it could not: nothing else is
/// affected, but every later process compiles its kernels again.
pub fn kernel_cache_note() -> Option<String> {
    ccl_backend::KernelCache::store_failure().map(|f| {
        format!(
            "compiled kernels cannot be kept in the kernel cache {} ({}), so every process compiles them again; \
             set CCL_CACHE_DIR to a folder you can write, or CCL_CACHE=off",
            f.dir.display(),
            f.reason
        )
    })
}

/// Lists every device of every backend; never fails, a missing backend is reported in
/// [`Discovery::unavailable`].
pub fn discover() -> Discovery {
    let mut found = Discovery::default();
    let mut note = |backend: BackendKind, r: Result<Vec<DeviceInfo>>| match r {
        Ok(v) if v.is_empty() => found.unavailable.push((backend, "no device".into())),
        Ok(v) => found.devices.extend(v),
        // The reason alone: callers that wrap it in an error name the backend themselves.
        Err(Error::Backend(ccl_backend::Error::Unavailable { reason, .. })) => {
            found.unavailable.push((backend, reason))
        }
        Err(e) => found.unavailable.push((backend, e.to_string())),
    };
    #[cfg(feature = "cuda")]
    note(BackendKind::Cuda, cuda_devices());
    #[cfg(not(feature = "cuda"))]
    note(BackendKind::Cuda, Err(not_built(BackendKind::Cuda)));
    #[cfg(feature = "opencl")]
    note(BackendKind::OpenCl, opencl_devices().map(|v| v.into_iter().map(|(i, _)| i).collect()));
    #[cfg(not(feature = "opencl"))]
    note(BackendKind::OpenCl, Err(not_built(BackendKind::OpenCl)));
    found.devices.push(DeviceInfo::cpu());
    found
}

/// The device `auto` picks: the first CUDA device, else the first OpenCL GPU, else the first
/// OpenCL device, else the CPU reference.
///
/// It asks one backend at a time and stops at the first that has a device: with a CUDA device
/// present, OpenCL is never initialised.
pub fn auto_device() -> DeviceInfo {
    #[cfg(feature = "cuda")]
    if let Some(first) = cuda_devices().ok().and_then(|v| v.into_iter().next()) {
        return first;
    }
    #[cfg(feature = "opencl")]
    if let Ok(all) = opencl_devices() {
        let mut all: Vec<DeviceInfo> = all.into_iter().map(|(info, _)| info).collect();
        if let Some(gpu) = all.iter().position(|d| d.device_type == DeviceType::Gpu) {
            return all.swap_remove(gpu);
        }
        if let Some(first) = all.into_iter().next() {
            return first;
        }
    }
    DeviceInfo::cpu()
}

/// An opened device with its description and owner id, shared by its labelers.
#[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]
pub(crate) struct Opened {
    pub(crate) gpu: Box<dyn Gpu>,
    pub(crate) info: DeviceInfo,
    pub(crate) owner: u64,
}

#[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]
impl Opened {
    pub(crate) fn new(gpu: Box<dyn Gpu>, info: DeviceInfo) -> Arc<Self> {
        Arc::new(Self { gpu, info, owner: next_owner_id() })
    }

    /// The device handle the labelers and binarizers of this device take their queues from.
    pub(crate) fn gpu(&self) -> &dyn Gpu {
        self.gpu.as_ref()
    }

    /// The owner id of this device's arrays.
    pub(crate) fn owner(&self) -> u64 {
        self.owner
    }

    /// Host memory for fast copies with this device.
    pub(crate) fn alloc_host(&self, bytes: usize) -> Result<ccl_backend::HostBuffer> {
        Ok(self.gpu.alloc_host(bytes)?)
    }
}

/// Opens the device `id` names: its description, and the opened device for a GPU backend (none
/// for the CPU reference).
pub(crate) fn open(id: DeviceId) -> Result<(DeviceInfo, Option<Arc<Opened>>)> {
    match id {
        DeviceId::Cpu => Ok((DeviceInfo::cpu(), None)),
        #[cfg(feature = "opencl")]
        DeviceId::OpenCl(index) => {
            let all = opencl_devices()?;
            let count = all.len();
            let (info, desc) = all.into_iter().nth(index).ok_or_else(|| ccl_backend::Error::UnknownDevice {
                id: id.to_string(),
                reason: format!("there {} (see `ccl devices`)", count_phrase(count, "OpenCL", "opencl")),
            })?;
            let gpu = ccl_opencl::Runtime::new(desc.platform, desc.device)?;
            Ok((info.clone(), Some(Opened::new(Box::new(gpu), info))))
        }
        #[cfg(feature = "cuda")]
        DeviceId::Cuda(ordinal) => {
            let all = cuda_devices()?;
            let count = all.len();
            let info = all.into_iter().find(|d| d.id == id).ok_or_else(|| ccl_backend::Error::UnknownDevice {
                id: id.to_string(),
                reason: format!("there {} (see `ccl devices`)", count_phrase(count, "CUDA", "cuda")),
            })?;
            let gpu = ccl_cuda::Runtime::new(ordinal)?;
            Ok((info.clone(), Some(Opened::new(Box::new(gpu), info))))
        }
        #[allow(unreachable_patterns)]
        other => Err(not_built(other.backend())),
    }
}
