//! Binarization of gray pages on the device, ready for labeling there: Nick (the ICPADS 2015
//! paper's three GPU kernels and a fast one), Niblack, Sauvola, Wolf and Otsu, from one kernel
//! source for OpenCL and CUDA (`kernels/binarize.kernel`), checked bit for bit against the CPU
//! reference ([`mod@reference`]).
//!
//! ```no_run
//! use ccl::binarize::{GrayImage, Method, Params};
//! use ccl::{Connectivity, Device, Labeler, Options};
//!
//! let page = GrayImage::image(64, 48, vec![200; 64 * 48])?;
//! let device = Device::auto()?;
//! let mut binarizer = device.binarizer()?;
//! let mut labeler = device.labeler(ccl::Algorithm::BKE_IC)?;
//! let on_device = binarizer.upload(&page)?;
//! let (ink, _) = binarizer.binarize_on_device(&on_device, &Params::new(Method::Nick))?;
//! let run = labeler.run(&ink, &Options::new(Connectivity::Eight).consecutive())?; // ink is foreground
//! let components = run.count;
//! # Ok::<(), ccl::Error>(())
//! ```

mod device;
mod params;
pub mod reference;

use std::time::Instant;

pub(crate) use device::STAGE;
pub use device::{all_builds as kernel_builds, builds_at_windows as kernel_builds_at_windows};
pub use params::{KernelKind, Method, NickFormula, Params, MAX_WINDOW};

use crate::array::{DeviceArray, Storage};
use crate::host_array::check_len;
pub use crate::host_array::GrayImage;
use crate::{BinaryImage, DeviceImage, DeviceInfo, Error, Phase, PhaseTime, Result, Shape, Timings};

/// A gray page uploaded to a device (the same array type as a binary [`DeviceImage`]).
pub type DeviceGray = DeviceArray<u8>;

/// Gray from 8-bit RGB as OpenCV's `cvtColor(..., COLOR_RGB2GRAY)` computes it (ITU-R BT.601
/// weights in 14-bit fixed point, rounded): (4899 R + 9617 G + 1868 B + 8192) >> 14.
pub fn gray_from_rgb(r: u8, g: u8, b: u8) -> u8 {
    ((4899 * u32::from(r) + 9617 * u32::from(g) + 1868 * u32::from(b) + 8192) >> 14) as u8
}

/// Binarizes gray pages on one device (or with the CPU reference): kernels built once when it
/// is made (per method configuration, at its first use), pages uploaded once, results left on
/// the device as binary images (1 = ink) that any labeler of the same device labels directly.
pub struct Binarizer {
    inner: Inner,
    info: DeviceInfo,
}

enum Inner {
    Cpu,
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    Gpu(Box<device::GpuBinarizer>),
}

impl Binarizer {
    pub(crate) fn cpu() -> Self {
        Self { inner: Inner::Cpu, info: DeviceInfo::cpu() }
    }

    #[cfg(any(feature = "opencl", feature = "cuda"))]
    pub(crate) fn gpu(opened: std::sync::Arc<crate::device::Opened>, info: DeviceInfo) -> Result<Self> {
        Ok(Self { inner: Inner::Gpu(Box::new(device::GpuBinarizer::new(opened)?)), info })
    }

    /// The device it runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    /// How its kernels were obtained so far (none for the CPU).
    pub fn build_report(&self) -> crate::BuildReport {
        match &self.inner {
            Inner::Cpu => crate::BuildReport::default(),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.build_report(),
        }
    }

    /// Builds (and warms up) the kernels `params` needs now, so that no binarization builds.
    pub fn prepare(&mut self, params: &Params) -> Result<()> {
        params.validate()?;
        match &mut self.inner {
            Inner::Cpu => Ok(()),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.prepare(params),
        }
    }

    /// Queues a spin on the binarizer's queue and returns at once, so that the next call's
    /// commands are all queued before the device reaches them (`ccl bench binarize --timing
    /// queued`; see [`crate::GpuLabeler`]'s equivalent). Nothing on the CPU reference.
    pub fn hold_queue(&mut self) -> Result<()> {
        match &mut self.inner {
            Inner::Cpu => Ok(()),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.hold_queue(),
        }
    }

    /// Copies a gray page to the device.
    /// Pages are 2D: a gray volume is an [`Error::InvalidParameter`].
    pub fn upload(&mut self, gray: &GrayImage) -> Result<DeviceGray> {
        if gray.depth() != 1 {
            return Err(Error::InvalidParameter {
                name: "gray page".into(),
                reason: format!("binarization takes 2D pages, not the {} volume given", gray.shape()),
            });
        }
        self.upload_pixels(gray.width(), gray.height(), gray.values())
    }

    /// Copies a gray page given as `width` x `height` row-major gray levels to the device,
    /// straight from `pixels` (no [`GrayImage`] to build first).
    pub fn upload_pixels(&mut self, width: usize, height: usize, pixels: &[u8]) -> Result<DeviceGray> {
        let shape = Shape::image(width, height);
        check_len(shape, pixels.len())?;
        match &mut self.inner {
            Inner::Cpu => Ok(DeviceArray::new(shape, 0, Storage::Host(pixels.to_vec()))),
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.upload(shape, pixels),
        }
    }

