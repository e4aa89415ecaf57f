//! Opaque handles: each backend stores its native object inside and takes it out again.

use std::any::Any;
use std::sync::Arc;

use crate::{Error, Result};

fn unwrap<'a, T: 'static>(inner: &'a (dyn Any + Send + Sync), device: &str) -> Result<&'a T> {
    inner.downcast_ref::<T>().ok_or_else(|| Error::WrongHandle { device: device.to_string() })
}

/// A device buffer of bytes.
pub struct Buffer {
    inner: Box<dyn Any + Send + Sync>,
    len: usize,
}

impl Buffer {
    /// Wraps a backend's buffer of `len` bytes.
    pub fn new<T: Any + Send + Sync>(native: T, len: usize) -> Self {
        Self { inner: Box::new(native), len }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The backend's buffer, if it is of type `T` (`device` names the caller in the error).
    pub fn native<T: 'static>(&self, device: &str) -> Result<&T> {
        unwrap(self.inner.as_ref(), device)
    }

    /// The backend's buffer, mutably.
    pub fn native_mut<T: 'static>(&mut self, device: &str) -> Result<&mut T> {
        self.inner.downcast_mut::<T>().ok_or_else(|| Error::WrongHandle { device: device.to_string() })
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes)", self.len)
    }
}

/// A compiled program (shared by the kernels made from it), with how it was obtained: loaded
/// from the kernel cache or compiled, and how long that took.
#[derive(Clone)]
pub struct Program {
    inner: Arc<dyn Any + Send + Sync>,
    from_cache: bool,
    build_ms: f64,
}

impl Program {
    /// Wraps a backend's compiled program (compiled from source, build time unknown: 0).
    pub fn new<T: Any + Send + Sync>(native: T) -> Self {
        Self { inner: Arc::new(native), from_cache: false, build_ms: 0.0 }
    }

    /// The same program, marked as loaded from the kernel cache (`from_cache`) or compiled, and
    /// obtained in `build_ms` milliseconds of host time.
    pub fn with_origin(self, from_cache: bool, build_ms: f64) -> Self {
        Self { from_cache, build_ms, ..self }
    }

    /// Whether the backend took the program's binary from the kernel cache instead of
    /// compiling its source.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Host milliseconds the backend's build took (cache lookup, compile or binary load); 0
    /// when the backend does not measure it.
    pub fn build_ms(&self) -> f64 {
        self.build_ms
    }

    /// The backend's program, if it is of type `T`.
    pub fn native<T: 'static>(&self, device: &str) -> Result<&T> {
        unwrap(self.inner.as_ref(), device)
    }
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program").field("from_cache", &self.from_cache).field("build_ms", &self.build_ms).finish()
    }
}

/// One kernel of a program, with its name. Launching sets its arguments, so it is used by one
/// thread at a time (`&mut` in [`crate::Gpu::launch`]).
pub struct Kernel {
    inner: Box<dyn Any + Send>,
    name: String,
}

impl Kernel {
    /// Wraps a backend's kernel.
    pub fn new<T: Any + Send>(native: T, name: &str) -> Self {
        Self { inner: Box::new(native), name: name.to_string() }
    }

    /// The kernel's function name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The backend's kernel, mutably, if it is of type `T`.
    pub fn native_mut<T: 'static>(&mut self, device: &str) -> Result<&mut T> {
        self.inner.downcast_mut::<T>().ok_or_else(|| Error::WrongHandle { device: device.to_string() })
    }
}

/// A point in a command stream, for timing.
pub struct Mark(Box<dyn Any + Send + Sync>);

impl Mark {
    /// Wraps a backend's mark.
    pub fn new<T: Any + Send + Sync>(native: T) -> Self {
        Self(Box::new(native))
    }

    /// The backend's mark, if it is of type `T`.
    pub fn native<T: 'static>(&self, device: &str) -> Result<&T> {
        unwrap(self.0.as_ref(), device)
    }
}
