//! Host-side schedules: which kernels run, in which order, with which loop. Each algorithm's
//! schedule is written once over [`Gpu`] and so serves OpenCL and CUDA alike; an `_IC` variant
//! is the same schedule with `INLINE_COMPRESSION=1`.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

mod be;
mod bke;
mod buf;
mod ke;
mod le;
mod ole;
mod uf;

use crate::gpu::{Gpu, PhaseRecorder};
use crate::kernels::{self, KernelFile};
use crate::{Algorithm, BackendKind, Connectivity, Error, Result};

/// Algorithms with a GPU schedule: all of them.
pub(crate) const IMPLEMENTED: &[Algorithm] = &Algorithm::ALL;

/// The kernel file and defines `algorithm` is compiled with for `connectivity`, if it has a GPU
/// schedule and supports that connectivity. The single source of truth for every build.
pub(crate) fn kernel_build(
    algorithm: Algorithm,
    connectivity: Connectivity,
) -> Option<(KernelFile, Vec<(&'static str, u32)>)> {
    if !algorithm.supports(connectivity) {
        return None;
    }
    let ic = algorithm.inline_compression();
    match algorithm {
        Algorithm::UF | Algorithm::UF_IC => Some((kernels::UF, uf::defines(connectivity, ic))),
        Algorithm::LE => Some((kernels::LE, le::defines(connectivity))),
        Algorithm::OLE => Some((kernels::OLE, le::defines(connectivity))),
        Algorithm::BE => Some((kernels::BE, le::defines(connectivity))),
        Algorithm::KE | Algorithm::KE_IC => Some((kernels::KE, ke::defines(connectivity, ic))),
        Algorithm::BUF | Algorithm::BUF_IC => Some((kernels::BUF, buf::defines(ic))),
        Algorithm::BKE | Algorithm::BKE_IC => Some((kernels::BKE, bke::defines(ic))),
    }
}

/// The compiled kernels of one algorithm for one connectivity.
pub(crate) enum Schedule<G: Gpu> {
    /// Union Find (and UF_IC).
    Uf(uf::Uf<G>),
    /// Label Equivalence.
    Le(le::Le<G>),
    /// Optimized Label Equivalence.
    Ole(ole::Ole<G>),
    /// Block Equivalence.
    Be(be::Be<G>),
    /// Komura Equivalence (and KE_IC).
    Ke(ke::Ke<G>),
    /// Block-based Union Find (and BUF_IC).
    Buf(buf::Buf<G>),
    /// Block-based Komura Equivalence (and BKE_IC).
    Bke(bke::Bke<G>),
}

impl<G: Gpu> Schedule<G> {
    /// Compiles the kernels `algorithm` needs for `connectivity`.
    pub(crate) fn build(
        gpu: &G,
        backend: BackendKind,
        algorithm: Algorithm,
        connectivity: Connectivity,
    ) -> Result<Self> {
        let not_implemented = || Error::NotImplemented { algorithm, backend, implemented: IMPLEMENTED.to_vec() };
        let (file, defines) = kernel_build(algorithm, connectivity).ok_or_else(not_implemented)?;
        let program = gpu.build(&file, &defines)?;
        match algorithm {
            Algorithm::UF | Algorithm::UF_IC => Ok(Schedule::Uf(uf::Uf::new(gpu, &program)?)),
            Algorithm::LE => Ok(Schedule::Le(le::Le::new(gpu, &program)?)),
            Algorithm::OLE => Ok(Schedule::Ole(ole::Ole::new(gpu, &program)?)),
            Algorithm::BE => Ok(Schedule::Be(be::Be::new(gpu, &program)?)),
            Algorithm::KE | Algorithm::KE_IC => Ok(Schedule::Ke(ke::Ke::new(gpu, &program)?)),
            Algorithm::BUF | Algorithm::BUF_IC => Ok(Schedule::Buf(buf::Buf::new(gpu, &program)?)),
            Algorithm::BKE | Algorithm::BKE_IC => Ok(Schedule::Bke(bke::Bke::new(gpu, &program)?)),
        }
    }

    /// Labels `input` into `labels` (both `size`); returns the iteration count of iterative
    /// algorithms. Schedules that need scratch buffers allocate and free them here, recording
    /// [`crate::Phase::Allocation`] and [`crate::Phase::Deallocation`].
    pub(crate) fn run(
        &mut self,
        gpu: &G,
        input: &G::Buffer,
        labels: &G::Buffer,
        size: (usize, usize),
        recorder: &mut PhaseRecorder<G>,
    ) -> Result<Option<u32>> {
        match self {
            Schedule::Uf(uf) => uf.run(gpu, input, labels, size, recorder).map(|()| None),
            Schedule::Le(le) => le.run(gpu, input, labels, size, recorder).map(Some),
            Schedule::Ole(ole) => ole.run(gpu, input, labels, size, recorder).map(Some),
            Schedule::Be(be) => be.run(gpu, input, labels, size, recorder).map(Some),
            Schedule::Ke(ke) => ke.run(gpu, input, labels, size, recorder).map(|()| None),
            Schedule::Buf(buf) => buf.run(gpu, input, labels, size, recorder).map(|()| None),
            Schedule::Bke(bke) => bke.run(gpu, input, labels, size, recorder).map(|()| None),
        }
    }
}
