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

use super::launch::{check_kernels, GROUP, GROUP_3D};
use super::{kernels, Job, Schedule};
use super::{AlgorithmInfo, PIXEL_CONNECTIVITIES};
use crate::gpu::{Arg, Define, Gpu, Kernel, LaunchRange, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result};

/// `kernels/uf.kernel`, after the union-find, compression and neighbour helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("uf": COMMON, UNION_FIND, COMPRESS, NEIGHBOURS);

/// UF's registry entry.
pub(crate) const UF: AlgorithmInfo = AlgorithmInfo::direct(
    "UF",
    "Union Find, Oliveira & Lotufo 2010; IPAS 2018 (tiles in local memory); volumes as TPDS 2020 Sec. 5.3",
    PIXEL_CONNECTIVITIES,
    RawLabels::FirstPixel,
    &[Phase::LocalMerge, Phase::BorderMerge, Phase::Compression],
    KERNEL,
    defines,
    build,
)
.with_multilabel();

/// UF_IC's registry entry.
pub(crate) const UF_IC: AlgorithmInfo = UF.inline("UF_IC", "UF with inline compression (TPDS 2020 Sec. 2.1)");

/// UF's tile, its work-group, on a device with `limits`: 32 x 8 pixels or 8 x 8 x 4 voxels, or
/// the largest part of them the device's work-groups hold ([`Limits::fit_group`]).
fn tile(limits: &Limits, volumes: bool) -> [usize; 3] {
    limits.fit_group(if volumes { GROUP_3D } else { GROUP })
}

/// The compile-time defines of `kernels/uf.kernel` on a device with `limits`: the tile is the
/// work-group ([`tile`]).
pub(crate) fn defines(connectivity: Connectivity, limits: &Limits) -> Vec<Define> {
    let neighbours = Define::int("CONNECTIVITY", connectivity.neighbours().into());
    let [w, h, d] = tile(limits, connectivity.dims() == 3);
    if connectivity.dims() == 3 {
        vec![
            neighbours,
            Define::int("DIMS", 3),
            Define::int("TILE_W", w as i64),
            Define::int("TILE_H", h as i64),
            Define::int("TILE_D", d as i64),
        ]
    } else {
        vec![neighbours, Define::int("TILE_W", w as i64), Define::int("TILE_H", h as i64)]
    }
}

/// The compiled UF kernels for one connectivity.
pub(crate) struct Uf {
    local_merge: Kernel,
    border_merge: Kernel,
    compress: Kernel,
    volumes: bool,
}

/// Makes the UF schedule from its program compiled for `connectivity` on `gpu`.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [local_merge, border_merge, compress] =
        kernels(gpu, program, ["uf_local_merge", "uf_border_merge", "compress_pixels"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&local_merge, &border_merge, &compress], tile(gpu.limits(), volumes))?;
    Ok(Box::new(Uf { local_merge, border_merge, compress, volumes }))
}

impl Schedule for Uf {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        // Every kernel runs over the tiles (the local merge's work-groups).
        let s = job.shape;
        let range = LaunchRange::over([s.width, s.height, s.depth], tile(gpu.limits(), self.volumes));
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
