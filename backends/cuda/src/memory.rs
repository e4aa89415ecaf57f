//! Device memory: the free list of dropped buffers a handle keeps, the buffers it allocates
//! ([`Recycled`]) and borrows ([`Borrowed`]), what the driver says about an address, and ccl's
//! own stream-ordered memory pool.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DriverError};

/// Memory of dropped buffers that a handle keeps for its next allocations ([`Runtime`]'s
/// `alloc`), at most [`FreeList::KEPT`] of them and an eighth of the device's memory: a
/// labeling that allocates its labels and input anew each call then takes them from here
/// rather than from the driver's pool, which on an H100 took 0.2-0.5 ms for the 268 MB labels of an 8192x8192 image in most calls of
/// `ccl bench end-to-end` (an unlimited release threshold and the pool's reuse flags did not
/// change that). A/B on one H100, two rounds: that allocation phase 0.27-0.37 -> 0.004-0.009 ms
/// (median), the host-to-host call 8.09-8.20 -> 7.90-8.08 ms for TUF, 12.28-12.49 ->
/// 11.96-12.11 for UF; 2048^2 and the pages within noise. Reuse happens on the handle's own
/// stream, after every command queued before the drop, as the pool's stream-ordered reuse
/// does.
///
/// [`Runtime`]: crate::Runtime
pub(crate) struct FreeList {
    slices: Mutex<Vec<CudaSlice<u8>>>,
    /// Bytes kept at most (an eighth of the device's memory; 0: none).
    pub(crate) max_bytes: usize,
}

impl FreeList {
    /// Slices kept at most (the oldest is freed first).
    const KEPT: usize = 4;

    /// A list for a device of `total` bytes.
    pub(crate) fn for_device(total: usize) -> Self {
        Self::keeping(total / 8)
    }

    /// A list that keeps at most `max_bytes`.
    pub(crate) fn keeping(max_bytes: usize) -> Self {
        Self { slices: Mutex::default(), max_bytes }
    }

    /// The smallest kept slice of at least `bytes` bytes and at most twice as many.
    pub(crate) fn take(&self, bytes: usize) -> Option<CudaSlice<u8>> {
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        let fits = |s: &CudaSlice<u8>| s.len() >= bytes && s.len() <= 2 * bytes;
        let best = slices.iter().enumerate().filter(|(_, s)| fits(s)).min_by_key(|(_, s)| s.len()).map(|(i, _)| i)?;
        Some(slices.swap_remove(best))
    }

    /// Keeps `slice`, freeing the oldest kept ones while there are [`FreeList::KEPT`] or more
    /// than `max_bytes` with it (a slice larger than that is freed at once).
    pub(crate) fn put(&self, slice: CudaSlice<u8>) {
        if slice.len() > self.max_bytes {
            return;
        }
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept: usize = slices.iter().map(|s| s.len()).sum();
        while !slices.is_empty() && (slices.len() >= Self::KEPT || kept + slice.len() > self.max_bytes) {
            kept -= slices.remove(0).len();
        }
        slices.push(slice);
    }

    /// Frees every kept slice; whether there were any.
    pub(crate) fn clear(&self) -> bool {
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        let any = !slices.is_empty();
        slices.clear();
        any
    }
}

/// Memory allocated by a handle: given back to its [`FreeList`] when the buffer drops.
pub(crate) struct Recycled {
    pub(crate) slice: Option<CudaSlice<u8>>,
    pub(crate) free: Arc<FreeList>,
}

impl Recycled {
    pub(crate) fn slice(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("present until dropped")
    }

    pub(crate) fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slice.as_mut().expect("present until dropped")
    }
}

impl Drop for Recycled {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            self.free.put(slice);
        }
    }
}

/// Device memory a caller owns, wrapped as a slice of this backend by [`Gpu::borrow`]. Dropping
/// it waits for the commands of the stream it was borrowed on (they may still use the memory),
/// then forgets the memory without freeing it.
///
/// [`Gpu::borrow`]: ccl_backend::Gpu::borrow
pub(crate) struct Borrowed(pub(crate) Option<CudaSlice<u8>>);

impl Borrowed {
    pub(crate) fn slice(&self) -> &CudaSlice<u8> {
        self.0.as_ref().expect("a borrowed slice is present until dropped")
    }

    pub(crate) fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.0.as_mut().expect("a borrowed slice is present until dropped")
    }
}

impl Drop for Borrowed {
    fn drop(&mut self) {
        if let Some(slice) = self.0.take() {
            // An error here is the context's own (recorded by cudarc, reported by later calls).
            let _ = slice.stream().synchronize();
            // Releases the slice's stream without freeing the memory.
            let _ = slice.leak();
        }
    }
}

/// What the driver says about the memory at a device address.
pub(crate) struct Memory {
    /// Device or managed memory (not host memory mapped for the device).
    pub(crate) on_device: bool,
    /// The CUDA ordinal of the device it was allocated on.
    pub(crate) ordinal: i32,
    /// The allocation that holds the address (start, size in bytes), when the driver says.
    pub(crate) range: Option<(u64, u64)>,
}

/// One pointer attribute of `address`, of type `T` (the type the attribute is documented with).
///
/// # Safety
/// `T` must be the attribute's type (`unsigned int`, `int`, `CUdeviceptr` or `size_t`).
unsafe fn pointer_attribute<T: Copy>(
    address: u64,
    attribute: cudarc::driver::sys::CUpointer_attribute,
    zero: T,
) -> std::result::Result<T, DriverError> {
    let mut value = zero;
    // SAFETY: the driver writes one value of the attribute's type, which `T` is.
    unsafe { cudarc::driver::sys::cuPointerGetAttribute((&mut value as *mut T).cast(), attribute, address) }
        .result()?;
    Ok(value)
}

