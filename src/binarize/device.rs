//! The GPU binarizer: the host schedule of every binarization, written once against the device
//! abstraction (`&dyn Gpu`) for OpenCL and CUDA alike. Kernels: `kernels/binarize.kernel`.
//!
//! - Local methods: one launch of the chosen kernel ([`KernelKind`]); the paper's three run one
//!   work-item per pixel in BLOCK x BLOCK groups (Sec. IV, Algorithms 2-4), the fast one a
//!   group per tile of columns and rows.
//! - Wolf: first a statistics pass (the fast kernel built with `FAST_STATS=1`: each group's
//!   minimum gray and largest variance) and `wolf_statistics` (the page's), then the threshold.
//! - Otsu: `otsu_histogram`, `otsu_threshold` (one work-item), `otsu_apply`.
// Built without any GPU feature, no device makes one.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use std::sync::Arc;

use super::params::{Border, KernelKind, Method, NickFormula, Params};
use super::DeviceGray;
use crate::array::{DeviceArray, Storage};
use crate::device::Opened;
use crate::gpu::{
    build_program, Arg, Buffer, Define, Gpu, Kernel, LaunchRange, PhaseRecorder, FLUSH_DENORMALS, REGISTER_BUDGET,
};
use crate::kernels::{kernel_file, KernelFile};
use crate::schedule::hold::QueueHold;
use crate::schedule::StageInfo;
use crate::{BinaryImage, BuildReport, DeviceImage, Error, Phase, Result, Shape, Timings};

/// `kernels/binarize.kernel`.
pub(crate) const KERNEL: KernelFile = kernel_file!("binarize": COMMON);

/// The binarization's registry entry.
pub(crate) const STAGE: StageInfo = StageInfo::new(
    "Binarization of gray pages: the ICPADS 2015 paper's three Nick kernels, the fast kernel, Niblack, Sauvola, Wolf and Otsu",
    KERNEL,
);

/// Side of the square work-groups of the paper's kernels (the paper's best on its GPUs: 16).
const BLOCK: usize = 16;
/// Work-items per group of the fast kernel and of Otsu's kernels.
const FAST_GROUP: usize = 256;
/// Span columns of the fast kernel's groups (output columns plus the window's W - 1) and rows per
/// batch: with 32-bit sums, and with 64-bit ones (windows up to MAX_WINDOW = 2048).
const FAST_SPAN: usize = 1024;
const FAST_BATCH: usize = 4;
const FAST_SPAN_WIDE: usize = 3072;
const FAST_BATCH_WIDE: usize = 1;
/// Output rows per group of the fast kernel.
const FAST_ROWS: usize = 32;
/// Rows per block of the column sums under windows of 65 to 128 rows ([`block_rows`]).
const SHORT_BLOCK_ROWS: usize = 16;
/// Rows per block of the column sums under windows taller than 128 rows ([`block_rows`]).
const LONG_BLOCK_ROWS: usize = 32;
/// Pixels per group of the histogram kernel.
const HISTOGRAM_CHUNK: usize = FAST_GROUP * 64;

/// What one compiled program is specialised for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Config {
    method: Method,
    formula: NickFormula,
    border: Border,
    wide: bool,
    stats: bool,
    /// Rows per block of `column_blocks`' sums ([`block_rows`]; 32 where the window takes none).
    block_rows: usize,
    /// The fast kernel's rows per batch: as many as the device's local memory holds
    /// ([`fast_batch`]).
    batch: usize,
}

impl Config {
    /// The program of `params` (with `stats`, Wolf's statistics pass) on a device of
    /// `local_memory` bytes of local memory per work-group.
    fn of(params: &Params, stats: bool, local_memory: usize) -> Self {
        let formula = if params.method == Method::Nick { params.formula } else { NickFormula::Paper };
        let block_rows = block_rows(params.window as usize).unwrap_or(LONG_BLOCK_ROWS);
        let wide = params.wide_sums();
        let batch = fast_batch(wide, stats, local_memory);
        Self { method: params.method, formula, border: params.border(), wide, stats, block_rows, batch }
    }

