//! LE, Label Equivalence of Hawick, Leist and Playne 2010 (TPDS 2020 Sec. 3.1; IPAS 2018
//! Sec. II). Kernels: `kernels/le.kernel` (with `kernels/equivalence.h`).
//!
//! Scratch: a reference array R (one label per pixel) and a one-word "changed" flag.
//!
//! 1. `le_init`: every foreground pixel is its own label and reference.
//! 2. Repeated until a scan changes nothing: `le_scan` (lower the reference of a pixel's label
//!    to the smallest label around it, atomic min), `le_analysis` (resolve reference chains of
//!    labels that name themselves), `le_labelling` (every pixel takes its label's reference).
//!
//! Volumes (6-, 18- and 26-connectivity): the same kernels and steps built with DIMS=3, one
//! work-item per voxel.
//!
//! Raw labels: (raster index of the component's first pixel or voxel) + 1; background 0.

use super::launch::{check_kernels, over_voxels, pixel_group};
use super::{kernels, over_pixels, until_stable, Job, Schedule, LABEL_BYTES};
use super::{AlgorithmInfo, PIXEL_CONNECTIVITIES};
use crate::gpu::{Arg, Define, Gpu, Kernel, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result};

/// `kernels/le.kernel`, after the equivalence helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("le": COMMON, EQUIVALENCE);

/// LE's registry entry.
pub(crate) const LE: AlgorithmInfo = AlgorithmInfo::iterative(
    "LE",
    "Label Equivalence, Hawick, Leist, Playne 2010 (iterative, reference array); volumes too",
    PIXEL_CONNECTIVITIES,
    RawLabels::FirstPixel,
    &[Phase::Initialization, Phase::Merge],
    KERNEL,
    defines,
    build,
)
.with_multilabel();

/// The compile-time defines of `kernels/le.kernel` (and of OLE and BE): DIMS=3 for volumes.
pub(crate) fn defines(connectivity: Connectivity, _limits: &Limits) -> Vec<Define> {
    let mut defines = vec![Define::int("CONNECTIVITY", connectivity.neighbours().into())];
    if connectivity.dims() == 3 {
        defines.push(Define::int("DIMS", 3));
    }
    defines
}

/// The compiled LE kernels for one connectivity.
pub(crate) struct Le {
    init: Kernel,
    scan: Kernel,
    analysis: Kernel,
    labelling: Kernel,
    volumes: bool,
}

/// Makes the LE schedule from its program compiled for `connectivity`.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    _kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    let [init, scan, analysis, labelling] =
        kernels(gpu, program, ["le_init", "le_scan", "le_analysis", "le_labelling"])?;
    let volumes = connectivity.dims() == 3;
    check_kernels(gpu, &[&init, &scan, &analysis, &labelling], pixel_group(gpu.limits(), volumes))?;
    Ok(Box::new(Le { init, scan, analysis, labelling, volumes }))
}

impl Schedule for Le {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, d] = job.extent();
        let range =
            if self.volumes { over_voxels(gpu.limits(), job.shape) } else { over_pixels(gpu.limits(), job.shape) };
        let references = gpu.alloc(job.shape.len() * LABEL_BYTES)?;
        let mut changed = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        let (input, labels, refs) = (Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::Buffer(&references));
        let (w, h, d) = (Arg::U32(w), Arg::U32(h), Arg::U32(d));
        gpu.launch(&mut self.init, &range, &[input, labels, refs, w, h, d])?;
        recorder.end(Phase::Initialization)?;

        let iterations = until_stable(gpu, &mut changed, |flag| {
            gpu.launch(&mut self.scan, &range, &[input, labels, refs, Arg::Buffer(flag), w, h, d])?;
            gpu.launch(&mut self.analysis, &range, &[labels, refs, w, h, d])?;
            gpu.launch(&mut self.labelling, &range, &[labels, refs, w, h, d])
        })?;
        recorder.end(Phase::Merge)?;

        drop(references);
        drop(changed);
        recorder.end(Phase::Deallocation)?;
        Ok(Some(iterations))
    }
}
