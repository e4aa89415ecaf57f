//! Copies between pageable host memory and the device at more than the driver's own staging
//! speed: through two page-locked staging buffers of this handle's, chunk by chunk, the host
//! side of each chunk copied by several threads at once while the device copies the other
//! chunk. Page-locked memory (from [`ccl_backend::Gpu::alloc_host`]) and small copies skip it.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUpointer_attribute};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError, PinnedHostSlice};
use rayon::prelude::*;

/// Copies smaller than this go through the driver directly (reads of at most [`BOUNCE`] bytes
/// through [`Bounce`]).
pub(crate) const MIN_STAGED: usize = 4 << 20;
/// Reads of at most this many bytes (counts, flags, statistics of few components) go through a
/// handle's [`Bounce`] buffer.
pub(crate) const BOUNCE: usize = 64 << 10;
/// Bytes per chunk (and per staging buffer): also the pieces of a streamed read.
const CHUNK: usize = ccl_backend::READ_PIECE;
/// Bytes per host-copying task.
const PIECE: usize = 1 << 20;

/// Whether `ptr` is host memory the driver has page-locked (a copy from or into it is DMA).
/// Asks with `cuPointerGetAttributes`, which (unlike `cuPointerGetAttribute`) answers "no
/// type" for memory the driver does not know, such as pageable memory, instead of failing with
/// an API error that compute-sanitizer reports.
pub(crate) fn is_pinned(ptr: *const u8) -> bool {
    let mut kind: u32 = 0;
    let mut attribute = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data = [(&mut kind as *mut u32).cast::<std::ffi::c_void>()];
    // SAFETY: one attribute, whose value (an unsigned int) is written to `kind`; for memory the
    // driver does not know it writes 0.
    let result = unsafe { sys::cuPointerGetAttributes(1, &mut attribute, data.as_mut_ptr(), ptr as sys::CUdeviceptr) };
    result == sys::CUresult::CUDA_SUCCESS && kind == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
}