    fn defines(&self) -> Vec<Define> {
        let method = match self.method {
            Method::Nick | Method::Otsu => "METHOD_NICK",
            Method::Niblack => "METHOD_NIBLACK",
            Method::Sauvola => "METHOD_SAUVOLA",
            Method::Wolf => "METHOD_WOLF",
        };
        let formula = match self.formula {
            NickFormula::Paper => "FORMULA_PAPER",
            NickFormula::Doxa => "FORMULA_DOXA",
            NickFormula::OpenCv => "FORMULA_OPENCV",
        };
        let border = match self.border {
            Border::Clip => "BORDER_CLIP",
            Border::Replicate => "BORDER_REPLICATE",
        };
        vec![
            Define::token("METHOD", method),
            Define::token("FORMULA", formula),
            Define::token("BORDER", border),
            Define::flag("WIDE_SUMS", self.wide),
            Define::flag("FAST_STATS", self.stats),
            Define::int("BLOCK", BLOCK as i64),
            Define::int("FAST_GROUP", FAST_GROUP as i64),
            Define::int("FAST_SPAN", fast_span(self.wide) as i64),
            Define::int("FAST_BATCH", self.batch as i64),
            Define::int("FAST_GROUPS_PER_UNIT", self.fast_groups_per_unit() as i64),
            Define::int(REGISTER_BUDGET, self.register_budget() as i64),
            Define::flag("FLOAT64", true),
            Define::int("FAST_BLOCK_ROWS", self.block_rows as i64),
            // The single-precision decision keeps its operands normal (root_float), and the
            // exact one meets no denormal double (see kernels/binarize.kernel).
            Define::flag(FLUSH_DENORMALS, true),
        ]
    }

    /// Groups of the fast kernel a compute unit should hold at once: 3 (the best on the H100 at
    /// 10 Mpx: 4 made the kernel spill registers), 2 with 64-bit sums.
    fn fast_groups_per_unit(&self) -> usize {
        if self.wide {
            2
        } else {
            3
        }
    }

    /// Registers per work-item that let a compute unit of 64 Ki registers (NVIDIA's since 2012)
    /// hold that many groups, in whole steps of 8: the cap of compilers without launch bounds.
    fn register_budget(&self) -> usize {
        (65536 / (FAST_GROUP * self.fast_groups_per_unit())).min(255) / 8 * 8
    }
}

/// The fast kernel's rows per batch: fewer with 64-bit sums, and in the statistics build (whose
/// reductions need local memory too: CUDA allows 48 KiB of static shared memory), and halved
/// again while the work-group's local memory ([`fast_local_bytes`]) exceeds the device's
/// `local_memory` (4 rows take 42 KiB, 2 take 22: an OpenCL device may have only 32 KiB). At
/// one row, what still does not fit is refused at the launch (the device's limit named).
fn fast_batch(wide: bool, stats: bool, local_memory: usize) -> usize {
    let mut batch = if wide {
        FAST_BATCH_WIDE
    } else if stats {
        FAST_BATCH / 2
    } else {
        FAST_BATCH
    };
    while batch > 1 && fast_local_bytes(wide, batch, stats) > local_memory {
        batch /= 2;
    }
    batch
}

/// Bytes of local memory of a work-group of the fast kernel (`threshold_fast` in
/// kernels/binarize.kernel): its prefix rows (FAST_SPAN + 4 entries each), item totals, chunks
/// and super-chunks of window sums, 12 bytes an entry with 64-bit sums (a 32-bit and a 64-bit
/// array) else 8, and with the statistics a double and a word per item.
fn fast_local_bytes(wide: bool, batch: usize, stats: bool) -> usize {
    let row_items = FAST_GROUP / batch;
    let supers = FAST_GROUP / if row_items >= 256 { 16 } else { 8 };
    let entries = batch * (fast_span(wide) + 4) + batch * FAST_GROUP + FAST_GROUP + supers;
    entries * if wide { 12 } else { 8 } + if stats { FAST_GROUP * 12 } else { 0 }
}

/// The fast kernel's span columns, with 64-bit sums or not.
fn fast_span(wide: bool) -> usize {
    if wide {
        FAST_SPAN_WIDE
    } else {
        FAST_SPAN
    }
}

/// Every program configuration a binarizer may build (for compile checks).
pub fn all_builds() -> Vec<Vec<Define>> {
    builds_at_windows(&[45, 101, 301])
}

/// The program configurations of every method and formula at each of `windows` (a window's
/// height picks the rows of its column sums' blocks).
pub fn builds_at_windows(windows: &[u32]) -> Vec<Vec<Define>> {
    let mut out = Vec::new();
    for method in Method::ALL {
        let formulas: &[NickFormula] = if method == Method::Nick { &NickFormula::ALL } else { &[NickFormula::Paper] };
        for &formula in formulas {
            for &window in windows {
                let params = Params { formula, window, ..method.defaults() };
                out.push(Config::of(&params, false, usize::MAX).defines());
                if method == Method::Wolf {
                    out.push(Config::of(&params, true, usize::MAX).defines());
                }
            }
        }
    }
    out
}

