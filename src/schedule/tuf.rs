//! TUF, tiled run union-find: this project's algorithm (beyond the papers). Kernels:
//! `kernels/tuf.kernel`, which explains the design.
//!
//! 1. LocalMerge: each 32 x 32 tile is labeled in local memory over its runs (8 tiles per
//!    work-group, a row per work-item, joined across the borders between them; one tile per
//!    group, or two work-items per row, on images too small to fill the device: [`tile_kernel`]),
//!    and every pixel stores its group-local root. The tile kernels keep a union-find node per
//!    run start, not per pixel, and ask for 32 registers, so that more groups fit a compute unit.
//! 2. BorderMerge: one work-item per pixel just after the border of a work-group's tiles joins
//!    the pairs across it in global memory, finding both roots of a pair together.
//! 3. Compression: every pixel whose local root was joined to another is linked to its root.
//!
//! Consecutive labels: passes 1 and 2 label a scratch forest, the relabeling ranks its roots
//! (each component's first pixel, `relabel_rank_labels` and the scans), and pass 3 writes each
//! pixel's root's consecutive label into the output (`tuf_compress_ranked_2d`), so the
//! relabeling's own final pass (a full read and write of the labels) is not needed.
//!
//! Unless the labeler marks every phase ([`crate::GpuLabeler::mark_every_phase`]), no device
//! mark separates the passes of an image, and passes 2 and 3 are launched to start while the
//! pass before ends ([`Gpu::launch_overlapping`]; pass 2 reads its pixels before it waits for
//! pass 1's labels).
//!
//! Volumes, 6-connectivity: the same three passes on regions of 32 x 16 x 16 voxels, one per
//! work-group (`tuf_tiles_3d`, which also writes each row's mask), `tuf_border_merge_3d` over the
//! regions' faces from those masks, marking the regions it joins, and `tuf_compress_3d`, a
//! work-group per region again, on those regions only (for consecutive labels
//! `tuf_compress_ranked_3d`, on every region). For raw labels pass 1 defers a region of 1 to
//! DEFER_SLOTS roots that lies inside the volume (an empty one it writes as zeros, and pass 3
//! leaves it alone): it writes only its roots' own voxels, a slot per root and a byte per run
//! naming its root's slot, the border merge starts a union there from the run's root, and pass
//! 3 writes the region's voxels once, from its roots' final labels.
//!
//! Multi-label images (4- and 8-connectivity): the same passes over runs of equal values, the
//! kernels built with `MULTILABEL=1`; a row's runs may then touch and number up to 32, so every
//! image takes `tuf_tiles_small` ([`multilabel_tiles`]). Multi-label volumes (6-connectivity):
//! the image passes over the volume's slices stacked along the rows, kept apart, then each
//! voxel joined to the one in front of it where equal (`tuf_slice_merge`, [`stacked_slices`]).
//!
//! Raw labels: (raster index of the component's first pixel or voxel) + 1; background 0.
//!
//! Each of these choices was measured against its alternatives (A/B on one machine, with the
//! variants tried and dropped): docs/performance-history.md, "TUF's design, step by step".

use std::sync::atomic::{AtomicU8, Ordering};

use super::common::run_then_rank;
use super::launch::{check_group, launch_after, GROUP};
use super::relabel::{RankTables, Relabel};
use super::scratch::Scratch;
use super::{kernels, AlgorithmInfo, Job, Schedule, LABEL_BYTES};
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, Limits, PhaseRecorder, Program, REGISTER_BUDGET};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result, Shape};

/// `kernels/tuf.kernel`, after the bit, union-find and rank helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("tuf": COMMON, BITS, UNION_FIND, RANKS);

/// TUF's registry entry: it renumbers in its last pass ([`Schedule::run_ranked`]), and its
/// volume kernels take 2D ranges.
pub(crate) const TUF: AlgorithmInfo = AlgorithmInfo {
    ranks_in_last_pass: true,
    flat_volume_ranges: true,
    ..AlgorithmInfo::direct(
        "TUF",
        "Tiled run Union-Find, this project's: 32x32 tiles labeled in local memory over runs, 8 side by side joined there, unions across their borders only (fewer where redundant), compression; 6-connected volumes in 32x16x16 regions",
        &[Connectivity::Four, Connectivity::Eight, Connectivity::Six],
        RawLabels::FirstPixel,
        &[Phase::LocalMerge, Phase::BorderMerge, Phase::Compression],
        KERNEL,
        defines,
        build,
    )
    .with_multilabel_at(&[Connectivity::Four, Connectivity::Eight, Connectivity::Six])
};

