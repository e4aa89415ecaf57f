//! Device discovery and selection: every OpenCL device, every CUDA device and the CPU reference,
//! each with a stable identifier (`cpu`, `opencl:N`, `cuda:N`) that can be passed back.

use std::fmt;
use std::str::FromStr;
#[cfg(any(feature = "opencl", feature = "cuda"))]
use std::sync::Arc;

use crate::labeler::{AnyLabeler, CpuLabeler};
#[cfg(any(feature = "opencl", feature = "cuda"))]
use crate::labeler::{GpuLabeler, Opened};
use crate::{Algorithm, Error, Result};

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
    /// `cpu`, `opencl` or `cuda` (as [`Error::BackendUnavailable`] names a backend).
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
        let bad = |reason: &str| Error::UnknownDevice { id: s.to_string(), reason: reason.to_string() };
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
    Error::BackendUnavailable {
        backend: backend.name(),
        reason: format!("ccl was built without the '{backend}' feature"),
    }
}

/// The CUDA ordinal of the device whose memory `address` is: device (or managed) memory, such
/// as the data pointer of a CuPy array or a PyTorch CUDA tensor, so that `cuda:N` can label it
/// where it lies ([`crate::GpuLabeler::borrow_image`]). An address the CUDA driver does not
/// know, or host memory, is an [`Error::InvalidMemory`]; without CUDA (no driver, or built
/// without the `cuda` feature), an [`Error::BackendUnavailable`].
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
        Err(Error::BackendUnavailable { reason, .. }) => found.unavailable.push((backend, reason)),
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

/// An opened device, shared by the labelers created from it, so that an image uploaded once can
/// be labeled by several algorithms.
#[derive(Clone)]
pub struct Device {
    pub(crate) info: DeviceInfo,
    pub(crate) inner: DeviceInner,
}

#[derive(Clone)]
pub(crate) enum DeviceInner {
    Cpu,
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    Gpu(Arc<Opened>),
}

impl Device {
    /// Opens a device by identifier.
    pub fn open(id: DeviceId) -> Result<Device> {
        match id {
            DeviceId::Cpu => Ok(Device { info: DeviceInfo::cpu(), inner: DeviceInner::Cpu }),
            #[cfg(feature = "opencl")]
            DeviceId::OpenCl(index) => {
                let all = opencl_devices()?;
                let count = all.len();
                let (info, desc) = all.into_iter().nth(index).ok_or_else(|| Error::UnknownDevice {
                    id: id.to_string(),
                    reason: format!("there {} (see `ccl devices`)", count_phrase(count, "OpenCL", "opencl")),
                })?;
                let gpu = ccl_opencl::Runtime::new(desc.platform, desc.device)?;
                Ok(Device { inner: DeviceInner::Gpu(Opened::new(Box::new(gpu), info.clone())), info })
            }
            #[cfg(feature = "cuda")]
            DeviceId::Cuda(ordinal) => {
                let all = cuda_devices()?;
                let count = all.len();
                let info = all.into_iter().find(|d| d.id == id).ok_or_else(|| Error::UnknownDevice {
                    id: id.to_string(),
                    reason: format!("there {} (see `ccl devices`)", count_phrase(count, "CUDA", "cuda")),
                })?;
                let gpu = ccl_cuda::Runtime::new(ordinal)?;
                Ok(Device { inner: DeviceInner::Gpu(Opened::new(Box::new(gpu), info.clone())), info })
            }
            #[allow(unreachable_patterns)]
            other => Err(not_built(other.backend())),
        }
    }

    /// Opens the device [`auto_device`] picks.
    pub fn auto() -> Result<Device> {
        Device::open(auto_device().id)
    }

    /// This device's description.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Why a kernel build on this device took a slower route than it should have, if one did
    /// (NVIDIA OpenCL: its PTX could not be assembled by the CUDA toolkit's ptxas, so the
    /// driver's slower assembly runs): the results are the same, only slower. None on the CPU.
    pub fn build_note(&self) -> Option<String> {
        match &self.inner {
            DeviceInner::Cpu => None,
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => opened.gpu().build_note(),
        }
    }