/// The kernels of one program.
struct Program {
    config: Config,
    /// The threshold kernels, in [`KernelKind::ALL`] order.
    thresholds: Vec<Kernel>,
    wolf_statistics: Kernel,
    column_blocks: Kernel,
    histogram: Kernel,
    otsu_threshold: Kernel,
    otsu_apply: Kernel,
}

impl Program {
    /// The threshold kernel of `kind`.
    fn threshold(&mut self, kind: KernelKind) -> &mut Kernel {
        let index = KernelKind::ALL.iter().position(|&k| k == kind).expect("every kind is in ALL");
        &mut self.thresholds[index]
    }
}

/// The binarizer of one GPU (or OpenCL CPU) device, with a command queue of its own.
pub(crate) struct GpuBinarizer {
    device: Arc<Opened>,
    gpu: Box<dyn Gpu>,
    programs: Vec<Program>,
    /// `stats` of the methods that read none (a kernel argument must be a buffer).
    no_stats: Buffer,
    /// The fast kernel's column block sums, kept for the next page (grown when too small).
    blocks: Option<Buffer>,
    /// The benchmarks' queue hold, built at its first use.
    hold: QueueHold,
    builds: BuildReport,
}

impl GpuBinarizer {
    pub(crate) fn new(device: Arc<Opened>) -> Result<Self> {
        let gpu = device.gpu().new_queue()?;
        let mut no_stats = gpu.alloc(16)?;
        gpu.zero(&mut no_stats)?;
        Ok(Self {
            device,
            gpu,
            programs: Vec::new(),
            no_stats,
            blocks: None,
            hold: QueueHold::default(),
            builds: BuildReport::default(),
        })
    }

    pub(crate) fn build_report(&self) -> BuildReport {
        self.builds
    }

    /// Queues the queue hold (built at its first use) and returns at once.
    pub(crate) fn hold_queue(&mut self) -> Result<()> {
        self.hold.hold(self.gpu.as_ref(), &mut self.builds)
    }

    /// Builds the programs `params` needs, and runs the binarization once, untimed, on a small
    /// page (some drivers finish preparing kernels at their first launch).
    pub(crate) fn prepare(&mut self, params: &Params) -> Result<()> {
        let local = self.gpu.limits().local_memory;
        let mut fresh = self.ensure(Config::of(params, false, local))?;
        if params.method == Method::Wolf {
            fresh |= self.ensure(Config::of(params, true, local))?;
        }
        if fresh {
            let start = std::time::Instant::now();
            let page: Vec<u8> = (0..67 * 37).map(|i| (i * 37 % 251) as u8).collect();
            let on_device = self.upload(Shape::image(67, 37), &page)?;
            let warm = Params { window: warm_window(params), ..*params };
            for kernel in KernelKind::ALL {
                // A kernel the device cannot run (its local memory, or its work-group) is
                // refused when asked for, naming the limit; the others still serve.
                match self.run(&on_device, &Params { kernel, ..warm }, None) {
                    Err(Error::Backend(ccl_backend::Error::DeviceLimit { .. })) => {}
                    other => {
                        other?;
                    }
                }
            }
            self.builds.warm_up_ms += start.elapsed().as_secs_f64() * 1e3;
        }
        Ok(())
    }

    /// Builds the program of `config` unless built; returns whether it built one.
    fn ensure(&mut self, config: Config) -> Result<bool> {
        if self.programs.iter().any(|p| p.config == config) {
            return Ok(false);
        }
        let gpu = self.gpu.as_ref();
        let program = build_program(gpu, &KERNEL, &config.defines(), &mut self.builds)?;
        let mut thresholds = Vec::new();
        for kind in KernelKind::ALL {
            thresholds.push(gpu.kernel(&program, kind.function())?);
        }
        let [wolf_statistics, column_blocks, histogram, otsu_threshold, otsu_apply] = crate::schedule::kernels(
            gpu,
            &program,
            ["wolf_statistics", "column_blocks", "otsu_histogram", "otsu_threshold", "otsu_apply"],
        )?;
        self.programs.push(Program {
            config,
            thresholds,
            wolf_statistics,
            column_blocks,
            histogram,
            otsu_threshold,
            otsu_apply,
        });
        Ok(true)
    }

    /// Copies `pixels`, a page of `shape` checked by the caller, to the device.
    pub(crate) fn upload(&mut self, shape: Shape, pixels: &[u8]) -> Result<DeviceGray> {
        let mut buffer = self.gpu.alloc(pixels.len())?;
        self.gpu.write(&mut buffer, pixels)?;
        Ok(DeviceArray::new(shape, self.device.owner(), Storage::Device(buffer)))
    }

