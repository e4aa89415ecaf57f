//! The GPU labeler: one algorithm's schedules on one device, through the device abstraction.
// Built without any GPU feature, no device opens one.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use std::sync::Arc;

use super::{check_destination, Labeler, Stages};
use crate::array::{DeviceArray, Numbering, Storage};
use crate::device::Opened;
use crate::gpu::{build_program, Buffer, BuildReport, Gpu, PhaseRecorder};
use crate::regions::{Intensity, RegionRequest, RegionSums};
use crate::schedule::hold::QueueHold;
use crate::schedule::regionprops::{self, Regions};
use crate::schedule::relabel::{self, Relabel};
use crate::schedule::stats::{self, OpenCv, Stats};
use crate::schedule::{Schedule, LABEL_BYTES};
use crate::shape::Element;
use crate::{
    Algorithm, BinaryImage, ComponentStats, Connectivity, DeviceImage, DeviceInfo, DeviceLabels, Error, ImageKind,
    OpenCvStats, Phase, Result, Shape, Timings,
};

/// What a schedule is built for: a connectivity and the kind of image (binary, or multi-label
/// values of one width and background).
type ScheduleKey = (Connectivity, ImageKind);

/// One algorithm on one GPU (or OpenCL CPU) device, with its kernels compiled for every
/// connectivity the algorithm supports and a command queue (stream) of its own.
pub struct GpuLabeler {
    device: Arc<Opened>,
    gpu: Box<dyn Gpu>,
    algorithm: Algorithm,
    schedules: Vec<(ScheduleKey, Box<dyn Schedule>)>,
    /// The relabeling stage, built at its first use.
    relabel: Option<Box<Relabel>>,
    /// The component statistics stage, built at its first use.
    stats: Option<Box<Stats>>,
    /// The kernels of OpenCV's statistics format, built at their first use.
    opencv: Option<Box<OpenCv>>,
    /// The region properties' kernels, each variant built at its first use.
    regions: Vec<(regionprops::Variant, Box<Regions>)>,
    /// The benchmarks' queue hold, built at its first use.
    hold: QueueHold,
    builds: BuildReport,
    /// Whether a labeling marks every phase boundary ([`GpuLabeler::mark_every_phase`]).
    every_phase: bool,
}

impl GpuLabeler {
    /// A labeler whose kernels for `connectivities` are built (and warmed up) now; the
    /// algorithm's other connectivities are built at their first use, before any timing.
    pub(crate) fn new(device: Arc<Opened>, algorithm: Algorithm, connectivities: &[Connectivity]) -> Result<Self> {
        let gpu = device.gpu.new_queue()?;
        let mut labeler = Self {
            device,
            gpu,
            algorithm,
            schedules: Vec::new(),
            relabel: None,
            stats: None,
            opencv: None,
            regions: Vec::new(),
            hold: QueueHold::default(),
            builds: BuildReport::default(),
            every_phase: false,
        };
        for &connectivity in connectivities {
            labeler.prepare(connectivity, ImageKind::Binary)?;
        }
        Ok(labeler)
    }

