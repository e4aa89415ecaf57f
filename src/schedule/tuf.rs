//! TUF, tiled run union-find: this project's algorithm (beyond the papers). Kernels:
//! `kernels/tuf.kernel`, which explains the design, and `kernels/compress.kernel`.
//!
//! 1. LocalMerge: each 32 x 32 tile is labeled in local memory over its runs, and every pixel
//!    stores its tile-local root.
//! 2. BorderMerge: one work-item per pixel just after a tile border joins the pairs across it
//!    in global memory.
//! 3. Compression: every pixel is linked to its root.
//!
//! Tried on the H100 and dropped: labeling each tile again from the input instead of storing
//! and compressing the local roots (input read twice, labels written once: 1.5-2x slower, the
//! tile labeling costs more than the traffic it saves); 16 and 64 rows per tile; 1024-item
//! work-groups (one row per work-item).
//!
//! Raw labels: (raster index of the component's first pixel) + 1; background 0.

use super::{kernels, over_pixels, Job, Schedule};
use crate::gpu::{Arg, Define, Gpu, Kernel, LaunchRange, PhaseRecorder, Program};
use crate::{Connectivity, Phase, Result, Shape};

/// Tile width: the bits of a row mask.
const TILE_W: usize = 32;
/// Rows per tile (a multiple of the work-group's rows).
const TILE_H: usize = 32;
/// The work-group over a tile: one column per work-item, 8 rows at a time.
const TILE_GROUP: [usize; 3] = [TILE_W, 8, 1];
/// Work-group of the border merge (one work-item per pixel after a tile border).
const BORDER_GROUP: [usize; 3] = [256, 1, 1];

/// The compile-time defines of `kernels/tuf.kernel` (and of compress.kernel's plain find).
pub(crate) fn defines(connectivity: Connectivity) -> Vec<Define> {
    vec![
        Define::int("CONNECTIVITY", connectivity.neighbours().into()),
        Define::int("TILE_H", TILE_H as i64),
        Define::flag("INLINE_COMPRESSION", false),
    ]
}

/// The compiled TUF kernels.
pub(crate) struct Tuf {
    tiles: Kernel,
    border_merge: Kernel,
    compress: Kernel,
}

/// Makes the TUF schedule from its compiled program.
pub(crate) fn build(gpu: &dyn Gpu, program: &Program, _connectivity: Connectivity) -> Result<Box<dyn Schedule>> {
    let [tiles, border_merge, compress] = kernels(gpu, program, ["tuf_tiles", "tuf_border_merge", "compress_pixels"])?;
    Ok(Box::new(Tuf { tiles, border_merge, compress }))
}

/// The border merge's work: pixels just after a vertical tile border (every row of each
/// column 32k, k >= 1), then just after a horizontal one (every column of each row 32m, m >= 1).
/// Returns (vertical, total).
fn border_pixels(shape: Shape) -> (usize, usize) {
    let (tiles_x, tiles_y) = (shape.width.div_ceil(TILE_W), shape.height.div_ceil(TILE_H));
    let vertical = (tiles_x - 1) * shape.height;
    (vertical, vertical + (tiles_y - 1) * shape.width)
}

impl Schedule for Tuf {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let [w, h, _] = job.extent();
        let shape = job.shape;
        // One work-group per tile.
        let tiles_y = shape.height.div_ceil(TILE_H);
        let over_tiles = LaunchRange::over([shape.width, tiles_y * TILE_GROUP[1], 1], TILE_GROUP);
        let image_args = [Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h)];
        gpu.launch(&mut self.tiles, &over_tiles, &image_args)?;
        recorder.end(Phase::LocalMerge)?;
        let (vertical, total) = border_pixels(shape);
        if total > 0 {
            let args = [
                Arg::Buffer(job.input),
                Arg::Buffer(job.labels),
                Arg::U32(w),
                Arg::U32(h),
                Arg::U32(vertical as u32),
                Arg::U32(total as u32),
            ];
            gpu.launch(&mut self.border_merge, &LaunchRange::over([total, 1, 1], BORDER_GROUP), &args)?;
        }
        recorder.end(Phase::BorderMerge)?;
        let label_args = [Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h), Arg::U32(1)];
        gpu.launch(&mut self.compress, &over_pixels(shape), &label_args)?;
        recorder.end(Phase::Compression)?;
        Ok(None)
    }
}