/// Tile width: the bits of a row mask.
const TILE_W: usize = 32;
/// Rows per tile: a work-item per row.
const TILE_H: usize = 32;
/// Tiles side by side per work-group of `tuf_tiles_groups` (a warp each) and of `tuf_tiles_small` (all
/// 8 warps on one tile); both run 32 x 8 work-items.
const GROUP_TILES: usize = 8;
const SMALL_GROUP_TILES: usize = 1;
const TILE_GROUP: [usize; 3] = [TILE_W, 8, 1];
/// The work-group of `tuf_tiles_wide` (8 tiles, two warps each), and how many of them fit a
/// compute unit at once (32 registers each: 4 x 512 x 32 fill an H100 unit's 65536).
const WIDE_TILE_GROUP: [usize; 3] = [TILE_W, 16, 1];
const WIDE_GROUPS_PER_UNIT: usize = 4;
/// Pixels of a row per work-item of the compression (one 16-byte word of labels).
const COMPRESS_PIXELS: usize = 4;
/// Work-group of the border merge (one work-item per pixel after a tile border).
const BORDER_GROUP: [usize; 3] = [256, 1, 1];
/// Rows and slices of a volume region (REGION_H, REGION_D in the kernel): 32 x 16 x 16 voxels,
/// 256 rows of 32, a work-group of TILE_GROUP's.
const REGION_H: usize = 16;
const REGION_D: usize = 16;
/// Work-items of the volume border merge per row of 32 voxels across a y or z face, each on every
/// 8th voxel's union (H100, 256^3, granularity 1, against one work-item per row: border merge
/// 0.058 -> 0.036 ms at 50 %, labeling 0.220-0.223 -> 0.202 ms at 50 %, 0.203-0.204 -> 0.186 at
/// 70 %, 0.164-0.167 -> 0.155 at 90 %, 0.105 -> 0.112 at 100 %; 32 per row, a union each, was
/// slower at 10 % and 100 % (0.017 -> 0.035 ms), 4 per row between them).
const FACE_ROW_LANES: usize = 8;

/// The compile-time defines of `kernels/tuf.kernel`.
pub(crate) fn defines(connectivity: Connectivity, _limits: &Limits) -> Vec<Define> {
    // (Volumes too are built without DIMS=3: the volume kernels take 2D ranges, folded into the
    // grid as a tall image's.) The tile kernels ask for 8 work-groups of 256 per compute unit
    // (CUDA's launch bounds): 32 registers, which NVIDIA's OpenCL takes from REGISTER_BUDGET.
    vec![
        Define::int("CONNECTIVITY", connectivity.neighbours().into()),
        Define::int(REGISTER_BUDGET, 32),
        Define::int("FACE_ROW_LANES", FACE_ROW_LANES as i64),
        Define::int("DEFER_SLOTS", DEFER_SLOTS as i64),
    ]
}

/// TUF's tile kernels for images (pass 1), chosen by the image's size, the device and the
/// connectivity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileKernel {
    /// `tuf_tiles_small`: one tile per work-group, its 8 warps sharing each row's runs.
    Small,
    /// `tuf_tiles_groups`: 8 tiles side by side per work-group, a warp each.
    Groups,
    /// `tuf_tiles_wide`: 8 tiles per work-group of 512 work-items, two warps each.
    Wide,
}

/// The tile kernel forced on every later TUF labeling of an image in this process (0: none,
/// else 1 + the kernel's index in [`TileKernel`]'s order).
static FORCED_TILE_KERNEL: AtomicU8 = AtomicU8::new(0);

/// Forces the tile kernel of every later TUF labeling of an image in this process (`None`:
/// chosen by [`tile_kernel`], the default). Tests run every kernel on every image that way.
pub(crate) fn force_tile_kernel(kernel: Option<TileKernel>) {
    FORCED_TILE_KERNEL.store(kernel.map_or(0, |k| k as u8 + 1), Ordering::Relaxed);
}

/// The compiled TUF kernels.
pub(crate) struct Tuf {
    /// `tuf_tiles_groups` and `tuf_tiles_wide`, where the build has them: not for multi-label
    /// images ([`multilabel_tiles`]).
    groups: Option<(Kernel, Kernel)>,
    tiles_small: Kernel,
    border_merge: Kernel,
    /// `tuf_slice_merge`, for multi-label volumes ([`stacked_slices`]).
    slice_merge: Option<Kernel>,
    compress: Kernel,
    compress_ranked: Kernel,
    item_offsets: Kernel,
    connectivity: Connectivity,
    /// Whether the device runs `tuf_tiles_wide`'s work-groups of 512.
    wide: bool,
    /// The forest of consecutive labelings (slot FOREST), kept between calls.
    scratch: Scratch,
}

/// Slots of [`Tuf`]'s scratch: passes 1 and 2's labels when pass 3 renumbers into the output,
/// their root marks (a bit per pixel), and a batch's item offsets.
const FOREST: usize = 0;
const ROOT_MARKS: usize = 1;
const ITEM_OFFSETS: usize = 2;

