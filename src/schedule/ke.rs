//! KE, Komura Equivalence (Komura 2015; TPDS 2020 Sec. 4.2), 4-connectivity with Playne's
//! reduced unions and 8-connectivity as IPAS 2018 Alg. 4; KE_IC compresses inline. Kernels:
//! `kernels/ke.kernel`, `kernels/compress.kernel`.
//!
//! 1. Initialization: each pixel links to its smallest foreground backward neighbour.
//! 2. Compression.
//! 3. Reduction: the few unions initialization could not express.
//! 4. Compression.
//!
//! No loop, no flag, no scratch buffer. Raw labels: first pixel index + 1; background 0.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Connectivity, Phase, Result};

/// Work-group shape: a warp-wide row for coalesced rows.
const GROUP: [usize; 2] = [32, 8];

/// The compile-time defines of `kernels/ke.kernel`.
pub(crate) fn defines(connectivity: Connectivity, inline_compression: bool) -> Vec<(&'static str, u32)> {
    vec![("CONNECTIVITY", connectivity.neighbours()), ("INLINE_COMPRESSION", inline_compression.into())]
}

/// The compiled KE kernels for one connectivity.
pub(crate) struct Ke<G: Gpu> {
    init: G::Kernel,
    compress: G::Kernel,
    reduce: G::Kernel,
}

impl<G: Gpu> Ke<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            init: gpu.kernel(program, "ke_init")?,
            compress: gpu.kernel(program, "compress_pixels")?,
            reduce: gpu.kernel(program, "ke_reduce")?,
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
        let image_args = [Arg::Buf(input), Arg::Buf(labels), Arg::U32(w), Arg::U32(h)];
        let label_args = [Arg::Buf(labels), Arg::U32(w), Arg::U32(h)];
        gpu.launch_over(&mut self.init, size, GROUP, &image_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch_over(&mut self.compress, size, GROUP, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch_over(&mut self.reduce, size, GROUP, &image_args)?;
        recorder.end(Phase::Reduction)?;
        gpu.launch_over(&mut self.compress, size, GROUP, &label_args)?;
        recorder.end(Phase::Compression)
    }
}