    /// Builds the schedule for `connectivity` and images of `kind` if it is not built yet, and
    /// runs it once, untimed, on a small image: some drivers finish preparing a kernel at its
    /// first launch (POCL compiles it for the work-group size then, CUDA loads functions lazily),
    /// which must not land in a labeling's phases.
    fn prepare(&mut self, connectivity: Connectivity, kind: ImageKind) -> Result<()> {
        self.algorithm.check(connectivity)?;
        self.algorithm.check_kind(kind, connectivity)?;
        if self.schedules.iter().any(|(key, _)| *key == (connectivity, kind)) {
            return Ok(());
        }
        let info = self.algorithm.info();
        let mut defines = info.defines(connectivity, self.gpu.limits());
        defines.extend(kind.defines());
        let program = build_program(self.gpu.as_ref(), info.kernel(), &defines, &mut self.builds)?;
        let schedule = (info.schedule)(self.gpu.as_ref(), &program, connectivity, kind)?;
        self.schedules.push(((connectivity, kind), schedule));
        let start = std::time::Instant::now();
        let warm_up = if connectivity.dims() == 3 {
            BinaryImage::volume_from_fn(19, 11, 7, |x, y, z| (x * 7 + y * 3 + z) % 5 < 2)?
        } else {
            BinaryImage::image_from_fn(67, 37, |x, y| (x * 7 + y * 3) % 5 < 2)?
        };
        // Values of the kind's width (0 and 1, whatever its background).
        let bytes: Vec<u8> = warm_up.values().iter().flat_map(|&v| std::iter::repeat_n(v, kind.bytes())).collect();
        let on_device = self.upload_bytes(warm_up.shape(), &bytes, kind)?;
        self.label_on_device(&on_device, connectivity)?;
        self.builds.warm_up_ms += start.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// Labels `image` (prepared for `connectivity`) into consecutive labels, in `into` or else in
    /// a new buffer (returned), through its schedule's `run_ranked` (its own renumbering, or
    /// labeling then relabeling); with `stats`, the statistics kernels follow before N is read
    /// back, which waits for them ([`Stats::run_counted`]). Returns N, the statistics with
    /// `stats`, and the timings.
    fn run_consecutive(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        into: Option<&Buffer>,
        stats: bool,
    ) -> Result<(Option<Buffer>, u32, Option<ComponentStats>, Timings)> {
        self.ensure_relabel()?;
        if stats {
            self.ensure_stats()?;
        }
        let (input, shape) = (self.buffer(image)?, image.shape());
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start_labeling(gpu, self.every_phase)?;
        let fresh = match into {
            Some(_) => None,
            None => {
                let labels = gpu.alloc(shape.len() * crate::schedule::LABEL_BYTES)?;
                recorder.end(Phase::Allocation)?;
                Some(labels)
            }
        };
        let labels = into.or(fresh.as_ref()).expect("one of them");
        let schedule = schedule_for(&mut self.schedules, (connectivity, image.kind()));
        let relabel = self.relabel.as_mut().expect("built above");
        let job = crate::schedule::Job { input, labels, shape };
        let convention = self.algorithm.raw_labels();
        let (iterations, count, statistics) = match self.stats.as_deref_mut().filter(|_| stats) {
            Some(stage) => {
                let (iterations, tables) = schedule.run_ranked(gpu, &job, relabel, convention, &mut recorder)?;
                // By default the relabeling is timed with the statistics, whose kernels may then
                // start while its last one ends.
                recorder.end_or_merge(Phase::Relabel)?;
                let read_count = || Relabel::read_total(gpu, &tables);
                let counted = stage.run_counted(gpu, labels, shape, tables.total(), read_count, &mut recorder);
                relabel.put_back(tables);
                let (count, statistics) = counted?;
                (iterations, count, Some(statistics))
            }
            None => {
                let (iterations, count) = schedule.run_consecutive(gpu, &job, relabel, convention, &mut recorder)?;
                (iterations, count, None)
            }
        };
        let phases = recorder.finish()?;
        Ok((fresh, count, statistics, Timings { phases, iterations }))
    }

    /// [`GpuLabeler::run_consecutive`] into new device labels of the image's shape (checked and
    /// prepared for `connectivity` here).
    fn new_consecutive(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        stats: bool,
    ) -> Result<(DeviceLabels, u32, Option<ComponentStats>, Timings)> {
        let shape = image.shape();
        self.prepare_labeling(image, connectivity)?;
        let (labels, count, statistics, timings) = self.run_consecutive(image, connectivity, None, stats)?;
        let (labels, numbering) = (labels.expect("a new buffer"), Numbering::Consecutive(count));
        let labels = DeviceArray::labels(shape, self.device.owner, Storage::Device(labels), numbering);
        Ok((labels, count, statistics, timings))
    }

    /// How this labeler's kernels were obtained so far.
    pub fn build_report(&self) -> BuildReport {
        self.builds
    }

    /// Whether each labeling marks every boundary between its phases on the device (off by
    /// default). Off, a schedule may leave the boundary between two of its kernels unmarked, so
    /// that the second starts while the first ends (TUF on CUDA from compute capability 9.0:
    /// 5-6 us less at 2048^2 and on the DIBCO pages on the H100); the phases so merged are not
    /// listed in the labeling's [`Timings`], and their time counts in the next phase listed.
    /// On, each phase is timed on its own (what `ccl bench steps` reports).
    pub fn mark_every_phase(&mut self, on: bool) {
        self.every_phase = on;
    }

    /// Queues a spin on this labeler's queue and returns at once, so that the next call's
    /// commands are all queued before the device reaches them: its timings are then the device
    /// time of its commands alone (for benchmarks).
    pub fn hold_queue(&mut self) -> Result<()> {
        self.hold.hold(self.gpu.as_ref(), &mut self.builds)
    }

    /// Builds the relabeling stage at its first use and runs it once, untimed (on an empty
    /// image: the launches are what some drivers finish preparing), like the labeling kernels.
    fn ensure_relabel(&mut self) -> Result<()> {
        if self.relabel.is_none() {
            let program = build_program(
                self.gpu.as_ref(),
                &relabel::KERNEL,
                &relabel::defines(self.gpu.limits()),
                &mut self.builds,
            )?;
            let start = std::time::Instant::now();
            let mut stage = Relabel::build(self.gpu.as_ref(), &program)?;
            let warm = self.gpu.alloc(67 * 4)?;
            let mut recorder = PhaseRecorder::start(self.gpu.as_ref())?;
            let empty = Shape::image(0, 1);
            stage.run(self.gpu.as_ref(), &warm, empty, crate::RawLabels::FirstBlock, &mut recorder)?;
            recorder.finish()?;
            self.builds.warm_up_ms += start.elapsed().as_secs_f64() * 1e3;
            self.relabel = Some(Box::new(stage));
        }
        Ok(())
    }

    /// Builds the component statistics stage at its first use (not warmed up: its kernels are
    /// launched once per call, and their first launch is part of the first call).
    fn ensure_stats(&mut self) -> Result<()> {
        if self.stats.is_none() {
            let program = build_program(
                self.gpu.as_ref(),
                &stats::KERNEL,
                &stats::defines(false, self.gpu.limits()),
                &mut self.builds,
            )?;
            self.stats = Some(Box::new(Stats::build(self.gpu.as_ref(), &program)?));
        }
        Ok(())
    }

    /// Builds the region properties' kernels of `variant` at their first use.
    fn ensure_regions(&mut self, variant: regionprops::Variant) -> Result<()> {
        if !self.regions.iter().any(|(v, _)| *v == variant) {
            let defines = regionprops::defines(variant);
            let program = build_program(self.gpu.as_ref(), &regionprops::KERNEL, &defines, &mut self.builds)?;
            let stage = Regions::build(self.gpu.as_ref(), &program, variant)?;
            self.regions.push((variant, Box::new(stage)));
        }
        Ok(())
    }

    /// Builds the kernels of OpenCV's format at their first use (a build with double precision).
    fn ensure_opencv(&mut self) -> Result<()> {
        self.ensure_stats()?;
        if self.opencv.is_none() {
            let program = build_program(
                self.gpu.as_ref(),
                &stats::KERNEL,
                &stats::defines(true, self.gpu.limits()),
                &mut self.builds,
            )?;
            self.opencv = Some(Box::new(OpenCv::build(self.gpu.as_ref(), &program)?));
        }
        Ok(())
    }

    /// Writes OpenCV's tables of consecutive `labels` ([`Stages::opencv_stats`]'s, built on
    /// the device) into device memory the caller keeps, where they stay: `stats` ((N + 1) rows
    /// of 5 `i64`, 7 for `dims` 3) and `centroids` ((N + 1) rows of `dims` `f64`), `dims` as
    /// [`Stages::opencv_stats`] takes it. When it returns, they are written. Labels that are
    /// not consecutive ([`Stages::relabel`] first), or `dims` that do not fit the array, are an
    /// [`Error::InvalidParameter`]; memory as [`GpuLabeler::borrow_labels`] says.
    ///
    /// # Safety
    /// Each address must hold that many bytes of this device's memory, 8-aligned, that stay
    /// allocated and that nothing else uses until this call returns.
    pub unsafe fn opencv_stats_borrowed(
        &mut self,
        labels: &DeviceLabels,
        dims: u8,
        stats: u64,
        centroids: u64,
    ) -> Result<Timings> {
        check_opencv_dims(labels, dims)?;
        let Some(Numbering::Consecutive(n)) = labels.numbering else {
            return Err(Error::InvalidParameter {
                name: "labels".into(),
                reason: "statistics into borrowed memory take consecutive labels (relabel first)".into(),
            });
        };
        for address in [stats, centroids] {
            if !address.is_multiple_of(8) {
                return Err(ccl_backend::Error::InvalidMemory {
                    device: self.device.info.name.clone(),
                    reason: format!("statistics at 0x{address:x} are not 8-byte aligned"),
                }
                .into());
            }
        }
        self.ensure_opencv()?;
        let (rows, dims) = (n as usize + 1, usize::from(dims));
        // SAFETY: the caller's contract (sizes as documented, alignment checked above).
        let out = unsafe {
            [
                self.gpu.borrow(stats, rows * stats::opencv_columns(dims as u8) * 8, None)?,
                self.gpu.borrow(centroids, rows * dims * 8, None)?,
            ]
        };
        let buffer = self.buffer(labels)?;
        let stages = (self.stats.as_deref_mut(), self.opencv.as_deref_mut());
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        opencv_into(gpu, stages, (buffer, labels.shape(), dims, n), [&out[0], &out[1]])?;
        recorder.end(Phase::ComponentStats)?;
        // Waits for the kernels: the caller may use the tables on any stream once this returns.
        let phases = recorder.finish()?;
        drop(out);
        Ok(Timings { phases, iterations: None })
    }

    /// Wraps an image the caller keeps in device memory, e.g. a CuPy array or a PyTorch tensor,
    /// as a [`DeviceImage`] of this labeler's device, without copying it: one byte per pixel
    /// (or voxel) of `shape`, dense in row-major order, nonzero is foreground, at the CUDA
    /// device pointer `address`. The array never frees the memory. `ready_on` is a stream (a
    /// `CUstream` value; 1 the legacy default stream, 2 the per-thread one, as in the CUDA Array
    /// Interface) whose work so far this call waits for, e.g. the kernels that wrote the image.
    ///
    /// CUDA devices only: elsewhere a [`BackendError::Unsupported`](crate::BackendError::Unsupported);
    /// memory that is not device memory of this device, or smaller than the allocation holding it
    /// allows, is a [`BackendError::InvalidMemory`](crate::BackendError::InvalidMemory); an empty
    /// or too large `shape` is refused as an upload would be.
    ///
    /// # Safety
    /// `address` must hold `shape.len()` bytes of device memory that stay allocated, and that
    /// nothing else writes, for as long as the returned array lives.
    pub unsafe fn borrow_image(&mut self, shape: Shape, address: u64, ready_on: Option<u64>) -> Result<DeviceImage> {
        // SAFETY: the caller's contract, one byte per pixel.
        unsafe { self.borrow_values(shape, address, ready_on, ImageKind::Binary) }
    }

    /// [`GpuLabeler::borrow_image`] of an image of `kind`: a multi-label image's values
    /// ([`crate::multilabel`]), `kind.bytes()` an element, aligned to their size (else
    /// [`BackendError::InvalidMemory`](crate::BackendError::InvalidMemory)).
    ///
    /// # Safety
    /// `address` must hold `kind.bytes() * shape.len()` bytes of device memory that stay
    /// allocated, and that nothing else writes, for as long as the returned array lives.
    pub unsafe fn borrow_values(
        &mut self,
        shape: Shape,
        address: u64,
        ready_on: Option<u64>,
        kind: ImageKind,
    ) -> Result<DeviceImage> {
        crate::host_array::check_shape(shape)?;
        let width = kind.bytes() as u64;
        if !address.is_multiple_of(width) {
            return Err(ccl_backend::Error::InvalidMemory {
                device: self.device.info.name.clone(),
                reason: format!("values of {width} bytes at 0x{address:x} are not {width}-byte aligned"),
            }
            .into());
        }
        // SAFETY: the caller's contract is the device's (`kind.bytes()` bytes an element).
        let buffer = unsafe { self.gpu.borrow(address, shape.len() * kind.bytes(), ready_on)? };
        Ok(DeviceArray::new(shape, self.device.owner, Storage::Device(buffer)).with_kind(kind))
    }

    /// Wraps device memory the caller keeps, `shape.len()` elements of `T` at the CUDA device
    /// pointer `address` (aligned to their size), as an array of this labeler's device, without
    /// copying, after the work of the stream `ready_on` (as [`GpuLabeler::borrow_image`]): an
    /// intensity image for [`Labeler::regionprops`], or labels made elsewhere (then
    /// [`DeviceArray::assume_consecutive`]). Errors as [`GpuLabeler::borrow_image`].
    ///
    /// # Safety
    /// `address` must hold `size_of::<T>() * shape.len()` bytes of device memory that stay
    /// allocated, and that nothing else writes, for as long as the returned array lives.
    pub unsafe fn borrow_array<T: Element>(
        &mut self,
        shape: Shape,
        address: u64,
        ready_on: Option<u64>,
    ) -> Result<DeviceArray<T>> {
        let kind = ImageKind::MultiLabel { bytes: std::mem::size_of::<T>() as u8, background: 0 };
        // SAFETY: the caller's contract, `kind.bytes()` bytes an element.
        Ok(unsafe { self.borrow_values(shape, address, ready_on, kind)? }.retype())
    }

    /// Wraps device memory the caller keeps, one `u32` label per pixel (or voxel) of `shape` at
    /// the CUDA device pointer `address`, as [`DeviceLabels`] of this labeler's device, without
    /// copying: the output of [`Stages::label_on_device_into`], which numbers them (until then
    /// they hold no labels: [`DeviceArray::numbering`] is `None`). The array never frees the
    /// memory. Nothing is waited for: the caller makes sure no work of its own still uses the
    /// memory (e.g. by passing that stream as the image's `ready_on`). Errors as
    /// [`GpuLabeler::borrow_image`].
    ///
    /// # Safety
    /// `address` must hold `4 * shape.len()` bytes of device memory, 4-aligned, that stay
    /// allocated, and that nothing else reads or writes, for as long as the returned array lives.
    pub unsafe fn borrow_labels(&mut self, shape: Shape, address: u64) -> Result<DeviceLabels> {
        crate::host_array::check_shape(shape)?;
        if !address.is_multiple_of(4) {
            return Err(ccl_backend::Error::InvalidMemory {
                device: self.device.info.name.clone(),
                reason: format!("labels at 0x{address:x} are not 4-byte aligned"),
            }
            .into());
        }
        // SAFETY: the caller's contract is the device's (4 bytes per pixel).
        let buffer = unsafe { self.gpu.borrow(address, shape.len() * LABEL_BYTES, None)? };
        Ok(DeviceArray::new(shape, self.device.owner, Storage::Device(buffer)))
    }

    /// Labels a batch of `items` images of one shape stacked along the rows of `image` (each
    /// `height / items` rows, nonzero is foreground) into `labels`: each item's components are
    /// numbered 1..N_k in raster order within it, as if it were labeled alone, and the items'
    /// counts are returned. Where the algorithm can, the batch runs as one image, one grid per
    /// pass: TUF at 4- and 8-connectivity, items whose height is a multiple of 32, fewer than
    /// 2^32 pixels in all. Elsewhere `Ok(None)`, with `labels` untouched: label the items one
    /// by one. Afterwards `labels` have no numbering of their own ([`DeviceArray::numbering`]
    /// is `None`: they are N arrays'). A height that `items` does not divide is an
    /// [`Error::InvalidParameter`].
    pub fn label_stacked_into(
        &mut self,
        image: &DeviceImage,
        items: usize,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<Option<Vec<u32>>> {
        let shape = image.shape();
        super::check_same_shape(image, labels)?;
        super::check_stacked(shape, items)?;
        self.prepare_labeling(image, connectivity)?;
        self.ensure_relabel()?;
        let (input, output) = (self.buffer(image)?, self.buffer(labels)?);
        let gpu = self.gpu.as_ref();
        let schedule = schedule_for(&mut self.schedules, (connectivity, image.kind()));
        let relabel = self.relabel.as_mut().expect("built above");
        let mut recorder = PhaseRecorder::start_labeling(gpu, self.every_phase)?;
        let job = crate::schedule::Job { input, labels: output, shape };
        let convention = self.algorithm.raw_labels();
        let counts = schedule.run_items_ranked(gpu, &job, items, relabel, convention, &mut recorder)?;
        recorder.finish()?;
        if counts.is_some() {
            labels.numbering = None;
        }
        Ok(counts)
    }

    /// Writes the statistics of consecutive `labels` into device memory the caller keeps, where
    /// they stay: the raw table of `kernels/stats.kernel` for their N components, entry k for
    /// label k + 1: areas (N `u32`) at `area`; the boxes (min x, min y, max x, max y, then min z,
    /// max z for volumes: 4 N or 6 N `u32`) at `boxes`; the coordinate sums (x, y, then z for
    /// volumes: 2 N or 3 N `u64`) at `sums`. The timings cover the kernels
    /// ([`Phase::ComponentStats`]); when it returns, the table is written. Labels that are not
    /// consecutive ([`Stages::relabel`] first) are an [`Error::InvalidParameter`]; memory as
    /// [`GpuLabeler::borrow_labels`] says.
    ///
    /// # Safety
    /// Each address must hold that many bytes of this device's memory, aligned to its element,
    /// that stay allocated and that nothing else uses until this call returns.
    pub unsafe fn component_stats_borrowed(
        &mut self,
        labels: &DeviceLabels,
        area: u64,
        boxes: u64,
        sums: u64,
    ) -> Result<Timings> {
        let Some(Numbering::Consecutive(n)) = labels.numbering else {
            return Err(Error::InvalidParameter {
                name: "labels".into(),
                reason: "statistics into borrowed memory take consecutive labels (relabel first)".into(),
            });
        };
        if n == 0 {
            return Ok(Timings::default());
        }
        let shape = labels.shape();
        let [area_bytes, box_bytes, sums_bytes] = crate::schedule::stats::table_bytes(shape, n);
        for (address, align) in [(area, 4), (boxes, 4), (sums, 8)] {
            if !address.is_multiple_of(align) {
                return Err(ccl_backend::Error::InvalidMemory {
                    device: self.device.info.name.clone(),
                    reason: format!("statistics at 0x{address:x} are not {align}-byte aligned"),
                }
                .into());
            }
        }
        self.ensure_stats()?;
        // SAFETY: the caller's contract (sizes from table_bytes, alignment checked above).
        let tables = unsafe {
            [
                self.gpu.borrow(area, area_bytes, None)?,
                self.gpu.borrow(boxes, box_bytes, None)?,
                self.gpu.borrow(sums, sums_bytes, None)?,
            ]
        };
        let buffer = self.buffer(labels)?;
        let stage = self.stats.as_mut().expect("built above");
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        stage.compute(gpu, buffer, shape, n, [&tables[0], &tables[1], &tables[2]])?;
        recorder.end(crate::Phase::ComponentStats)?;
        // Waits for the kernels: the caller may use the table on any stream once this returns.
        let phases = recorder.finish()?;
        drop(tables);
        Ok(Timings { phases, iterations: None })
    }

    /// Checks that `image` can be labeled with `connectivity` here and builds (and warms up)
    /// the schedule for it when it is not yet built.
    fn prepare_labeling(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<()> {
        let shape = image.shape();
        super::check_shape_connectivity(shape, connectivity)?;
        self.prepare(connectivity, image.kind())?;
        crate::host_array::check_shape(shape)
    }

    fn buffer<'a, T: Element>(&self, array: &'a DeviceArray<T>) -> Result<&'a Buffer> {
        match &array.storage {
            Storage::Device(b) if array.owner() == self.device.owner => Ok(b),
            _ => Err(Error::DeviceMismatch { device: self.device.info.name.clone() }),
        }
    }
}

/// The schedule built for `key` ([`GpuLabeler::prepare`], which every labeling calls first).
fn schedule_for(schedules: &mut [(ScheduleKey, Box<dyn Schedule>)], key: ScheduleKey) -> &mut dyn Schedule {
    schedules.iter_mut().find(|(k, _)| *k == key).map(|(_, s)| s.as_mut()).expect("prepared first")
}

/// OpenCV's tables take an array's dimensions: 2 for an image, 3 for a volume (a single slice
/// may be either).
pub(super) fn check_opencv_dims(labels: &DeviceLabels, dims: u8) -> Result<()> {
    if (labels.shape().dims()..=3).contains(&dims) {
        return Ok(());
    }
    Err(Error::InvalidParameter {
        name: "dims".into(),
        reason: format!("{dims} dimensions for an array of shape {}", labels.shape()),
    })
}

/// Launches what writes OpenCV's tables (stats, centroids: see [`OpenCvStats`]) into `out`,
/// for consecutive labels in `buffer` of `shape`, an array of `dims` dimensions, with `n`
/// components, on the stages `GpuLabeler::ensure_opencv` built.
fn opencv_into(
    gpu: &dyn Gpu,
    stages: (Option<&mut Stats>, Option<&mut OpenCv>),
    (buffer, shape, dims, n): (&Buffer, Shape, usize, u32),
    out: [&Buffer; 2],
) -> Result<()> {
    let (Some(stage), Some(opencv)) = stages else { unreachable!("ensure_opencv builds both stages") };
    stage.with_table(gpu, buffer, shape, n, |table| opencv.compute(gpu, buffer, shape, dims as u8, n, table, out))
}

impl Labeler for GpuLabeler {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    fn device(&self) -> &DeviceInfo {
        &self.device.info
    }