/// Asks the kernel to back the 2 MiB-aligned inside of `out` with huge pages where it may
/// (transparent huge pages in `madvise` mode): a fresh destination of gigabytes is then faulted
/// in 2 MiB at a time instead of 4 KiB, which bounds the host side of a read. Only a hint:
/// pages already there are kept, and a refusal changes nothing.
fn advise_huge_pages(out: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (out.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (out.as_ptr() as usize + out.len()) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside `out`, memory this process owns; MADV_HUGEPAGE
            // changes how it is backed, never its contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
}

/// Copies `src` to `dst` (same length) with the host's cores, in pieces.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// One page-locked staging buffer and the event of the device copy that last used it.
struct Slot {
    /// Owns the memory (freed when dropped); `ptr` points into it.
    _memory: PinnedHostSlice<u8>,
    ptr: *mut u8,
    done: CudaEvent,
    pending: bool,
}

/// Why a staged copy stopped: a driver call failed, or (a streamed read) its sink did.
pub(crate) enum CopyFailure {
    /// A driver call failed.
    Driver(DriverError),
    /// The sink returned this error.
    Sink(ccl_backend::Error),
}

impl From<DriverError> for CopyFailure {
    fn from(e: DriverError) -> Self {
        Self::Driver(e)
    }
}

/// Two staging buffers of one handle.
pub(crate) struct Staging {
    slots: [Slot; 2],
}

// SAFETY: the staging memory is owned by this value and used under the handle's lock.
unsafe impl Send for Staging {}

impl Drop for Staging {
    /// Waits for the copies still using the buffers before they are freed.
    fn drop(&mut self) {
        for slot in &self.slots {
            let _ = slot.done.synchronize();
        }
    }
}

/// A small page-locked buffer for short reads: the device copies into it directly, where a
/// read into pageable memory waits for the driver's own staging.
pub(crate) struct Bounce {
    /// Owns the memory (freed when dropped); `ptr` points into it.
    _memory: PinnedHostSlice<u8>,
    ptr: *mut u8,
}

// SAFETY: the memory is owned by this value and used under the handle's lock.
unsafe impl Send for Bounce {}

impl Bounce {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Self, DriverError> {
        // SAFETY: the memory is uninitialised; a read fills what it then copies out.
        let mut memory = unsafe { ctx.alloc_pinned_with_flags::<u8>(BOUNCE, 0) }?;
        let ptr = memory.as_mut_ptr()?;
        Ok(Self { _memory: memory, ptr })
    }

    /// Copies device address `src` into `out` (at most [`BOUNCE`] bytes) once `stream`'s earlier
    /// commands are done; returns when `out` is complete.
    pub(crate) fn read(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        out: &mut [u8],
    ) -> Result<(), DriverError> {
        assert!(out.len() <= BOUNCE, "a bounce read of {} bytes", out.len());
        // SAFETY: the buffer holds BOUNCE >= out.len() bytes and is read only after the stream
        // is synchronised; `src` points at `out.len()` bytes of the caller's buffer.
        unsafe { sys::cuMemcpyDtoHAsync_v2(self.ptr.cast(), src, out.len(), stream.cu_stream()) }.result()?;
        stream.synchronize()?;
        // SAFETY: as above; the copy is complete.
        out.copy_from_slice(unsafe { std::slice::from_raw_parts(self.ptr, out.len()) });
        Ok(())
    }
}

impl Staging {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Self, DriverError> {
        let slot = || -> Result<Slot, DriverError> {
            // SAFETY: the memory is uninitialised; every chunk is written before it is read.
            let mut memory = unsafe { ctx.alloc_pinned_with_flags::<u8>(CHUNK, 0) }?;
            let ptr = memory.as_mut_ptr()?;
            Ok(Slot { _memory: memory, ptr, done: ctx.new_event(None)?, pending: false })
        };
        Ok(Self { slots: [slot()?, slot()?] })
    }

    /// The first `len` bytes of slot `k`, to fill.
    fn host_mut(&mut self, k: usize, len: usize) -> &mut [u8] {
        // SAFETY: each slot holds CHUNK bytes; `len <= CHUNK`; `&mut self` makes it exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.slots[k].ptr, len) }
    }

    /// The first `len` bytes of slot `k`, to read.
    fn host(&self, k: usize, len: usize) -> &[u8] {
        // SAFETY: as above, shared.
        unsafe { std::slice::from_raw_parts(self.slots[k].ptr, len) }
    }

    fn wait(&mut self, k: usize) -> Result<(), DriverError> {
        if self.slots[k].pending {
            self.slots[k].done.synchronize()?;
            self.slots[k].pending = false;
        }
        Ok(())
    }

    /// Copies `data` to device address `dst` on `stream`; returns when the last chunk is
    /// queued (the caller synchronises).
    pub(crate) fn write(&mut self, stream: &CudaStream, dst: sys::CUdeviceptr, data: &[u8]) -> Result<(), DriverError> {
        for (k, chunk) in data.chunks(CHUNK).enumerate() {
            let slot = k % 2;
            self.wait(slot)?;
            parallel_copy(self.host_mut(slot, chunk.len()), chunk);
            let offset = (k * CHUNK) as sys::CUdeviceptr;
            // SAFETY: the staging slot holds `chunk.len()` bytes and stays untouched until its
            // event says the copy is done; `dst + offset` lies in the caller's buffer.
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    dst + offset,
                    self.slots[slot].ptr as *const c_void,
                    chunk.len(),
                    stream.cu_stream(),
                )
            }
            .result()?;
            self.slots[slot].done.record(stream)?;
            self.slots[slot].pending = true;
        }
        Ok(())
    }

    /// Copies device address `src` into `out` through the staging buffers, the device filling
    /// one chunk while the host empties the other; returns when `out` is complete.
    pub(crate) fn read(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        out: &mut [u8],
    ) -> Result<(), CopyFailure> {
        advise_huge_pages(out);
        let mut offset = 0;
        self.read_with(stream, src, out.len(), &mut |piece| {
            parallel_copy(&mut out[offset..offset + piece.len()], piece);
            offset += piece.len();
            Ok(())
        })
    }

    /// Copies `total` bytes from device address `src` through the staging buffers and hands
    /// them to `sink` a chunk at a time, in order, the device filling the next chunk while
    /// `sink` has this one; returns once `sink` has had the last (or its error).
    pub(crate) fn read_with(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        total: usize,
        sink: &mut dyn FnMut(&[u8]) -> ccl_backend::Result<()>,
    ) -> Result<(), CopyFailure> {
        let chunks = total.div_ceil(CHUNK);
        let queue = |this: &mut Self, k: usize| -> Result<(), DriverError> {
            let slot = k % 2;
            let len = CHUNK.min(total - k * CHUNK);
            this.wait(slot)?;
            // SAFETY: the slot holds `len` bytes and is not read until its event completes;
            // `src + k * CHUNK` lies in the caller's buffer.
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(
                    this.slots[slot].ptr.cast(),
                    src + (k * CHUNK) as sys::CUdeviceptr,
                    len,
                    stream.cu_stream(),
                )
            }
            .result()?;
            this.slots[slot].done.record(stream)?;
            this.slots[slot].pending = true;
            Ok(())
        };
        if chunks > 0 {
            queue(self, 0)?;
        }
        for k in 0..chunks {
            if k + 1 < chunks {
                queue(self, k + 1)?;
            }
            self.wait(k % 2)?;
            let len = CHUNK.min(total - k * CHUNK);
            sink(self.host(k % 2, len)).map_err(CopyFailure::Sink)?;
        }
        Ok(())
    }
}
