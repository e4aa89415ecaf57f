//! Consecutive relabeling on the device: raw labels of either convention become 1..N in raster
//! order of each component's first pixel, and N is counted, without the labels leaving the
//! device (the host's `LabelImage::into_consecutive`, done where the labels are). Kernels:
//! `kernels/relabel.kernel`.
//!
//! 1. Block conventions (BE, BUF, BKE) only: each component's first pixel, by an atomic
//!    reduction, then every label rewritten to it (so labels are first-pixel labels).
//! 2. Rank: pixels in spans of 1024; each first pixel (`L[i] == i + 1`) gets its rank in its
//!    span, each span its count.
//! 3. Exclusive prefix sum of the counts, level by level (1024 per level), then back down; the top
//!    level's total is N.
//! 4. Final: every pixel takes its root's span offset + rank + 1.

use super::LABEL_BYTES;
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, PhaseRecorder, Program};
use crate::{Phase, RawLabels, Result};

/// Work-items per group (a power of two).
const GROUP_SIZE: usize = 256;
/// Elements per work-item in the rank and scan kernels.
const ITEMS: usize = 4;
/// Elements per span (one work-group of the rank and scan kernels).
const SPAN: usize = GROUP_SIZE * ITEMS;

/// The compile-time defines of `kernels/relabel.kernel`.
pub(crate) fn defines() -> Vec<Define> {
    vec![Define::int("GROUP_SIZE", GROUP_SIZE as i64), Define::int("ITEMS", ITEMS as i64)]
}

/// The compiled relabeling kernels.
pub(crate) struct Relabel {
    first_pixels: Kernel,
    to_first_pixel: Kernel,
    rank: Kernel,
    scan: Kernel,
    add: Kernel,
    finish: Kernel,
}

/// One work-item per element of `n`.
fn over(n: usize) -> LaunchRange {
    LaunchRange::over([n, 1, 1], [GROUP_SIZE, 1, 1])
}

/// One work-group per span of `n` elements.
fn over_spans(n: usize) -> LaunchRange {
    LaunchRange { global: [n.div_ceil(SPAN).max(1) * GROUP_SIZE, 1, 1], local: [GROUP_SIZE, 1, 1] }
}

impl Relabel {
    pub(crate) fn build(gpu: &dyn Gpu, program: &Program) -> Result<Self> {
        let [first_pixels, to_first_pixel, rank, scan, add, finish] = super::kernels(
            gpu,
            program,
            [
                "relabel_first_pixels",
                "relabel_to_first_pixel",
                "relabel_rank",
                "scan_spans",
                "scan_add",
                "relabel_final",
            ],
        )?;
        Ok(Self { first_pixels, to_first_pixel, rank, scan, add, finish })
    }

    /// Renumbers the raw labels of an array of `n` pixels in `labels` (of `convention`)
    /// consecutively, in place, and returns their count. `line` is the pixels per row of an
    /// image, per slice of a volume: a block's pixels lie in two consecutive lines. Ends
    /// [`Phase::Relabel`] on `recorder` (the count's read-back included).
    pub(crate) fn run(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        (line, n): (usize, usize),
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<u32> {
        let count = n as u32;
        let mut scratch = gpu.alloc(n * LABEL_BYTES)?;
        // Count buffers, level by level: each holds one value per span of the level below.
        let mut levels = vec![gpu.alloc(n.div_ceil(SPAN).max(1) * 4)?];
        let mut lengths = vec![n.div_ceil(SPAN).max(1)];
        while *lengths.last().expect("one level") > 1 {
            let len = lengths.last().expect("one level").div_ceil(SPAN);
            levels.push(gpu.alloc(len * 4)?);
            lengths.push(len);
        }
        let total = gpu.alloc(4)?;
        recorder.end(Phase::Allocation)?;

        let l = Arg::Buffer(labels);
        if convention == RawLabels::FirstBlock {
            gpu.zero(&mut scratch)?;
            let args = [l, Arg::Buffer(&scratch), Arg::U32(count), Arg::U32(line.max(1) as u32)];
            gpu.launch(&mut self.first_pixels, &over(n), &args)?;
            gpu.launch(&mut self.to_first_pixel, &over(n), &[l, Arg::Buffer(&scratch), Arg::U32(count)])?;
        }
        let m = Arg::Buffer(&scratch);
        gpu.launch(&mut self.rank, &over_spans(n), &[l, m, Arg::Buffer(&levels[0]), Arg::U32(count)])?;
        // Scan every level in place; the level above receives its span totals, and the top one
        // (a single span) its total, which is N.
        for k in 0..levels.len() {
            let sums = levels.get(k + 1).unwrap_or(&total);
            let range = over_spans(lengths[k]);
            gpu.launch(
                &mut self.scan,
                &range,
                &[Arg::Buffer(&levels[k]), Arg::Buffer(sums), Arg::U32(lengths[k] as u32)],
            )?;
        }
        for k in (0..levels.len().saturating_sub(1)).rev() {
            let args = [Arg::Buffer(&levels[k]), Arg::Buffer(&levels[k + 1]), Arg::U32(lengths[k] as u32)];
            gpu.launch(&mut self.add, &over(lengths[k]), &args)?;
        }
        gpu.launch(&mut self.finish, &over(n), &[l, m, Arg::Buffer(&levels[0]), Arg::U32(count)])?;
        let mut word = [0u8; 4];
        gpu.read(&total, &mut word)?;
        recorder.end(Phase::Relabel)?;
        drop((scratch, levels, total));
        recorder.end(Phase::Deallocation)?;
        Ok(u32::from_ne_bytes(word))
    }
}
