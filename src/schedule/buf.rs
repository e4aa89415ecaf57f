//! BUF, Block-based Union Find (TPDS 2020 Sec. 5.1, Alg. 2), 8-connectivity, and its volume
//! version (Sec. 5.3, 26-connectivity, 2x2x2 blocks); BUF_IC compresses inline. Kernels:
//! `kernels/blocks.h`, `kernels/buf.kernel`, `kernels/compress.kernel`.
//!
//! One work-item per 2x2 block; the union-find forest lives in the output image, at each
//! block's top-left pixel, so nothing else is allocated.
//!
//! 1. Initialization: every block is a root.
//! 2. Merge: union with each connected backward block (NW, N, NE, W), found with a bitset over
//!    the 4x4 window around the block (in a volume: 13 backward blocks, a 4x4x4 bitset).
//! 3. Compression.
//! 4. FinalLabeling: block labels to foreground pixels, 0 to background.
//!
//! Raw labels: top-left (front top-left) pixel index of the component's first block + 1;
//! background 0.

use super::launch::{check_kernels, pixel_group};
use super::{dims_defines, kernels, over_blocks, Job, Schedule};
use super::{AlgorithmInfo, BLOCK_CONNECTIVITIES};
use crate::gpu::{Arg, Define, Gpu, Kernel, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result};

/// `kernels/buf.kernel`, after the union-find, compression and block helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("buf": COMMON, UNION_FIND, COMPRESS, BLOCKS);

/// BUF's registry entry.
pub(crate) const BUF: AlgorithmInfo = AlgorithmInfo::direct(
    "BUF",
    "Block-based Union Find, TPDS 2020 Alg. 2 (2x2 blocks; 2x2x2 in volumes, Sec. 5.3)",
    BLOCK_CONNECTIVITIES,
    RawLabels::FirstBlock,
    &[Phase::Initialization, Phase::Merge, Phase::Compression, Phase::FinalLabeling],
    KERNEL,
    defines,
    build,
);

/// BUF_IC's registry entry.
pub(crate) const BUF_IC: AlgorithmInfo = BUF.inline("BUF_IC", "BUF with inline compression (TPDS 2020 Sec. 2.1)");

/// The compile-time defines of `kernels/buf.kernel`: DIMS=3 for volumes (2x2 blocks are
/// 8-connected, 2x2x2 ones 26-connected, by construction).
pub(crate) fn defines(connectivity: Connectivity, _limits: &Limits) -> Vec<Define> {
    dims_defines(connectivity)
}

/// The compiled BUF kernels.
pub(crate) struct Buf {
    init: Kernel,
    merge: Kernel,
    compress: Kernel,
    finish: Kernel,
    volumes: bool,
}

/// Makes the BUF schedule from its compiled program.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [init, merge, compress, finish] =
        kernels(gpu, program, ["buf_init", "buf_merge", "compress_blocks", "buf_final"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&init, &merge, &compress, &finish], pixel_group(gpu.limits(), volumes))?;
    Ok(Box::new(Buf { init, merge, compress, finish, volumes }))
}

impl Schedule for Buf {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        let blocks = over_blocks(gpu.limits(), job.shape, self.volumes);
        let image_args = [Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        let label_args = [Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        gpu.launch(&mut self.init, &blocks, &label_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch(&mut self.merge, &blocks, &image_args)?;
        recorder.end(Phase::Merge)?;
        gpu.launch(&mut self.compress, &blocks, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch(&mut self.finish, &blocks, &image_args)?;
        recorder.end(Phase::FinalLabeling)?;
        Ok(None)
    }
}
