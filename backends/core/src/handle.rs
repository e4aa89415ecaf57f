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

/// A compiled program (shared by the kernels made from it).
#[derive(Clone)]
pub struct Program(Arc<dyn Any + Send + Sync>);

impl Program {
    /// Wraps a backend's compiled program.
    pub fn new<T: Any + Send + Sync>(native: T) -> Self {
        Self(Arc::new(native))
    }

    /// The backend's program, if it is of type `T`.
    pub fn native<T: 'static>(&self, device: &str) -> Result<&T> {
        unwrap(self.0.as_ref(), device)
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