    pub(crate) fn download(&mut self, image: &DeviceImage) -> Result<BinaryImage> {
        let buffer = self.buffer(image)?;
        let mut pixels = vec![0u8; image.shape().len()];
        self.gpu.read(buffer, &mut pixels)?;
        BinaryImage::image(image.width(), image.height(), pixels)
    }

    fn buffer<'a>(&self, array: &'a DeviceArray<u8>) -> Result<&'a Buffer> {
        match &array.storage {
            Storage::Device(b) if array.owner() == self.device.owner() => Ok(b),
            _ => Err(Error::DeviceMismatch { device: self.device_name() }),
        }
    }

    fn device_name(&self) -> String {
        self.gpu.name().to_string()
    }

    pub(crate) fn binarize_on_device(&mut self, gray: &DeviceGray, params: &Params) -> Result<(DeviceImage, Timings)> {
        self.prepare(params)?;
        let (out, timings) = self.run(gray, params, None)?;
        let out = out.expect("allocated without an output");
        Ok((DeviceArray::new(gray.shape(), self.device.owner(), Storage::Device(out)), timings))
    }

    /// [`Self::binarize_on_device`] into `ink`, an array of this device of the page's shape.
    pub(crate) fn binarize_on_device_into(
        &mut self,
        gray: &DeviceGray,
        params: &Params,
        ink: &mut DeviceImage,
    ) -> Result<Timings> {
        self.prepare(params)?;
        let out = self.buffer(ink)?; // (its shape checked by `Binarizer`)
        let (_, timings) = self.run(gray, params, Some(out))?;
        Ok(timings)
    }

    /// Wraps `shape.len()` bytes of device memory at `address` as an array of this device,
    /// waiting on this binarizer's queue for the work so far of stream `ready_on` (see
    /// [`crate::GpuLabeler::borrow_image`]).
    ///
    /// # Safety
    /// As [`crate::GpuLabeler::borrow_image`]: the memory stays allocated, and nothing else
    /// writes it, for as long as the returned array lives.
    pub(crate) unsafe fn borrow(&mut self, shape: Shape, address: u64, ready_on: Option<u64>) -> Result<DeviceGray> {
        crate::host_array::check_shape(shape)?;
        // SAFETY: the caller's contract (`shape.len()` bytes, one per pixel).
        let buffer = unsafe { self.gpu.borrow(address, shape.len(), ready_on)? };
        Ok(DeviceArray::new(shape, self.device.owner(), Storage::Device(buffer)))
    }

    /// The schedule: allocation, statistics (Wolf, Otsu), threshold, deallocation; into `into`
    /// when given, else into a new buffer, returned.
    fn run(&mut self, gray: &DeviceGray, params: &Params, into: Option<&Buffer>) -> Result<(Option<Buffer>, Timings)> {
        let input = self.buffer(gray)?;
        let shape = gray.shape();
        let (width, height, n) = (shape.width, shape.height, shape.len());
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        let allocated = match into {
            Some(_) => None,
            None => Some(gpu.alloc(n)?),
        };
        let out = into.or(allocated.as_ref()).expect("one of the two");
        let local = gpu.limits().local_memory;
        let threshold = Config::of(params, false, local);
        let program = self.programs.iter().position(|p| p.config == threshold).expect("prepared");
        let window = params.window;
        let slots = gpu.limits().compute_units * threshold.fast_groups_per_unit();
        let fast = FastTiles::new(width, height, window as usize, params.wide_sums(), params.border(), slots);
        let mut scratch = Vec::new();
        match params.method {
            Method::Otsu => {
                let mut histogram = gpu.alloc(256 * 4)?;
                let t = gpu.alloc(4)?;
                recorder.end(Phase::Allocation)?;
                gpu.zero(&mut histogram)?;
                let p = &mut self.programs[program];
                let groups = n.div_ceil(HISTOGRAM_CHUNK);
                let range = LaunchRange::over([groups * FAST_GROUP, 1, 1], [FAST_GROUP, 1, 1]);
                let args =
                    [Arg::Buffer(input), Arg::Buffer(&histogram), Arg::U32(n as u32), Arg::U32(HISTOGRAM_CHUNK as u32)];
                gpu.launch(&mut p.histogram, &range, &args)?;
                let one = LaunchRange::over([1, 1, 1], [1, 1, 1]);
                gpu.launch(&mut p.otsu_threshold, &one, &[Arg::Buffer(&histogram), Arg::Buffer(&t)])?;
                recorder.end(Phase::Statistics)?;
                let range = LaunchRange::over([n, 1, 1], [FAST_GROUP, 1, 1]);
                let args = [Arg::Buffer(input), Arg::Buffer(out), Arg::Buffer(&t), Arg::U32(n as u32)];
                gpu.launch(&mut p.otsu_apply, &range, &args)?;
                recorder.end(Phase::Threshold)?;
                scratch.extend([histogram, t]);
            }
            method => {
                // The column block sums that start the fast kernel's tiles under tall windows.
                let fast_runs = method == Method::Wolf || params.kernel == KernelKind::Fast;
                let words = fast.block_words().filter(|_| fast_runs);
                if let Some(words) = words {
                    if self.blocks.as_ref().is_none_or(|b| b.len() < words * 4) {
                        self.blocks = None; // freed before the larger one is allocated
                        self.blocks = Some(gpu.alloc(words * 4)?);
                    }
                }
                let blocks = words.and(self.blocks.as_ref());
                let stats = if method == Method::Wolf {
                    let partial = gpu.alloc(fast.groups() * 2 * 8)?;
                    let stats = gpu.alloc(16)?;
                    recorder.end(Phase::Allocation)?;
                    let pass = self
                        .programs
                        .iter()
                        .position(|p| p.config == Config::of(params, true, local))
                        .expect("prepared");
                    let p = &mut self.programs[pass];
                    if let Some(blocks) = blocks {
                        fast.column_blocks(gpu, &mut p.column_blocks, input, blocks)?;
                    }
                    let kernel = p.threshold(KernelKind::Fast);
                    let buffers = FastBuffers { input, out, stats: &self.no_stats, partial: &partial, blocks };
                    fast.launch(gpu, kernel, &buffers, window, params, blocks.is_some())?;
                    let one = LaunchRange::over([1, 1, 1], [1, 1, 1]);
                    let args = [Arg::Buffer(&partial), Arg::U32(fast.groups() as u32), Arg::Buffer(&stats)];
                    gpu.launch(&mut p.wolf_statistics, &one, &args)?;
                    recorder.end(Phase::Statistics)?;
                    scratch.push(partial);
                    Some(stats)
                } else {
                    recorder.end(Phase::Allocation)?;
                    None
                };
                let stats_buffer = stats.as_ref().unwrap_or(&self.no_stats);
                let p = &mut self.programs[program];
                if params.kernel == KernelKind::Fast {
                    if let (Some(blocks), false) = (blocks, method == Method::Wolf) {
                        fast.column_blocks(gpu, &mut p.column_blocks, input, blocks)?;
                    }
                    let kernel = p.threshold(params.kernel);
                    let buffers = FastBuffers { input, out, stats: stats_buffer, partial: &self.no_stats, blocks };
                    // (It follows column_blocks directly, except after Wolf's statistics.)
                    let after_blocks = blocks.is_some() && method != Method::Wolf;
                    fast.launch(gpu, kernel, &buffers, window, params, after_blocks)?;
                } else {
                    let kernel = p.threshold(params.kernel);
                    let range = LaunchRange::over([width, height, 1], [BLOCK, BLOCK, 1]);
                    let args = [
                        Arg::Buffer(input),
                        Arg::Buffer(out),
                        Arg::U32(width as u32),
                        Arg::U32(height as u32),
                        Arg::U32(window),
                        Arg::F64(params.k),
                        Arg::F64(params.r),
                        Arg::Buffer(stats_buffer),
                    ];
                    gpu.launch(kernel, &range, &args)?;
                }
                recorder.end(Phase::Threshold)?;
                scratch.extend(stats);
            }
        }
        drop(scratch);
        recorder.end(Phase::Deallocation)?;
        let phases = recorder.finish()?;
        Ok((allocated, Timings { phases, iterations: None }))
    }
}