/// The compiled TUF kernels for volumes.
pub(crate) struct Tuf3d {
    tiles: Kernel,
    border_merge: Kernel,
    compress: Kernel,
    compress_ranked: Kernel,
    /// The row masks, the regions' dirty words, the deferred regions' words, roots and run
    /// slots, and the forest of consecutive labelings (slots ROW_MASKS, DIRTY, DEFERRED, ROOTS,
    /// RUN_SLOTS, FOREST), kept between calls.
    scratch: Scratch,
}

/// Slots of [`Tuf3d`]'s scratch (FOREST as [`Tuf`]'s).
const ROW_MASKS: usize = 1;
const DIRTY: usize = 2;
const DEFERRED: usize = 3;
const ROOTS: usize = 4;
const RUN_SLOTS: usize = 5;
/// Roots a region may have for pass 1 to defer its labels to pass 3 (the kernel's DEFER_SLOTS:
/// at most 256, a byte per run's slot), and the bytes of a region row's run slots (16 runs).
const DEFER_SLOTS: usize = 256;
const RUN_SLOT_BYTES: usize = 16;

/// The buffers passes 1 and 2 leave for pass 3 on a volume.
struct Merged {
    row_masks: Buffer,
    dirty: Buffer,
    deferred: Buffer,
    roots: Buffer,
    run_slots: Buffer,
}

/// Makes the TUF schedule from its program compiled for `connectivity`.
pub(crate) fn build(
    gpu: &dyn Gpu,
    program: &Program,
    connectivity: Connectivity,
    kind: ImageKind,
) -> Result<Box<dyn Schedule>> {
    if connectivity.dims() == 3 && kind == ImageKind::Binary {
        let [tiles, border_merge, compress, compress_ranked] = kernels(
            gpu,
            program,
            ["tuf_tiles_3d", "tuf_border_merge_3d", "tuf_compress_3d", "tuf_compress_ranked_3d"],
        )?;
        for kernel in [&tiles, &compress, &compress_ranked] {
            check_group(gpu, kernel, TILE_GROUP)?;
        }
        check_group(gpu, &border_merge, BORDER_GROUP)?;
        let scratch = Scratch::default();
        return Ok(Box::new(Tuf3d { tiles, border_merge, compress, compress_ranked, scratch }));
    }
    let [tiles_small, border_merge, compress, compress_ranked, item_offsets] = kernels(
        gpu,
        program,
        ["tuf_tiles_small", "tuf_border_merge_2d", "tuf_compress_2d", "tuf_compress_ranked_2d", "tuf_item_offsets"],
    )?;
    check_group(gpu, &tiles_small, TILE_GROUP)?;
    check_group(gpu, &border_merge, BORDER_GROUP)?;
    for kernel in [&compress, &compress_ranked] {
        check_group(gpu, kernel, GROUP)?;
    }
    // A multi-label volume: its slices stacked along the rows, then joined across them.
    let slice_merge = if connectivity.dims() == 3 {
        let [slice_merge] = kernels(gpu, program, ["tuf_slice_merge"])?;
        check_group(gpu, &slice_merge, BORDER_GROUP)?;
        Some(slice_merge)
    } else {
        None
    };
    let (groups, wide) = if multilabel_tiles(kind) {
        (None, false)
    } else {
        let [tiles, tiles_wide] = kernels(gpu, program, ["tuf_tiles_groups", "tuf_tiles_wide"])?;
        check_group(gpu, &tiles, TILE_GROUP)?;
        // The wide tile kernel (512 work-items) only where the device takes it: else the 8-tile
        // groups of 256 do its images.
        let wide = check_group(gpu, &tiles_wide, WIDE_TILE_GROUP).is_ok();
        (Some((tiles, tiles_wide)), wide)
    };
    let scratch = Scratch::default();
    Ok(Box::new(Tuf {
        groups,
        tiles_small,
        border_merge,
        slice_merge,
        compress,
        compress_ranked,
        item_offsets,
        connectivity,
        wide,
        scratch,
    }))
}

/// Whether images of `kind` take only the one-tile kernel, `tuf_tiles_small`: multi-label
/// images. A row of a multi-label tile has up to 32 runs (equal values, not only foreground,
/// make a run), so its nodes take 33 slots a row instead of 17; 8 tiles of them would need 34
/// KiB of local memory, past the 32 KiB every OpenCL device has, and the kernel file leaves the
/// 8-tile kernels out of such builds.
fn multilabel_tiles(kind: ImageKind) -> bool {
    kind != ImageKind::Binary
}

