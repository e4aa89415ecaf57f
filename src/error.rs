//! The one error type of the crate. Its variants carry plain data, the leaf value types
//! (connectivity, shape) and the backends' error, which it wraps whole, so that every module can
//! return it: it imports no other module.

use crate::algorithm::Connectivity;
use crate::shape::{Shape, MAX_PIXELS};

/// The error of the device backends (`ccl_backend::Error`), which [`Error::Backend`] wraps.
pub use ccl_backend::Error as BackendError;

/// Everything that can go wrong in `ccl`, as typed variants naming what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of a device backend, kept as the backend gave it: a backend that cannot be used
    /// ([`BackendError::Unavailable`]), an identifier that names no device, a failed device call
    /// or launch, a kernel that needs more than the device allows ([`BackendError::DeviceLimit`]),
    /// something the device cannot do ([`BackendError::Unsupported`]), memory it cannot use. Its
    /// message and [`source`](std::error::Error::source) are the backend error's.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A kernel file did not compile. A variant of its own because the backend, which compiles
    /// source text, does not know which file of `ccl` the source is: `kernel` names it, and
    /// `source` is the backend's error (the device and the compiler's log).
    #[error("{kernel}: {source}")]
    KernelBuild {
        /// The kernel source file.
        kernel: String,
        /// The backend's build error.
        #[source]
        source: BackendError,
    },
    /// The algorithm does not support this connectivity.
    #[error("{algorithm} does not support {connectivity}; it supports {}", list(.supported))]
    UnsupportedConnectivity {
        /// The algorithm's name ([`crate::Algorithm::name`]).
        algorithm: &'static str,
        /// The connectivity asked for.
        connectivity: Connectivity,
        /// What the algorithm supports.
        supported: Vec<Connectivity>,
    },
    /// The algorithm does not label this kind of image: a multi-label image
    /// ([`crate::ImageKind::MultiLabel`]) with an algorithm whose kernels only test foreground.
    #[error("{algorithm} does not label multi-label images with {connectivity}; {} do", list(.supported))]
    UnsupportedMultiLabel {
        /// The algorithm's name ([`crate::Algorithm::name`]).
        algorithm: &'static str,
        /// The connectivity asked for.
        connectivity: Connectivity,
        /// The algorithms that do, at that connectivity.
        supported: Vec<&'static str>,
    },
    /// The image has no pixel.
    #[error("invalid input: the image is empty ({width}x{height})")]
    EmptyImage {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
    },
    /// The image has more pixels than 32-bit labels can number.
    #[error("invalid input: {width}x{height} has {} pixels, more than 32-bit labels allow ({})", *.width as u128 * *.height as u128, MAX_PIXELS)]
    TooManyPixels {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
    },
    /// The volume has no voxel.
    #[error("invalid input: the volume is empty ({shape})")]
    EmptyVolume {
        /// Its extent.
        shape: Shape,
    },
    /// The volume has more voxels than 32-bit labels can number.
    #[error("invalid input: the volume {shape} has {} voxels, more than 32-bit labels allow ({})", .shape.width as u128 * .shape.height as u128 * .shape.depth as u128, MAX_PIXELS)]
    TooManyVoxels {
        /// Its extent.
        shape: Shape,
    },
    /// Voxel buffer length does not match the volume's extent.
    #[error("invalid input: {len} voxels given for a {shape} volume")]
    VolumeSizeMismatch {
        /// Its extent.
        shape: Shape,
        /// Number of voxels given.
        len: usize,
    },
    /// A connectivity of images used on a volume, or one of volumes on an image.
    #[error("invalid connectivity: {connectivity} is for {}, not for {what} (use {})", if .connectivity.dims() == 2 { "images" } else { "volumes" }, if .connectivity.dims() == 2 { "6, 18 or 26" } else { "4 or 8" })]
    ConnectivityDimensions {
        /// The connectivity given.
        connectivity: Connectivity,
        /// What it was given for: "a volume" or "an image".
        what: &'static str,
    },
    /// Pixel buffer length does not match width x height.
    #[error("invalid input: {len} pixels given for a {width}x{height} image")]
    SizeMismatch {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
        /// Number of pixels given.
        len: usize,
    },
    /// A device image or label buffer was passed to a labeler of another device. `ccl`'s own
    /// check, kept apart from [`BackendError::WrongHandle`] (a handle of another backend): buffers
    /// of two devices of one backend are refused here, which the backend cannot tell.
    #[error("the device buffer belongs to another device than {device}")]
    DeviceMismatch {
        /// The labeler's device.
        device: String,
    },
    /// Labels of another shape than the image they are to label.
    #[error("invalid labels: their shape {labels} is not the image's {image}")]
    ShapeMismatch {
        /// The image's extent.
        image: Shape,
        /// The labels' extent.
        labels: Shape,
    },
    /// Labels a device returned break what labels must be (e.g. a label past the count of a
    /// consecutive labeling): a wrong device result, caught instead of passed on.
    #[error("inconsistent labels from the device: {what}")]
    InconsistentLabels {
        /// What is wrong.
        what: String,
    },
    /// A parameter is outside its valid range or otherwise unusable.
    #[error("invalid {name}: {reason}")]
    InvalidParameter {
        /// The parameter (as the command line names it).
        name: String,
        /// What is wrong with the value given.
        reason: String,
    },
    /// An input image is larger than the limit the caller set (or than 32-bit labels allow).
    #[error(
        "{path} is {width}x{height} ({:.1} Mpx), more than the limit of {limit} pixels{}; reading and labeling it \
         needs about {} of host memory",
        *.width as f64 * *.height as f64 / 1e6,
        if *.limit == MAX_PIXELS { " (32-bit labels)" } else { " (--max-pixels)" },
        human_bytes(*.memory_bytes)
    )]
    ImageTooLarge {
        /// The file.
        path: String,
        /// Width in pixels.
        width: u64,
        /// Height in pixels.
        height: u64,
        /// The pixel limit.
        limit: u64,
        /// Estimated peak host memory, bytes.
        memory_bytes: u64,
    },
    /// An input volume has more voxels than the limit the caller set (or than 32-bit labels
    /// allow).
    #[error(
        "{path} is {width}x{height}x{depth} ({:.1} M voxels), more than the limit of {limit} voxels{}; reading and \
         labeling it needs about {} of host memory",
        *.width as f64 * *.height as f64 * *.depth as f64 / 1e6,
        if *.limit == MAX_PIXELS { " (32-bit labels)" } else { " (--max-pixels)" },
        human_bytes(*.memory_bytes)
    )]
    VolumeTooLarge {
        /// The file or folder.
        path: String,
        /// Width in voxels.
        width: u64,
        /// Height in voxels.
        height: u64,
        /// Slices.
        depth: u64,
        /// The voxel limit.
        limit: u64,
        /// Estimated peak host memory, bytes.
        memory_bytes: u64,
    },
    /// The host has less memory available than a task needs.
    #[error("{what} needs about {} of host memory, but only {} is available", human_bytes(*.needed_bytes), human_bytes(*.available_bytes))]
    InsufficientMemory {
        /// The task (e.g. "labeling big.png (24000x24000)").
        what: String,
        /// Estimated need, bytes.
        needed_bytes: u64,
        /// Available memory (`MemAvailable`), bytes.
        available_bytes: u64,
    },
    /// The output path names the input file.
    #[error("refusing to write over the input {path}: choose another output path")]
    OutputIsInput {
        /// The input file.
        path: String,
    },
    /// An output path that must not be written: a symbolic link, a device, a folder, `-`, or a
    /// pipe for a format that needs a seekable file.
    #[error("refusing to write {path}: {reason}")]
    OutputRefused {
        /// The output path as given.
        path: String,
        /// What it is, and what to do instead.
        reason: String,
    },
    /// Two outputs of one command name the same file, so one would replace the other.
    #[error("{first} and {second} both name {path}: give each output its own file")]
    OutputsCollide {
        /// The file both name.
        path: String,
        /// The first option naming it (e.g. `-o`).
        first: String,
        /// The second option naming it (e.g. `--stats`).
        second: String,
    },
    /// A file other than an image (a results CSV, a folder) could not be read.
    #[error("cannot read {path}: {reason}")]
    FileRead {
        /// The file or folder.
        path: String,
        /// Why.
        reason: String,
    },
    /// A file other than an image (a summary, a plot, standard output) could not be written.
    #[error("cannot write {path}: {reason}")]
    FileWrite {
        /// The file or folder.
        path: String,
        /// Why.
        reason: String,
    },
    /// Some images of a batch failed (each was reported as it failed); the others were done.
    #[error("{failed} of {total} images failed (named above); the other {} were written", .total - .failed)]
    BatchFailed {
        /// Images that failed.
        failed: usize,
        /// Images in the batch.
        total: usize,
    },
    /// An input file could not be read or decoded.
    #[error("cannot read image {path}: {reason}")]
    ImageRead {
        /// The file.
        path: String,
        /// The reader's error.
        reason: String,
    },
    /// An output file could not be written.
    #[error("cannot write {path}: {reason}")]
    ImageWrite {
        /// The file.
        path: String,
        /// The writer's error.
        reason: String,
    },
}

impl Error {
    /// The backend error this error wraps or was caused by ([`Error::Backend`],
    /// [`Error::KernelBuild`]), to tell its kind without nesting patterns.
    pub fn backend(&self) -> Option<&BackendError> {
        match self {
            Error::Backend(e) | Error::KernelBuild { source: e, .. } => Some(e),
            _ => None,
        }
    }

    /// The file this error names, for the errors about one file.
    pub fn path(&self) -> Option<&str> {
        match self {
            Error::ImageTooLarge { path, .. }
            | Error::VolumeTooLarge { path, .. }
            | Error::OutputIsInput { path }
            | Error::OutputRefused { path, .. }
            | Error::OutputsCollide { path, .. }
            | Error::FileRead { path, .. }
            | Error::FileWrite { path, .. }
            | Error::ImageRead { path, .. }
            | Error::ImageWrite { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Result type of the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Bytes as a short human-readable size (`1.5 GB`, `300 MB`).
pub(crate) fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} kB", (b / 1e3).ceil())
    }
}

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