    fn upload_bytes(&mut self, shape: Shape, bytes: &[u8], kind: ImageKind) -> Result<DeviceImage> {
        super::check_bytes(shape, bytes, kind)?;
        let mut buffer = self.gpu.alloc(bytes.len())?;
        self.gpu.write(&mut buffer, bytes)?;
        Ok(DeviceArray::new(shape, self.device.owner, Storage::Device(buffer)).with_kind(kind))
    }

    fn download_into(&mut self, labels: &DeviceLabels, out: &mut [u32]) -> Result<()> {
        check_destination(labels, out)?;
        let buffer = self.buffer(labels)?;
        self.gpu.read(buffer, bytemuck::cast_slice_mut(out))?;
        Ok(())
    }

    /// Through [`ccl_backend::Gpu::read_pieces`]: the backend's staging chunks go to `sink`
    /// as they arrive.
    fn download_pieces(&mut self, labels: &DeviceLabels, sink: &mut dyn FnMut(&[u32]) -> Result<()>) -> Result<()> {
        let buffer = self.buffer(labels)?;
        let device = &self.device.info.name;
        // The sink's own error, returned instead of the backend's note that the sink stopped it.
        let mut failure = None;
        let read = self.gpu.read_pieces(buffer, labels.shape().len() * 4, &mut |bytes| {
            let stopped = |message: &str| ccl_backend::Error::Call { device: device.clone(), message: message.into() };
            let values =
                bytemuck::try_cast_slice(bytes).map_err(|_| stopped("a read piece is not whole aligned labels"))?;
            sink(values).map_err(|e| {
                failure = Some(e);
                stopped("the labels' sink failed")
            })
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(read?),
        }
    }
}

impl Stages for GpuLabeler {
    fn label_on_device(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(DeviceLabels, Timings)> {
        let shape = image.shape();
        self.prepare_labeling(image, connectivity)?;
        let input = self.buffer(image)?;
        let gpu = self.gpu.as_ref();
        let schedule = schedule_for(&mut self.schedules, (connectivity, image.kind()));
        let (labels, timings) = crate::schedule::label(gpu, schedule, input, shape, self.every_phase)?;
        let numbering = Numbering::Raw(self.algorithm.raw_labels());
        Ok((DeviceArray::labels(shape, self.device.owner, Storage::Device(labels), numbering), timings))
    }

    fn label_on_device_into(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<Timings> {
        let shape = image.shape();
        super::check_same_shape(image, labels)?;
        self.prepare_labeling(image, connectivity)?;
        let input = self.buffer(image)?;
        let output = self.buffer(labels)?;
        let gpu = self.gpu.as_ref();
        let schedule = schedule_for(&mut self.schedules, (connectivity, image.kind()));
        let recorder = PhaseRecorder::start_labeling(gpu, self.every_phase)?;
        let timings = crate::schedule::label_into(gpu, schedule, input, output, shape, recorder)?;
        labels.numbering = Some(Numbering::Raw(self.algorithm.raw_labels()));
        Ok(timings)
    }

    fn label_on_device_consecutive(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
    ) -> Result<(DeviceLabels, u32, Timings)> {
        let (labels, count, _, timings) = self.new_consecutive(image, connectivity, false)?;
        Ok((labels, count, timings))
    }

    fn label_on_device_with_stats(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
    ) -> Result<(DeviceLabels, ComponentStats, Timings)> {
        let (labels, _, stats, timings) = self.new_consecutive(image, connectivity, true)?;
        Ok((labels, stats.expect("asked for"), timings))
    }

    fn label_on_device_into_consecutive(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<(u32, Timings)> {
        super::check_same_shape(image, labels)?;
        self.prepare_labeling(image, connectivity)?;
        let output = self.buffer(labels)?;
        let (_, count, _, timings) = self.run_consecutive(image, connectivity, Some(output), false)?;
        labels.numbering = Some(Numbering::Consecutive(count));
        Ok((count, timings))
    }

    fn relabel(&mut self, labels: &mut DeviceLabels) -> Result<(u32, Timings)> {
        let convention = match super::numbering_of(labels)? {
            Numbering::Consecutive(n) => return Ok((n, Timings::default())),
            Numbering::Raw(convention) => convention,
        };
        let buffer = self.buffer(labels)?;
        let shape = labels.shape();
        self.ensure_relabel()?;
        let stage = self.relabel.as_mut().expect("built above");
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        let count = stage.run(gpu, buffer, shape, convention, &mut recorder)?;
        let phases = recorder.finish()?;
        labels.numbering = Some(Numbering::Consecutive(count));
        Ok((count, Timings { phases, iterations: None }))
    }

    fn component_stats(&mut self, labels: &mut DeviceLabels) -> Result<(ComponentStats, Timings)> {
        let (n, mut timings) = self.relabel(labels)?;
        self.ensure_stats()?;
        let buffer = self.buffer(labels)?;
        let stage = self.stats.as_mut().expect("built above");
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        let stats = stage.run(gpu, buffer, labels.shape(), n, &mut recorder)?;
        timings.phases.extend(recorder.finish()?);
        Ok((stats, timings))
    }

    fn region_sums(
        &mut self,
        labels: &mut DeviceLabels,
        axes: u8,
        request: &RegionRequest<'_>,
    ) -> Result<(RegionSums, Timings)> {
        super::check_region_request(labels, axes, request)?;
        let (stats, mut timings) = self.component_stats(labels)?;
        let intensity = match request.intensity {
            None => None,
            Some(Intensity::F32(image)) => Some((self.buffer(image)?, false)),
            Some(Intensity::F64(image)) => Some((self.buffer(image)?, true)),
        };
        let variant = (request.order, intensity.map(|(_, float64)| float64));
        self.ensure_regions(variant)?;
        let buffer = self.buffer(labels)?;
        let gpu = self.gpu.as_ref();
        let stage = self.regions.iter_mut().find(|(v, _)| *v == variant).map(|(_, s)| s).expect("built above");
        let mut recorder = PhaseRecorder::start(gpu)?;
        let image = intensity.map(|(buffer, _)| buffer);
        let sums = stage.run(gpu, buffer, labels.shape(), axes, stats, request.shape, image, &mut recorder)?;
        timings.phases.extend(recorder.finish()?);
        Ok((sums, timings))
    }

    fn keep_components(&mut self, labels: &mut DeviceLabels, keep: &[bool]) -> Result<(u32, Timings)> {
        super::check_keep(labels, keep)?;
        self.ensure_stats()?;
        let buffer = self.buffer(labels)?;
        let stage = self.stats.as_mut().expect("built above");
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        let kept = stage.keep(gpu, buffer, labels.shape().len(), keep, &mut recorder)?;
        let phases = recorder.finish()?;
        labels.numbering = Some(Numbering::Consecutive(kept));
        Ok((kept, Timings { phases, iterations: None }))
    }

    fn opencv_stats(&mut self, labels: &mut DeviceLabels, dims: u8) -> Result<(OpenCvStats, Timings)> {
        check_opencv_dims(labels, dims)?;
        let (n, mut timings) = self.relabel(labels)?;
        self.ensure_opencv()?;
        let (rows, dims) = (n as usize + 1, usize::from(dims));
        let columns = stats::opencv_columns(dims as u8);
        let buffer = self.buffer(labels)?;
        let stages = (self.stats.as_deref_mut(), self.opencv.as_deref_mut());
        let gpu = self.gpu.as_ref();
        let mut recorder = PhaseRecorder::start(gpu)?;
        let out = [gpu.alloc(rows * columns * 8)?, gpu.alloc(rows * dims * 8)?];
        recorder.end(Phase::Allocation)?;
        opencv_into(gpu, stages, (buffer, labels.shape(), dims, n), [&out[0], &out[1]])?;
        recorder.end(Phase::ComponentStats)?;
        let mut table = OpenCvStats { rows, dims, stats: vec![0; rows * columns], centroids: vec![0.0; rows * dims] };
        gpu.read(&out[0], bytemuck::cast_slice_mut(&mut table.stats))?;
        gpu.read(&out[1], bytemuck::cast_slice_mut(&mut table.centroids))?;
        recorder.end(Phase::Download)?;
        timings.phases.extend(recorder.finish()?);
        Ok((table, timings))
    }
}
