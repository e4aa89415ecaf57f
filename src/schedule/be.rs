//! BE, Block Equivalence of Zavalishin et al. 2016 (TPDS 2020 Sec. 3.1; IPAS 2018 Sec. II),
//! 8-connectivity, and 26 on volumes (2x2x2 blocks, a 26-bit connectivity word per block).
//! Kernels: `kernels/be.kernel` (with `kernels/equivalence.h`).
//!
//! Scratch: block labels B (one label per 2x2 block), a connectivity byte C per block (one bit
//! per neighbour block NW, N, NE, W, E, SW, S, SE), and a one-word "changed" flag; blocks are
//! `ceil(width / 2)` x `ceil(height / 2)`.
//!
//! 1. `be_init` (per block): B and C from the 4x4 pixel window around the block.
//! 2. Repeated until a scan changes nothing: `be_scan`, `be_analysis`: OLE on blocks, C
//!    choosing the neighbours.
//! 3. `be_final_labeling` (per pixel): foreground pixels take their root block's label.
//!
//! Raw labels: (raster index of the top-left pixel of the component's first block) + 1;
//! background 0 ([`crate::RawLabels::FirstBlock`]).

use super::launch::{check_kernels, over_voxels, pixel_group};
use super::{kernels, over_blocks, over_pixels, until_stable, Job, Schedule, LABEL_BYTES};
use super::{AlgorithmInfo, BLOCK_CONNECTIVITIES};
use crate::gpu::{Arg, Gpu, Kernel, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result};

/// `kernels/be.kernel`, after the equivalence and block helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("be": COMMON, EQUIVALENCE, BLOCKS);

/// BE's registry entry.
pub(crate) const BE: AlgorithmInfo = AlgorithmInfo::iterative(
    "BE",
    "Block Equivalence, Zavalishin et al. 2016 (iterative, 2x2 blocks; 2x2x2 in volumes)",
    BLOCK_CONNECTIVITIES,
    RawLabels::FirstBlock,
    &[Phase::Initialization, Phase::Merge, Phase::FinalLabeling],
    KERNEL,
    defines,
    build,
);

pub(crate) use super::le::defines;

/// The compiled BE kernels.
pub(crate) struct Be {
    init: Kernel,
    scan: Kernel,
    analysis: Kernel,
    final_labeling: Kernel,
    volumes: bool,
}

/// Makes the BE schedule from its compiled program.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [init, scan, analysis, final_labeling] =
        kernels(gpu, program, ["be_init", "be_scan", "be_analysis", "be_final_labeling"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&init, &scan, &analysis, &final_labeling], pixel_group(gpu.limits(), volumes))?;
    Ok(Box::new(Be { init, scan, analysis, final_labeling, volumes }))
}

impl Schedule for Be {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        let (bw, bh, bd) = (w.div_ceil(2), h.div_ceil(2), d.div_ceil(2));
        let blocks = over_blocks(gpu.limits(), job.shape, self.volumes);
        let count = bw as usize * bh as usize * bd as usize;
        // One connectivity bit per neighbour block: 8 in a byte, 26 in a word.
        let connection_bytes = if self.volumes { 4 } else { 1 };
        let block_labels = gpu.alloc(count * LABEL_BYTES)?;
        let connectivity = gpu.alloc(count * connection_bytes)?;
        let mut changed = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        let (b, c) = (Arg::Buffer(&block_labels), Arg::Buffer(&connectivity));
        let input = Arg::Buffer(job.input);
        let (sizes, block_sizes) = ([w, h, d].map(Arg::U32), [bw, bh, bd].map(Arg::U32));
        let init_args = [[input, b, c].as_slice(), &sizes, &block_sizes].concat();
        gpu.launch(&mut self.init, &blocks, &init_args)?;
        recorder.end(Phase::Initialization)?;

        let iterations = until_stable(gpu, &mut changed, |flag| {
            let scan_args = [[b, c, Arg::Buffer(flag)].as_slice(), &block_sizes].concat();
            gpu.launch(&mut self.scan, &blocks, &scan_args)?;
            gpu.launch(&mut self.analysis, &blocks, &[b, block_sizes[0], block_sizes[1], block_sizes[2]])
        })?;
        recorder.end(Phase::Merge)?;

        let final_args = [[input, b, Arg::Buffer(job.labels)].as_slice(), &sizes, &block_sizes[..2]].concat();
        let voxels =
            if self.volumes { over_voxels(gpu.limits(), job.shape) } else { over_pixels(gpu.limits(), job.shape) };
        gpu.launch(&mut self.final_labeling, &voxels, &final_args)?;
        recorder.end(Phase::FinalLabeling)?;

        drop(block_labels);
        drop(connectivity);
        drop(changed);
        recorder.end(Phase::Deallocation)?;
        Ok(Some(iterations))
    }
}
