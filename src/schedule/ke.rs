//! KE, Komura Equivalence (Komura 2015; TPDS 2020 Sec. 4.2), 4-connectivity with Playne's
//! reduced unions and 8-connectivity as IPAS 2018 Alg. 4; KE_IC compresses inline. Kernels:
//! `kernels/ke.kernel`, `kernels/compress.kernel`.
//!
//! 1. Initialization: each pixel links to its smallest foreground backward neighbour.
//! 2. Compression.
//! 3. Reduction: the few unions initialization could not express.
//! 4. Compression.
//!
//! Volumes (6-, 18- and 26-connectivity; beyond the papers): the same steps built with DIMS=3,
//! one work-item per voxel; the reduced unions carry over (see `kernels/ke.kernel`).
//!
//! No loop, no flag, no scratch buffer. Raw labels: first pixel index + 1; background 0.

use super::launch::{check_kernels, over_voxels, pixel_group};
use super::{dims_defines, kernels, over_pixels, Job, Schedule};
use super::{AlgorithmInfo, PIXEL_CONNECTIVITIES};
use crate::gpu::{Arg, Define, Gpu, Kernel, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result};

/// `kernels/ke.kernel`, after the union-find, compression and neighbour helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("ke": COMMON, UNION_FIND, COMPRESS, NEIGHBOURS);

/// KE's registry entry.
pub(crate) const KE: AlgorithmInfo = AlgorithmInfo::direct(
    "KE",
    "Komura Equivalence, Komura 2015; IPAS 2018 Alg. 4; volumes beyond the papers",
    PIXEL_CONNECTIVITIES,
    RawLabels::FirstPixel,
    &[Phase::Initialization, Phase::Compression, Phase::Reduction],
    KERNEL,
    defines,
    build,
)
.with_multilabel();

/// KE_IC's registry entry.
pub(crate) const KE_IC: AlgorithmInfo = KE.inline("KE_IC", "KE with inline compression (TPDS 2020 Sec. 2.1)");

/// The compile-time defines of `kernels/ke.kernel`: DIMS=3 for volumes.
pub(crate) fn defines(connectivity: Connectivity, _limits: &Limits) -> Vec<Define> {
    let mut defines = vec![Define::int("CONNECTIVITY", connectivity.neighbours().into())];
    defines.extend(dims_defines(connectivity));
    defines
}

/// The compiled KE kernels for one connectivity.
pub(crate) struct Ke {
    init: Kernel,
    compress: Kernel,
    reduce: Kernel,
    volumes: bool,
}

/// Makes the KE schedule from its compiled program.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [init, compress, reduce] = kernels(gpu, program, ["ke_init", "compress_pixels", "ke_reduce"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&init, &compress, &reduce], pixel_group(gpu.limits(), volumes))?;
    Ok(Box::new(Ke { init, compress, reduce, volumes }))
}

impl Schedule for Ke {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        let range =
            if self.volumes { over_voxels(gpu.limits(), job.shape) } else { over_pixels(gpu.limits(), job.shape) };
        let image_args = [Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        let label_args = [Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        gpu.launch(&mut self.init, &range, &image_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch(&mut self.compress, &range, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch(&mut self.reduce, &range, &image_args)?;
        recorder.end(Phase::Reduction)?;
        gpu.launch(&mut self.compress, &range, &label_args)?;
        recorder.end(Phase::Compression)?;
        Ok(None)
    }
}
