//! UF, Oliveira & Lotufo 2010 (TPDS 2020 Sec. 4.1; IPAS 2018 Sec. II-A, Alg. 1-2), with the
//! IPAS 2018 8-connectivity extension; UF_IC compresses inline (TPDS 2020 Sec. 2.1). Kernels:
//! `kernels/uf.kernel`.
//!
//! 1. Local merge: one work-group per tile labels its tile in local memory (initialization and
//!    merge of the pairs inside the tile).
//! 2. Border merge: the pairs that cross tile borders are joined in global memory.
//! 3. Compression: every pixel is linked to its root.
//!
//! Volumes (6-, 18- and 26-connectivity; TPDS 2020 Sec. 5.3) run the same three phases on 8 x 8 x 4
//! tiles: the kernels built with DIMS=3.
//!
//! Raw labels: (raster index of the component's first pixel or voxel) + 1; background 0.

use super::common::{GROUP, GROUP_3D};
use super::{kernels, over_pixels, Job, Schedule};
use crate::gpu::{Arg, Define, Gpu, Kernel, LaunchRange, PhaseRecorder, Program};
use crate::{Connectivity, Phase, Result};

/// The compile-time defines of `kernels/uf.kernel`: the tile is the work-group.
pub(crate) fn defines(connectivity: Connectivity) -> Vec<Define> {
    let neighbours = Define::int("CONNECTIVITY", connectivity.neighbours().into());
    if connectivity.dims() == 3 {
        vec![
            neighbours,
            Define::int("DIMS", 3),
            Define::int("TILE_W", GROUP_3D[0] as i64),
            Define::int("TILE_H", GROUP_3D[1] as i64),
            Define::int("TILE_D", GROUP_3D[2] as i64),
        ]
    } else {
        vec![neighbours, Define::int("TILE_W", GROUP[0] as i64), Define::int("TILE_H", GROUP[1] as i64)]
    }
}

/// The compiled UF kernels for one connectivity.
pub(crate) struct Uf {
    local_merge: Kernel,
    border_merge: Kernel,
    compress: Kernel,
    volumes: bool,
}

/// Makes the UF schedule from its program compiled for `connectivity`.
pub(crate) fn build(gpu: &dyn Gpu, program: &Program, connectivity: Connectivity) -> Result<Box<dyn Schedule>> {
    let [local_merge, border_merge, compress] =
        kernels(gpu, program, ["uf_local_merge", "uf_border_merge", "compress_pixels"])?;
    Ok(Box::new(Uf { local_merge, border_merge, compress, volumes: connectivity.dims() == 3 }))
}

impl Schedule for Uf {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        // On volumes every kernel runs over the 8 x 8 x 4 tiles (the local merge's work-groups).
        let s = job.shape;
        let range =
            if self.volumes { LaunchRange::over([s.width, s.height, s.depth], GROUP_3D) } else { over_pixels(s) };
        let image_args = [Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        gpu.launch(&mut self.local_merge, &range, &image_args)?;
        recorder.end(Phase::LocalMerge)?;
        gpu.launch(&mut self.border_merge, &range, &image_args)?;
        recorder.end(Phase::BorderMerge)?;
        let label_args = [Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(d)];
        gpu.launch(&mut self.compress, &range, &label_args)?;
        recorder.end(Phase::Compression)?;
        Ok(None)
    }
}
