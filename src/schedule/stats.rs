//! Component statistics on the device (issue 13): from consecutive labels 1..N, each
//! component's area, bounding box and coordinate sums, read back into
//! [`crate::ComponentStats`]. Kernels: `kernels/stats.kernel`.
//!
//! 1. `stats_init`: one work-item per component sets its entries (empty box, zero sums).
//! 2. `stats_accumulate`: one work-item per SEGMENT pixels of a row hands each run of one
//!    component (read from bit masks of its segment; a run crossing into the next segment of
//!    a pair of items counted once) to its work-group's table in local memory, whose entries
//!    are added to the global ones with atomics once per group. Volumes are walked as images
//!    of `height * depth` rows (row r is y = r % height of slice r / height), so one 2D launch
//!    (folded into a CUDA grid when tall) covers any shape.
//! 3. OpenCV's format (`connectedComponentsWithStats`: row 0 the background, then a row per
//!    component of i64 stats and f64 centroids), on request ([`OpenCv`], a build with double
//!    precision): the table's totals, the background's box from the array's faces (from every
//!    pixel only where a face is all foreground), then one work-item per row.
//!
//! The walk over a segment is branch-free: two bit masks (foreground, run starts), then one
//! hand-over per run from them. H100, `ccl bench density/average --stats`, TUF, A/B on one
//! machine, two rounds, against a walk that branched at every pixel: the statistics phase at
//! 8192^2 0.577 / 0.194 / 0.173-0.175 -> 0.505-0.507 / 0.174-0.180 / 0.160-0.164 ms at 10 / 50 /
//! 90 % on CUDA (NVIDIA OpenCL 0.580 / 0.203-0.207 / 0.180 -> 0.508 / 0.177 / 0.160), 2048^2
//! 0.046-0.048 / 0.026-0.027 / 0.022 -> 0.041 / 0.022-0.025 / 0.019-0.021, the 20 DIBCO pages
//! 0.0167-0.0172 -> 0.0132-0.0133 (TUF+stats 0.066-0.067 -> 0.059-0.062 ms).
//!
//! The work-group's table packs each slot's count with its sum of row offsets, and its rows into
//! bits, and reads a slot's label before trying to claim it: five local atomics a hand-over
//! instead of eight (with the compare-and-swap). Same A/B: the statistics phase at 8192^2
//! 0.179-0.186 / 0.166-0.170 -> 0.167-0.170 / 0.153-0.154 ms at 50 / 90 % on CUDA (NVIDIA
//! OpenCL 0.169 / 0.155 -> 0.154 / 0.138; BKE_IC's alike), unchanged at 10 % (where most
//! hand-overs go to the global table) and within noise at 2048^2 and on the pages.
//!
//! A hand-over skips the atomic minimum, maximum and OR of its slot where the values read there
//! already cover its run (they only ever widen): same A/B, 8192^2 TUF+stats 0.807-0.814 /
//! 0.642-0.649 -> 0.803 / 0.631-0.636 ms at 50 / 90 %, within noise at 10 %, at 2048^2 and on
//! the pages.
//!
//! Segments of 16 pixels, not 32, and pairs of them that hand a run crossing their boundary over
//! once. Nsight Compute on a 2048^2 labeling at 10 % (CUDA): with 32, `stats_accumulate` ran 34
//! us in 512 work-groups, 0.65 of a wave (40 registers, 35 KiB of local memory: 6 groups a
//! compute unit), its warps waiting mostly on local memory (short scoreboard 7.6 cycles an
//! instruction); with 16, 30 us in 1024 groups of 32 registers; with 8, 26 us. Short segments
//! alone cost the dense images, where twice the hand-overs go to the large component's slot;
//! the pairs give those back. H100, `ccl bench density --stats`, TUF, CUDA, sweeps in one call
//! per machine, two rounds (TUF + stats, 2048^2 in us / 8192^2 in ms, 10 / 50 / 90 %):
//! 32 pixels 72.6-73.7 / 75.7-76.4 / 59.7-60.0 and 0.941-0.944 / 0.782-0.788 / 0.614-0.619;
//! 16 64.6-65.1 / 75.4-76.0 / 62.3-63.1 and 0.898-0.900 / 0.823-0.825 / 0.658-0.660; 8 (8
//! groups a unit) 62.9-63.0 / 81.9-82.1 / 69.8-70.3 and 0.876 / 0.919-0.924 / 0.766; 32 with
//! pairs 72.2-72.6 / 73.8-74.1 / 58.3-58.6 and 0.941-0.942 / 0.783 / 0.603-0.604; 16 with pairs
//! 65.2-65.5 / 73.4-74.0 / 59.5-60.1 and 0.894-0.895 / 0.788-0.794 / 0.610-0.613, with 4 probes
//! instead of 8 (kept) 64.1-64.4 / 73.6-73.9 / 59.6-59.7 and 0.893-0.894 / 0.787-0.788 /
//! 0.611-0.612. Within noise or slower there: probing an aligned bucket of 2, 4 or 8 slots read
//! at once (0.5-1.5 us at 10 %, 1 % slower at 8192^2 and 50 % with 4), and a table of 128 or
//! 256 slots (2-3 us slower at 10 %). The A/B of the builds (two rounds in one call): on an
//! H100, CUDA, 8192^2 0.942-0.944 / 0.782-0.787 / 0.616-0.620 -> 0.894-0.896 / 0.787 / 0.612
//! ms; on an H200, 2048^2 CUDA 67.2-67.4 / 73.8-73.9 / 57.7-58.0 -> 59.2-59.4 / 71.3-71.7 /
//! 57.7-57.8 us, NVIDIA OpenCL 75.3-76.1 / 83.6-84.7 / 67.3-68.1 -> 70.5-70.8 / 82.5-83.0 /
//! 67.5-68.0, 8192^2 NVIDIA OpenCL 0.839-0.840 / 0.777-0.780 / 0.617 -> 0.793-0.794 /
//! 0.783-0.787 / 0.614-0.615 ms, BKE_IC + stats at 2048^2 (CUDA) 110.5-110.9 / 136.8-137.0 /
//! 120.2-120.7 -> 102.8-103.1 / 136.5-136.7 / 121.0-121.2 us, the 10 DIBCO 2009 pages 29.6 ->
//! 28.8 us (NVIDIA OpenCL 39.2-39.3 -> 38.3-38.7), 256^3 volumes (6-connectivity, CUDA)
//! 0.306-0.307 / 0.302-0.303 / 0.249 -> 0.285 / 0.275-0.276 / 0.221-0.222 ms.
//! Knocked out (wrong tables, timing only; H100, same A/B), the hand-overs of runs of one pixel
//! cost 10.8 us of TUF + stats at 2048^2 and 10 % (64.8 -> 54.0 us) and 0.21 ms at 8192^2
//! (0.895 -> 0.684), the direct global hand-overs as much, the table's flush 3.6 us / 0.05 ms.
//! So measured and dropped: seeding the table from the relabeling's rank tables instead of
//! `stats_init` (a work-item per word of 32 pixels of their marks writing each component's
//! first pixel as its initial entry: area 1, its box, its coordinates), and `stats_accumulate`
//! leaving the marked first pixels out, so that a component of one pixel costs no hand-over:
//! exact on CUDA, NVIDIA OpenCL and POCL, clean under compute-sanitizer, but slower everywhere,
//! 2048^2 64.5-65.0 / 74.1-74.2 / 59.9 -> 71.6-71.8 / 75.0-75.3 / 60.9-61.1 us at 10 / 50 / 90
//! %, 8192^2 0.895-0.896 / 0.792 / 0.614-0.615 -> 0.979 / 0.810 / 0.626-0.627 ms, 256^3
//! volumes 0.328 -> 0.348 ms at 10 % (CUDA; NVIDIA OpenCL alike): the seeds' scattered stores,
//! seven columns per component, cost more than `stats_init`'s coalesced ones and the
//! hand-overs they save.
//!
//! After a labeling into consecutive labels ([`Stats::run_counted`], behind
//! `Labeler::label_on_device_with_stats`), the kernels run before N is read back: they take N
//! from the relabeling's total on the device and fill a table of the capacity the last calls
//! needed (a quarter more than their N, shrunk when N falls far below it); where N outgrew it,
//! they left it alone and run again on a table of N entries. So the device does not wait for
//! the host between labeling and statistics. H100, `ccl bench density/average --stats`, TUF, A/B
//! on one machine, two rounds, against reading N first: 2048^2 0.124-0.128 / 0.124 / 0.103 ->
//! 0.111-0.112 / 0.111-0.113 / 0.093-0.097 ms at 10 / 50 / 90 % on CUDA (NVIDIA OpenCL
//! 0.109-0.111 / 0.108-0.109 / 0.089-0.090 -> 0.097-0.098 / 0.100 / 0.083-0.084), the 20 DIBCO
//! pages 0.058-0.067 -> 0.054, 256^3 volumes (6-connectivity) 2-3 % faster, 8192^2 within 2 %.
//!
//! Also measured and dropped (same A/B, 8192^2 and 2048^2 at 5 / 10 / 30 / 50 / 90 %, the pages):
//! a component of one pixel whose 8 neighbours in the group's staged rows do not have its
//! label written with plain stores instead of atomics (the statistics phase 2-4 % faster,
//! 8192^2 0.526 -> 0.515 ms at 10 %, 0.151-0.155 -> 0.146-0.148 at 90 %: under 1 % of TUF +
//! stats, for eight more neighbour reads per run of one pixel); a full table searched at the
//! label's own slot only (3-5 % slower at 10 and 30 %: fewer hand-overs found their label);
//! and with it a table of 128 slots (2-3 % faster at 30 %, 2 % slower at 10 %). At 10-30 %
//! the statistics phase (0.5-0.76 ms) is the per-component entries: most work-groups meet
//! several hundred components, far more than their table holds.
//!
//! Tried on the H100 and dropped: TUF's last pass (`tuf_compress_ranked_2d`) and the statistics
//! as one kernel, behind a `label_on_device_with_stats` call: each work-item ranked 8 quads of
//! the scratch forest (one find per run of equal labels in a quad), wrote them out and staged
//! them for the segment walk. `ccl bench density/average --stats`, A/B on one H100, two rounds,
//! CUDA: 8192^2 1.128-1.130 / 0.964-0.991 / 0.786-0.801 -> 1.046-1.055 / 0.987-0.988 /
//! 0.765-0.781 ms at 10 / 50 / 90 %, but 2048^2 0.113-0.125 / 0.111-0.125 / 0.095-0.101 ->
//! 0.124-0.128 / 0.121 / 0.102-0.103, 256^3 volumes (6-connectivity) 0.427-0.445 /
//! 0.372-0.384 / 0.303-0.310 -> 0.440-0.447 / 0.396-0.403 / 0.315-0.316, the DIBCO pages
//! unchanged; NVIDIA OpenCL alike. The fused kernel took as long as the two it replaced (8192^2
//! at 50 %: 0.41 ms): every work-item waits at the staging barrier for its group's slowest
//! finds, and the walk cannot start before them.
//! Also dropped: the relabeling's final pass inside `stats_accumulate` (raw
//! labels made consecutive as they are staged, and written back: one read of the labels
//! fewer). `ccl bench density --stats`, 8192^2, CUDA, A/B on one machine, two rounds: TUF+stats
//! 1.27 / 1.15-1.16 / 0.97 -> 1.24-1.25 / 1.13-1.15 / 0.92 ms at 10 / 50 / 90 %, BKE_IC+stats
//! 1.82-1.83 / 1.97 -> 1.88 / 1.99-2.01 at 10 / 50 % (the fused kernel takes 128 registers);
//! `stats_accumulate` waits on its hand-overs, not on reading the labels, so the read saved
//! hardly shows.
//!
//! Also measured and dropped (2026-11-28, one H200, CUDA, a kernel variant through
//! `CCL_KERNEL_DIR`, timing only, base and variant alternated twice, `ccl bench density --stats`
//! minimum of 30 runs, mean of 2 images): a component's box as 4 adjacent words and its two sums
//! side by side (3 sectors a component instead of 7), in the hope that the scattered entries of
//! sparse images would cost less. Slower: TUF + stats at 2048^2 and 10 / 30 / 50 / 90 %
//! 59.4-59.5 / 83.8-84.1 / 71.9-72.2 / 57.4-57.7 -> 67.2-67.5 / 89.8-90.1 / 72.3-72.7 /
//! 57.2-57.4 us, 8192^2 and 10 / 50 % 0.780-0.781 / 0.777-0.781 -> 0.865-0.867 / 0.842-0.845
//! ms. Neighbouring work-items hand over neighbouring labels, whose entries share a sector in
//! each column of the kept layout (a column per field), so a warp's atomics on them combine;
//! interleaved, each component's four atomics meet on one sector instead.
//!
//! Also measured and dropped (2026-11-29, one H200): statistics by owners, after a relabeling.
//! Its rank entries mark each component's first pixel, so the work-group whose span holds that
//! pixel owns the component, and the labels of a span row's first pixels are consecutive: a
//! table of 512 owned slots in local memory, addressed by label with no search, whose entries
//! the owner wrote with plain stores (no `stats_init`, no global atomics for them); the parts
//! of components owned elsewhere went through a hashed table to a per-group list that a second
//! kernel added with atomics, and a span with more owned components or a full hashed table was
//! walked again by it. Exact on POCL (CUDA's one fault, work-groups of a folded grid past the
//! last row writing past the list, did not touch the timed images). A/B in one call, two
//! rounds, TUF + stats, `ccl bench density --stats`: CUDA 8192^2 0.771-0.772 / 0.774 /
//! 0.585-0.586 -> 0.645 / 0.870-0.871 / 0.648-0.649 ms at 10 / 50 / 90 %; NVIDIA OpenCL 8192^2
//! 0.792-0.795 / 0.785-0.789 / 0.618-0.620 -> 0.672-0.675 / 0.881-0.885 / 0.687-0.689, 2048^2
//! 69-70 / 93-95 / 81 / 66-67 -> 70 / 123-124 / 88-89 / 70-71 us at 10 / 30 / 50 / 90 %.
//! Nsight Compute (CUDA, 2048^2): the two kernels 26.2 + 9.5 us at 10 % against 4.9 + 24.9 for
//! `stats_init` and `stats_accumulate`, 36.1 + 56 at 30 % (most spans walked twice: more
//! components from outside a span than its hashed table holds), 27 + 7 at 50 %; at 8192^2 and
//! 10 % 280 + 40 against 46 + 324 us. Its walk alone, with nothing to hand over, took 17 us at
//! 2048^2 (a table of 31 KiB a group: 7 groups a compute unit, two waves) and 189 us at 8192^2:
//! more than the whole of `stats_accumulate` at 90 %.

