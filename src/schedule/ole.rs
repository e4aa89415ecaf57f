//! OLE, Optimized Label Equivalence of Kalentev et al. 2011 (TPDS 2020 Sec. 3.1). Kernels:
//! `kernels/ole.kernel` (with `kernels/equivalence.h`).
//!
//! Scratch: a one-word "changed" flag only; labels are their own references.
//!
//! 1. `ole_init`: every foreground pixel is its own label.
//! 2. Repeated until a scan changes nothing (the flag is zeroed before and read after each
//!    iteration): `ole_scan` (lower the representative `L[label - 1]` of a pixel's label to the
//!    smallest label around it, plain store as in the paper), `ole_analysis` (pointer jumping,
//!    labelling fused in).
//!
//! Raw labels: (raster index of the component's first pixel) + 1; background 0.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use super::le::{flag_set, GROUP};
use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Phase, Result};

/// The compiled OLE kernels for one connectivity.
pub(crate) struct Ole<G: Gpu> {
    init: G::Kernel,
    scan: G::Kernel,
    analysis: G::Kernel,
}

impl<G: Gpu> Ole<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            init: gpu.kernel(program, "ole_init")?,
            scan: gpu.kernel(program, "ole_scan")?,
            analysis: gpu.kernel(program, "ole_analysis")?,
        })
    }

    /// Labels `input` into `labels`; returns the number of iterations.
    pub(crate) fn run(
        &mut self,
        gpu: &G,
        input: &G::Buffer,
        labels: &G::Buffer,
        size: (usize, usize),
        recorder: &mut PhaseRecorder<G>,
    ) -> Result<u32> {
        let (w, h) = (size.0 as u32, size.1 as u32);
        let mut changed = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        gpu.launch_over(&mut self.init, size, GROUP, &[Arg::Buf(input), Arg::Buf(labels), Arg::U32(w), Arg::U32(h)])?;
        recorder.end(Phase::Initialization)?;

        let mut iterations = 0;
        loop {
            iterations += 1;
            gpu.zero(&mut changed)?;
            gpu.launch_over(
                &mut self.scan,
                size,
                GROUP,
                &[Arg::Buf(labels), Arg::Buf(&changed), Arg::U32(w), Arg::U32(h)],
            )?;
            gpu.launch_over(&mut self.analysis, size, GROUP, &[Arg::Buf(labels), Arg::U32(w), Arg::U32(h)])?;
            if !flag_set(gpu, &changed)? {
                break;
            }
        }
        recorder.end(Phase::Merge)?;

        drop(changed);
        recorder.end(Phase::Deallocation)?;
        Ok(iterations)
    }
}
