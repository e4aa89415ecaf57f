//! BKE, Block-based Komura Equivalence (TPDS 2020 Sec. 5.2), 8-connectivity; BKE_IC compresses
//! inline. Kernels: `kernels/blocks.h`, `kernels/bke.kernel`, `kernels/compress.kernel`.
//!
//! 1. Initialization: each block links to its smallest connected backward block and stores an
//!    information byte (its foreground pixels, the other connected blocks) in the output image
//!    (TPDS 2020 Table 1, Fig. 8).
//! 2. Compression.
//! 3. Reduction: unions with the connected blocks initialization did not link.
//! 4. Compression.
//! 5. FinalLabeling: block labels to foreground pixels, from the information byte.
//!
//! Only 1xN and Nx1 images with N odd (1x1 included) have a block with no pixel to borrow for
//! its information byte; for them a one-word buffer is allocated.
//!
//! Raw labels: top-left pixel index of the component's first block + 1; background 0.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use super::buf::{blocks, GROUP};
use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Phase, Result};

/// The compile-time defines of `kernels/bke.kernel`.
pub(crate) fn defines(inline_compression: bool) -> Vec<(&'static str, u32)> {
    vec![("INLINE_COMPRESSION", inline_compression.into())]
}

/// Whether the last block has no pixel of its own or of its upper-left neighbour to hold its
/// information byte: a single row or column of odd length.
fn needs_extra_byte((w, h): (usize, usize)) -> bool {
    (w == 1 || h == 1) && w % 2 == 1 && h % 2 == 1
}

/// The compiled BKE kernels.
pub(crate) struct Bke<G: Gpu> {
    init: G::Kernel,
    compress: G::Kernel,
    reduce: G::Kernel,
    finish: G::Kernel,
}

impl<G: Gpu> Bke<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            init: gpu.kernel(program, "bke_init")?,
            compress: gpu.kernel(program, "compress_blocks")?,
            reduce: gpu.kernel(program, "bke_reduce")?,
            finish: gpu.kernel(program, "bke_final")?,
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
        let extra = if needs_extra_byte(size) {
            let buffer = gpu.alloc(4)?;
            recorder.end(Phase::Allocation)?;
            Some(buffer)
        } else {
            None
        };
        // Without an extra buffer the kernels never touch that argument: pass the labels.
        let extra_arg = extra.as_ref().unwrap_or(labels);
        let (w, h) = (size.0 as u32, size.1 as u32);
        let grid = blocks(size);
        let image_args = [Arg::Buf(input), Arg::Buf(labels), Arg::Buf(extra_arg), Arg::U32(w), Arg::U32(h)];
        let reduce_args = [Arg::Buf(labels), Arg::Buf(extra_arg), Arg::U32(w), Arg::U32(h)];
        let label_args = [Arg::Buf(labels), Arg::U32(w), Arg::U32(h)];
        gpu.launch_over(&mut self.init, grid, GROUP, &image_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch_over(&mut self.compress, grid, GROUP, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch_over(&mut self.reduce, grid, GROUP, &reduce_args)?;
        recorder.end(Phase::Reduction)?;
        gpu.launch_over(&mut self.compress, grid, GROUP, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch_over(&mut self.finish, grid, GROUP, &image_args)?;
        recorder.end(Phase::FinalLabeling)?;
        if let Some(buffer) = extra {
            drop(buffer);
            recorder.end(Phase::Deallocation)?;
        }
        Ok(())
    }
}