use super::launch::launch_after;
use super::scratch::Scratch;
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, Limits, PhaseRecorder, Program};
use crate::{ComponentStats, Phase, Result, Shape};

/// Pixels per work-item of `stats_accumulate` (see the module's notes: 16, with pairs of
/// segments handing a run across their boundary over once).
const SEGMENT: usize = 16;
/// The work-group of `stats_accumulate` where the device allows it: 32 segments along x, 8
/// rows ([`accumulate_group`] fits it to the device).
const GROUP: [usize; 3] = [32, 8, 1];
/// The work-group of the kernels over components or segments (any size works).
const LINE_GROUP: [usize; 3] = [256, 1, 1];

/// The work-group of `stats_accumulate` on a device with `limits`: [`GROUP`], with fewer rows
/// where the device's work-groups are smaller (at least 2: the group's table of [`TABLE`]
/// slots needs as many work-items; a device with fewer is refused by name when the stage is
/// built). `stats_totals` and `stats_background_faces` run in groups of as many work-items.
pub(crate) fn accumulate_group(limits: &Limits) -> [usize; 3] {
    let fitted = limits.fit_group(GROUP);
    if fitted[0] == GROUP[0] && fitted[1] >= TABLE / GROUP[0] {
        fitted
    } else {
        [GROUP[0], TABLE / GROUP[0], 1]
    }
}

