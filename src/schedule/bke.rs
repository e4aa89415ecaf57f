//! BKE, Block-based Komura Equivalence (TPDS 2020 Sec. 5.2), 8-connectivity, and its volume
//! version (Sec. 5.3, 26-connectivity, 2x2x2 blocks, an information word of 8 + 13 bits);
//! BKE_IC compresses inline. Kernels: `kernels/blocks.h`, `kernels/bke.kernel`,
//! `kernels/compress.kernel`.
//!
//! 1. Initialization: each block links to its smallest connected backward block and stores an
//!    information byte (its foreground pixels, the other connected blocks) in the output image
//!    (TPDS 2020 Table 1, Fig. 8).
//! 2. Compression.
//! 3. Reduction: unions with the connected blocks initialization did not link.
//! 4. Compression.
//! 5. FinalLabeling: block labels to foreground pixels, from the information byte.
//!
//! Only 1xN and Nx1 images with N odd (1x1 included), and volumes with odd sides of which two
//! are 1, have a block with no pixel to borrow for its information byte; for them a one-word
//! buffer is allocated.
//!
//! Raw labels: top-left (front top-left) pixel index of the component's first block + 1;
//! background 0.
use super::launch::{check_kernels, pixel_group};
use super::{dims_defines, kernels, over_blocks, Job, Schedule, LABEL_BYTES};
use super::{AlgorithmInfo, BLOCK_CONNECTIVITIES};
use crate::gpu::{Arg, Define, Gpu, Kernel, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result, Shape};

/// `kernels/bke.kernel`, after the union-find, compression and block helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("bke": COMMON, UNION_FIND, COMPRESS, BLOCKS);

/// BKE's registry entry.
pub(crate) const BKE: AlgorithmInfo = AlgorithmInfo::direct(
    "BKE",
    "Block-based Komura Equivalence, TPDS 2020 Sec. 5.2 (2x2 blocks; 2x2x2 in volumes, Sec. 5.3)",
    BLOCK_CONNECTIVITIES,
    RawLabels::FirstBlock,
    &[Phase::Initialization, Phase::Compression, Phase::Reduction, Phase::FinalLabeling],
    KERNEL,
    defines,
    build,
);

/// BKE_IC's registry entry.
pub(crate) const BKE_IC: AlgorithmInfo = BKE.inline("BKE_IC", "BKE with inline compression (TPDS 2020 Sec. 2.1)");

/// The compile-time defines of `kernels/bke.kernel`: DIMS=3 for volumes.
pub(crate) fn defines(connectivity: Connectivity, _limits: &Limits) -> Vec<Define> {
    dims_defines(connectivity)
}

/// Whether the array has a block with no pixel slot to borrow for its information byte: all
/// sides odd (a lone corner pixel or voxel) and at least two of them 1 (so no block diagonally
/// before it): 1xN and Nx1 images with N odd (1x1 included), 1x1xN-like volumes.
fn needs_extra_word(shape: Shape) -> bool {
    let sides = [shape.width, shape.height, shape.depth];
    sides.iter().all(|s| s % 2 == 1) && sides.iter().filter(|&&s| s == 1).count() >= 2
}

/// The compiled BKE kernels.
pub(crate) struct Bke {
    init: Kernel,
    compress: Kernel,
    reduce: Kernel,
    finish: Kernel,
    volumes: bool,
}

/// Makes the BKE schedule from its compiled program.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [init, compress, reduce, finish] =
        kernels(gpu, program, ["bke_init", "compress_blocks", "bke_reduce", "bke_final"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&init, &compress, &reduce, &finish], pixel_group(gpu.limits(), volumes))?;
    Ok(Box::new(Bke { init, compress, reduce, finish, volumes }))
}

impl Schedule for Bke {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let extra = if needs_extra_word(job.shape) {
            let buffer = gpu.alloc(LABEL_BYTES)?;
            recorder.end(Phase::Allocation)?;
            Some(buffer)
        } else {
            None
        };
        // Without the extra word the kernels never touch their `extra` argument.
        let extra_arg = Arg::Buffer(extra.as_ref().unwrap_or(job.labels));
        let [w, h, d] = job.extent();
        let blocks = over_blocks(gpu.limits(), job.shape, self.volumes);
        let (input, labels) = (Arg::Buffer(job.input), Arg::Buffer(job.labels));
        let image_args = [input, labels, extra_arg, Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        let reduce_args = [labels, extra_arg, Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        let label_args = [labels, Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        gpu.launch(&mut self.init, &blocks, &image_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch(&mut self.compress, &blocks, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch(&mut self.reduce, &blocks, &reduce_args)?;
        recorder.end(Phase::Reduction)?;
        gpu.launch(&mut self.compress, &blocks, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch(&mut self.finish, &blocks, &image_args)?;
        recorder.end(Phase::FinalLabeling)?;
        if let Some(buffer) = extra {
            drop(buffer);
            recorder.end(Phase::Deallocation)?;
        }
        Ok(None)
    }
}
