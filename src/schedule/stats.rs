//! Component statistics on the device (issue 13): from consecutive labels 1..N, each
//! component's area, bounding box and coordinate sums, read back into
//! [`crate::ComponentStats`]. Kernels: `kernels/stats.kernel`.
//!
//! 1. `stats_init`: one work-item per component sets its entries (empty box, zero sums).
//! 2. `stats_accumulate`: one work-item per SEGMENT pixels of a row hands each run of one
//!    component (read from bit masks of its segment) to its work-group's table in local memory, whose entries are added to the
//!    global ones with atomics once per group. Volumes are walked as images of `height * depth`
//!    rows (row r is y = r % height of slice r / height), so one 2D launch (folded into a CUDA
//!    grid when tall) covers any shape.
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
//! Tried on the H100 and dropped: TUF's last pass (`tuf_compress_ranked`) and the statistics
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

use super::scratch::Scratch;
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, PhaseRecorder, Program};
use crate::{ComponentStats, Phase, Result, Shape};

/// Pixels per work-item of `stats_accumulate`.
const SEGMENT: usize = 32;
/// The work-group of `stats_accumulate`: a warp of segments along x, 8 rows.
const GROUP: [usize; 3] = [32, 8, 1];
/// Slots of `stats_accumulate`'s table in local memory (a power of two).
const TABLE: usize = 64;
/// Slots a hand-over tries before it goes to the global entries.
const PROBES: usize = 8;

/// The compile-time defines of `kernels/stats.kernel`; with `float64`, its kernels of OpenCV's
/// format too (double precision: a separate build, so that devices without it keep the rest).
pub(crate) fn defines(float64: bool) -> Vec<Define> {
    vec![
        Define::flag("FLOAT64", float64),
        Define::int("SEGMENT", SEGMENT as i64),
        Define::int("GROUP_W", GROUP[0] as i64),
        Define::int("GROUP_H", GROUP[1] as i64),
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
}

impl OpenCv {
    pub(crate) fn build(gpu: &dyn Gpu, program: &Program) -> Result<Self> {
        let [totals, faces, background, format] = super::kernels(
            gpu,
            program,
            ["stats_totals", "stats_background_faces", "stats_background_box", "stats_opencv"],
        )?;
        Ok(Self { totals, faces, background, format, scratch: Scratch::default() })
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
            let range = LaunchRange::over([n as usize, 1, 1], [GROUP[0] * GROUP[1], 1, 1]);
            let args = [Arg::Buffer(area), Arg::Buffer(sums), Arg::U32(n), volume, Arg::Buffer(&totals)];
            gpu.launch(&mut self.totals, &range, &args)?;
        }
        let one_per_face = LaunchRange::over([2 * usize::from(dims) * GROUP[0] * GROUP[1], 1, 1], [256, 1, 1]);
        let args = [l, sizes[0], sizes[1], sizes[2], Arg::Buffer(&faces)];
        gpu.launch(&mut self.faces, &one_per_face, &args)?;
        let segments = LaunchRange::over([shape.len().div_ceil(SEGMENT), 1, 1], [256, 1, 1]);
        let args = [l, sizes[0], sizes[1], sizes[2], axes, Arg::Buffer(&faces), Arg::Buffer(&bg_box)];
        gpu.launch(&mut self.background, &segments, &args)?;
        let rows = LaunchRange::over([n as usize + 1, 1, 1], [256, 1, 1]);
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
}

impl Stats {
    pub(crate) fn build(gpu: &dyn Gpu, program: &Program) -> Result<Self> {
        let [init, accumulate, remap] =
            super::kernels(gpu, program, ["stats_init", "stats_accumulate", "stats_remap"])?;
        Ok(Self { init, accumulate, remap, scratch: Scratch::default() })
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
        let count = n as usize;
        if count == 0 {
            return Ok(ComponentStats::default());
        }
        let [area_bytes, box_bytes, sums_bytes] = table_bytes(shape, n);
        let area_buf = self.scratch.take(gpu, 0, area_bytes)?;
        let box_buf = self.scratch.take(gpu, 1, box_bytes)?;
        let sums_buf = self.scratch.take(gpu, 2, sums_bytes)?;
        recorder.end(Phase::Allocation)?;
        self.compute(gpu, labels, shape, n, [&area_buf, &box_buf, &sums_buf])?;
        recorder.end(Phase::ComponentStats)?;
        // The table leaves the device like labels do: a transfer, timed apart.
        let mut area_host = vec![0u32; area_bytes / 4];
        let mut box_host = vec![0u32; box_bytes / 4];
        let mut sums_host = vec![0u64; sums_bytes / 8];
        gpu.read(&area_buf, bytemuck::cast_slice_mut(&mut area_host))?;
        gpu.read(&box_buf, bytemuck::cast_slice_mut(&mut box_host))?;
        gpu.read(&sums_buf, bytemuck::cast_slice_mut(&mut sums_host))?;
        recorder.end(Phase::Download)?;
        for (slot, buffer) in [area_buf, box_buf, sums_buf].into_iter().enumerate() {
            self.scratch.put(slot, buffer);
        }
        Ok(ComponentStats::from_arrays(count, &area_host, &box_host, &sums_host))
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
        let [area_bytes, box_bytes, sums_bytes] = table_bytes(shape, n);
        let tables = [
            self.scratch.take(gpu, 0, area_bytes)?,
            self.scratch.take(gpu, 1, box_bytes)?,
            self.scratch.take(gpu, 2, sums_bytes)?,
        ];
        let table = [&tables[0], &tables[1], &tables[2]];
        let result = self.compute(gpu, labels, shape, n, table).and_then(|()| then(table));
        for (slot, buffer) in tables.into_iter().enumerate() {
            self.scratch.put(slot, buffer);
        }
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
        [area, boxes, sums]: [&Buffer; 3],
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let (area, boxes, sums) = (Arg::Buffer(area), Arg::Buffer(boxes), Arg::Buffer(sums));
        let per_component = LaunchRange::over([n as usize, 1, 1], [256, 1, 1]);
        let volume = Arg::U32(u32::from(shape.depth > 1));
        gpu.launch(&mut self.init, &per_component, &[area, boxes, sums, Arg::U32(n), volume])?;
        let rows = shape.height * shape.depth;
        let segments = LaunchRange::over([shape.width.div_ceil(SEGMENT), rows, 1], GROUP);
        let sizes = [shape.width, shape.height, rows].map(|s| Arg::U32(s as u32));
        let args = [Arg::Buffer(labels), area, boxes, sums, sizes[0], sizes[1], sizes[2], Arg::U32(n)];
        gpu.launch(&mut self.accumulate, &segments, &args)?;
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
        let range = LaunchRange::over([n.max(1), 1, 1], [256, 1, 1]);
        gpu.launch(&mut self.remap, &range, &[Arg::Buffer(labels), Arg::Buffer(&map_buf), Arg::U32(n as u32)])?;
        recorder.end(Phase::ComponentStats)?;
        drop(map_buf);
        recorder.end(Phase::Deallocation)?;
        Ok(kept)
    }
}