/// The work-group of the kernels over components or segments on a device with `limits`.
fn line_group(limits: &Limits) -> [usize; 3] {
    limits.fit_group(LINE_GROUP)
}
/// Slots of `stats_accumulate`'s table in local memory (a power of two).
const TABLE: usize = 64;
/// Slots a hand-over tries before it goes to the global entries.
const PROBES: usize = 4;

/// The compile-time defines of `kernels/stats.kernel`; with `float64`, its kernels of OpenCV's
/// format too (double precision: a separate build, so that devices without it keep the rest).
/// `stats_accumulate`'s work-group is [`accumulate_group`] of `limits`.
pub(crate) fn defines(float64: bool, limits: &Limits) -> Vec<Define> {
    let group = accumulate_group(limits);
    vec![
        Define::flag("FLOAT64", float64),
        Define::int("SEGMENT", SEGMENT as i64),
        Define::int("GROUP_W", group[0] as i64),
        Define::int("GROUP_H", group[1] as i64),
        Define::int("TABLE", TABLE as i64),
        Define::int("PROBES", PROBES as i64),
        Define::flag("INT64_ATOMICS", true),
    ]
}

/// Bytes of the statistics table of `n` components of an array of `shape`: areas (u32), boxes
/// (u32: min x, min y, max x, max y, and min z, max z for volumes), coordinate sums (u64: x, y,
/// and z for volumes), `n` entries per column (see `kernels/stats.kernel`).
pub(crate) fn table_bytes(shape: Shape, n: u32) -> [usize; 3] {
    let (n, axes) = (n as usize, if shape.depth > 1 { 3 } else { 2 });
    [4 * n, 4 * 2 * axes * n, 8 * axes * n]
}