    /// `len` elements of host memory that this device copies to and from at bus speed
    /// (page-locked on CUDA; ordinary memory elsewhere), zeroed. Allocating page-locked memory
    /// is slow: keep the array and reuse it, e.g. as the output of many labelings.
    pub fn host_array<T: crate::Element>(&self, len: usize) -> Result<crate::HostArray<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let buffer = match &self.inner {
            DeviceInner::Cpu => ccl_backend::HostBuffer::unpinned(bytes),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => opened.alloc_host(bytes)?,
        };
        Ok(crate::HostArray::new(buffer, len))
    }

    /// Creates a labeler for `algorithm`, building its kernels now for every image connectivity
    /// (4, 8) the algorithm supports (from the kernel cache when they are there); those of
    /// volumes (6, 18, 26) are built at their first use, before its timing starts, as
    /// [`Device::labeler_for`] builds them now.
    pub fn labeler(&self, algorithm: Algorithm) -> Result<AnyLabeler> {
        let planar: Vec<crate::Connectivity> =
            algorithm.connectivities().iter().copied().filter(|c| c.dims() == 2).collect();
        self.labeler_with(algorithm, &planar)
    }

    /// Creates a labeler for `algorithm` that builds only the kernels of `connectivity` now, as
    /// a call that labels at one connectivity needs ([`Error::UnsupportedConnectivity`] when
    /// the algorithm lacks it); another connectivity is built at its first use, before timing.
    pub fn labeler_for(&self, algorithm: Algorithm, connectivity: crate::Connectivity) -> Result<AnyLabeler> {
        algorithm.check(connectivity)?;
        self.labeler_with(algorithm, &[connectivity])
    }

    /// The algorithm that labels `connectivity` on this device when a call names none: the
    /// fastest of [`Algorithm::ranking`] that the device runs ([`Algorithm::default_for`] on
    /// every device with work-groups of 512 work-items and 32 KiB of local memory), and, when it
    /// is not the first, a one-line note saying why (the first one's [`Error::DeviceLimit`]).
    /// Chosen once per device and connectivity, by building the labelers in turn (their kernels
    /// then come from the kernel cache).
    pub fn default_algorithm(&self, connectivity: crate::Connectivity) -> Result<(Algorithm, Option<String>)> {
        let ranking = Algorithm::ranking(connectivity);
        match &self.inner {
            DeviceInner::Cpu => Ok((ranking[0], None)),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => {
                let mut chosen = opened.defaults.lock().unwrap_or_else(|p| p.into_inner());
                if let Some((_, algorithm, note)) = chosen.iter().find(|(c, _, _)| *c == connectivity) {
                    return Ok((*algorithm, note.clone()));
                }
                let mut first_refusal = None;
                for &algorithm in ranking {
                    match self.labeler_for(algorithm, connectivity) {
                        Ok(_) => {
                            let note = first_refusal.as_ref().map(|why: &Error| {
                                format!("{} cannot run here ({why}); labeling with {algorithm}", ranking[0])
                            });
                            chosen.push((connectivity, algorithm, note.clone()));
                            return Ok((algorithm, note));
                        }
                        Err(e @ Error::DeviceLimit { .. }) => {
                            first_refusal.get_or_insert(e);
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(first_refusal.expect("a ranking is never empty"))
            }
        }
    }

    /// Creates a binarizer of this device ([`crate::binarize`]); its kernels are built at the
    /// first use of each method configuration, or by [`crate::binarize::Binarizer::prepare`].
    pub fn binarizer(&self) -> Result<crate::binarize::Binarizer> {
        Ok(match &self.inner {
            DeviceInner::Cpu => crate::binarize::Binarizer::cpu(),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => crate::binarize::Binarizer::gpu(opened.clone(), self.info.clone())?,
        })
    }

    /// Creates the labeler; a GPU one builds the kernels of `connectivities` now.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(unused_variables))]
    fn labeler_with(&self, algorithm: Algorithm, connectivities: &[crate::Connectivity]) -> Result<AnyLabeler> {
        Ok(match &self.inner {
            DeviceInner::Cpu => CpuLabeler::new(algorithm).into(),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => GpuLabeler::new(opened.clone(), algorithm, connectivities)?.into(),
        })
    }
}