/// The image a job's array is labeled as by the image kernels, and the rows of each of its
/// items: an image, itself; a volume (multi-label volumes at 6-connectivity), its slices stacked
/// along the rows, each its own item, which pass 1 and the border merge keep apart and
/// `tuf_slice_merge` then joins, each voxel to the one in front where their values are equal.
/// (Binary volumes take [`Tuf3d`]'s regions.)
fn stacked_slices<'a>(job: &Job<'a>) -> (Job<'a>, u32) {
    let shape = job.shape;
    let image = Shape::image(shape.width, shape.height * shape.depth);
    (Job { input: job.input, labels: job.labels, shape: image }, shape.height as u32)
}

/// The border merge's work when the tile pass labeled regions `region_w` pixels wide (a
/// work-group's tiles side by side) and TILE_H high: pixels just after a vertical region border
/// (every row of each column `region_w * k`, k >= 1), then just after a horizontal one (every
/// column of each row `TILE_H * m`, m >= 1). Returns (vertical, total).
fn border_pixels(shape: Shape, region_w: usize) -> (usize, usize) {
    let (regions_x, tiles_y) = (shape.width.div_ceil(region_w), shape.height.div_ceil(TILE_H));
    let vertical = (regions_x - 1) * shape.height;
    (vertical, vertical + (tiles_y - 1) * shape.width)
}

/// Pass 1's kernel for an image: with fewer 8-tile groups than twice the compute units, one
/// work-group per tile (8x the groups, its 8 warps sharing each row's runs), so that no unit
/// idles and a tile's latency is short (H100, CUDA: DIBCO pages of 0.96-1.6 Mpx, 120-200 groups
/// of 8 tiles, 0.025-0.030 ms with it against 0.026-0.032 without; from 2.2 Mpx up to 1.07x
/// slower; at 2048^2, 512 groups of 8 tiles, 1.08-1.10x slower).
///
/// With 4-connectivity, where the 8-tile groups would fill at most half of each unit (up to 4
/// of its 8), they take two warps a tile instead (`tuf_tiles_wide`, groups of 512, 4 a unit):
/// with so few warps the tiles' run loops wait on local memory (H100, 2048^2, 512 groups: Nsight
/// Compute had `tuf_tiles_groups` issuing on 0.58 of its cycles with 28 warps a unit, the wide kernel
/// on 0.72 with 51, for 12 % more instructions). `ccl bench density`, 4-connectivity, 2048^2,
/// H100, A/B in one call, two rounds, CUDA, at 10 / 30 / 50 / 60 / 70 / 90 %: 23.5-23.6 /
/// 30.2-30.3 / 36.3-36.4 / 48.9-49.3 / 43.2-43.4 / 37.4-37.5 -> 22.7-22.8 / 29.1-29.2 /
/// 34.4-34.5 / 47.0-47.1 / 42.5-42.7 / 36.9-37.0 us (the empty image 13.2 -> 13.6, the full one
/// 24.3-24.4 -> 25.2: little to share, a barrier of 16 warps); with the statistics at 50 % 102.4
/// -> 99.7-100.0; NVIDIA OpenCL 41.1-41.4 -> 39.1-39.8 at 50 %; granularity 4 2-4 % faster at
/// 20-90 %, granularity 16 within 0.5 us slower. With 8-connectivity the wide kernel was 1-3 %
/// faster at 10-40 % and up to 4 % slower at 50-80 %, so those images keep `tuf_tiles_groups`; so do
/// larger images (8192^2: 8-12 % slower with it, many waves of groups, where its extra
/// instructions cost). Four tiles per group of 256 (two warps each) did as well at
/// 4-connectivity, worse at 8.
/// Where the device cannot run groups of 512 (`wide` false), the 8-tile groups of 256 take those
/// images.
/// A build without the 8-tile kernels (multi-label images, [`multilabel_tiles`]) takes
/// `tuf_tiles_small` for every image.
fn tile_kernel(gpu: &dyn Gpu, shape: Shape, connectivity: Connectivity, (groups, wide): (bool, bool)) -> TileKernel {
    if !groups {
        return TileKernel::Small;
    }
    match FORCED_TILE_KERNEL.load(Ordering::Relaxed) {
        1 => return TileKernel::Small,
        2 => return TileKernel::Groups,
        3 => return TileKernel::Wide,
        _ => {}
    }
    let groups = shape.width.div_ceil(TILE_W * GROUP_TILES) * shape.height.div_ceil(TILE_H);
    let units = gpu.limits().compute_units.max(1);
    if groups < 2 * units {
        TileKernel::Small
    } else if wide && connectivity == Connectivity::Four && groups <= WIDE_GROUPS_PER_UNIT * units {
        TileKernel::Wide
    } else {
        TileKernel::Groups
    }
}

