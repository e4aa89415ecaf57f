//! Consecutive relabeling on the device: raw labels of either convention become 1..N in raster
//! order of each component's first pixel, and N is counted, without the labels leaving the
//! device (the host's `LabelImage::into_consecutive`, done where the labels are). Kernels:
//! `kernels/relabel.kernel`.
//!
//! 1. Block conventions (BE, BUF, BKE) only: each component's first pixel, by an atomic
//!    reduction over the pixels within two lines of its root, into a table indexed by root / 2.
//! 2. Rank: pixels in spans of RANK_SPAN; the span's first pixels are marked in a bitmask in
//!    local memory, each span gets its count, and each word of 32 pixels its marks and the count
//!    of marks before it in the span (8 bytes per 32 pixels, written whole).
//! 3. Exclusive prefix sum of the counts, level by level (SPAN per level), then back down; the
//!    top level's total is N.
//! 4. Final: every pixel takes its first pixel's span offset + rank in the span (from its word's
//!    entry) + 1.
//!
//! Two full passes over the labels (three for block conventions) and one write.
//!
//! Where the device cannot start a kernel while the one before it ends
//! ([`Gpu::overlaps_launches`] false: OpenCL), step 3 of a single level (up to 8 Mpx) is done by
//! the rank pass's last work-group to finish (a ticket counter, a fence, atomic reads), one
//! launch fewer ([`scan_groups`] has the figures). First tried before CUDA's kernels started
//! early, and dropped then for both backends: `ccl bench average/density --stats`, A/B on one
//! H100, two rounds, on NVIDIA's OpenCL the DIBCO pages' TUF + stats 0.081-0.093 -> 0.065-0.069
//! ms, but on CUDA the pages within noise (0.074-0.081 -> 0.075-0.077) and 2048^2 slower at 50
//! and 90 % (0.126-0.128 / 0.111 -> 0.137 / 0.119): the last group's scan runs after every
//! other group, where CUDA had already queued the scan kernel's launch. CUDA (compute
//! capability 9.0 on) keeps the scan kernel, which starts early there.

use super::launch::launch_after;
use super::launch::LABEL_BYTES;
use super::scratch::Scratch;
use super::StageInfo;
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, Limits, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::{Phase, RawLabels, Result, Shape};

/// `kernels/relabel.kernel`, after the rank helpers.
pub(crate) const KERNEL: KernelFile = kernel_file!("relabel": COMMON, RANKS);

/// The relabeling's registry entry.
pub(crate) const STAGE: StageInfo =
    StageInfo::new("Consecutive relabeling and the label count on the device (after any algorithm)", KERNEL);

/// Work-items per group on a device that takes them (a power of two; fewer where the device's
/// work-groups are smaller, [`Geometry::of`]).
const GROUP_SIZE: usize = 256;
/// The fewest work-items per group the kernels take: a rank span's words (one per work-item)
/// are scanned in runs of 32.
const MIN_GROUP_SIZE: usize = 32;
/// Elements per work-item in the scan kernels.
const ITEMS: usize = 4;
/// Pixels per work-item of the rank kernel (at most 32: a bit each in a word).
const RANK_ITEMS: usize = 32;
/// Pixels per work-item of the first-pixel and final kernels (their loads are issued together).
const PASS_ITEMS: usize = 8;

/// The relabeling's work-group size on one device, and the spans it sizes: a scan span (SPAN,
/// ITEMS per work-item), a rank span (RANK_SPAN, RANK_ITEMS per work-item) and a pass span
/// (PASS_SPAN, PASS_ITEMS per work-item).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    group: usize,
}

impl Geometry {
    /// GROUP_SIZE work-items per group, or the largest power of two a device with `limits`
    /// takes (at least MIN_GROUP_SIZE: a device of smaller work-groups is refused by
    /// [`Relabel::build`], naming its limit).
    pub(crate) fn of(limits: &Limits) -> Self {
        let most = GROUP_SIZE.min(limits.max_group_size).min(limits.max_group_sizes[0]);
        let group = if most >= MIN_GROUP_SIZE { 1 << most.ilog2() } else { GROUP_SIZE };
        Self { group }
    }

    fn span(self) -> usize {
        self.group * ITEMS
    }

    fn rank_span(self) -> usize {
        self.group * RANK_ITEMS
    }

    fn pass_span(self) -> usize {
        self.group * PASS_ITEMS
    }

    /// log2 of a rank span (the `rank_shift` of the kernels that read the rank tables).
    pub(crate) fn rank_shift(self) -> u32 {
        self.rank_span().trailing_zeros()
    }

    /// One work-item per element of `n`.
    fn over(self, n: usize) -> LaunchRange {
        LaunchRange::over([n, 1, 1], [self.group, 1, 1])
    }

