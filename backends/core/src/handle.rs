//! Opaque handles: each backend stores its native object inside and takes it out again; and the
//! kernel arguments, which pass buffers.

use std::any::Any;
use std::sync::Arc;

use crate::{Error, KernelLimits, Limits, Result};

fn unwrap<'a, T: 'static>(inner: &'a (dyn Any + Send + Sync), device: &str) -> Result<&'a T> {
    inner.downcast_ref::<T>().ok_or_else(|| Error::WrongHandle { device: device.to_string() })
}

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A device buffer, passed as a global pointer.
    Buffer(&'a Buffer),
    /// `uint`.
    U32(u32),
    /// `ulong` (64 bits).
    U64(u64),
    /// `int`.
    I32(i32),
    /// `float`.
    F32(f32),
    /// `double` (the device must support 64-bit floating point).
    F64(f64),
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
    limits: KernelLimits,
}

impl Kernel {
    /// Wraps a backend's kernel, with no limits of its own beyond the device's.
    pub fn new<T: Any + Send>(native: T, name: &str) -> Self {
        Self { inner: Box::new(native), name: name.to_string(), limits: KernelLimits::NONE }
    }

    /// The same kernel, with what its compiled code allows on its device.
    pub fn with_limits(mut self, limits: KernelLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The kernel's function name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the kernel's compiled code allows on its device.
    pub fn limits(&self) -> KernelLimits {
        self.limits
    }

    /// Whether the kernel runs in work-groups of `group` (x, y, z) on a device named `device`
    /// with `limits`: else [`Error::DeviceLimit`] naming the limit it meets (its local memory, or
    /// the work-items of a group, in all or along one axis).
    pub fn check_group(&self, device: &str, group: [usize; 3], limits: &Limits) -> Result<()> {
        let refuse = |limit: &'static str, needs: usize, allows: usize| {
            Err(Error::DeviceLimit {
                device: device.to_string(),
                kernel: self.name.clone(),
                limit,
                needs: needs as u64,
                allows: allows as u64,
            })
        };
        if self.limits.local_memory > limits.local_memory {
            return refuse("bytes of local memory per work-group", self.limits.local_memory, limits.local_memory);
        }
        let items: usize = group.iter().product();
        if items > limits.max_group_size {
            return refuse("work-items per work-group", items, limits.max_group_size);
        }
        if items > self.limits.max_group_size {
            return refuse("work-items per work-group of this kernel", items, self.limits.max_group_size);
        }
        for (d, limit) in ["work-items along x", "work-items along y", "work-items along z"].into_iter().enumerate() {
            if group[d] > limits.max_group_sizes[d] {
                return refuse(limit, group[d], limits.max_group_sizes[d]);
            }
        }
        Ok(())
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

/// Host memory a device allocated for fast copies (page-locked where the backend can, so the
/// device copies to and from it directly at bus speed). Freed when dropped.
pub struct HostBuffer {
    ptr: *mut u8,
    len: usize,
    /// The backend's owner of the memory; dropping it frees the memory.
    _owner: Box<dyn Any + Send + Sync>,
}

// SAFETY: the buffer owns its memory exclusively (like a Box<[u8]>); the owner is Send + Sync.
unsafe impl Send for HostBuffer {}
// SAFETY: shared access only reads through `as_slice`.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// Wraps `len` bytes at `ptr`, valid and exclusively owned for as long as `owner` lives.
    ///
    /// # Safety
    /// `ptr` must point to `len` bytes, aligned to at least 8, that stay valid, and are used
    /// by nothing else, until `owner` is dropped.
    pub unsafe fn from_raw<O: Any + Send + Sync>(ptr: *mut u8, len: usize, owner: O) -> Self {
        Self { ptr, len, _owner: Box::new(owner) }
    }

    /// Ordinary (pageable) host memory, for backends without page-locked memory.
    pub fn unpinned(len: usize) -> Self {
        let mut words = vec![0u64; len.div_ceil(8)].into_boxed_slice();
        let ptr = words.as_mut_ptr().cast::<u8>();
        // SAFETY: the boxed slice holds at least `len` bytes, 8-aligned, and moves into the
        // owner without moving its heap memory.
        unsafe { Self::from_raw(ptr, len, words) }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `from_raw`'s contract.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `from_raw`'s contract; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostBuffer({} bytes)", self.len)
    }
}