/// Columns of OpenCV's `stats` for an array of `dims` dimensions (left, top, width, height,
/// area; left, top, front, width, height, depth, area).
pub(crate) fn opencv_columns(dims: u8) -> usize {
    2 * usize::from(dims) + 1
}

/// The kernels that build OpenCV's tables on the device (`kernels/stats.kernel`, FLOAT64).
pub(crate) struct OpenCv {
    totals: Kernel,
    faces: Kernel,
    background: Kernel,
    format: Kernel,
    /// The totals, face flags and background box (slots 0, 1, 2), kept between calls.
    scratch: Scratch,
    /// The work-groups of `stats_totals` and `stats_background_faces` ([`accumulate_group`],
    /// as built) and of the others ([`line_group`]).
    groups: [[usize; 3]; 2],
}

impl OpenCv {
    pub(crate) fn build(gpu: &dyn Gpu, program: &Program) -> Result<Self> {
        let [totals, faces, background, format] = super::launch::kernels(
            gpu,
            program,
            ["stats_totals", "stats_background_faces", "stats_background_box", "stats_opencv"],
        )?;
        let items = accumulate_group(gpu.limits()).iter().product::<usize>();
        let groups = [[items, 1, 1], line_group(gpu.limits())];
        super::launch::check_kernels(gpu, &[&totals, &faces], groups[0])?;
        super::launch::check_kernels(gpu, &[&background, &format], groups[1])?;
        Ok(Self { totals, faces, background, format, scratch: Scratch::default(), groups })
    }

