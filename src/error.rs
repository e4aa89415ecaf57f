//! The one error type of the crate.

use crate::{Algorithm, BackendKind, Connectivity};

/// Everything that can go wrong in `ccl`, as typed variants naming what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A backend cannot be used: its library is missing, or it has no (such) device.
    #[error("{backend} backend unavailable: {reason}")]
    BackendUnavailable {
        /// The backend that was asked for.
        backend: BackendKind,
        /// Why it cannot be used (library missing, no device, ...).
        reason: String,
    },
    /// A kernel source did not compile; `log` is the device compiler's log.
    #[error("kernel build of {kernel} failed on {device}:\n{log}")]
    KernelBuild {
        /// The kernel source file.
        kernel: String,
        /// The device it was built for.
        device: String,
        /// The compiler log.
        log: String,
    },
    /// A device call failed at run time.
    #[error("device error on {device}: {message}")]
    Device {
        /// The device.
        device: String,
        /// The failing call and its error.
        message: String,
    },
    /// The algorithm does not support this connectivity.
    #[error("{algorithm} does not support {connectivity}; it supports {}", list(.supported))]
    UnsupportedConnectivity {
        /// The algorithm.
        algorithm: Algorithm,
        /// The connectivity asked for.
        connectivity: Connectivity,
        /// What the algorithm supports.
        supported: Vec<Connectivity>,
    },
    /// The algorithm has no implementation on this backend yet.
    #[error("{algorithm} is not implemented on the {backend} backend yet (implemented: {})", list(.implemented))]
    NotImplemented {
        /// The algorithm.
        algorithm: Algorithm,
        /// The backend.
        backend: BackendKind,
        /// Algorithms this backend implements.
        implemented: Vec<Algorithm>,
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
    #[error("invalid input: {width}x{height} has {} pixels, more than 32-bit labels allow ({})", *.width as u128 * *.height as u128, crate::MAX_PIXELS)]
    TooManyPixels {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
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
    /// A device image or label buffer was passed to a labeler of another device.
    #[error("the device buffer belongs to another device than {device}")]
    DeviceMismatch {
        /// The labeler's device.
        device: String,
    },
    /// A device identifier names no device.
    #[error("unknown device '{id}': {reason}")]
    UnknownDevice {
        /// The identifier given.
        id: String,
        /// Why it matched nothing (and what exists).
        reason: String,
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

/// Result type of the crate.
pub type Result<T> = std::result::Result<T, Error>;

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
