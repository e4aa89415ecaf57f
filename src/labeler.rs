//! The [`Labeler`] trait and its implementations: the CPU reference and the GPU labelers, one
//! generic implementation over [`Gpu`] shared by OpenCL and CUDA; [`AnyLabeler`] chooses at run
//! time.
// Built without any GPU feature, only the CPU reference remains.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

use enum_dispatch::enum_dispatch;

use crate::gpu::{next_owner_id, Gpu, PhaseRecorder, Storage};
use crate::image::check_size;
use crate::schedule::Schedule;
use crate::{
    reference, Algorithm, BackendKind, BinaryImage, Connectivity, DeviceInfo, Error, LabelImage, Phase, PhaseTime,
    Result, Timings,
};

/// An image or label array resident on a device (or in host memory for the CPU backend).
pub struct DeviceArray<T> {
    width: usize,
    height: usize,
    owner: u64,
    pub(crate) storage: Storage<T>,
    _element: PhantomData<T>,
}

/// A binary image uploaded to a device: label it many times, with any labeler of that device.
pub type DeviceImage = DeviceArray<u8>;
/// Labels left on a device by [`Labeler::label_on_device`]; read them with [`Labeler::download`].
pub type DeviceLabels = DeviceArray<u32>;

impl<T> DeviceArray<T> {
    fn new(width: usize, height: usize, owner: u64, storage: Storage<T>) -> Self {
        Self { width, height, owner, storage, _element: PhantomData }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }
}

/// The result of labeling a host image.
#[derive(Clone, Debug)]
pub struct Labeling {
    /// Raw labels in the algorithm's convention (see [`Algorithm`]); background 0.
    pub labels: LabelImage,
    /// Per-phase timings, upload and download included.
    pub timings: Timings,
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
pub trait Labeler {
    /// The algorithm.
    fn algorithm(&self) -> Algorithm;

    /// The device it runs on.
    fn device(&self) -> &DeviceInfo;

    /// Copies a host image to the device.
    fn upload(&mut self, image: &BinaryImage) -> Result<DeviceImage>;

    /// Labels an image already on the device and leaves the labels there. The timings cover
    /// allocation of the output, every kernel (and flag read-back) and a final synchronisation.
    fn label_on_device(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(DeviceLabels, Timings)>;

    /// Copies labels from the device to the host.
    fn download(&mut self, labels: &DeviceLabels) -> Result<LabelImage>;

    /// Labels a host image: upload, label, download. Any nonzero pixel is foreground.
    fn label(&mut self, image: &BinaryImage, connectivity: Connectivity) -> Result<Labeling> {
        check_connectivity(self.algorithm(), connectivity)?;
        let start = Instant::now();
        let on_device = self.upload(image)?;
        let upload_ms = start.elapsed().as_secs_f64() * 1e3;
        let (device_labels, mut timings) = self.label_on_device(&on_device, connectivity)?;
        let start = Instant::now();
        let labels = self.download(&device_labels)?;
        let download_ms = start.elapsed().as_secs_f64() * 1e3;
        timings.phases.insert(0, PhaseTime { phase: Phase::Upload, ms: upload_ms });
        timings.phases.push(PhaseTime { phase: Phase::Download, ms: download_ms });
        Ok(Labeling { labels, timings })
    }
}

fn check_connectivity(algorithm: Algorithm, connectivity: Connectivity) -> Result<()> {
    if algorithm.supports(connectivity) {
        Ok(())
    } else {
        Err(Error::UnsupportedConnectivity { algorithm, connectivity, supported: algorithm.connectivities().to_vec() })
    }
}

/// The CPU reference labeler ([`reference::label_as`]); it accepts every algorithm name, with
/// the algorithm's connectivity rules and raw label convention, so its raw labels equal the GPU
/// algorithm's.
pub struct CpuLabeler {
    algorithm: Algorithm,
    info: DeviceInfo,
    owner: u64,
}

impl CpuLabeler {
    /// A CPU labeler standing in for `algorithm`.
    pub fn new(algorithm: Algorithm) -> Self {
        // Host buffers are valid for every CPU labeler: they share one owner id.
        Self { algorithm, info: DeviceInfo::cpu(), owner: 0 }
    }
}

impl Labeler for CpuLabeler {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    fn device(&self) -> &DeviceInfo {
        &self.info
    }

