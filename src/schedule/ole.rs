//! OLE, Optimized Label Equivalence of Kalentev et al. 2011 (TPDS 2020 Sec. 3.1). Kernels:
//! `kernels/ole.kernel` (with `kernels/equivalence.h`).
//!
//! Scratch: a one-word "changed" flag only; labels are their own references.
//!
//! 1. `ole_init`: every foreground pixel is its own label.
//! 2. Repeated until a scan changes nothing: `ole_scan` (lower the representative
//!    `L[label - 1]` of a pixel's label to the smallest label around it, plain store as in the
//!    paper), `ole_analysis` (pointer jumping, labelling fused in).
//!
//! Volumes (6-, 18- and 26-connectivity, beyond the papers): the same kernels and steps built
//! with DIMS=3, one work-item per voxel.
//!
//! Raw labels: (raster index of the component's first pixel or voxel) + 1; background 0.

use super::launch::{check_kernels, over_voxels, pixel_group};
use super::{kernels, over_pixels, until_stable, Job, Schedule};
use super::{AlgorithmInfo, PIXEL_CONNECTIVITIES};
use crate::gpu::{Arg, Gpu, Kernel, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result};

/// `kernels/ole.kernel`, after the equivalence helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("ole": COMMON, EQUIVALENCE);

/// OLE's registry entry.
pub(crate) const OLE: AlgorithmInfo = AlgorithmInfo::iterative(
    "OLE",
    "Optimized Label Equivalence, Kalentev et al. 2011 (iterative); volumes too",
    PIXEL_CONNECTIVITIES,
    RawLabels::FirstPixel,
    &[Phase::Initialization, Phase::Merge],
    KERNEL,
    defines,
    build,
)
.with_multilabel();

pub(crate) use super::le::defines;

/// The compiled OLE kernels for one connectivity.
pub(crate) struct Ole {
    init: Kernel,
    scan: Kernel,
    analysis: Kernel,
    volumes: bool,
}

/// Makes the OLE schedule from its program compiled for `connectivity`.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [init, scan, analysis] = kernels(gpu, program, ["ole_init", "ole_scan", "ole_analysis"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&init, &scan, &analysis], pixel_group(gpu.limits(), volumes))?;
    Ok(Box::new(Ole { init, scan, analysis, volumes }))
}

impl Schedule for Ole {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        let range =
            if self.volumes { over_voxels(gpu.limits(), job.shape) } else { over_pixels(gpu.limits(), job.shape) };
        let (w, h, d) = (Arg::U32(w), Arg::U32(h), Arg::U32(d));
        let mut changed = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        let labels = Arg::Buffer(job.labels);
        gpu.launch(&mut self.init, &range, &[Arg::Buffer(job.input), labels, w, h, d])?;
        recorder.end(Phase::Initialization)?;

        let iterations = until_stable(gpu, &mut changed, |flag| {
            gpu.launch(&mut self.scan, &range, &[Arg::Buffer(job.input), labels, Arg::Buffer(flag), w, h, d])?;
            gpu.launch(&mut self.analysis, &range, &[labels, w, h, d])
        })?;
        recorder.end(Phase::Merge)?;

        drop(changed);
        recorder.end(Phase::Deallocation)?;
        Ok(Some(iterations))
    }
}