    /// One work-group per `span` elements of `n`.
    fn over_spans(self, n: usize, span: usize) -> LaunchRange {
        LaunchRange { global: [n.div_ceil(span).max(1) * self.group, 1, 1], local: [self.group, 1, 1] }
    }
}

/// The rank kernels' `scan_groups`: their group count where the counts fit one scan span (one
/// level) and the device cannot start the scan kernel while they end, so that the last group to
/// finish scans them (no scan launch), else 0. H100, `ccl bench density/average --stats`, A/B,
/// two rounds: on NVIDIA's OpenCL TUF+stats at 2048^2 and 10 / 50 / 90 % 82.3-83.7 / 86.3-88.6 /
/// 71.5-72.4 -> 80.0-80.5 / 84.9-85.4 / 69.2-69.5 us (BKE_IC+stats 1.5-3 us less); on CUDA,
/// whose scan kernel starts early (`launch_overlapping`), 0.3-1.3 us slower, so CUDA keeps it.
fn scan_groups(gpu: &dyn Gpu, tables: &RankTables) -> u32 {
    if tables.lengths.len() == 1 && !gpu.overlaps_launches() {
        tables.lengths[0] as u32
    } else {
        0
    }
}

/// The compile-time defines of `kernels/relabel.kernel` on a device with `limits`.
pub(crate) fn defines(limits: &Limits) -> Vec<Define> {
    vec![
        Define::int("GROUP_SIZE", Geometry::of(limits).group as i64),
        Define::int("ITEMS", ITEMS as i64),
        Define::int("RANK_ITEMS", RANK_ITEMS as i64),
        Define::int("PASS_ITEMS", PASS_ITEMS as i64),
    ]
}

/// The compiled relabeling kernels.
pub(crate) struct Relabel {
    first_pixels: Kernel,
    rank: Kernel,
    rank_marks: Kernel,
    scan: Kernel,
    add: Kernel,
    finish: Kernel,
    /// The work-group size and spans (those of the defines the program was built with).
    geometry: Geometry,
    /// Rank words, first pixels, the total and the count levels, kept between calls.
    scratch: Scratch,
    /// The rank kernels' ticket counter (one `u32`, zero between launches: the last group puts
    /// it back), made at the first ranking.
    tickets: Option<Buffer>,
}

/// Slots of [`Relabel`]'s scratch: rank words, first pixels, the total, then the count levels.
const RANKS: usize = 0;
const FIRSTS: usize = 1;
const TOTAL: usize = 2;
const LEVELS: usize = 3;

impl Relabel {
    /// log2 of the pixels per span of its rank tables (a span's offset is `offsets[first >>
    /// shift]`).
    pub(crate) fn rank_shift(&self) -> u32 {
        self.geometry.rank_shift()
    }

    pub(crate) fn build(gpu: &dyn Gpu, program: &Program) -> Result<Self> {
        let [first_pixels, rank, rank_marks, scan, add, finish] = super::launch::kernels(
            gpu,
            program,
            [
                "relabel_first_pixels",
                "relabel_rank_labels",
                "relabel_rank_marks",
                "scan_spans",
                "scan_add",
                "relabel_final",
            ],
        )?;
        // Every kernel runs in groups of the geometry's size (the scans and the rank spans are
        // sized by it): a device that cannot is refused here, naming its limit.
        let geometry = Geometry::of(gpu.limits());
        let group = [geometry.group, 1, 1];
        super::launch::check_kernels(gpu, &[&first_pixels, &rank, &rank_marks, &scan, &add, &finish], group)?;
        let scratch = Scratch::default();
        Ok(Self { first_pixels, rank, rank_marks, scan, add, finish, geometry, scratch, tickets: None })
    }