/// The fast kernel's tiling of a page: groups of `tile_width` output columns (`first_width` for
/// the first tile of a row; the span, widened by the window, fits the group's local memory) and
/// `rows_per_group` rows.
struct FastTiles {
    width: usize,
    height: usize,
    window: usize,
    first_width: usize,
    tile_width: usize,
    rows_per_group: usize,
    columns: usize,
    rows: usize,
}

impl FastTiles {
    /// The tiling of a `width` x `height` page for `window` (`wide`: 64-bit sums, `border`: how
    /// windows meet the page's edges) on a device that runs `slots` groups at once: the page's
    /// columns split into the fewest tiles whose span fits ([`TileColumns`]), FAST_ROWS rows
    /// (the best of a sweep on the H100 at 10 Mpx), halved while
    /// the page would give fewer than MIN_GROUPS groups, or made taller (up to twice FAST_ROWS)
    /// where that saves a wave of groups (a last wave that fills few units leaves the others
    /// idle; taller tiles also start fewer windows). `CCL_FAST_TILE=WxH` caps the tile's columns
    /// at W and sets its rows to H instead (for tuning on a device).
    fn new(width: usize, height: usize, window: usize, wide: bool, border: Border, slots: usize) -> Self {
        const MIN_GROUPS: usize = 300;
        let tuning = std::env::var("CCL_FAST_TILE").ok().and_then(|s| {
            let (w, h) = s.split_once('x')?;
            Some((w.parse::<usize>().ok()?.max(1), h.parse::<usize>().ok()?.max(1)))
        });
        let TileColumns { first_width, tile_width, columns } =
            TileColumns::new(width, window, fast_span(wide), border, tuning.map(|t| t.0));
        let rows_per_group = tuning.map(|t| t.1).unwrap_or_else(|| {
            let mut rows = FAST_ROWS;
            while columns * height.div_ceil(rows) < MIN_GROUPS && rows > 4 {
                rows /= 2;
            }
            let waves = |rows: usize| (columns * height.div_ceil(rows)).div_ceil(slots.max(1));
            if rows == FAST_ROWS {
                let fewer = (rows..=2 * FAST_ROWS).step_by(4).find(|&taller| waves(taller) < waves(rows));
                rows = fewer.unwrap_or(rows);
            }
            rows
        });
        let rows = height.div_ceil(rows_per_group);
        Self { width, height, window, first_width, tile_width, rows_per_group, columns, rows }
    }