impl Tuf {
    /// Passes 1 and 2 into `job.labels`: every pixel's group-local root, the roots joined
    /// across the groups' borders. With `marks` (a bit per pixel, zeroed where the width is not
    /// a multiple of 32; not with `tuf_tiles_small`: [`tile_kernel`]), passes 1 and 2 also mark
    /// the components' first pixels there (`mark_roots` in the kernel). Pass 2 overlaps pass 1
    /// where the recorder leaves their boundary unmarked ([`PhaseRecorder::end_or_merge`]);
    /// with `overlap_next`, the kernel after pass 2 may overlap it too (the return value says
    /// whether it may), and without it pass 2's end is marked. `item_height`: the rows of each
    /// image of a batch stacked along the rows (a multiple of TILE_H), whose borders pass 2
    /// leaves apart; the height for one image.
    fn merge(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        marks: Option<&Buffer>,
        (overlap_next, item_height): (bool, u32),
        recorder: &mut PhaseRecorder,
    ) -> Result<bool> {
        let [w, h, _] = job.extent();
        let shape = job.shape;
        // One work-group per GROUP_TILES tiles side by side, or per tile ([`tile_kernel`]).
        let tile_rows = shape.height.div_ceil(TILE_H);
        let choice = tile_kernel(gpu, shape, self.connectivity, (self.groups.is_some(), self.wide));
        let small = choice == TileKernel::Small;
        let (kernel, group_tiles, group) = match (choice, self.groups.as_mut()) {
            (TileKernel::Groups, Some((tiles, _))) => (tiles, GROUP_TILES, TILE_GROUP),
            (TileKernel::Wide, Some((_, tiles_wide))) => (tiles_wide, GROUP_TILES, WIDE_TILE_GROUP),
            _ => (&mut self.tiles_small, SMALL_GROUP_TILES, TILE_GROUP),
        };
        let groups_x = shape.width.div_ceil(TILE_W * group_tiles);
        let over_tiles = LaunchRange::over([groups_x * TILE_W, tile_rows * group[1], 1], group);
        debug_assert!(marks.is_none() || !small, "marks come from the 8-tile kernels only");
        let (marks_arg, track) = (Arg::Buffer(marks.unwrap_or(job.labels)), Arg::U32(u32::from(marks.is_some())));
        let image_args = [Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h)];
        if small {
            gpu.launch(kernel, &over_tiles, &[&image_args[..], &[Arg::U32(item_height)]].concat())?;
        } else {
            gpu.launch(kernel, &over_tiles, &[&image_args[..], &[marks_arg, track]].concat())?;
        }
        let overlap = recorder.end_or_merge(Phase::LocalMerge)?;
        let region_w = TILE_W * group_tiles;
        let (vertical, total) = border_pixels(shape, region_w);
        if total > 0 {
            let args = [
                Arg::Buffer(job.input),
                Arg::Buffer(job.labels),
                Arg::U32(w),
                Arg::U32(h),
                Arg::U32(region_w as u32),
                Arg::U32(vertical as u32),
                Arg::U32(total as u32),
                marks_arg,
                track,
                Arg::U32(item_height),
            ];
            let range = LaunchRange::over([total, 1, 1], BORDER_GROUP);
            launch_after(gpu, overlap, &mut self.border_merge, &range, &args)?;
        }
        // A multi-label volume's slices (items of item_height rows), each voxel of the second
        // on joined to the one in front of it.
        let slice_pixels = shape.width * item_height as usize;
        if let Some(kernel) = self.slice_merge.as_mut().filter(|_| shape.len() > slice_pixels) {
            let total = shape.len() - slice_pixels;
            let args = [
                Arg::Buffer(job.input),
                Arg::Buffer(job.labels),
                Arg::U32(w),
                Arg::U32(slice_pixels as u32),
                Arg::U32(total as u32),
            ];
            gpu.launch(kernel, &LaunchRange::over([total, 1, 1], BORDER_GROUP), &args)?;
        }
        if overlap_next {
            recorder.end_or_merge(Phase::BorderMerge)
        } else {
            recorder.end(Phase::BorderMerge)?;
            Ok(false)
        }
    }
}

/// The end of TUF's consecutive labelings (images and volumes): the relabeling ranks the roots
/// of `forest` (passes 1 and 2's labels of `job`) into `tables`, from their `marks` where passes
/// 1 and 2 made them. With `overlap` (pass 2's end left unmarked), each of its kernels may start
/// while the one before it ends, pass 2 included (each waits for it first).
fn rank_forest(
    gpu: &dyn Gpu,
    job: &Job,
    (forest, marks): (&Buffer, Option<&Buffer>),
    relabel: &mut Relabel,
    tables: &mut RankTables,
    convention: RawLabels,
    overlap: bool,
) -> Result<()> {
    match marks {
        Some(marks) => relabel.build_ranks_from_marks(gpu, tables, marks, overlap),
        None => relabel.build_ranks(gpu, tables, forest, job.shape, convention, overlap),
    }
}

