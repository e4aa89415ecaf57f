//! The [`Device`] a user opens: a device of the device layer ([`crate::device`]) and the factory
//! of its labelers and binarizers. It sits above the labelers and binarizers it makes, which take
//! the opened device itself, never this handle.

use std::sync::{Arc, Mutex};

use crate::algorithm::Connectivity;
use crate::binarize::Binarizer;
#[cfg(any(feature = "opencl", feature = "cuda"))]
use crate::device::Opened;
use crate::device::{self, auto_device, DeviceId, DeviceInfo};
#[cfg(any(feature = "opencl", feature = "cuda"))]
use crate::error::Error;
use crate::error::Result;
#[cfg(any(feature = "opencl", feature = "cuda"))]
use crate::labeler::GpuLabeler;
use crate::labeler::{AnyLabeler, CpuLabeler};
use crate::registry::Algorithm;
use crate::shape::{Element, PinnedBuffer};

/// An opened device, shared by the labelers created from it, so that an image uploaded once can
/// be labeled by several algorithms.
#[derive(Clone)]
pub struct Device {
    info: DeviceInfo,
    inner: DeviceInner,
    /// The default algorithm chosen per connectivity (see [`Device::default_algorithm`]),
    /// shared by the device's clones.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]
    defaults: Arc<Mutex<Vec<Chosen>>>,
}

/// The default algorithm of a connectivity: when it is not the first of the ranking, why; and
/// the labeler built to choose it, until [`Device::labeler_for`] asks for one (a labeler loads
/// its kernels and runs them once: 20 ms on the H200 machine, which a command paid twice).
#[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]
struct Chosen {
    connectivity: Connectivity,
    algorithm: Algorithm,
    note: Option<String>,
    spare: Option<AnyLabeler>,
}

#[derive(Clone)]
enum DeviceInner {
    Cpu,
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    Gpu(Arc<Opened>),
}

impl Device {
    /// Opens a device by identifier.
    pub fn open(id: DeviceId) -> Result<Device> {
        let (info, opened) = device::open(id)?;
        let inner = match opened {
            None => DeviceInner::Cpu,
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Some(opened) => DeviceInner::Gpu(opened),
            #[cfg(not(any(feature = "opencl", feature = "cuda")))]
            Some(_) => unreachable!("no GPU device opens without a GPU backend"),
        };
        Ok(Device { info, inner, defaults: Arc::default() })
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
    pub fn pinned_buffer<T: Element>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let buffer = match &self.inner {
            DeviceInner::Cpu => ccl_backend::HostBuffer::unpinned(bytes),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => opened.alloc_host(bytes)?,
        };
        Ok(PinnedBuffer::new(buffer, len))
    }

    /// Creates a labeler for `algorithm`, building its kernels now for every image connectivity
    /// (4, 8) the algorithm supports (from the kernel cache when they are there); those of
    /// volumes (6, 18, 26) are built at their first use, before its timing starts, as
    /// [`Device::labeler_for`] builds them now.
    pub fn labeler(&self, algorithm: Algorithm) -> Result<AnyLabeler> {
        let planar: Vec<Connectivity> = algorithm.connectivities().iter().copied().filter(|c| c.dims() == 2).collect();
        self.labeler_with(algorithm, &planar)
    }

    /// Creates a labeler for `algorithm` that builds only the kernels of `connectivity` now, as
    /// a call that labels at one connectivity needs ([`Error::UnsupportedConnectivity`] when
    /// the algorithm lacks it); another connectivity is built at its first use, before timing.
    pub fn labeler_for(&self, algorithm: Algorithm, connectivity: Connectivity) -> Result<AnyLabeler> {
        let spare = self
            .defaults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter_mut()
            .find(|c| c.connectivity == connectivity && c.algorithm == algorithm)
            .and_then(|c| c.spare.take());
        match spare {
            Some(labeler) => Ok(labeler),
            None => self.build_labeler_for(algorithm, connectivity),
        }
    }

    /// [`Device::labeler_for`] without the spare of [`Device::default_algorithm`].
    fn build_labeler_for(&self, algorithm: Algorithm, connectivity: Connectivity) -> Result<AnyLabeler> {
        algorithm.check(connectivity)?;
        self.labeler_with(algorithm, &[connectivity])
    }

    /// The algorithm that labels `connectivity` on this device when a call names none: the
    /// fastest of [`Algorithm::ranking`] that the device runs ([`Algorithm::default_for`] on
    /// every device with work-groups of 512 work-items and 32 KiB of local memory), and, when it
    /// is not the first, a one-line note saying why (the first one's
    /// [`BackendError::DeviceLimit`](crate::BackendError::DeviceLimit)).
    /// Chosen once per device and connectivity, by building the labelers in turn (their kernels
    /// then come from the kernel cache); the one that builds is kept for the next
    /// [`Device::labeler_for`] of that algorithm and connectivity.
    pub fn default_algorithm(&self, connectivity: Connectivity) -> Result<(Algorithm, Option<String>)> {
        let ranking = Algorithm::ranking(connectivity);
        match &self.inner {
            DeviceInner::Cpu => Ok((ranking[0], None)),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(_) => {
                let mut chosen = self.defaults.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(c) = chosen.iter().find(|c| c.connectivity == connectivity) {
                    return Ok((c.algorithm, c.note.clone()));
                }
                let mut first_refusal = None;
                for &algorithm in ranking {
                    match self.build_labeler_for(algorithm, connectivity) {
                        Ok(labeler) => {
                            let note = first_refusal.as_ref().map(|why: &Error| {
                                format!("{} cannot run here ({why}); labeling with {algorithm}", ranking[0])
                            });
                            chosen.push(Chosen { connectivity, algorithm, note: note.clone(), spare: Some(labeler) });
                            return Ok((algorithm, note));
                        }
                        Err(e @ Error::Backend(ccl_backend::Error::DeviceLimit { .. })) => {
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
    /// first use of each method configuration, or by [`Binarizer::prepare`].
    pub fn binarizer(&self) -> Result<Binarizer> {
        Ok(match &self.inner {
            DeviceInner::Cpu => Binarizer::cpu(),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => Binarizer::gpu(opened.clone(), self.info.clone())?,
        })
    }

    /// Creates the labeler; a GPU one builds the kernels of `connectivities` now.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(unused_variables))]
    fn labeler_with(&self, algorithm: Algorithm, connectivities: &[Connectivity]) -> Result<AnyLabeler> {
        Ok(match &self.inner {
            DeviceInner::Cpu => CpuLabeler::new(algorithm).into(),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            DeviceInner::Gpu(opened) => GpuLabeler::new(opened.clone(), algorithm, connectivities)?.into(),
        })
    }
}
