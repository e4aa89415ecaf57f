//! LE, Label Equivalence of Hawick, Leist and Playne 2010 (TPDS 2020 Sec. 3.1; IPAS 2018
//! Sec. II). Kernels: `kernels/le.kernel` (with `kernels/equivalence.h`).
//!
//! Scratch: a reference array R (one `u32` per pixel) and a one-word "changed" flag.
//!
//! 1. `le_init`: every foreground pixel is its own label and reference.
//! 2. Repeated until a scan changes nothing (the flag is zeroed before and read after each
//!    iteration): `le_scan` (lower the reference of a pixel's label to the smallest label
//!    around it, atomic min), `le_analysis` (resolve reference chains of labels that name
//!    themselves), `le_labelling` (every pixel takes its label's reference).
//!
//! Raw labels: (raster index of the component's first pixel) + 1; background 0.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Connectivity, Phase, Result};

/// Work-group size: 32 x 8 like UF.
pub(crate) const GROUP: [usize; 2] = [32, 8];

/// The compile-time defines of `kernels/le.kernel` (and of OLE and BE).
pub(crate) fn defines(connectivity: Connectivity) -> Vec<(&'static str, u32)> {
    vec![("CONNECTIVITY", connectivity.neighbours())]
}

/// Reads the one-word flag back (waits for the iteration): whether a scan changed anything.
pub(crate) fn flag_set<G: Gpu>(gpu: &G, flag: &G::Buffer) -> Result<bool> {
    let mut word = [0u8; 4];
    gpu.read(flag, &mut word)?;
    Ok(word != [0; 4])
}

/// The compiled LE kernels for one connectivity.
pub(crate) struct Le<G: Gpu> {
    init: G::Kernel,
    scan: G::Kernel,
    analysis: G::Kernel,
    labelling: G::Kernel,
}

impl<G: Gpu> Le<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            init: gpu.kernel(program, "le_init")?,
            scan: gpu.kernel(program, "le_scan")?,
            analysis: gpu.kernel(program, "le_analysis")?,
            labelling: gpu.kernel(program, "le_labelling")?,
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
        let references = gpu.alloc(size.0 * size.1 * 4)?;
        let mut changed = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        gpu.launch_over(
            &mut self.init,
            size,
            GROUP,
            &[Arg::Buf(input), Arg::Buf(labels), Arg::Buf(&references), Arg::U32(w), Arg::U32(h)],
        )?;
        recorder.end(Phase::Initialization)?;

        let mut iterations = 0;
        loop {
            iterations += 1;
            gpu.zero(&mut changed)?;
            gpu.launch_over(
                &mut self.scan,
                size,
                GROUP,
                &[Arg::Buf(labels), Arg::Buf(&references), Arg::Buf(&changed), Arg::U32(w), Arg::U32(h)],
            )?;
            let label_args = [Arg::Buf(labels), Arg::Buf(&references), Arg::U32(w), Arg::U32(h)];
            gpu.launch_over(&mut self.analysis, size, GROUP, &label_args)?;
            gpu.launch_over(&mut self.labelling, size, GROUP, &label_args)?;
            if !flag_set(gpu, &changed)? {
                break;
            }
        }
        recorder.end(Phase::Merge)?;

        drop(references);
        drop(changed);
        recorder.end(Phase::Deallocation)?;
        Ok(iterations)
    }
}