    /// OpenCV's tables for consecutive `labels` of `shape` (`dims` dimensions: 3 for a volume,
    /// even of one slice) and the table of their `n` components (`area`, `boxes`, `sums`, as
    /// [`Stats::compute`] writes it): `stats` ((n + 1) x [`opencv_columns`] i64) and
    /// `centroids` ((n + 1) x dims f64), row 0 the background.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn compute(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        dims: u8,
        n: u32,
        [area, boxes, sums]: [&Buffer; 3],
        [stats, centroids]: [&Buffer; 2],
    ) -> Result<()> {
        let mut totals = self.scratch.take(gpu, 0, 4 * 8)?;
        let faces = self.scratch.take(gpu, 1, 6 * 4)?;
        let mut bg_box = self.scratch.take(gpu, 2, 6 * 4)?;
        gpu.zero(&mut totals)?;
        let empty: Vec<u8> = [u32::MAX, 0].repeat(3).iter().flat_map(|v| v.to_ne_bytes()).collect();
        gpu.write(&mut bg_box, &empty)?;
        let volume = Arg::U32(u32::from(shape.depth > 1));
        let sizes = [shape.width, shape.height, shape.depth].map(|s| Arg::U32(s as u32));
        let (l, axes) = (Arg::Buffer(labels), Arg::U32(u32::from(dims)));
        if n > 0 {
            let range = LaunchRange::over([n as usize, 1, 1], self.groups[0]);
            let args = [Arg::Buffer(area), Arg::Buffer(sums), Arg::U32(n), volume, Arg::Buffer(&totals)];
            gpu.launch(&mut self.totals, &range, &args)?;
        }
        let one_per_face = LaunchRange::over([2 * usize::from(dims) * self.groups[0][0], 1, 1], self.groups[0]);
        let args = [l, sizes[0], sizes[1], sizes[2], Arg::Buffer(&faces)];
        gpu.launch(&mut self.faces, &one_per_face, &args)?;
        let segments = LaunchRange::over([shape.len().div_ceil(SEGMENT), 1, 1], self.groups[1]);
        let args = [l, sizes[0], sizes[1], sizes[2], axes, Arg::Buffer(&faces), Arg::Buffer(&bg_box)];
        gpu.launch(&mut self.background, &segments, &args)?;
        let rows = LaunchRange::over([n as usize + 1, 1, 1], self.groups[1]);
        let args = [
            Arg::Buffer(area),
            Arg::Buffer(boxes),
            Arg::Buffer(sums),
            Arg::U32(n),
            volume,
            sizes[0],
            sizes[1],
            sizes[2],
            axes,
            Arg::Buffer(&totals),
            Arg::Buffer(&faces),
            Arg::Buffer(&bg_box),
            Arg::Buffer(stats),
            Arg::Buffer(centroids),
        ];
        gpu.launch(&mut self.format, &rows, &args)?;
        self.scratch.put(0, totals);
        self.scratch.put(1, faces);
        self.scratch.put(2, bg_box);
        Ok(())
    }
}