    fn groups(&self) -> usize {
        self.columns * self.rows
    }

    /// Words of the column block sums (`column_blocks`) that start tiles under a window taller
    /// than 64 rows ([`block_rows`]); None when the window is shorter or the page has no whole
    /// block.
    fn block_words(&self) -> Option<usize> {
        self.blocks_down().map(|blocks_down| 2 * self.width * blocks_down)
    }

    /// Whole blocks of column sums down the page under this window ([`block_rows`]); None when
    /// the window takes none or the page is shorter than a block.
    fn blocks_down(&self) -> Option<usize> {
        let blocks_down = self.height / block_rows(self.window)?;
        (blocks_down > 0).then_some(blocks_down)
    }

    /// Launches `column_blocks` over the page into `blocks` (of `block_words` words; nothing
    /// where the window takes no blocks).
    fn column_blocks(&self, gpu: &dyn Gpu, kernel: &mut Kernel, input: &Buffer, blocks: &Buffer) -> Result<()> {
        let Some(blocks_down) = self.blocks_down() else {
            return Ok(());
        };
        let range = LaunchRange::over([self.width, blocks_down, 1], [FAST_GROUP, 1, 1]);
        let args = [Arg::Buffer(input), Arg::Buffer(blocks), Arg::U32(self.width as u32), Arg::U32(self.height as u32)];
        Ok(gpu.launch(kernel, &range, &args)?)
    }

    /// Launches `threshold_fast` (or its statistics build) over the page; `after_blocks`: right
    /// after `column_blocks`, which it may then overlap ([`Gpu::launch_overlapping`]: the kernel
    /// reads the block sums only once `column_blocks` has finished).
    fn launch(
        &self,
        gpu: &dyn Gpu,
        kernel: &mut Kernel,
        buffers: &FastBuffers,
        window: u32,
        params: &Params,
        after_blocks: bool,
    ) -> Result<()> {
        let range = LaunchRange { global: [self.columns * FAST_GROUP, self.rows, 1], local: [FAST_GROUP, 1, 1] };
        // Without block sums the kernel reads none: any buffer stands in for them.
        let (blocks, use_blocks) = buffers.blocks.map_or((buffers.stats, 0), |b| (b, 1));
        let args = [
            Arg::Buffer(buffers.input),
            Arg::Buffer(buffers.out),
            Arg::U32(self.width as u32),
            Arg::U32(self.height as u32),
            Arg::U32(window),
            Arg::F64(params.k),
            Arg::F64(params.r),
            Arg::Buffer(buffers.stats),
            Arg::U32(self.first_width as u32),
            Arg::U32(self.tile_width as u32),
            Arg::U32(self.columns as u32),
            Arg::U32(self.rows_per_group as u32),
            Arg::Buffer(buffers.partial),
            Arg::Buffer(blocks),
            Arg::U32(use_blocks),
        ];
        if after_blocks {
            Ok(gpu.launch_overlapping(kernel, &range, &args)?)
        } else {
            Ok(gpu.launch(kernel, &range, &args)?)
        }
    }
}

