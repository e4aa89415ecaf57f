//! Page-locked memory for the label arrays `ccl.label` returns from a GPU, recycled.
//!
//! A fresh NumPy array costs its first touch: 16 MiB of new pages take about 1.5 ms to fault
//! in, 256 MiB about 40 ms, more than the labeling itself, and pageable memory also makes the
//! download go through a staging copy. So each label array of a GPU is a view of a page-locked
//! buffer that the device writes by DMA, owned by a [`PooledLabels`] object (the array's
//! base); when the array (and every view of it) is gone, the buffer goes back to a pool, and
//! the next call of that device and size takes it without allocating or faulting anything.
//!
//! The pool holds at most [`limit`] bytes of page-locked memory, lent and kept together:
//! past that (a caller keeping many large label arrays), kept buffers are freed first and then
//! arrays fall back to ordinary memory, so page-locked memory stays bounded whatever the caller
//! does. Arrays under [`MIN_POOLED_BYTES`] use ordinary memory: faulting them is cheap.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use ccl::{Device, PinnedBuffer};
use numpy::ndarray::ArrayView1;
use numpy::PyArray1;
use pyo3::prelude::*;

/// Page-locked bytes lent out and kept, at most: an eighth of the memory available when first
/// asked, and at least 256 MiB (two 8192x8192 label arrays) and at most 4 GiB.
pub fn limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let available = ccl::io::available_memory().unwrap_or(0) / 8;
        available.clamp(256 << 20, 4 << 30) as usize
    })
}
/// Label arrays smaller than this are ordinary memory.
pub const MIN_POOLED_BYTES: usize = 1 << 20;

/// Buffers kept for reuse, by (device id, element count), and the bytes lent and kept.
#[derive(Default)]
struct Pool {
    kept: HashMap<(String, usize), Vec<PinnedBuffer<u32>>>,
    kept_bytes: usize,
    lent_bytes: usize,
}

fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(Default::default)
}

fn lock() -> std::sync::MutexGuard<'static, Pool> {
    pool().lock().unwrap_or_else(|p| p.into_inner())
}

/// A page-locked buffer of `n` labels of `device` to label into, from the pool or made now;
/// `None` where ordinary memory does as well (the CPU reference, a small array) or the pool is
/// full.
pub fn take(device: &Device, n: usize) -> Option<PooledBuffer> {
    let bytes = n.checked_mul(4)?;
    if device.info().id == ccl::DeviceId::Cpu || bytes < MIN_POOLED_BYTES {
        return None;
    }
    let key = (device.info().id.to_string(), n);
    {
        let mut pool = lock();
        if let Some(buffer) = pool.kept.get_mut(&key).and_then(Vec::pop) {
            pool.kept_bytes -= bytes;
            pool.lent_bytes += bytes;
            return Some(PooledBuffer { key, buffer: Some(buffer) });
        }
        // Room for one more: free kept buffers of other sizes first.
        while pool.lent_bytes + pool.kept_bytes + bytes > limit() {
            let Some((&(_, count), buffers)) = pool.kept.iter_mut().find(|(_, b)| !b.is_empty()) else { break };
            drop(buffers.pop());
            pool.kept_bytes -= 4 * count;
        }
        if pool.lent_bytes + pool.kept_bytes + bytes > limit() {
            return None;
        }
        pool.lent_bytes += bytes;
    }
    match device.pinned_buffer::<u32>(n) {
        Ok(buffer) => Some(PooledBuffer { key, buffer: Some(buffer) }),
        Err(_) => {
            lock().lent_bytes -= bytes;
            None
        }
    }
}

/// A buffer lent by the pool, to label into and then hand to NumPy
/// ([`PooledBuffer::into_array`]); back to the pool when dropped.
pub struct PooledBuffer {
    key: (String, usize),
    /// Always `Some` until dropped.
    buffer: Option<PinnedBuffer<u32>>,
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            let bytes = 4 * self.key.1;
            let mut pool = lock();
            pool.lent_bytes -= bytes;
            pool.kept_bytes += bytes;
            pool.kept.entry(self.key.clone()).or_default().push(buffer);
        }
    }
}

impl PooledBuffer {
    /// The labels' memory.
    pub fn as_mut_slice(&mut self) -> &mut [u32] {
        let n = self.key.1;
        &mut self.buffer.as_mut().expect("held until dropped")[..n]
    }

    /// A 1-D uint32 NumPy array over the buffer, which owns it (through a [`PooledLabels`]
    /// base) and gives it back to the pool when the array and its views are gone.
    pub fn into_array(self, py: Python<'_>) -> PyResult<Bound<'_, PyArray1<u32>>> {
        let (ptr, n) = (self.buffer.as_ref().expect("held until dropped").as_ptr(), self.key.1);
        let owner = Bound::new(py, PooledLabels { _buffer: Some(self) })?;
        // SAFETY: `ptr` points to `n` initialised u32 owned by the buffer inside `owner`, which
        // moves the PinnedBuffer without moving its memory, never reallocates it, and becomes
        // the array's base, so the memory lives (and is not given back) as long as the array
        // and any view of it.
        let view = unsafe { ArrayView1::from_shape_ptr(n, ptr) };
        Ok(unsafe { PyArray1::borrow_from_array(&view, owner.into_any()) })
    }
}

/// The owner of a pooled label array's memory, which goes back to the pool with it.
#[pyclass(frozen)]
pub struct PooledLabels {
    _buffer: Option<PooledBuffer>,
}

/// Page-locked bytes lent out and kept by the pool now: `(lent, kept)`.
pub fn usage() -> (usize, usize) {
    let pool = lock();
    (pool.lent_bytes, pool.kept_bytes)
}
