//! Component statistics on the device (issue 13): from consecutive labels 1..N, each
//! component's area, bounding box and coordinate sums, read back into
//! [`crate::ComponentStats`]. Kernels: `kernels/stats.kernel`.
//!
//! 1. `stats_init`: one work-item per component sets its entries (empty box, zero sums).
//! 2. `stats_accumulate`: one work-item per SEGMENT (16) pixels of a row, in pairs of segments
//!    that hand a run crossing their boundary over once, hands each run of one component (read
//!    branch-free from two bit masks: foreground, run starts) to its work-group's table in local
//!    memory, whose entries are added to the global ones with atomics once per group. The table
//!    packs each slot's count with its sum of row offsets, reads a slot's label before trying to
//!    claim it, and skips the atomic minimum, maximum and OR where the values read already cover
//!    the run. Volumes are walked as images of `height * depth` rows (row r is y = r % height of
//!    slice r / height), so one 2D launch (folded into a CUDA grid when tall) covers any shape.
//! 3. OpenCV's format (`connectedComponentsWithStats`: row 0 the background, then a row per
//!    component of i64 stats and f64 centroids), on request ([`OpenCv`], a build with double
//!    precision): the table's totals, the background's box from the array's faces (from every
//!    pixel only where a face is all foreground), then one work-item per row.
//!
//! After a labeling into consecutive labels ([`Stats::run_counted`]), the kernels run before N
//! is read back: they take N from the relabeling's total on the device and fill a table of the
//! capacity the last calls needed (a quarter more than their N, shrunk when N falls far below
//! it); where N outgrew it, they left it alone and run again on a table of N entries. So the
//! device does not wait for the host between labeling and statistics.
//!
//! Each of these choices was measured against its alternatives (A/B on one machine, with the
//! variants tried and dropped): docs/performance-history.md, "The statistics' design, step by
//! step".

use super::launch::launch_after;
use super::scratch::Scratch;
use super::StageInfo;
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{ComponentStats, Phase, Result, Shape};

/// `kernels/stats.kernel`, after the bit helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("stats": COMMON, BITS);

/// The statistics' registry entry.
pub(crate) const STAGE: StageInfo =
    StageInfo::new("Component statistics from consecutive labels: area, bounding box, coordinate sums", KERNEL);

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