/// The compiled statistics kernels.
pub(crate) struct Stats {
    init: Kernel,
    accumulate: Kernel,
    remap: Kernel,
    /// The table's three arrays (slots 0, 1, 2), kept between calls.
    scratch: Scratch,
    /// Entries of the table that [`Stats::run_counted`] allocates before N is known: the last
    /// N it met, with room to grow (0 before the first call).
    capacity: u32,
    /// The work-groups of `stats_accumulate` ([`accumulate_group`], as built) and of the
    /// others ([`line_group`]).
    groups: [[usize; 3]; 2],
}

/// A statistics table in a [`Stats`] stage's scratch buffers: room for `capacity` components of
/// an array of `shape` (area, box and sums arrays, see `kernels/stats.kernel`).
pub(crate) struct Table {
    arrays: [Buffer; 3],
    shape: Shape,
    capacity: u32,
}

impl Table {
    fn arrays(&self) -> [&Buffer; 3] {
        [&self.arrays[0], &self.arrays[1], &self.arrays[2]]
    }
}

/// Entries of the first table that [`Stats::run_counted`] allocates for an array of `pixels`
/// pixels: as many components as it can hold (one per two pixels: two components of a row are
/// a pixel apart), at most 2^16 (2.4 MB).
fn first_capacity(pixels: usize) -> u32 {
    pixels.div_ceil(2).clamp(1, 1 << 16) as u32
}

/// The fewest entries [`Stats::run_counted`] keeps room for.
const MIN_CAPACITY: u32 = 1024;

impl Stats {
    pub(crate) fn build(gpu: &dyn Gpu, program: &Program) -> Result<Self> {
        let [init, accumulate, remap] =
            super::launch::kernels(gpu, program, ["stats_init", "stats_accumulate", "stats_remap"])?;
        let groups = [accumulate_group(gpu.limits()), line_group(gpu.limits())];
        super::launch::check_kernels(gpu, &[&init, &remap], groups[1])?;
        super::launch::check_group(gpu, &accumulate, groups[0])?;
        Ok(Self { init, accumulate, remap, scratch: Scratch::default(), capacity: 0, groups })
    }

    /// The statistics of the `n` components of consecutive `labels` of `shape`. Ends
    /// [`Phase::Allocation`], [`Phase::ComponentStats`] (the kernels) and [`Phase::Download`]
    /// (the read-back of the table) on `recorder`; the table's buffers stay for the next call.
    pub(crate) fn run(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        n: u32,
        recorder: &mut PhaseRecorder,
    ) -> Result<ComponentStats> {
        if n == 0 {
            return Ok(ComponentStats::default());
        }
        let table = self.take_table(gpu, shape, n)?;
        recorder.end(Phase::Allocation)?;
        self.compute(gpu, labels, shape, n, table.arrays())?;
        recorder.end(Phase::ComponentStats)?;
        self.read(gpu, table, n, recorder)
    }

