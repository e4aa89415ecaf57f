//! Errors of the backends.

/// What can go wrong in a backend. Device errors name the device.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The backend cannot be used here: its library is missing or broken, or it has no device.
    #[error("{backend} backend unavailable: {reason}")]
    Unavailable {
        /// `opencl` or `cuda`.
        backend: &'static str,
        /// Why (library missing or broken, no platform, no device).
        reason: String,
    },
    /// No device has this identifier.
    #[error("unknown device '{id}': {reason}")]
    UnknownDevice {
        /// The identifier, e.g. `cuda:3`.
        id: String,
        /// What exists instead.
        reason: String,
    },
    /// A kernel source did not compile.
    #[error("kernel build failed on {device}:\n{log}")]
    Build {
        /// The device.
        device: String,
        /// The compiler's log.
        log: String,
    },
    /// A device call failed.
    #[error("device error on {device}: {message}")]
    Call {
        /// The device.
        device: String,
        /// The failing call and its error.
        message: String,
    },
    /// A handle (buffer, kernel, program, mark) of another backend was passed.
    #[error("a handle of another backend was passed to {device}")]
    WrongHandle {
        /// The device.
        device: String,
    },
    /// A launch range the device cannot run, even folded.
    #[error("launch of {kernel} on {device}: {reason}")]
    InvalidLaunch {
        /// The device.
        device: String,
        /// The kernel.
        kernel: String,
        /// What is wrong with the range.
        reason: String,
    },
    /// A kernel needs more of a device's resources than the device (or its compiler, for this
    /// kernel) allows: local memory, or work-items per work-group.
    #[error("{kernel} needs {needs} {limit} on {device}, which allows {allows}")]
    DeviceLimit {
        /// The device.
        device: String,
        /// The kernel.
        kernel: String,
        /// The limit met, e.g. "work-items per work-group".
        limit: &'static str,
        /// What the kernel needs.
        needs: u64,
        /// What the device allows.
        allows: u64,
    },
    /// The device cannot do what was asked (e.g. an OpenCL device borrowing a CUDA pointer).
    #[error("{device} does not support {what}")]
    Unsupported {
        /// The device.
        device: String,
        /// What it cannot do.
        what: String,
    },
    /// Memory handed to a device is not usable there: not its memory, or smaller than asked.
    #[error("invalid memory for {device}: {reason}")]
    InvalidMemory {
        /// The device.
        device: String,
        /// What is wrong with the memory.
        reason: String,
    },
}

/// Result type of the backends.
pub type Result<T> = std::result::Result<T, Error>;