/// Pass 3's ranked kernel, launched over `range` once `tables` are ranked: every pixel of
/// `job.labels` takes its root's consecutive label from `forest`. Its arguments after the
/// tables: the array's extent, the rank span's shift, then `more`.
fn write_ranked(
    gpu: &dyn Gpu,
    job: &Job,
    forest: &Buffer,
    (relabel, tables): (&Relabel, &RankTables),
    (kernel, range, extent): (&mut Kernel, LaunchRange, &[u32]),
    more: &[Arg],
    overlap: bool,
) -> Result<()> {
    let mut args =
        vec![Arg::Buffer(forest), Arg::Buffer(job.labels), Arg::Buffer(tables.ranks()), Arg::Buffer(tables.offsets())];
    args.extend(extent.iter().map(|&e| Arg::U32(e)));
    args.push(Arg::U32(relabel.rank_shift()));
    args.extend_from_slice(more);
    launch_after(gpu, overlap, kernel, &range, &args)
}

/// Pass 3's work-items: one per 4 pixels of a row.
fn over_quads(shape: Shape) -> LaunchRange {
    LaunchRange::over([shape.width.div_ceil(COMPRESS_PIXELS), shape.height, 1], GROUP)
}

/// Whether TUF labels `items` images stacked along the rows of an image of `shape` as one batch
/// ([`Schedule::run_items_ranked`]): each item's rows a whole number of tiles, so that no tile of
/// pass 1 holds two items, and every pixel's index within 32 bits.
fn stacks(shape: Shape, items: usize) -> bool {
    shape.depth == 1
        && items > 0
        && shape.height.is_multiple_of(items)
        && (shape.height / items).is_multiple_of(TILE_H)
        && u32::try_from(shape.len()).is_ok()
}

impl Tuf {
    /// Passes 1 and 2 into a scratch forest, whose roots (the components' first pixels) the
    /// relabeling ranks; pass 3 then writes each pixel's root's consecutive label into the
    /// output (`tuf_compress_ranked_2d`): the relabeling's own final pass, a full read and write
    /// of the labels, is not needed. With `items` (a batch of that many images stacked along the
    /// rows, [`stacks`]), the borders between them are left apart and each item's labels start at
    /// 1: the count of components before each item (`tuf_item_offsets`, into `item_offsets`,
    /// items + 1 words, the last N) is subtracted. `None` where there is no room for the forest.
    fn ranked(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        relabel: &mut Relabel,
        convention: RawLabels,
        items: Option<(usize, &Buffer)>,
        recorder: &mut PhaseRecorder,
    ) -> Result<Option<RankTables>> {
        let (job, slice_height) = stacked_slices(job);
        let job = &job;
        let shape = job.shape;
        let Ok(forest) = self.scratch.take(gpu, FOREST, shape.len() * LABEL_BYTES) else {
            return Ok(None);
        };
        let mut tables = relabel.allocate(gpu, shape.len(), convention)?;
        // With 8 tiles per work-group, passes 1 and 2 mark the components' first pixels, which
        // the relabeling ranks from a bit per pixel instead of reading the forest's 4 bytes
        // (H100, CUDA, queued timing, A/B, two rounds: TUF + statistics at 8192^2 and 10 / 50 /
        // 90 % 1.047-1.055 / 0.894-0.897 / 0.736-0.739 -> 0.986 / 0.830-0.833 / 0.676-0.680 ms,
        // 8000x8000 at 50 %, marks or-ed, 0.859-0.863 -> 0.798-0.803; binarize + TUF on an
        // 8192^2 page 0.694-0.695 -> 0.637-0.640; 2048^2 within 2-3 %).
        let choice = tile_kernel(gpu, shape, self.connectivity, (self.groups.is_some(), self.wide));
        let mut marks = if choice == TileKernel::Small {
            None
        } else {
            Some(self.scratch.take(gpu, ROOT_MARKS, shape.len().div_ceil(32) * 4)?)
        };
        if let Some(marks) = marks.as_mut().filter(|_| !shape.width.is_multiple_of(32)) {
            gpu.zero(marks)?;
        }
        recorder.end(Phase::Allocation)?;
        let [w, h, _] = job.extent();
        let item_height = items.map_or(slice_height, |(count, _)| h / count as u32);
        let forest_job = Job { input: job.input, labels: &forest, shape };
        let overlap = self.merge(gpu, &forest_job, marks.as_ref(), (true, item_height), recorder)?;
        rank_forest(gpu, job, (&forest, marks.as_ref()), relabel, &mut tables, convention, overlap)?;
        let mut more = vec![Arg::Buffer(tables.offsets()), Arg::U32(0)];
        if let Some((count, item_offsets)) = items {
            let args = [
                Arg::Buffer(tables.ranks()),
                Arg::Buffer(tables.offsets()),
                Arg::Buffer(tables.total()),
                Arg::Buffer(item_offsets),
                Arg::U32(item_height * w),
                Arg::U32(count as u32),
                Arg::U32(relabel.rank_shift()),
            ];
            launch_after(gpu, overlap, &mut self.item_offsets, &LaunchRange::over([count + 1, 1, 1], GROUP), &args)?;
            more = vec![Arg::Buffer(item_offsets), Arg::U32(item_height)];
        }
        let ranked = (&mut self.compress_ranked, over_quads(shape), &[w, h][..]);
        write_ranked(gpu, job, &forest, (relabel, &tables), ranked, &more, overlap)?;
        self.scratch.put(FOREST, forest);
        if let Some(marks) = marks {
            self.scratch.put(ROOT_MARKS, marks);
        }
        Ok(Some(tables))
    }
}