    /// The statistics of consecutive `labels` of `shape` whose count N the device holds in
    /// `count` (the relabeling's total), without waiting for it first: the kernels run on a
    /// table of the capacity the last calls needed, then `read_count` reads N (which waits for
    /// them); where the table was too small for N, they run again on one of N entries. Ends
    /// [`Phase::Allocation`] (where the recorder marks every phase; else the kernels may start
    /// while the labeling's last one ends, and are timed with it), [`Phase::ComponentStats`]
    /// (the kernels' device time) and [`Phase::Download`] (N's read-back, which waits for the
    /// device, and the table's); a second run on a larger table adds a [`Phase::ComponentStats`]
    /// after N's read-back. Returns N and the statistics.
    pub(crate) fn run_counted(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        count: &Buffer,
        read_count: impl FnOnce() -> Result<u32>,
        recorder: &mut PhaseRecorder,
    ) -> Result<(u32, ComponentStats)> {
        if self.capacity == 0 {
            self.capacity = first_capacity(shape.len());
        }
        let table = self.take_table(gpu, shape, self.capacity)?;
        // The table usually comes from the scratch of the last call, with no command to time: by
        // default its kernels may then start while the labeling's last kernel ends.
        let overlap = recorder.end_or_merge(Phase::Allocation)?;
        self.launch(gpu, (labels, shape), table.capacity, Some(count), table.arrays(), overlap)?;
        // Marked before N is read: the host's round trip is a transfer, not the kernels' time.
        recorder.end(Phase::ComponentStats)?;
        let n = read_count()?;
        // The next calls' capacity: N with a quarter more, when N outgrew the table or is far
        // below it (a small array after a large one); else as it was.
        let wanted = n.saturating_add(n / 4).max(MIN_CAPACITY);
        if n > table.capacity || table.capacity / 8 > wanted {
            self.capacity = wanted;
        }
        let table = if n > table.capacity {
            // The kernels left the table alone: again, on a table of N entries.
            recorder.end(Phase::Download)?;
            self.put_back(table);
            let table = self.take_table(gpu, shape, n)?;
            self.compute(gpu, labels, shape, n, table.arrays())?;
            recorder.end(Phase::ComponentStats)?;
            table
        } else {
            table
        };
        Ok((n, self.read(gpu, table, n, recorder)?))
    }

    /// A table for `capacity` components of an array of `shape`, from this stage's scratch.
    fn take_table(&mut self, gpu: &dyn Gpu, shape: Shape, capacity: u32) -> Result<Table> {
        let [area_bytes, box_bytes, sums_bytes] = table_bytes(shape, capacity);
        let arrays = [
            self.scratch.take(gpu, 0, area_bytes)?,
            self.scratch.take(gpu, 1, box_bytes)?,
            self.scratch.take(gpu, 2, sums_bytes)?,
        ];
        Ok(Table { arrays, shape, capacity })
    }

    /// Keeps `table`'s buffers for the next call.
    fn put_back(&mut self, table: Table) {
        for (slot, buffer) in table.arrays.into_iter().enumerate() {
            self.scratch.put(slot, buffer);
        }
    }

    /// Reads the first `n` entries of `table` (entries per column: `n`, as the kernels laid them
    /// out) into [`ComponentStats`], ending [`Phase::Download`] (the table leaves the device as
    /// labels do: a transfer, timed apart), and keeps its buffers for the next call.
    fn read(&mut self, gpu: &dyn Gpu, table: Table, n: u32, recorder: &mut PhaseRecorder) -> Result<ComponentStats> {
        let [area_bytes, box_bytes, sums_bytes] = table_bytes(table.shape, n);
        let mut area_host = vec![0u32; area_bytes / 4];
        let mut box_host = vec![0u32; box_bytes / 4];
        let mut sums_host = vec![0u64; sums_bytes / 8];
        let [area, boxes, sums] = table.arrays();
        gpu.read(area, bytemuck::cast_slice_mut(&mut area_host))?;
        gpu.read(boxes, bytemuck::cast_slice_mut(&mut box_host))?;
        gpu.read(sums, bytemuck::cast_slice_mut(&mut sums_host))?;
        recorder.end(Phase::Download)?;
        self.put_back(table);
        Ok(ComponentStats::from_arrays(n as usize, &area_host, &box_host, &sums_host))
    }

