//! BUF, Block-based Union Find (TPDS 2020 Sec. 5.1, Alg. 2), 8-connectivity; BUF_IC compresses
//! inline. Kernels: `kernels/blocks.h`, `kernels/buf.kernel`, `kernels/compress.kernel`.
//!
//! One work-item per 2x2 block; the union-find forest lives in the output image, at each
//! block's top-left pixel, so nothing else is allocated.
//!
//! 1. Initialization: every block is a root.
//! 2. Merge: union with each connected backward block (NW, N, NE, W), found with a bitset over
//!    the 4x4 window around the block.
//! 3. Compression.
//! 4. FinalLabeling: block labels to foreground pixels, 0 to background.
//!
//! Raw labels: top-left pixel index of the component's first block + 1; background 0.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Phase, Result};

/// Work-group shape over blocks.
pub(crate) const GROUP: [usize; 2] = [32, 8];

/// The block grid of a `width` x `height` image.
pub(crate) fn blocks(size: (usize, usize)) -> (usize, usize) {
    (size.0.div_ceil(2), size.1.div_ceil(2))
}

/// The compile-time defines of `kernels/buf.kernel`.
pub(crate) fn defines(inline_compression: bool) -> Vec<(&'static str, u32)> {
    vec![("INLINE_COMPRESSION", inline_compression.into())]
}

/// The compiled BUF kernels.
pub(crate) struct Buf<G: Gpu> {
    init: G::Kernel,
    merge: G::Kernel,
    compress: G::Kernel,
    finish: G::Kernel,
}

impl<G: Gpu> Buf<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            init: gpu.kernel(program, "buf_init")?,
            merge: gpu.kernel(program, "buf_merge")?,
            compress: gpu.kernel(program, "compress_blocks")?,
            finish: gpu.kernel(program, "buf_final")?,
        })
    }

    pub(crate) fn run(
        &mut self,
        gpu: &G,
        input: &G::Buffer,
        labels: &G::Buffer,
        size: (usize, usize),
        recorder: &mut PhaseRecorder<G>,
    ) -> Result<()> {
        let (w, h) = (size.0 as u32, size.1 as u32);
        let grid = blocks(size);
        let image_args = [Arg::Buf(input), Arg::Buf(labels), Arg::U32(w), Arg::U32(h)];
        let label_args = [Arg::Buf(labels), Arg::U32(w), Arg::U32(h)];
        gpu.launch_over(&mut self.init, grid, GROUP, &label_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch_over(&mut self.merge, grid, GROUP, &image_args)?;
        recorder.end(Phase::Merge)?;
        gpu.launch_over(&mut self.compress, grid, GROUP, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch_over(&mut self.finish, grid, GROUP, &image_args)?;
        recorder.end(Phase::FinalLabeling)
    }
}