/// The window of [`GpuBinarizer::prepare`]'s warm-up runs for `params`: small, so that the
/// paper's O(W^2) kernels are quick, but selecting the same program ([`Config`]): 64-bit sums from
/// 258 on, short column blocks from 65 to 128 (odd, for the opencv formula).
fn warm_window(params: &Params) -> u32 {
    if params.wide_sums() {
        259
    } else if block_rows(params.window as usize) == Some(SHORT_BLOCK_ROWS) {
        65
    } else {
        params.window.min(31)
    }
}

/// Rows per block of the column sums (`column_blocks`) that start the fast kernel's tiles under
/// `window` (FAST_BLOCK_ROWS in the kernel source, so a program's [`Config`]): none up to 64 rows
/// (a tile reads its first window's rows itself), 16 up to 128, [`LONG_BLOCK_ROWS`] beyond. A
/// tile reads the rows of its first window outside whole blocks one by one, up to 2 * (rows - 1)
/// of them, while `column_blocks` takes longer the shorter its blocks. H200, CUDA, `ccl bench
/// binarize --kernels fast`, medians of 30 runs, two rounds, 10 Mpx page / DIBCO 2009-H01 in us,
/// W = 65 / 101 / 151 / 201: blocks of 32 rows 48.2-48.4 / 50.1 / 49.4-49.5 / 49.5-49.8 and
/// 16.5-16.7 / 18.5 / 20.0 / 20.2; of 16 rows 47.7-48.1 / 49.1-49.3 / 50.2-50.3 / 50.8 and 14.2 /
/// 15.9-16.0 / 17.0 / 18.5-18.7; of 24 rows 48.8-49.0 / 49.4-49.7 / 50.3-50.6 / 51.0 (10 Mpx);
/// of 8, 64 or 96 rows 52-60 at W = 101 and 201 (10 Mpx). Blocks of 16 rows at W = 33 and 45 took
/// 1.3-2 us more on the 10 Mpx page (1.4 us less on the DIBCO page). The block height as a kernel
/// argument instead of a define cost threshold_fast 1-2 us at W = 65-201 (10 Mpx). A/B of the
/// builds in one call, two rounds: CUDA 10 Mpx W = 65 / 101 48.6 / 50.3 -> 48.2 / 49.4-49.5 us,
/// DIBCO 2009-H01 16.5-16.6 / 18.3-18.5 -> 14.2 / 15.9-16.0, W = 9-45 and 151-201 within noise;
/// NVIDIA OpenCL (ptxas) 2009-H01 W = 65 / 101 20.5-20.7 / 22.5-23.1 -> 18.2-19.8 / 20.3-21.3.
fn block_rows(window: usize) -> Option<usize> {
    match window {
        0..=64 => None,
        65..=128 => Some(SHORT_BLOCK_ROWS),
        _ => Some(LONG_BLOCK_ROWS),
    }
}

/// How the fast kernel splits a page's columns: the first tile of each row `first_width` columns
/// wide, the last one what is left, the others `tile_width`; `columns` tiles in all. A tile's
/// span (its columns widened by the window, W - 1 columns, from a multiple of 4: up to 3 more)
/// fits `span` columns. With [`Border::Clip`] a span stops at the page's edges (columns outside
/// add nothing to a window), so the edge tiles may be wider by about half a window: on a 2500
/// column page under W = 201 that makes 3 tiles instead of 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TileColumns {
    first_width: usize,
    tile_width: usize,
    columns: usize,
}

impl TileColumns {
    /// The fewest tiles for a `width` column page, as even as the edges allow; `cap` bounds
    /// every tile's width (tuning).
    fn new(width: usize, window: usize, span: usize, border: Border, cap: Option<usize>) -> Self {
        let cap = cap.unwrap_or(usize::MAX).max(1);
        let (before, after) = ((window - 1) / 2, window / 2);
        // An inner tile's span: W - 1 columns more than the tile, from up to 3 columns before.
        let inner = (span - 2 - window).min(cap);
        if border == Border::Replicate {
            let columns = width.div_ceil(inner);
            let tile_width = width.div_ceil(columns);
            return Self { first_width: tile_width, tile_width, columns };
        }
        // With the clipped border: the first tile's span starts at column 0 and ends `after`
        // columns past the tile, the last one's starts up to `before` + 3 columns before it and
        // ends at the page's end, and a tile that is both spans the page alone.
        let (left, right) = ((span - after).min(cap), (span - 3 - before).min(cap));
        if width <= span.min(cap) {
            return Self { first_width: width, tile_width: width, columns: 1 };
        }
        let columns = if width <= left + right { 2 } else { 2 + (width - left - right).div_ceil(inner) };
        let tile_width = width.div_ceil(columns).min(inner);
        // What the inner tiles leave goes to the edge tiles, half each as far as they take it
        // (it fits them: at most left + right columns).
        let rest = width - (columns - 2) * tile_width;
        let first_width = rest.div_ceil(2).min(left).max(rest.saturating_sub(right));
        Self { first_width, tile_width, columns }
    }
}