impl Schedule for Tuf {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let (job, slice_height) = stacked_slices(job);
        let job = &job;
        let overlap = self.merge(gpu, job, None, (true, slice_height), recorder)?;
        let [w, h, _] = job.extent();
        let label_args = [Arg::Buffer(job.labels), Arg::U32(w), Arg::U32(h)];
        launch_after(gpu, overlap, &mut self.compress, &over_quads(job.shape), &label_args)?;
        recorder.end(Phase::Compression)?;
        Ok(None)
    }

    /// [`Tuf::ranked`]; without room for the forest, the labels are compressed and then
    /// relabeled.
    fn run_ranked(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        relabel: &mut Relabel,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<(Option<u32>, RankTables)> {
        match self.ranked(gpu, job, relabel, convention, None, recorder)? {
            Some(tables) => Ok((None, tables)),
            None => run_then_rank(self, gpu, job, relabel, convention, recorder),
        }
    }

    /// [`Tuf::ranked`] over the batch in one grid per pass, where it [`stacks`] and the forest
    /// fits; then each item's count read back.
    fn run_items_ranked(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        items: usize,
        relabel: &mut Relabel,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<Option<Vec<u32>>> {
        if !stacks(job.shape, items) {
            return Ok(None);
        }
        let item_offsets = self.scratch.take(gpu, ITEM_OFFSETS, (items + 1) * 4)?;
        let counts =
            self.ranked(gpu, job, relabel, convention, Some((items, &item_offsets)), recorder).and_then(|tables| {
                let Some(tables) = tables else { return Ok(None) };
                relabel.put_back(tables);
                recorder.end(Phase::Relabel)?;
                let mut before = vec![0u32; items + 1];
                gpu.read(&item_offsets, bytemuck::cast_slice_mut(&mut before))?;
                Ok(Some(before.windows(2).map(|pair| pair[1] - pair[0]).collect()))
            });
        self.scratch.put(ITEM_OFFSETS, item_offsets);
        counts
    }
}

/// The border merge's work on a volume: voxels just after a region face x = 32k (k >= 1), then
/// (from the next multiple of 32) rows of 32 voxels just after a face y = REGION_H m, then z =
/// REGION_D n, FACE_ROW_LANES work-items a row. Returns (voxels across x, rows across y, work-items).
fn face_work(shape: Shape) -> (usize, usize, usize) {
    let (w, h, d) = (shape.width, shape.height, shape.depth);
    let across = w.div_ceil(TILE_W);
    let across_x = (across - 1) * h * d;
    let rows_y = across * ((h - 1) / REGION_H) * d;
    let rows_z = across * h * ((d - 1) / REGION_D);
    (across_x, rows_y, across_x.next_multiple_of(TILE_W) + FACE_ROW_LANES * (rows_y + rows_z))
}

/// One work-group per region of a volume of `shape`: regions along y and z one after the other
/// along the range's y.
fn over_regions(shape: Shape) -> LaunchRange {
    let across = shape.width.div_ceil(TILE_W);
    let stacked = shape.height.div_ceil(REGION_H) * shape.depth.div_ceil(REGION_D);
    LaunchRange { global: [across * TILE_GROUP[0], stacked * TILE_GROUP[1], 1], local: TILE_GROUP }
}

impl Tuf3d {
    /// Passes 1 and 2 into `job.labels`, with the buffers pass 3 reads (taken here; returned for
    /// pass 3 and for the caller to put back). With `defer` (raw labels, the labels' own pass 3)
    /// pass 1 may leave the voxels of regions of few roots to pass 3 (see `tuf_tiles_3d`).
    fn merge(&mut self, gpu: &dyn Gpu, job: &Job, defer: bool, recorder: &mut PhaseRecorder) -> Result<Merged> {
        let [w, h, d] = job.extent();
        let shape = job.shape;
        // The row masks pass 1 writes for the border merge (a word per row of a region), a word
        // per region that the border merge sets where it joined a face, and the deferred
        // regions' words (count of roots + 1, or 0), roots and run slots.
        let regions = shape.width.div_ceil(TILE_W) * shape.height.div_ceil(REGION_H) * shape.depth.div_ceil(REGION_D);
        let rows = regions * REGION_H * REGION_D;
        let merged = Merged {
            row_masks: self.scratch.take(gpu, ROW_MASKS, rows * 4)?,
            dirty: self.scratch.take(gpu, DIRTY, regions * 4)?,
            deferred: self.scratch.take(gpu, DEFERRED, regions * 4)?,
            roots: self.deferral_buffer(gpu, ROOTS, defer, regions * DEFER_SLOTS * 4)?,
            run_slots: self.deferral_buffer(gpu, RUN_SLOTS, defer, rows * RUN_SLOT_BYTES)?,
        };
        recorder.end(Phase::Allocation)?;
        let (input, labels, masks) = (Arg::Buffer(job.input), Arg::Buffer(job.labels), Arg::Buffer(&merged.row_masks));
        let (dirty, deferred) = (Arg::Buffer(&merged.dirty), Arg::Buffer(&merged.deferred));
        let (roots, run_slots) = (Arg::Buffer(&merged.roots), Arg::Buffer(&merged.run_slots));
        let args = [
            input,
            labels,
            Arg::U32(w),
            Arg::U32(h),
            Arg::U32(d),
            masks,
            dirty,
            deferred,
            roots,
            run_slots,
            Arg::U32(defer.into()),
        ];
        gpu.launch(&mut self.tiles, &over_regions(shape), &args)?;
        recorder.end(Phase::LocalMerge)?;
        let (across_x, across_y, total) = face_work(shape);
        if total > 0 {
            let args = [
                labels,
                masks,
                dirty,
                Arg::U32(w),
                Arg::U32(h),
                Arg::U32(d),
                Arg::U32(across_x as u32),
                Arg::U32(across_y as u32),
                Arg::U32(total as u32),
                Arg::U32(defer.into()),
                deferred,
                roots,
                run_slots,
            ];
            gpu.launch(&mut self.border_merge, &LaunchRange::over([total, 1, 1], BORDER_GROUP), &args)?;
        }
        recorder.end(Phase::BorderMerge)?;
        Ok(merged)
    }

    /// The scratch buffer of `slot` for deferred regions: of `bytes` bytes with `defer`, else
    /// whatever the slot holds (the kernels do not touch it).
    fn deferral_buffer(&mut self, gpu: &dyn Gpu, slot: usize, defer: bool, bytes: usize) -> Result<Buffer> {
        if defer {
            self.scratch.take(gpu, slot, bytes)
        } else {
            self.scratch.take_at_least(gpu, slot, 16)
        }
    }

    /// Puts the buffers [`Tuf3d::merge`] took back.
    fn put_back(&mut self, merged: Merged) {
        self.scratch.put(ROW_MASKS, merged.row_masks);
        self.scratch.put(DIRTY, merged.dirty);
        self.scratch.put(DEFERRED, merged.deferred);
        self.scratch.put(ROOTS, merged.roots);
        self.scratch.put(RUN_SLOTS, merged.run_slots);
    }
}

impl Schedule for Tuf3d {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let merged = self.merge(gpu, job, true, recorder)?;
        let [w, h, d] = job.extent();
        let args = [
            Arg::Buffer(job.labels),
            Arg::Buffer(&merged.dirty),
            Arg::U32(w),
            Arg::U32(h),
            Arg::U32(d),
            Arg::Buffer(&merged.deferred),
            Arg::Buffer(&merged.roots),
            Arg::Buffer(&merged.run_slots),
            Arg::Buffer(&merged.row_masks),
        ];
        gpu.launch(&mut self.compress, &over_regions(job.shape), &args)?;
        recorder.end(Phase::Compression)?;
        self.put_back(merged);
        Ok(None)
    }

    /// As [`Tuf`]'s: passes 1 and 2 into a scratch forest, then every region's voxels take
    /// their roots' consecutive labels (`tuf_compress_ranked_3d`).
    fn run_ranked(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        relabel: &mut Relabel,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<(Option<u32>, RankTables)> {
        let shape = job.shape;
        // Without room for the forest, the labels are compressed and then relabeled.
        let Ok(forest) = self.scratch.take(gpu, FOREST, shape.len() * LABEL_BYTES) else {
            return run_then_rank(self, gpu, job, relabel, convention, recorder);
        };
        let mut tables = relabel.allocate(gpu, shape.len(), convention)?;
        let merged = self.merge(gpu, &Job { input: job.input, labels: &forest, shape }, false, recorder)?;
        rank_forest(gpu, job, (&forest, None), relabel, &mut tables, convention, false)?;
        let ranked = (&mut self.compress_ranked, over_regions(shape), &job.extent()[..]);
        write_ranked(gpu, job, &forest, (relabel, &tables), ranked, &[], false)?;
        self.put_back(merged);
        self.scratch.put(FOREST, forest);
        Ok((None, tables))
    }
}
