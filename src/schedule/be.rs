//! BE, Block Equivalence of Zavalishin et al. 2016 (TPDS 2020 Sec. 3.1; IPAS 2018 Sec. II),
//! 8-connectivity only. Kernels: `kernels/be.kernel` (with `kernels/equivalence.h`).
//!
//! Scratch: block labels B (one `u32` per 2x2 block), a connectivity byte C per block (one bit
//! per neighbour block NW, N, NE, W, E, SW, S, SE), and a one-word "changed" flag; blocks are
//! `ceil(width / 2)` x `ceil(height / 2)`.
//!
//! 1. `be_init` (per block): B and C from the 4x4 pixel window around the block.
//! 2. Repeated until a scan changes nothing (the flag is zeroed before and read after each
//!    iteration): `be_scan`, `be_analysis`: OLE on blocks, C choosing the neighbours.
//! 3. `be_final_labeling` (per pixel): foreground pixels take their root block's label.
//!
//! Raw labels: (raster index of the top-left pixel of the component's first block) + 1;
//! background 0 ([`crate::RawLabels::FirstBlock`]).
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use super::le::{flag_set, GROUP};
use crate::gpu::{Arg, Gpu, PhaseRecorder};
use crate::{Phase, Result};

/// The compiled BE kernels.
pub(crate) struct Be<G: Gpu> {
    init: G::Kernel,
    scan: G::Kernel,
    analysis: G::Kernel,
    final_labeling: G::Kernel,
}

impl<G: Gpu> Be<G> {
    pub(crate) fn new(gpu: &G, program: &G::Program) -> Result<Self> {
        Ok(Self {
            init: gpu.kernel(program, "be_init")?,
            scan: gpu.kernel(program, "be_scan")?,
            analysis: gpu.kernel(program, "be_analysis")?,
            final_labeling: gpu.kernel(program, "be_final_labeling")?,
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
        let blocks = (size.0.div_ceil(2), size.1.div_ceil(2));
        let (bw, bh) = (blocks.0 as u32, blocks.1 as u32);
        let block_labels = gpu.alloc(blocks.0 * blocks.1 * 4)?;
        let connectivity = gpu.alloc(blocks.0 * blocks.1)?;
        let mut changed = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        gpu.launch_over(
            &mut self.init,
            blocks,
            GROUP,
            &[
                Arg::Buf(input),
                Arg::Buf(&block_labels),
                Arg::Buf(&connectivity),
                Arg::U32(w),
                Arg::U32(h),
                Arg::U32(bw),
                Arg::U32(bh),
            ],
        )?;
        recorder.end(Phase::Initialization)?;

        let mut iterations = 0;
        loop {
            iterations += 1;
            gpu.zero(&mut changed)?;
            gpu.launch_over(
                &mut self.scan,
                blocks,
                GROUP,
                &[Arg::Buf(&block_labels), Arg::Buf(&connectivity), Arg::Buf(&changed), Arg::U32(bw), Arg::U32(bh)],
            )?;
            gpu.launch_over(&mut self.analysis, blocks, GROUP, &[Arg::Buf(&block_labels), Arg::U32(bw), Arg::U32(bh)])?;
            if !flag_set(gpu, &changed)? {
                break;
            }
        }
        recorder.end(Phase::Merge)?;

        gpu.launch_over(
            &mut self.final_labeling,
            size,
            GROUP,
            &[Arg::Buf(input), Arg::Buf(&block_labels), Arg::Buf(labels), Arg::U32(w), Arg::U32(h), Arg::U32(bw)],
        )?;
        recorder.end(Phase::FinalLabeling)?;

        drop(block_labels);
        drop(connectivity);
        drop(changed);
        recorder.end(Phase::Deallocation)?;
        Ok(iterations)
    }
}
