//! The [`Labeler`] trait and its implementations: the CPU reference ([`CpuLabeler`]) and one
//! GPU labeler ([`GpuLabeler`]) over the device abstraction, shared by OpenCL and CUDA;
//! [`AnyLabeler`] chooses at run time.

mod cpu;
mod gpu;
mod run;

use enum_dispatch::enum_dispatch;

pub use cpu::CpuLabeler;
pub use gpu::GpuLabeler;
pub use run::run_host;

use crate::regions::{Intensity, IntensityValue, Property, RegionRequest, RegionSums, RegionTable};
use crate::{
    Algorithm, BackendKind, BinaryImage, BuildReport, ComponentStats, Connectivity, DeviceImage, DeviceInfo,
    DeviceLabels, Error, ImageKind, LabelImage, LabelValue, OpenCvStats, Options, Result, Run, Shape, Timings,
};
use crate::{DeviceArray, Element};

/// The stages a [`Labeler::run`] chains (see [`crate::pipeline`]): labeling, relabeling,
/// statistics, filtering, each on device arrays. Crate-internal: a supertrait of [`Labeler`]
/// that callers cannot name (the project's own tests reach it through `ccl::testing::Stages`).
#[enum_dispatch]
pub trait Stages {
    /// Labels an image (or volume) already on the device and leaves the labels there. The
    /// timings cover allocation of the output, every kernel (and flag read-back) and a final
    /// synchronisation. A volume deeper than one slice takes 6-, 18- or 26-connectivity only
    /// ([`Error::ConnectivityDimensions`]); one slice takes either kind (6 joins as 4, 18 and
    /// 26 as 8).
    fn label_on_device(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(DeviceLabels, Timings)>;

    /// [`Stages::label_on_device`] into existing labels of the image's shape
    /// ([`Error::ShapeMismatch`] otherwise) on this labeler's device, e.g. labels reused over
    /// many images, or memory of the caller's ([`GpuLabeler::borrow_labels`]): they get the
    /// algorithm's raw labels ([`crate::Numbering::Raw`]). The timings are those of
    /// [`Stages::label_on_device`] without the allocation.
    fn label_on_device_into(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<Timings>;

    /// Renumbers labels on their device, in place, 1..N in raster order of each component's
    /// first pixel (the same labels as [`LabelImage::into_consecutive`] of the raw ones), and
    /// returns N with the timings ([`crate::Phase::Relabel`]: the kernels' device time; reading N back,
    /// a transfer that waits for them, is not timed). Labels already consecutive are left as
    /// they are. A GPU labeler keeps the relabeling's scratch buffers (a quarter of a byte per
    /// pixel of the last image, two and a quarter bytes with block labels) for its next call,
    /// until it is dropped.
    fn relabel(&mut self, labels: &mut DeviceLabels) -> Result<(u32, Timings)>;

    /// Labels an image (or volume) already on the device into consecutive labels 1..N, as
    /// [`Stages::label_on_device`] then [`Stages::relabel`] do, and returns them with N. Where
    /// the algorithm renumbers in its own last pass (TUF) that is one pass over the labels
    /// fewer, and the phases are the labeling's with [`crate::Phase::Relabel`] last; a GPU labeler then
    /// keeps that pass's input, a label per pixel, for its next call (where the device has no
    /// room for it, TUF labels and relabels).
    fn label_on_device_consecutive(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
    ) -> Result<(DeviceLabels, u32, Timings)> {
        let (mut labels, mut timings) = self.label_on_device(image, connectivity)?;
        let (count, relabel) = self.relabel(&mut labels)?;
        timings.phases.extend(relabel.phases);
        Ok((labels, count, timings))
    }

    /// [`Stages::label_on_device_consecutive`] into existing labels of the image's shape, as
    /// [`Stages::label_on_device_into`] takes them (then [`crate::Numbering::Consecutive`]);
    /// returns N.
    fn label_on_device_into_consecutive(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<(u32, Timings)> {
        let mut timings = self.label_on_device_into(image, connectivity, labels)?;
        let (count, relabel) = self.relabel(labels)?;
        timings.phases.extend(relabel.phases);
        Ok((count, timings))
    }

    /// The statistics of every component of `labels` (area, bounding box, centroid; in label
    /// order), computed where the labels are; only the statistics leave the device. Raw labels
    /// are first renumbered in place ([`Stages::relabel`]), so entry `k` is label `k + 1` of
    /// the consecutive labeling (labels from [`Stages::label_on_device_consecutive`] are
    /// consecutive already, and cost TUF a pass less). The timings cover the relabeling, the statistics kernels
    /// ([`crate::Phase::ComponentStats`]) and the table's read-back ([`crate::Phase::Download`], a transfer
    /// like the labels' download). A GPU labeler keeps the table's device buffers for its next
    /// call, as it keeps the relabeling's.
    fn component_stats(&mut self, labels: &mut DeviceLabels) -> Result<(ComponentStats, Timings)>;

    /// Labels an image (or volume) already on the device into consecutive labels 1..N and
    /// computes their components' statistics, as [`Stages::label_on_device_consecutive`] then
    /// [`Stages::component_stats`] do, but without waiting for the device in between: a GPU
    /// labeler launches the statistics kernels before it reads N back (on a table sized by
    /// its last calls; where N outgrew it, they run again on a larger one). The timings: the
    /// labeling's phases and [`crate::Phase::Relabel`], then [`crate::Phase::Allocation`] and
    /// [`crate::Phase::ComponentStats`] (the statistics kernels' device time) and the read-back of N
    /// and of the table ([`crate::Phase::Download`]). Unless every phase is marked
    /// ([`crate::GpuLabeler::mark_every_phase`]), a GPU labeler leaves the relabeling's end and
    /// the table's allocation unmarked: their time is then in [`crate::Phase::ComponentStats`].
    fn label_on_device_with_stats(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
    ) -> Result<(DeviceLabels, ComponentStats, Timings)> {
        let (mut labels, _, mut timings) = self.label_on_device_consecutive(image, connectivity)?;
        let (stats, more) = self.component_stats(&mut labels)?;
        timings.phases.extend(more.phases);
        Ok((labels, stats, timings))
    }

    /// Keeps the components of consecutive `labels` whose entry of `keep` is set (one entry per
    /// label, as [`ComponentStats::at_least`] and [`ComponentStats::largest`] give), renumbered
    /// 1..M in label order (so still in raster order of first appearance), and turns the others
    /// into background, in place on the device; returns M. Labels that are not consecutive, or
    /// a `keep` of another length than their count, are an [`Error::InvalidParameter`].
    fn keep_components(&mut self, labels: &mut DeviceLabels, keep: &[bool]) -> Result<(u32, Timings)>;

    /// OpenCV's `connectedComponentsWithStats` tables of `labels` (row 0 the background, row k
    /// label k) for an array of `dims` dimensions (2, or 3 for a volume, also one of a single
    /// slice, whose tables then have z columns), built on the device (the CPU reference computes
    /// them on the host) and read back: raw labels are renumbered first, as
    /// [`Stages::component_stats`] does. `dims` that do not fit the array are an
    /// [`Error::InvalidParameter`]. The timings: relabeling, [`crate::Phase::ComponentStats`] (every
    /// kernel) and [`crate::Phase::Download`] (the tables' read-back).
    fn opencv_stats(&mut self, labels: &mut DeviceLabels, dims: u8) -> Result<(OpenCvStats, Timings)>;

    /// The sums the region properties of consecutive `labels` are derived from
    /// ([`crate::regions`]), as an array of `axes` dimensions (2, or 3 for a volume, also one of
    /// a single slice), computed where the labels are: the statistics, and what `request` asks
    /// for (moments up to an order, Euler and perimeter sums, an intensity image's sum, minimum
    /// and maximum). Raw labels are renumbered first, as [`Stages::component_stats`] does. An
    /// order above [`crate::regions::MAX_ORDER`], `axes` that do not fit the array, or an
    /// intensity image of another shape are an [`Error::InvalidParameter`] /
    /// [`Error::ShapeMismatch`]. The timings: relabeling, the statistics' phases, then
    /// [`crate::Phase::RegionProps`] (the kernels) and [`crate::Phase::Download`].
    fn region_sums(
        &mut self,
        labels: &mut DeviceLabels,
        axes: u8,
        request: &RegionRequest<'_>,
    ) -> Result<(RegionSums, Timings)>;

    /// Labels an image already on the device and counts its components; nothing but the count
    /// leaves the device.
    fn count_components(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(u32, Timings)> {
        let (_, count, timings) = self.label_on_device_consecutive(image, connectivity)?;
        Ok((count, timings))
    }
}

/// A connected-components labeler: one algorithm on one device.
///
/// Threads: a labeler is `Send` (move it to a worker thread) and its methods take `&mut self`,
/// so one thread uses it at a time. Labelers made from one [`crate::Device`] (or its clones)
/// may run in parallel threads: each has its own command queue (OpenCL) or stream (CUDA), so
/// its [`Timings`] cover its own commands only, while [`DeviceImage`]s and [`DeviceLabels`] of
/// that device may be passed between them (every call waits for its own commands before it
/// returns). Labelings running at the same time share the device, so each may take longer than
/// alone; the time reported is still that labeling's own.
#[enum_dispatch]
pub trait Labeler: Stages {
    /// The algorithm.
    fn algorithm(&self) -> Algorithm;

    /// The device it runs on.
    fn device(&self) -> &DeviceInfo;

    /// Copies a host image or volume to the device (labeled with 4 or 8, or 6, 18 or 26
    /// connectivity by its depth).
    fn upload(&mut self, image: &BinaryImage) -> Result<DeviceImage> {
        self.upload_array(image.shape(), image.values())
    }

    /// Copies a dense row-major array of `shape` (one byte per pixel or voxel, nonzero is
    /// foreground) straight from `elements` to the device, without building a [`BinaryImage`]
    /// first: for callers whose pixels lie in memory they do not own (bindings; page-locked
    /// buffers from [`crate::Device::pinned_buffer`], copied at bus speed). A shape of depth 1
    /// is an image. Errors as [`crate::HostArray::new`].
    fn upload_array(&mut self, shape: Shape, elements: &[u8]) -> Result<DeviceImage> {
        self.upload_bytes(shape, elements, ImageKind::Binary)
    }

    /// Copies a multi-label image or volume of `shape` (dense row-major `values`, one per
    /// element) to the device: its components are the connected sets of equal values,
    /// `background` excepted ([`crate::multilabel`]). Only the algorithms that support it
    /// ([`Algorithm::supports_multilabel`]) label it; the others refuse it at labeling time.
    /// Errors as [`crate::HostArray::new`].
    fn upload_values<T: LabelValue>(&mut self, shape: Shape, values: &[T], background: T) -> Result<DeviceImage>
    where
        Self: Sized,
    {
        crate::host_array::check_len(shape, values.len())?;
        self.upload_bytes(shape, bytemuck::cast_slice(values), ImageKind::multilabel(background))
    }

    /// Copies an intensity image of `shape` (dense row-major `values`, `f32` or `f64`) to the
    /// device, for the intensity properties of [`Labeler::regionprops`]. Errors as
    /// [`crate::HostArray::new`].
    fn upload_intensity<T: IntensityValue>(&mut self, shape: Shape, values: &[T]) -> Result<DeviceArray<T>>
    where
        Self: Sized,
    {
        crate::host_array::check_len(shape, values.len())?;
        // Uploaded as values of T's width (the check of their byte count), then read as T.
        let kind = ImageKind::MultiLabel { bytes: std::mem::size_of::<T>() as u8, background: 0 };
        Ok(self.upload_bytes(shape, bytemuck::cast_slice(values), kind)?.retype())
    }

    /// Copies a label array of `shape` (dense row-major `labels`: background 0, components
    /// 1..=`count`) to the device, e.g. labels computed elsewhere whose region properties are
    /// wanted; see [`DeviceArray::assume_consecutive`]. Errors as [`crate::HostArray::new`].
    fn upload_labels(&mut self, shape: Shape, labels: &[u32], count: u32) -> Result<DeviceLabels>
    where
        Self: Sized,
    {
        crate::host_array::check_len(shape, labels.len())?;
        let kind = ImageKind::MultiLabel { bytes: 4, background: 0 };
        let mut out: DeviceLabels = self.upload_bytes(shape, bytemuck::cast_slice(labels), kind)?.retype();
        out.assume_consecutive(count);
        Ok(out)
    }

    /// scikit-image's `regionprops_table` of consecutive `labels` (raw ones are renumbered
    /// first), an array of `axes` dimensions: the columns of `properties` in order, computed
    /// from [`Stages::region_sums`] on the device (see [`crate::regions`]), with `spacing` (one
    /// value per axis, rows first; ones by default) and `intensity` (for the intensity
    /// properties). A property not defined for the array (perimeter of a volume, an intensity
    /// property without an image) is an [`Error::InvalidParameter`], as scikit-image raises.
    fn regionprops(
        &mut self,
        labels: &mut DeviceLabels,
        axes: u8,
        properties: &[Property],
        spacing: Option<&[f64]>,
        intensity: Option<Intensity<'_>>,
    ) -> Result<(RegionTable, Timings)> {
        RegionTable::check(properties, axes, spacing, intensity.is_some())?;
        let (order, shape, _) = RegionTable::needs(properties);
        let request = RegionRequest { order, shape, intensity };
        let (sums, timings) = self.region_sums(labels, axes, &request)?;
        Ok((RegionTable::from_sums(&sums, properties, spacing)?, timings))
    }

    /// Copies the elements of an image of `kind` held in `bytes` (`kind.bytes()` bytes an
    /// element, dense, row-major) to the device.
    fn upload_bytes(&mut self, shape: Shape, bytes: &[u8], kind: ImageKind) -> Result<DeviceImage>;

    /// Labels an image (or volume) already on the device into new labels and runs the stages
    /// `options` ask for on them (see [`crate::pipeline`]): consecutive numbering, statistics,
    /// filters. The fast paths of the stage methods are kept: TUF's consecutive labels from its
    /// own last pass, statistics launched before the count is read back. The timings are every
    /// stage's, on the device (the labels stay there: [`Labeler::download`]).
    fn run(&mut self, image: &DeviceImage, options: &Options) -> Result<Run> {
        run::run(self, image, options)
    }

    /// [`Labeler::run`] into existing labels of the image's shape ([`Error::ShapeMismatch`]
    /// otherwise) on this labeler's device: labels reused over many images, or memory of the
    /// caller's ([`GpuLabeler::borrow_labels`]).
    fn run_into(&mut self, image: &DeviceImage, labels: &mut DeviceLabels, options: &Options) -> Result<Run<()>> {
        run::run_into(self, image, labels, options)
    }

    /// Copies labels from the device to a host array of their shape.
    fn download(&mut self, labels: &DeviceLabels) -> Result<LabelImage> {
        let mut values = vec![0u32; labels.shape().len()];
        self.download_into(labels, &mut values)?;
        LabelImage::new(labels.shape(), values)
    }

    /// Copies labels from the device straight into `out`, which must hold exactly one value per
    /// element ([`Error::SizeMismatch`] otherwise).
    fn download_into(&mut self, labels: &DeviceLabels, out: &mut [u32]) -> Result<()>;

    /// Copies labels from the device to the host a piece at a time, in raster order, and hands
    /// each piece (at most [`LABEL_PIECE`] values) to `sink` as it arrives: labels written out
    /// as they come (into a file) without a host array of their size. A GPU labeler copies the
    /// next piece while `sink` has this one. An error of `sink` stops the copy and is returned.
    /// The default downloads the labels whole first.
    fn download_pieces(&mut self, labels: &DeviceLabels, sink: &mut dyn FnMut(&[u32]) -> Result<()>) -> Result<()> {
        let labels = self.download(labels)?;
        labels.values().chunks(LABEL_PIECE).try_for_each(sink)
    }

    /// Host in, host out: uploads `image`, [`Labeler::run`]s the stages `options` ask for and
    /// downloads the labels ([`run_host`], whose upload and download phases are host-timed).
    /// For labels into memory of the caller's (a reused or page-locked buffer), call
    /// [`run_host`] with [`Labeler::download_into`].
    fn label(&mut self, image: &BinaryImage, options: &Options) -> Result<Run<LabelImage>> {
        run_host(self, options, |l| l.upload(image), |l, d| l.download(d))
    }
}

/// The most values [`Labeler::download_pieces`] hands its sink at once (a device's staging
/// chunk of 16 MiB).
pub const LABEL_PIECE: usize = ccl_backend::READ_PIECE / 4;

/// Checks that `bytes` hold the elements of an image of `shape` and `kind` (`kind.bytes()` bytes
/// each), as [`crate::HostArray::new`] checks values.
pub(crate) fn check_bytes(shape: Shape, bytes: &[u8], kind: ImageKind) -> Result<()> {
    let width = kind.bytes();
    if !bytes.len().is_multiple_of(width) {
        return Err(Error::InvalidParameter {
            name: "values".into(),
            reason: format!("{} bytes are no whole number of {width}-byte values", bytes.len()),
        });
    }
    crate::host_array::check_len(shape, bytes.len() / width)
}

/// Checks a region request on `labels` of `axes` dimensions (see [`Stages::region_sums`]).
pub(crate) fn check_region_request(labels: &DeviceLabels, axes: u8, request: &RegionRequest<'_>) -> Result<()> {
    crate::regions::check_axes(labels.shape(), axes)?;
    if request.order > crate::regions::MAX_ORDER {
        return Err(Error::InvalidParameter {
            name: "order".into(),
            reason: format!("moments up to order {} (at most {})", request.order, crate::regions::MAX_ORDER),
        });
    }
    match request.intensity.map(|i| i.shape()) {
        Some(shape) if shape != labels.shape() => Err(Error::ShapeMismatch { image: shape, labels: labels.shape() }),
        _ => Ok(()),
    }
}

/// Checks that `labels` are consecutive with one entry of `keep` per component.
pub(crate) fn check_keep(labels: &DeviceLabels, keep: &[bool]) -> Result<()> {
    match labels.numbering() {
        Some(crate::Numbering::Consecutive(n)) if n as usize == keep.len() => Ok(()),
        Some(crate::Numbering::Consecutive(n)) => Err(Error::InvalidParameter {
            name: "keep".into(),
            reason: format!("has {} entries for {n} components", keep.len()),
        }),
        _ => Err(Error::InvalidParameter {
            name: "keep".into(),
            reason: "applies to consecutive labels (relabel or component_stats first)".into(),
        }),
    }
}

/// Checks that an array of `shape` can be labeled with `connectivity`: volumes deeper than one
/// slice take the connectivities of volumes only.
pub(crate) fn check_shape_connectivity(shape: Shape, connectivity: Connectivity) -> Result<()> {
    if shape.depth > 1 && connectivity.dims() == 2 {
        Err(Error::ConnectivityDimensions { connectivity, what: "a volume" })
    } else {
        Ok(())
    }
}

/// A batch of `items` images stacked along the rows of an image of `shape`: a positive count
/// that divides its height ([`GpuLabeler::label_stacked_into`]).
pub(crate) fn check_stacked(shape: Shape, items: usize) -> Result<()> {
    if items > 0 && shape.depth == 1 && shape.height.is_multiple_of(items) {
        return Ok(());
    }
    Err(Error::InvalidParameter {
        name: "items".into(),
        reason: format!("{items} images stacked in an array of shape {shape}: a count that divides its height"),
    })
}

/// Checks that `labels` have the shape of `image` ([`Error::ShapeMismatch`] otherwise).
pub(crate) fn check_same_shape(image: &DeviceImage, labels: &DeviceLabels) -> Result<()> {
    if image.shape() == labels.shape() {
        Ok(())
    } else {
        Err(Error::ShapeMismatch { image: image.shape(), labels: labels.shape() })
    }
}

/// How `labels` are numbered; labels never written (borrowed and not labeled yet) are an
/// [`Error::InvalidParameter`].
pub(crate) fn numbering_of(labels: &DeviceLabels) -> Result<crate::Numbering> {
    labels.numbering().ok_or_else(|| Error::InvalidParameter {
        name: "labels".into(),
        reason: "hold no labels yet (label_on_device_into writes them)".into(),
    })
}

/// Checks that `out` holds one value per element of `labels`.
fn check_destination(labels: &DeviceLabels, out: &[u32]) -> Result<()> {
    if out.len() == labels.shape().len() {
        Ok(())
    } else {
        Err(Error::SizeMismatch { width: labels.width(), height: labels.height(), len: out.len() })
    }
}

/// Any labeler, chosen at run time (see [`crate::Device::labeler`]).
#[enum_dispatch(Labeler, Stages)]
pub enum AnyLabeler {
    /// The CPU reference.
    Cpu(CpuLabeler),
    /// A GPU (or OpenCL CPU) device.
    Gpu(GpuLabeler),
}

impl AnyLabeler {
    /// The backend of this labeler.
    pub fn backend(&self) -> BackendKind {
        self.device().id.backend()
    }

    /// [`GpuLabeler::mark_every_phase`]; nothing on the CPU reference, whose labeling is one
    /// phase.
    pub fn mark_every_phase(&mut self, on: bool) {
        if let Self::Gpu(gpu) = self {
            gpu.mark_every_phase(on);
        }
    }

    /// [`GpuLabeler::hold_queue`]; nothing on the CPU reference, which has no queue.
    pub fn hold_queue(&mut self) -> Result<()> {
        match self {
            Self::Cpu(_) => Ok(()),
            Self::Gpu(gpu) => gpu.hold_queue(),
        }
    }

    /// [`GpuLabeler::borrow_image`]: an image in device memory the caller keeps, as a
    /// [`DeviceImage`] of this labeler's device, without copying. The CPU reference refuses
    /// with [`BackendError::Unsupported`](crate::BackendError::Unsupported).
    ///
    /// # Safety
    /// As [`GpuLabeler::borrow_image`].
    pub unsafe fn borrow_image(&mut self, shape: Shape, address: u64, ready_on: Option<u64>) -> Result<DeviceImage> {
        match self {
            // SAFETY: the caller's contract.
            AnyLabeler::Gpu(gpu) => unsafe { gpu.borrow_image(shape, address, ready_on) },
            AnyLabeler::Cpu(cpu) => Err(cpu.cannot_borrow()),
        }
    }

    /// [`GpuLabeler::borrow_values`]: [`AnyLabeler::borrow_image`] of an image of `kind`.
    ///
    /// # Safety
    /// As [`GpuLabeler::borrow_values`].
    pub unsafe fn borrow_values(
        &mut self,
        shape: Shape,
        address: u64,
        ready_on: Option<u64>,
        kind: ImageKind,
    ) -> Result<DeviceImage> {
        match self {
            // SAFETY: the caller's contract.
            AnyLabeler::Gpu(gpu) => unsafe { gpu.borrow_values(shape, address, ready_on, kind) },
            AnyLabeler::Cpu(cpu) => Err(cpu.cannot_borrow()),
        }
    }

    /// [`GpuLabeler::borrow_array`]: device memory of `T`s the caller keeps (an intensity image,
    /// labels made elsewhere).
    ///
    /// # Safety
    /// As [`GpuLabeler::borrow_array`].
    pub unsafe fn borrow_array<T: Element>(
        &mut self,
        shape: Shape,
        address: u64,
        ready_on: Option<u64>,
    ) -> Result<DeviceArray<T>> {
        match self {
            // SAFETY: the caller's contract.
            AnyLabeler::Gpu(gpu) => unsafe { gpu.borrow_array(shape, address, ready_on) },
            AnyLabeler::Cpu(cpu) => Err(cpu.cannot_borrow()),
        }
    }

    /// [`GpuLabeler::label_stacked_into`]: a batch of `items` images stacked along the rows of
    /// `image`, labeled as one where the algorithm can, each item's labels from 1; returns the
    /// items' counts, or `None` (labels untouched) where it cannot, as on the CPU reference.
    pub fn label_stacked_into(
        &mut self,
        image: &DeviceImage,
        items: usize,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<Option<Vec<u32>>> {
        match self {
            AnyLabeler::Gpu(gpu) => gpu.label_stacked_into(image, items, connectivity, labels),
            AnyLabeler::Cpu(_) => check_stacked(image.shape(), items).map(|()| None),
        }
    }

    /// [`GpuLabeler::borrow_labels`]: labels in device memory the caller keeps, as
    /// [`DeviceLabels`] of this labeler's device, without copying. The CPU reference refuses
    /// with [`BackendError::Unsupported`](crate::BackendError::Unsupported).
    ///
    /// # Safety
    /// As [`GpuLabeler::borrow_labels`].
    pub unsafe fn borrow_labels(&mut self, shape: Shape, address: u64) -> Result<DeviceLabels> {
        match self {
            // SAFETY: the caller's contract.
            AnyLabeler::Gpu(gpu) => unsafe { gpu.borrow_labels(shape, address) },
            AnyLabeler::Cpu(cpu) => Err(cpu.cannot_borrow()),
        }
    }

    /// [`GpuLabeler::component_stats_borrowed`]: statistics written into device memory the
    /// caller keeps. The CPU reference has no device memory
    /// ([`BackendError::Unsupported`](crate::BackendError::Unsupported)).
    ///
    /// # Safety
    /// As [`GpuLabeler::component_stats_borrowed`].
    pub unsafe fn component_stats_borrowed(
        &mut self,
        labels: &DeviceLabels,
        area: u64,
        boxes: u64,
        sums: u64,
    ) -> Result<Timings> {
        match self {
            // SAFETY: the caller's contract.
            AnyLabeler::Gpu(gpu) => unsafe { gpu.component_stats_borrowed(labels, area, boxes, sums) },
            AnyLabeler::Cpu(cpu) => Err(cpu.cannot_borrow()),
        }
    }

    /// [`GpuLabeler::opencv_stats_borrowed`]: OpenCV's statistics tables written into device
    /// memory the caller keeps. The CPU reference has no device memory
    /// ([`BackendError::Unsupported`](crate::BackendError::Unsupported)).
    ///
    /// # Safety
    /// As [`GpuLabeler::opencv_stats_borrowed`].
    pub unsafe fn opencv_stats_borrowed(
        &mut self,
        labels: &DeviceLabels,
        dims: u8,
        stats: u64,
        centroids: u64,
    ) -> Result<Timings> {
        match self {
            // SAFETY: the caller's contract.
            AnyLabeler::Gpu(gpu) => unsafe { gpu.opencv_stats_borrowed(labels, dims, stats, centroids) },
            AnyLabeler::Cpu(cpu) => Err(cpu.cannot_borrow()),
        }
    }

    /// How its kernels were obtained (compiled or from the kernel cache); `None` for the CPU.
    pub fn build_report(&self) -> Option<BuildReport> {
        match self {
            AnyLabeler::Cpu(_) => None,
            AnyLabeler::Gpu(gpu) => Some(gpu.build_report()),
        }
    }
}