    fn upload(&mut self, image: &BinaryImage) -> Result<DeviceImage> {
        Ok(DeviceArray::new(image.width(), image.height(), self.owner, Storage::Host(image.pixels().to_vec())))
    }

    fn label_on_device(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(DeviceLabels, Timings)> {
        check_connectivity(self.algorithm, connectivity)?;
        #[allow(irrefutable_let_patterns)] // without GPU features, Host is the only storage
        let Storage::Host(pixels) = &image.storage
        else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        let start = Instant::now();
        let labels =
            reference::raw_labels(image.width, image.height, pixels, connectivity, self.algorithm.raw_labels());
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let timings = Timings { phases: vec![PhaseTime { phase: Phase::CpuLabeling, ms }], iterations: None };
        Ok((DeviceArray::new(image.width, image.height, self.owner, Storage::Host(labels)), timings))
    }

    /// Labels on the host directly, without the copies that upload and download would make.
    fn label(&mut self, image: &BinaryImage, connectivity: Connectivity) -> Result<Labeling> {
        check_connectivity(self.algorithm, connectivity)?;
        let start = Instant::now();
        let labels = reference::label_as(image, connectivity, self.algorithm.raw_labels());
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let timings = Timings { phases: vec![PhaseTime { phase: Phase::CpuLabeling, ms }], iterations: None };
        Ok(Labeling { labels, timings })
    }

    fn download(&mut self, labels: &DeviceLabels) -> Result<LabelImage> {
        match &labels.storage {
            Storage::Host(v) => LabelImage::new(labels.width, labels.height, v.clone()),
            #[allow(unreachable_patterns)]
            _ => Err(Error::DeviceMismatch { device: self.info.name.clone() }),
        }
    }
}

/// An opened GPU runtime with its description and owner id, shared by its labelers.
pub(crate) struct Opened<G: Gpu> {
    gpu: G,
    info: DeviceInfo,
    owner: u64,
}

impl<G: Gpu> Opened<G> {
    pub(crate) fn new(gpu: G, info: DeviceInfo) -> Arc<Self> {
        Arc::new(Self { gpu, info, owner: next_owner_id() })
    }
}

/// One algorithm on one GPU, with its kernels compiled for every supported connectivity and a
/// command queue (stream) of its own.
pub(crate) struct GpuLabeler<G: Gpu> {
    device: Arc<Opened<G>>,
    gpu: G,
    algorithm: Algorithm,
    schedules: Vec<(Connectivity, Schedule<G>)>,
}

impl<G: Gpu> GpuLabeler<G> {
    pub(crate) fn new(device: Arc<Opened<G>>, algorithm: Algorithm) -> Result<Self> {
        let backend = device.info.id.backend();
        let gpu = device.gpu.new_queue()?;
        let schedules = algorithm
            .connectivities()
            .iter()
            .map(|&c| Ok((c, Schedule::build(&gpu, backend, algorithm, c)?)))
            .collect::<Result<_>>()?;
        let mut labeler = Self { device, gpu, algorithm, schedules };
        labeler.warm_up()?;
        Ok(labeler)
    }

    /// Runs every schedule once, untimed, on a small image. Some drivers finish preparing a
    /// kernel at its first launch (POCL compiles it for the work-group size then, CUDA loads
    /// modules lazily); doing it here keeps that cost out of the first labeling's phases.
    fn warm_up(&mut self) -> Result<()> {
        let image = BinaryImage::from_fn(67, 37, |x, y| (x * 7 + y * 3) % 5 < 2)?;
        let on_device = self.upload(&image)?;
        for connectivity in self.algorithm.connectivities() {
            self.label_on_device(&on_device, *connectivity)?;
        }
        Ok(())
    }