    /// The table of the `n` components of consecutive `labels` of `shape` in this stage's
    /// scratch buffers (area, boxes, sums), handed to `then` (which launches what reads it).
    pub(crate) fn with_table<R>(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        n: u32,
        then: impl FnOnce([&Buffer; 3]) -> Result<R>,
    ) -> Result<R> {
        let table = self.take_table(gpu, shape, n)?;
        let result = self.compute(gpu, labels, shape, n, table.arrays()).and_then(|()| then(table.arrays()));
        self.put_back(table);
        result
    }

    /// Launches the statistics kernels: the table of the `n` components of consecutive `labels`
    /// of `shape` into `area`, `boxes` and `sums` (at least [`table_bytes`] each). Labels
    /// above `n` are skipped, so wrong labels cannot write outside the table.
    pub(crate) fn compute(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        n: u32,
        arrays: [&Buffer; 3],
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.launch(gpu, (labels, shape), n, None, arrays, false)
    }

    /// Launches the statistics kernels on a table of `capacity` entries: for `capacity`
    /// components, or with `count` for as many as it holds on the device, if they fit (the
    /// kernels' `table_entries`). With `overlap`, each may start while the kernel before it ends.
    fn launch(
        &mut self,
        gpu: &dyn Gpu,
        (labels, shape): (&Buffer, Shape),
        capacity: u32,
        count: Option<&Buffer>,
        [area, boxes, sums]: [&Buffer; 3],
        overlap: bool,
    ) -> Result<()> {
        let (area, boxes, sums) = (Arg::Buffer(area), Arg::Buffer(boxes), Arg::Buffer(sums));
        // Without a count the kernels take `capacity` and never read `count` (any buffer).
        let (count, from_count) = match count {
            Some(count) => (Arg::Buffer(count), Arg::U32(1)),
            None => (area, Arg::U32(0)),
        };
        let capacity_arg = Arg::U32(capacity);
        let per_component = LaunchRange::over([capacity as usize, 1, 1], self.groups[1]);
        let volume = Arg::U32(u32::from(shape.depth > 1));
        let init_args = [area, boxes, sums, capacity_arg, volume, count, from_count];
        launch_after(gpu, overlap, &mut self.init, &per_component, &init_args)?;
        let rows = shape.height * shape.depth;
        let segments = LaunchRange::over([shape.width.div_ceil(SEGMENT), rows, 1], self.groups[0]);
        let sizes = [shape.width, shape.height, rows].map(|s| Arg::U32(s as u32));
        let args =
            [Arg::Buffer(labels), area, boxes, sums, sizes[0], sizes[1], sizes[2], capacity_arg, count, from_count];
        launch_after(gpu, overlap, &mut self.accumulate, &segments, &args)?;
        Ok(())
    }

    /// Keeps the components of consecutive `labels` (`n` pixels) whose entry of `keep` is set,
    /// renumbered 1..M in label order, and removes the others (label 0); returns M. Ends
    /// [`Phase::Allocation`], [`Phase::ComponentStats`] and [`Phase::Deallocation`].
    pub(crate) fn keep(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        n: usize,
        keep: &[bool],
        recorder: &mut PhaseRecorder,
    ) -> Result<u32> {
        let (map, kept) = crate::stats::keep_map(keep);
        if map.is_empty() {
            return Ok(0);
        }
        let mut map_buf = gpu.alloc(map.len() * 4)?;
        recorder.end(Phase::Allocation)?;
        gpu.write(&mut map_buf, bytemuck::cast_slice(&map))?;
        let range = LaunchRange::over([n.max(1), 1, 1], self.groups[1]);
        gpu.launch(&mut self.remap, &range, &[Arg::Buffer(labels), Arg::Buffer(&map_buf), Arg::U32(n as u32)])?;
        recorder.end(Phase::ComponentStats)?;
        drop(map_buf);
        recorder.end(Phase::Deallocation)?;
        Ok(kept)
    }
}