    /// Binarizes a page already on the device and leaves the result there (1 = ink): the input
    /// of [`crate::Labeler::run`] with ink as foreground. The timings cover the
    /// output's allocation, the statistics pass (Wolf, Otsu) and the thresholding kernel.
    pub fn binarize_on_device(&mut self, gray: &DeviceGray, params: &Params) -> Result<(DeviceImage, Timings)> {
        params.validate()?;
        match &mut self.inner {
            Inner::Cpu => {
                let Storage::Host(pixels) = &gray.storage else {
                    return Err(Error::DeviceMismatch { device: self.info.name.clone() });
                };
                let start = Instant::now();
                let page = GrayImage::image(gray.width(), gray.height(), pixels.clone())?;
                let ink = reference::binarize(&page, params)?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                let out = DeviceArray::new(gray.shape(), 0, Storage::Host(ink.values().to_vec()));
                Ok((out, Timings { phases: vec![PhaseTime { phase: Phase::Threshold, ms }], iterations: None }))
            }
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.binarize_on_device(gray, params),
        }
    }

    /// [`Self::binarize_on_device`] into `ink`, an array of this device of the page's shape (one
    /// made by [`Self::borrow`], say), which receives 1 for ink and 0 elsewhere.
    pub fn binarize_on_device_into(
        &mut self,
        gray: &DeviceGray,
        params: &Params,
        ink: &mut DeviceImage,
    ) -> Result<Timings> {
        params.validate()?;
        if ink.shape() != gray.shape() {
            return Err(Error::InvalidParameter {
                name: "ink".into(),
                reason: format!("its shape {} is not the page's {}", ink.shape(), gray.shape()),
            });
        }
        match &mut self.inner {
            Inner::Cpu => {
                let (out, timings) = self.binarize_on_device(gray, params)?;
                match (&mut ink.storage, out.storage) {
                    (Storage::Host(target), Storage::Host(pixels)) => target.copy_from_slice(&pixels),
                    _ => return Err(Error::DeviceMismatch { device: self.info.name.clone() }),
                }
                Ok(timings)
            }
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.binarize_on_device_into(gray, params, ink),
        }
    }

    /// Wraps one byte per pixel of `shape` of CUDA device memory at `address` (a gray page, or
    /// where [`Self::binarize_on_device_into`] writes the ink) as an array of this binarizer's
    /// device, without copying; the binarizer's queue first waits for the work so far of stream
    /// `ready_on` (a `CUstream` value; 1 the legacy default stream, 2 the per-thread one). The
    /// array never frees the memory. CUDA devices only (elsewhere
    /// [`BackendError::Unsupported`](crate::BackendError::Unsupported)); memory of another device
    /// is a [`BackendError::InvalidMemory`](crate::BackendError::InvalidMemory).
    ///
    /// # Safety
    /// `address` must hold `shape.len()` bytes of device memory that stay allocated, and that
    /// nothing else writes (nor reads, while the binarizer writes it), for as long as the
    /// returned array lives.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(unused_variables))]
    pub unsafe fn borrow(&mut self, shape: Shape, address: u64, ready_on: Option<u64>) -> Result<DeviceGray> {
        match &mut self.inner {
            Inner::Cpu => {
                let what = "borrowing device memory".into();
                Err(ccl_backend::Error::Unsupported { device: self.info.name.clone(), what }.into())
            }
            // SAFETY: the caller's contract.
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => unsafe { g.borrow(shape, address, ready_on) },
        }
    }

    /// Copies a binarization back (1 = ink).
    pub fn download(&mut self, image: &DeviceImage) -> Result<BinaryImage> {
        match &mut self.inner {
            Inner::Cpu => match &image.storage {
                Storage::Host(pixels) => BinaryImage::image(image.width(), image.height(), pixels.clone()),
                Storage::Device(_) => Err(Error::DeviceMismatch { device: self.info.name.clone() }),
            },
            #[cfg(any(feature = "opencl", feature = "cuda"))]
            Inner::Gpu(g) => g.download(image),
        }
    }

    /// Uploads, binarizes and downloads a page; the timings include the upload and download.
    pub fn binarize(&mut self, gray: &GrayImage, params: &Params) -> Result<(BinaryImage, Timings)> {
        self.prepare(params)?; // checks the parameters too
        let start = Instant::now();
        let on_device = self.upload(gray)?;
        let upload = PhaseTime { phase: Phase::Upload, ms: start.elapsed().as_secs_f64() * 1e3 };
        let (ink, mut timings) = self.binarize_on_device(&on_device, params)?;
        let start = Instant::now();
        let out = self.download(&ink)?;
        timings.phases.insert(0, upload);
        timings.phases.push(PhaseTime { phase: Phase::Download, ms: start.elapsed().as_secs_f64() * 1e3 });
        Ok((out, timings))
    }
}