/// The buffers of one fast-kernel launch: the gray page, the output, Wolf's image statistics
/// (read by the threshold build), the groups' partial statistics (written by the statistics
/// build) and the column block sums, if the tiles start from them.
struct FastBuffers<'a> {
    input: &'a Buffer,
    out: &'a Buffer,
    stats: &'a Buffer,
    partial: &'a Buffer,
    blocks: Option<&'a Buffer>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast kernel's local memory as the OpenCL devices report it (43392 bytes on Oclgrind
    /// for 4 rows of 32-bit sums), and the batch halved to fit 32 KiB.
    #[test]
    fn fast_batches_fit_the_local_memory() {
        assert_eq!(fast_local_bytes(false, 4, false), 43392);
        assert_eq!(fast_batch(false, false, 48 << 10), 4);
        assert_eq!(fast_batch(false, false, 32 << 10), 2);
        assert!(fast_local_bytes(false, 2, false) <= 32 << 10);
        assert_eq!(fast_batch(false, true, 32 << 10), 2);
        assert!(fast_local_bytes(false, 2, true) <= 32 << 10);
        assert_eq!(fast_batch(true, false, 32 << 10), 1);
    }

    /// The warm-up of every window runs the program of that window (its sums' width and column
    /// blocks), and opencv-formula windows stay odd.
    #[test]
    fn warm_up_windows_select_the_same_program() {
        for method in Method::ALL {
            for formula in NickFormula::ALL {
                for window in 1..=2048 {
                    let params = Params { method, formula, window, ..method.defaults() };
                    let warm = Params { window: warm_window(&params), ..params };
                    assert_eq!(
                        Config::of(&warm, false, 48 << 10),
                        Config::of(&params, false, 48 << 10),
                        "window {window}"
                    );
                    assert!(warm.window <= window.max(259), "window {window}");
                    assert!(window % 2 == 0 || warm.window % 2 == 1, "window {window}");
                }
            }
        }
    }

    /// Every tile's span, as the kernel computes it, fits the span and covers the windows of the
    /// tile's columns, and the tiles cover the page once.
    #[test]
    fn tile_columns_fit_their_spans_and_cover_the_page() {
        for border in [Border::Clip, Border::Replicate] {
            for span in [FAST_SPAN, FAST_SPAN_WIDE] {
                for window in [1, 2, 3, 9, 15, 33, 45, 64, 101, 201, 257].into_iter().filter(|&w| w + 2 < span) {
                    for width in (1..4000).step_by(37).chain([span - 1, span, span + 1, 2500, 2480, 3508, 4000]) {
                        let t = TileColumns::new(width, window, span, border, None);
                        let (before, after) = ((window - 1) / 2, window / 2);
                        let mut tile_x = 0;
                        for g in 0..t.columns {
                            let this = match g {
                                _ if g + 1 == t.columns => width - tile_x,
                                0 => t.first_width,
                                _ => t.tile_width,
                            };
                            assert!(this > 0 && tile_x + this <= width, "{border:?} W={window} w={width}: {t:?}");
                            let (span_x, span_end) = match border {
                                Border::Replicate => {
                                    ((tile_x as i64 - before as i64) & !3, (tile_x + this + after) as i64)
                                }
                                Border::Clip => (
                                    (tile_x.saturating_sub(before) as i64) & !3,
                                    (tile_x + this + after).min(width) as i64,
                                ),
                            };
                            assert!(
                                span_end - span_x <= span as i64,
                                "{border:?} W={window} w={width} tile {g}: {t:?}"
                            );
                            tile_x += this;
                        }
                        assert_eq!(tile_x, width, "{border:?} W={window} w={width}: {t:?}");
                        // As many tiles as spans of the inner tiles' width need, or (clipped) fewer.
                        let inner = span - 2 - window;
                        if border == Border::Replicate {
                            assert_eq!(t.columns, width.div_ceil(inner));
                        } else {
                            assert!(t.columns <= width.div_ceil(inner));
                        }
                    }
                }
            }
        }
        // The page of the benchmark under W = 201: three tiles, not four.
        assert_eq!(TileColumns::new(2500, 201, FAST_SPAN, Border::Clip, None).columns, 3);
    }
}