    /// Renumbers the raw labels of an array of `shape` in `labels` (of `convention`)
    /// consecutively, in place, and returns their count. Ends
    /// [`Phase::Allocation`] and [`Phase::Relabel`] on `recorder` (the kernels; the count's
    /// read-back, a transfer that waits for them, is not timed); the scratch buffers stay for
    /// the next call.
    pub(crate) fn run(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<u32> {
        let tables = self.run_ranked(gpu, labels, shape, convention, recorder)?;
        recorder.end(Phase::Relabel)?;
        self.count(gpu, tables)
    }

    /// [`Relabel::run`] without reading the count: the labels are renumbered (once the device
    /// is done) and the returned tables hold N on the device ([`RankTables::total`];
    /// [`Relabel::count`] reads it). Ends [`Phase::Allocation`] only.
    pub(crate) fn run_ranked(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<RankTables> {
        let n = shape.len();
        let mut tables = self.allocate(gpu, n, convention)?;
        recorder.end(Phase::Allocation)?;
        self.build_ranks(gpu, &mut tables, labels, shape, convention, false)?;
        let blocks = Arg::U32(u32::from(convention == RawLabels::FirstBlock));
        let (l, f, m) = (Arg::Buffer(labels), Arg::Buffer(&tables.firsts), Arg::Buffer(&tables.ranks));
        let args = [l, f, m, Arg::Buffer(&tables.levels[0]), Arg::U32(n as u32), blocks];
        gpu.launch(&mut self.finish, &self.geometry.over_spans(n, self.geometry.pass_span()), &args)?;
        Ok(tables)
    }

    /// The rank tables of an array of `n` pixels of `convention`, from this stage's scratch:
    /// [`Relabel::build_ranks`] fills them, [`Relabel::count`] reads N and returns them.
    pub(crate) fn allocate(&mut self, gpu: &dyn Gpu, n: usize, convention: RawLabels) -> Result<RankTables> {
        // A rank word (two u32) per 32 pixels; with block labels, first pixels at roots / 2 (a
        // byte stands in for the table the kernels then never read). Both have an entry 0 even
        // for no pixels: the kernels' lookups for background read it (and drop it) rather than
        // branch.
        let ranks = self.scratch.take(gpu, RANKS, n.div_ceil(32).max(1) * 8)?;
        let blocks = convention == RawLabels::FirstBlock;
        let table = if blocks { n.div_ceil(2).max(1) * LABEL_BYTES } else { 1 };
        let firsts = self.scratch.take(gpu, FIRSTS, table)?;
        // Count levels: each holds one value per span of the level below, down to one span, whose
        // scan gives N.
        let (rank_span, span) = (self.geometry.rank_span(), self.geometry.span());
        let mut lengths = vec![n.div_ceil(rank_span).max(1)];
        while *lengths.last().expect("one level") > span {
            lengths.push(lengths.last().expect("one level").div_ceil(span));
        }
        let levels = lengths
            .iter()
            .enumerate()
            .map(|(k, &len)| self.scratch.take_written(gpu, LEVELS + k, len * 4))
            .collect::<Result<Vec<_>>>()?;
        let total = self.scratch.take(gpu, TOTAL, 4)?;
        Ok(RankTables { n, ranks, firsts, lengths, levels, total })
    }

    /// Steps 1-3 on `labels`, an array of `shape` (first pixels for block conventions, rank,
    /// scans): afterwards `tables` give each component's consecutive label from its first pixel
    /// (ranks.h). With `overlap`, each kernel may start while the one before it ends
    /// ([`launch_after`]; the block conventions' first-pixel pass follows a fill, and does not).
    pub(crate) fn build_ranks(
        &mut self,
        gpu: &dyn Gpu,
        tables: &mut RankTables,
        labels: &Buffer,
        shape: Shape,
        convention: RawLabels,
        overlap: bool,
    ) -> Result<()> {
        let (n, count) = (tables.n, tables.n as u32);
        let blocks = convention == RawLabels::FirstBlock;
        // A block's pixels lie in two consecutive lines: rows of an image, slices of a volume.
        let line = if shape.depth > 1 { shape.width * shape.height } else { shape.width };
        let (l, line) = (Arg::Buffer(labels), Arg::U32(line.max(1) as u32));
        if blocks {
            gpu.zero(&mut tables.firsts)?;
            let args = [l, Arg::Buffer(&tables.firsts), Arg::U32(count), line];
            gpu.launch(&mut self.first_pixels, &self.geometry.over_spans(n, self.geometry.pass_span()), &args)?;
        }
        let (f, m, blocks) = (Arg::Buffer(&tables.firsts), Arg::Buffer(&tables.ranks), Arg::U32(u32::from(blocks)));
        let tickets = self.take_tickets(gpu)?;
        let (scan_groups, total) = (Arg::U32(scan_groups(gpu, tables)), Arg::Buffer(&tables.total));
        let args = [
            l,
            f,
            m,
            Arg::Buffer(&tables.levels[0]),
            Arg::U32(count),
            blocks,
            line,
            total,
            Arg::Buffer(&tickets),
            scan_groups,
        ];
        let ranges = self.geometry.over_spans(n, self.geometry.rank_span());
        let launched = launch_after(gpu, overlap, &mut self.rank, &ranges, &args);
        self.tickets = Some(tickets);
        launched?;
        self.scan_counts(gpu, tables, overlap)
    }

    /// [`Relabel::build_ranks`] from `marks`, a bit per pixel set on each component's first
    /// pixel (bit p % 32 of word p / 32), which the labeling made: the pixels' labels are not
    /// read. `overlap` as there.
    pub(crate) fn build_ranks_from_marks(
        &mut self,
        gpu: &dyn Gpu,
        tables: &mut RankTables,
        marks: &Buffer,
        overlap: bool,
    ) -> Result<()> {
        let n = tables.n;
        let tickets = self.take_tickets(gpu)?;
        let args = [
            Arg::Buffer(marks),
            Arg::Buffer(&tables.ranks),
            Arg::Buffer(&tables.levels[0]),
            Arg::U32(n as u32),
            Arg::Buffer(&tables.total),
            Arg::Buffer(&tickets),
            Arg::U32(scan_groups(gpu, tables)),
        ];
        let ranges = self.geometry.over_spans(n, self.geometry.rank_span());
        let launched = launch_after(gpu, overlap, &mut self.rank_marks, &ranges, &args);
        self.tickets = Some(tickets);
        launched?;
        self.scan_counts(gpu, tables, overlap)
    }

    /// Step 2: the spans' counts scanned, every level in place; the level above receives its
    /// span totals, and the top one (a single span) its total, which is N. `overlap`: each
    /// kernel may start while the one before it ends.
    fn scan_counts(&mut self, gpu: &dyn Gpu, tables: &RankTables, overlap: bool) -> Result<()> {
        if scan_groups(gpu, tables) != 0 {
            return Ok(()); // the rank kernel's last group scanned them
        }
        let (lengths, levels) = (&tables.lengths, &tables.levels);
        for k in 0..levels.len() {
            let sums = levels.get(k + 1).unwrap_or(&tables.total);
            let range = self.geometry.over_spans(lengths[k], self.geometry.span());
            let args = [Arg::Buffer(&levels[k]), Arg::Buffer(sums), Arg::U32(lengths[k] as u32)];
            launch_after(gpu, overlap, &mut self.scan, &range, &args)?;
        }
        for k in (0..levels.len().saturating_sub(1)).rev() {
            let args = [Arg::Buffer(&levels[k]), Arg::Buffer(&levels[k + 1]), Arg::U32(lengths[k] as u32)];
            launch_after(gpu, overlap, &mut self.add, &self.geometry.over(lengths[k]), &args)?;
        }
        Ok(())
    }

    /// The rank kernels' ticket counter, zeroed where it is new; given back after the launch.
    fn take_tickets(&mut self, gpu: &dyn Gpu) -> Result<Buffer> {
        match self.tickets.take() {
            Some(tickets) => Ok(tickets),
            None => {
                let mut tickets = gpu.alloc(4)?;
                gpu.zero(&mut tickets)?;
                Ok(tickets)
            }
        }
    }

    /// Reads N (once the device is done with `tables`) and keeps their buffers for the next call.
    pub(crate) fn count(&mut self, gpu: &dyn Gpu, tables: RankTables) -> Result<u32> {
        let count = Self::read_total(gpu, &tables)?;
        self.put_back(tables);
        Ok(count)
    }

    /// Reads N from ranked `tables` (it waits for the device).
    pub(crate) fn read_total(gpu: &dyn Gpu, tables: &RankTables) -> Result<u32> {
        let mut word = [0u8; 4];
        gpu.read(&tables.total, &mut word)?;
        Ok(u32::from_ne_bytes(word))
    }

    /// Keeps the buffers of `tables` for the next call.
    pub(crate) fn put_back(&mut self, tables: RankTables) {
        self.scratch.put(RANKS, tables.ranks);
        self.scratch.put(FIRSTS, tables.firsts);
        self.scratch.put(TOTAL, tables.total);
        for (k, level) in tables.levels.into_iter().enumerate() {
            self.scratch.put(LEVELS + k, level);
        }
    }
}

/// The rank tables of one relabeling ([`Relabel::allocate`]): per word of 32 pixels its rank
/// entry (`ranks`), block conventions' first pixels (`firsts`), the count levels (`levels[0]`
/// holds each span's offset once scanned) and N (`total`).
pub(crate) struct RankTables {
    n: usize,
    ranks: Buffer,
    firsts: Buffer,
    lengths: Vec<usize>,
    levels: Vec<Buffer>,
    total: Buffer,
}

impl RankTables {
    /// Each word's rank entry (R in the kernels).
    pub(crate) fn ranks(&self) -> &Buffer {
        &self.ranks
    }

    /// Each span's count of first pixels before it, once ranked.
    pub(crate) fn offsets(&self) -> &Buffer {
        &self.levels[0]
    }

    /// N, the count of first pixels (one `u32`), once ranked.
    pub(crate) fn total(&self) -> &Buffer {
        &self.total
    }
}