/// Asks the driver about the memory at `address`; an error when it does not know the address
/// (memory CUDA did not allocate or register). The driver must be initialised.
pub(crate) fn query_memory(address: u64) -> std::result::Result<Memory, DriverError> {
    use cudarc::driver::sys::{CUmemorytype, CUpointer_attribute as A};
    // SAFETY: each attribute is read with its documented type: the memory type and the managed
    // flag as unsigned int, the ordinal as int, the range start as CUdeviceptr, its size size_t.
    unsafe {
        let kind = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0u32)?;
        let managed = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_IS_MANAGED, 0u32)? != 0;
        let ordinal = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, -1i32)?;
        let start = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 0u64);
        let size = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_RANGE_SIZE, 0usize);
        let on_device = managed
            || kind == CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
            || kind == CUmemorytype::CU_MEMORYTYPE_UNIFIED as u32;
        let range = match (start, size) {
            (Ok(start), Ok(size)) if size > 0 => Some((start, size as u64)),
            _ => None,
        };
        Ok(Memory { on_device, ordinal, range })
    }
}

/// A memory pool of ccl's own on one device, for the stream-ordered allocations of labelings
/// (output and scratch buffers, made and freed by every labeling). Freed memory is kept, up to
/// a quarter of the device's memory (the release threshold: the driver gives back what is kept
/// beyond it at the next synchronisation), and reused only by the stream that freed it, so a
/// labeler's next allocation on its own stream is immediate instead of searching blocks freed
/// on other streams; when the device runs out, the kept memory is released and the allocation
/// retried. The bound leaves the rest to other users of the device, which cannot ask ccl to
/// trim: with it unlimited, one process that labeled 1024^3 volumes with seven CUDA labelers
/// (a stream each) kept so much that NVIDIA's OpenCL on the same GPU then failed to allocate
/// (`ccl bench size --dims 3`, H100). The device's default pool, which other libraries in the
/// process may use, is left alone.
pub(crate) struct Pool(cudarc::driver::sys::CUmemoryPool);

// SAFETY: a CUmemoryPool handle may be used from any thread.
unsafe impl Send for Pool {}
// SAFETY: as above; the driver synchronises pool operations.
unsafe impl Sync for Pool {}

impl Pool {
    /// A pool on `ctx`'s device, or `None` when the device has no memory pools.
    pub(crate) fn new(ctx: &CudaContext) -> std::result::Result<Option<Self>, DriverError> {
        use cudarc::driver::sys::*;
        if ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? == 0 {
            return Ok(None);
        }
        // SAFETY: zero is a valid value of every field of the properties struct (no handle
        // types, no limit, reserved bytes zero).
        let mut props: CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ctx.ordinal() as i32;
        let mut pool = std::ptr::null_mut();
        // SAFETY: `props` describes this device; the driver writes the new pool's handle.
        unsafe { cuMemPoolCreate(&mut pool, &props).result()? };
        let pool = Pool(pool);
        let mut threshold = ctx.total_mem().map_or(u64::MAX, |bytes| bytes as u64 / 4);
        // SAFETY: each attribute takes a pointer to a value of the documented type (u64 for the
        // release threshold, int for the reuse flags).
        unsafe {
            let attr = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
            cuMemPoolSetAttribute(pool.0, attr, (&mut threshold as *mut u64).cast()).result()?;
            for attr in [
                CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            ] {
                let mut off: i32 = 0;
                cuMemPoolSetAttribute(pool.0, attr, (&mut off as *mut i32).cast()).result()?;
            }
        }
        Ok(Some(pool))
    }

    /// `bytes` bytes on `stream`; on a full device, releases the kept memory (after every
    /// stream of the context is done with it) and tries once more.
    pub(crate) fn alloc(
        &self,
        ctx: &CudaContext,
        stream: &Arc<CudaStream>,
        bytes: usize,
    ) -> std::result::Result<CudaSlice<u8>, DriverError> {
        use cudarc::driver::sys::{cuMemAllocFromPoolAsync, cuMemPoolTrimTo, CUresult};
        ctx.bind_to_thread()?;
        let mut ptr = 0;
        // SAFETY: the pool belongs to this context's device and the stream to this context.
        let mut result = unsafe { cuMemAllocFromPoolAsync(&mut ptr, bytes, self.0, stream.cu_stream()) };
        if result == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            ctx.synchronize()?;
            // SAFETY: as above; trimming only releases memory no allocation holds.
            unsafe { cuMemPoolTrimTo(self.0, 0).result()? };
            result = unsafe { cuMemAllocFromPoolAsync(&mut ptr, bytes, self.0, stream.cu_stream()) };
        }
        result.result()?;
        // SAFETY: `ptr` is a fresh allocation of `bytes` bytes on `stream`; the slice frees it
        // there (cuMemFreeAsync) when dropped, and every kernel writes before it reads.
        Ok(unsafe { stream.upgrade_device_ptr::<u8>(ptr, bytes) })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: the handle is ours; with allocations outstanding the driver defers the
        // release until they are freed.
        unsafe { cudarc::driver::sys::cuMemPoolDestroy(self.0) };
    }
}
