//! UF, Oliveira & Lotufo 2010 (TPDS 2020 Sec. 4.1; IPAS 2018 Sec. II-A, Alg. 1-2), with the
//! IPAS 2018 8-connectivity extension; UF_IC compresses inline (TPDS 2020 Sec. 2.1). Kernels:
//! `kernels/uf.kernel`.
//!
//! 1. Local merge: one work-group per tile labels its tile in local memory (initialization and
//!    merge of the pairs inside the tile).
//! 2. Border merge: the pairs that cross tile borders are joined in global memory.
//! 3. Compression: every pixel is linked to its root.
//!
//! Raw labels: (raster index of the component's first pixel) + 1; background 0.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Connectivity, Phase, Result};

/// Tile (work-group) size: 32 x 8 = 256 work-items, a size every OpenCL device accepts, and a
/// full warp per tile row for coalesced rows.
const TILE: [usize; 2] = [32, 8];

/// The compile-time defines of `kernels/uf.kernel`.
pub(crate) fn defines(connectivity: Connectivity, inline_compression: bool) -> Vec<(&'static str, u32)> {
    vec![
        ("CONNECTIVITY", connectivity.neighbours()),
        ("TILE_W", TILE[0] as u32),
        ("TILE_H", TILE[1] as u32),
        ("INLINE_COMPRESSION", inline_compression.into()),
    ]
}

/// The compiled UF kernels for one connectivity.
pub(crate) struct Uf<G: Gpu> {
    local_merge: G::Kernel,
    border_merge: G::Kernel,
    compress: G::Kernel,
}

impl<G: Gpu> Uf<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            local_merge: gpu.kernel(program, "uf_local_merge")?,
            border_merge: gpu.kernel(program, "uf_border_merge")?,
            compress: gpu.kernel(program, "compress_pixels")?,
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
        gpu.launch_over(&mut self.local_merge, size, TILE, &image_args)?;
        recorder.end(Phase::LocalMerge)?;
        gpu.launch_over(&mut self.border_merge, size, TILE, &image_args)?;
        recorder.end(Phase::BorderMerge)?;
        gpu.launch_over(&mut self.compress, size, TILE, &[Arg::Buf(labels), Arg::U32(w), Arg::U32(h)])?;
        recorder.end(Phase::Compression)
    }
}
