//! `ccl`: vendor-neutral GPU connected-components labeling.
//!
//! The GPU algorithms of IPAS 2018 and TPDS 2020 on OpenCL (any vendor, or a CPU through POCL)
//! and CUDA, from one kernel source and one host schedule per algorithm, checked against a CPU
//! reference; and binarization of gray pages on the same devices ([`binarize`]), whose result
//! the labelers take without it leaving the device.
//!
//! ```no_run
//! use ccl::{Algorithm, BinaryImage, Connectivity, Device, Labeler, Options};
//!
//! let image = BinaryImage::image_from_fn(64, 48, |x, y| (x / 4 + y / 4) % 2 == 0)?;
//! let device = Device::auto()?; // CUDA, else an OpenCL GPU, else OpenCL, else the CPU
//! let mut labeler = device.labeler(Algorithm::UF)?;
//! let on_device = labeler.upload(&image)?;
//! let run = labeler.run(&on_device, &Options::new(Connectivity::Eight).consecutive())?;
//! println!("{} components in {:.3} ms", run.count.unwrap_or(0), run.timings.labeling_ms());
//! let labels = labeler.download(&run.labels)?;
//! # Ok::<(), ccl::Error>(())
//! ```

mod algorithm;
mod array;
pub mod batch;
pub mod binarize;
mod device;
mod error;
mod gpu;
mod handle;
mod hilbert;
mod host_array;
pub mod io;
pub mod kernels;
mod labeler;
pub mod multilabel;
pub mod pipeline;
pub mod quality;
pub mod recording;
pub mod reference;
pub mod regions;
pub mod registry;
mod samples;
mod schedule;
mod shape;
pub mod slabs;
mod stats;
mod timings;

pub use algorithm::{Connectivity, RawLabels};
pub use array::{DeviceArray, DeviceImage, DeviceLabels, Numbering};
pub use device::{
    auto_device, cuda_pointer_device, discover, kernel_cache_note, BackendKind, DeviceId, DeviceInfo, DeviceType,
    Discovery,
};
pub use error::{BackendError, Error, Result};
pub use gpu::BuildReport;
pub use handle::Device;
pub use hilbert::{hilbert_point, hilbert_side, hilbert_volume, MAX_HILBERT_ORDER};
pub use host_array::{BinaryImage, GrayImage, HostArray, LabelImage};
pub use labeler::{run_host, AnyLabeler, CpuLabeler, GpuLabeler, Labeler, LABEL_PIECE};
pub use multilabel::{ImageKind, LabelValue};
pub use pipeline::{Filter, LabelNumbering, Options, Run, Stats};
pub use regions::{Property, RegionSums, RegionTable};
pub use registry::{Algorithm, UnknownAlgorithm};
pub use samples::{random_image, random_volume, sample_image};
pub use shape::{Element, ElementType, PinnedBuffer, Shape, MAX_PIXELS};
pub use stats::{ComponentStat, ComponentStats, OpenCvStats};
pub use timings::{Phase, PhaseTime, Timings};

/// Hooks for the project's own tests, not part of the stable API.
#[doc(hidden)]
pub mod testing {
    /// The stage methods [`crate::Labeler::run`] chains (crate-internal otherwise), for tests
    /// that check one stage on its own.
    pub use crate::labeler::Stages;
    pub use crate::schedule::tuf::TileKernel as TufTileKernel;

    /// Forces TUF's tile kernel for every later labeling of an image in this process (`None`:
    /// chosen by the image's size, the device and the connectivity, the default). All are
    /// exact; the choice is only about speed.
    pub fn force_tuf_tile_kernel(kernel: Option<TufTileKernel>) {
        crate::schedule::tuf::force_tile_kernel(kernel)
    }
}

/// The README's examples compile and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The Rust examples of docs/library.md (raw labels among them) compile and run as doctests.
#[doc = include_str!("../docs/library.md")]
#[cfg(doctest)]
pub struct LibraryDoctests;

/// The Rust examples of docs/binarization.md compile and run as doctests.
#[doc = include_str!("../docs/binarization.md")]
#[cfg(doctest)]
pub struct BinarizationDoctests;