    fn buffer<'a, T>(&self, array: &'a DeviceArray<T>) -> Result<&'a G::Buffer> {
        match G::from_storage(&array.storage) {
            Some(b) if array.owner == self.device.owner => Ok(b),
            _ => Err(Error::DeviceMismatch { device: self.device.info.name.clone() }),
        }
    }

    fn upload(&mut self, image: &BinaryImage) -> Result<DeviceImage> {
        let gpu = &self.gpu;
        let mut buffer = gpu.alloc(image.pixels().len())?;
        gpu.write(&mut buffer, image.pixels())?;
        Ok(DeviceArray::new(image.width(), image.height(), self.device.owner, G::into_storage(buffer)))
    }

    fn label_on_device(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(DeviceLabels, Timings)> {
        check_connectivity(self.algorithm, connectivity)?;
        let input = self.buffer(image)?;
        let size = image.size();
        check_size(size.0, size.1)?;
        let gpu = &self.gpu;
        let schedule = self
            .schedules
            .iter_mut()
            .find(|(c, _)| *c == connectivity)
            .map(|(_, s)| s)
            .expect("a schedule is built for every supported connectivity");
        let mut recorder = PhaseRecorder::start(gpu)?;
        let labels = gpu.alloc(size.0 * size.1 * 4)?;
        recorder.end(Phase::Allocation)?;
        let iterations = schedule.run(gpu, input, &labels, size, &mut recorder)?;
        let phases = recorder.finish()?;
        let out = DeviceArray::new(size.0, size.1, self.device.owner, G::into_storage(labels));
        Ok((out, Timings { phases, iterations }))
    }

    fn download(&mut self, labels: &DeviceLabels) -> Result<LabelImage> {
        let buffer = self.buffer(labels)?;
        // Straight into the label vector (zero pages from the allocator, no second copy).
        let mut values = vec![0u32; labels.width * labels.height];
        self.gpu.read(buffer, bytemuck::cast_slice_mut(&mut values))?;
        LabelImage::new(labels.width, labels.height, values)
    }
}

/// Implements [`Labeler`] for a public wrapper of [`GpuLabeler`].
macro_rules! gpu_labeler {
    ($(#[$doc:meta])* $name:ident, $gpu:ty, $feature:literal) => {
        $(#[$doc])*
        #[cfg(feature = $feature)]
        pub struct $name(pub(crate) GpuLabeler<$gpu>);

        #[cfg(feature = $feature)]
        impl Labeler for $name {
            fn algorithm(&self) -> Algorithm {
                self.0.algorithm
            }
            fn device(&self) -> &DeviceInfo {
                &self.0.device.info
            }
            fn upload(&mut self, image: &BinaryImage) -> Result<DeviceImage> {
                self.0.upload(image)
            }
            fn label_on_device(
                &mut self,
                image: &DeviceImage,
                connectivity: Connectivity,
            ) -> Result<(DeviceLabels, Timings)> {
                self.0.label_on_device(image, connectivity)
            }
            fn download(&mut self, labels: &DeviceLabels) -> Result<LabelImage> {
                self.0.download(labels)
            }
        }
    };
}

gpu_labeler!(
    /// A labeler on an OpenCL device.
    OpenClLabeler,
    crate::gpu::opencl::OpenCl,
    "opencl"
);
gpu_labeler!(
    /// A labeler on a CUDA device.
    CudaLabeler,
    crate::gpu::cuda::Cuda,
    "cuda"
);

/// Any labeler, chosen at run time (see [`crate::Device::labeler`]).
#[enum_dispatch(Labeler)]
pub enum AnyLabeler {
    /// The CPU reference.
    Cpu(CpuLabeler),
    /// OpenCL.
    #[cfg(feature = "opencl")]
    OpenCl(OpenClLabeler),
    /// CUDA.
    #[cfg(feature = "cuda")]
    Cuda(CudaLabeler),
}

impl AnyLabeler {
    /// The backend of this labeler.
    pub fn backend(&self) -> BackendKind {
        self.device().id.backend()
    }
}
