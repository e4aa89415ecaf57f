//! Host memory the driver copies from and into directly, and copies of ordinary (pageable) host
//! memory staged through such memory.
//!
//! A buffer created with `CL_MEM_ALLOC_HOST_PTR` and mapped once for the host ([`MappedHost`])
//! is page-locked on NVIDIA's OpenCL: a write or read of a device buffer from or into its mapped
//! pointer is a DMA transfer, where one from pageable memory waits for the driver's own, slower,
//! staging. [`Gpu::alloc_host`](ccl_backend::Gpu::alloc_host) hands such buffers out and keeps
//! their address ranges in a [`Regions`] registry while they live.
//!
//! Uploads of at least [`MIN_STAGED_WRITE`] bytes and downloads of at least [`MIN_STAGED_READ`]
//! from or into memory that is not in that registry go
//! through two mapped staging buffers of the runtime handle ([`Staging`], made at the first such
//! copy and kept), chunk by chunk: the host side of a chunk is copied by several threads at once
//! (rayon, in pieces) while the device copies the other chunk with a non-blocking command. A
//! write fills one buffer while the device copies the previous chunk out of the other; a read
//! has the device fill one buffer while the host empties the other. Either call returns when the
//! whole copy is done, as a direct one does. Smaller copies, and copies from or into the
//! registry's memory, are one blocking command. On other drivers (POCL, where such memory is
//! ordinary memory) the path is the same, only without the gain; on Oclgrind staging is off (it
//! takes a buffer as initialised only after one write of its whole range). `CCL_OPENCL_STAGING=0`
//! (or `off`) turns staging off for the runtimes opened afterwards, for A/B measurements.
//!
//! Staged copies, like direct ones, are not timed: the runtime ends the span of its timed
//! commands first (its `seal`), and their events never enter its timeline.

use std::collections::BTreeMap;
use std::ptr;
use std::sync::{Arc, Mutex};

use ccl_backend::Result;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::event::Event;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::types::{cl_command_queue, cl_event, cl_int, cl_mem, CL_BLOCKING, CL_NON_BLOCKING};
use rayon::prelude::*;

use crate::{call_error, driver_lock};

/// The environment variable that turns staging off (`0` or `off`).
pub(crate) const STAGING_VAR: &str = "CCL_OPENCL_STAGING";
/// Uploads smaller than this go through the driver directly: NVIDIA's OpenCL copies 4 and 8 MiB
/// of pageable memory faster by itself than through one or two staged chunks, 16 MiB and more
/// slower (an H200: 0.31 against 0.46 ms at 4 MiB, 1.51 against 1.06 ms at 16 MiB;
/// bench-results/h200/issue51-staging/).
pub(crate) const MIN_STAGED_WRITE: usize = 16 << 20;
/// Downloads smaller than this go through the driver directly.
pub(crate) const MIN_STAGED_READ: usize = 4 << 20;
/// Bytes per chunk, and per staging buffer.
const CHUNK: usize = ccl_backend::READ_PIECE;
/// Bytes per host-copying task.
const PIECE: usize = 1 << 20;

/// Whether the environment leaves staging on (it is unless [`STAGING_VAR`] is `0` or `off`).
pub(crate) fn enabled_by_env() -> bool {
    let value = std::env::var(STAGING_VAR).unwrap_or_default();
    !matches!(value.trim().to_ascii_lowercase().as_str(), "0" | "off")
}

/// A buffer in host memory the driver allocated (`CL_MEM_ALLOC_HOST_PTR`), mapped once for the
/// host through a queue of its own, unmapped and released when dropped.
pub(crate) struct MappedHost {
    buffer: ClBuffer<u8>,
    queue: CommandQueue,
    ptr: *mut u8,
}

// SAFETY: the mapping is owned exclusively; the OpenCL objects are thread-safe.
unsafe impl Send for MappedHost {}
// SAFETY: the owner never reads or writes through the pointer itself.
unsafe impl Sync for MappedHost {}

impl MappedHost {
    /// A mapped buffer of `bytes` bytes (at least one) in `context`; errors name `device`.
    pub(crate) fn new(context: &Context, device: &str, bytes: usize) -> Result<Self> {
        let _serialised = driver_lock();
        let size = bytes.max(1);
        let flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
        // SAFETY: no host pointer is passed; the driver allocates the memory.
        let buffer = unsafe { ClBuffer::<u8>::create(context, flags, size, ptr::null_mut()) }
            .map_err(|e| call_error(device, "clCreateBuffer", e))?;
        #[allow(deprecated)]
        // clCreateCommandQueue: the OpenCL 1.2 entry point, also on 2.0+ drivers
        let queue =
            CommandQueue::create_default(context, 0).map_err(|e| call_error(device, "clCreateCommandQueue", e))?;
        let mut mapped: cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer; the pointer stays valid until unmapped.
        unsafe {
            queue.enqueue_map_buffer(&buffer, CL_BLOCKING, CL_MAP_READ | CL_MAP_WRITE, 0, size, &mut mapped, &[])
        }
        .map_err(|e| call_error(device, "clEnqueueMapBuffer", e))?;
        Ok(Self { buffer, queue, ptr: mapped.cast() })
    }

    /// The mapped memory (as many bytes as asked for, aligned as the driver maps: at least 8),
    /// valid until this value is dropped.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for MappedHost {
    fn drop(&mut self) {
        // SAFETY: the pointer is the buffer's live mapping, unmapped once.
        let _ = unsafe { self.queue.enqueue_unmap_mem_object(self.buffer.get(), self.ptr.cast(), &[]) };
        let _ = self.queue.finish();
    }
}

/// The address ranges (start to end) of the live mapped buffers that `alloc_host` handed out on
/// one device: copies from or into them go to the driver directly.
#[derive(Default)]
pub(crate) struct Regions(Mutex<BTreeMap<usize, usize>>);

impl Regions {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, usize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `ptr` lies in one of the ranges (a slice lies in one allocation, so its start
    /// tells).
    pub(crate) fn contains(&self, ptr: *const u8) -> bool {
        let at = ptr as usize;
        self.map().range(..=at).next_back().is_some_and(|(_, &end)| at < end)
    }

    /// Enters `host`'s first `len` bytes (at least one) for as long as the returned owner lives.
    pub(crate) fn register(self: &Arc<Self>, host: MappedHost, len: usize) -> Registered {
        let start = host.ptr() as usize;
        self.map().insert(start, start + len.max(1));
        Registered { regions: self.clone(), start, _host: host }
    }
}

/// A mapped buffer entered in its device's [`Regions`], removed before it is unmapped.
pub(crate) struct Registered {
    regions: Arc<Regions>,
    start: usize,
    _host: MappedHost,
}

impl Drop for Registered {
    /// Runs before the fields drop: the range leaves the registry before the memory is unmapped.
    fn drop(&mut self) {
        self.regions.map().remove(&self.start);
    }
}

/// What a staged copy enqueues on: the OpenCL entry points, the handle's queue, the device
/// buffer, and the device's name for errors.
pub(crate) struct Target<'a> {
    pub(crate) library: &'a cl3::OpenClRuntime,
    pub(crate) queue: cl_command_queue,
    pub(crate) mem: cl_mem,
    pub(crate) device: &'a str,
}

impl Target<'_> {
    /// A failed call's status as the backend error (the driver missing an entry point reads as
    /// `CL_INVALID_OPERATION`).
    fn check(&self, call: &'static str, status: Option<cl_int>) -> Result<()> {
        match status.unwrap_or(opencl3::error_codes::CL_INVALID_OPERATION) {
            opencl3::error_codes::CL_SUCCESS => Ok(()),
            status => Err(call_error(self.device, call, opencl3::error_codes::ClError(status))),
        }
    }

    /// Submits the commands enqueued so far, so that the device starts on them while the host
    /// copies the next chunk.
    fn flush(&self) -> Result<()> {
        self.check("clFlush", self.library.clFlush(self.queue))
    }
}

/// Copies `src` to `dst` (same length) with the host's cores, in pieces.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// One staging buffer and the device copy that last used it, until waited for.
struct Slot {
    host: MappedHost,
    copy: Option<Event>,
}

/// The two staging buffers of one runtime handle (used under its lock), and how many copies went
/// through them.
pub(crate) struct Staging {
    slots: [Slot; 2],
    copies: u64,
}

impl Drop for Staging {
    /// Waits for the copies still using the buffers (none after a completed call) before they
    /// are unmapped.
    fn drop(&mut self) {
        self.wait_all();
    }
}

impl Staging {
    /// Two staging buffers of [`CHUNK`] bytes in `context`.
    pub(crate) fn new(context: &Context, device: &str) -> Result<Self> {
        let slot = || Ok::<_, ccl_backend::Error>(Slot { host: MappedHost::new(context, device, CHUNK)?, copy: None });
        Ok(Self { slots: [slot()?, slot()?], copies: 0 })
    }

    /// How many copies went through these buffers (completed ones).
    pub(crate) fn copies(&self) -> u64 {
        self.copies
    }

    /// The first `len` bytes of slot `k`, to fill.
    fn host_mut(&mut self, k: usize, len: usize) -> &mut [u8] {
        assert!(len <= CHUNK && self.slots[k].copy.is_none(), "slot {k} in use or too short for {len} bytes");
        // SAFETY: each slot maps CHUNK >= len bytes; no device copy uses the slot (checked above)
        // and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.slots[k].host.ptr(), len) }
    }

    /// The first `len` bytes of slot `k`, to read.
    fn host(&self, k: usize, len: usize) -> &[u8] {
        assert!(len <= CHUNK && self.slots[k].copy.is_none(), "slot {k} in use or too short for {len} bytes");
        // SAFETY: as above, shared.
        unsafe { std::slice::from_raw_parts(self.slots[k].host.ptr(), len) }
    }

    /// Waits for the device copy that last used slot `k`, if it was not waited for yet.
    fn wait(&mut self, k: usize, device: &str) -> Result<()> {
        match self.slots[k].copy.take() {
            Some(copy) => copy.wait().map_err(|e| call_error(device, "clWaitForEvents", e)),
            None => Ok(()),
        }
    }

    /// Waits for every device copy still using a slot, errors ignored (after a failure, so that
    /// no command uses the buffers once the call returns).
    fn wait_all(&mut self) {
        for slot in &mut self.slots {
            if let Some(copy) = slot.copy.take() {
                let _ = copy.wait();
            }
        }
    }

    /// Copies `data` into the first `data.len()` bytes of `target`'s buffer, which holds at
    /// least that many; returns when the copy is complete.
    pub(crate) fn write(&mut self, target: &Target, data: &[u8]) -> Result<()> {
        let result =
            self.write_chunks(target, data).and_then(|()| (0..2).try_for_each(|k| self.wait(k, target.device)));
        self.wait_all();
        self.copies += u64::from(result.is_ok());
        result
    }

    fn write_chunks(&mut self, target: &Target, data: &[u8]) -> Result<()> {
        for (i, chunk) in data.chunks(CHUNK).enumerate() {
            let k = i % 2;
            self.wait(k, target.device)?;
            parallel_copy(self.host_mut(k, chunk.len()), chunk);
            let mut event: cl_event = ptr::null_mut();
            // The raw entry point: a non-blocking write of the chunk from the slot, which holds
            // it until the event completes, into the buffer at the chunk's offset (within the
            // buffer: the caller checked the whole copy).
            let status = target.library.clEnqueueWriteBuffer(
                target.queue,
                target.mem,
                CL_NON_BLOCKING,
                i * CHUNK,
                chunk.len(),
                self.slots[k].host.ptr().cast_const().cast(),
                0,
                ptr::null(),
                &mut event,
            );
            target.check("clEnqueueWriteBuffer", status)?;
            self.slots[k].copy = Some(Event::new(event));
            target.flush()?;
        }
        Ok(())
    }

    /// Copies the first `out.len()` bytes of `target`'s buffer, which holds at least that many,
    /// into `out`; returns when `out` is complete.
    pub(crate) fn read(&mut self, target: &Target, out: &mut [u8]) -> Result<()> {
        let mut offset = 0;
        self.read_with(target, out.len(), &mut |piece| {
            parallel_copy(&mut out[offset..offset + piece.len()], piece);
            offset += piece.len();
            Ok(())
        })
    }

    /// Copies the first `total` bytes of `target`'s buffer, which holds at least that many, and
    /// hands them to `sink` a chunk at a time, in order, the device reading the next chunk while
    /// `sink` has this one; returns once `sink` has had the last (or its error).
    pub(crate) fn read_with(
        &mut self,
        target: &Target,
        total: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let result = self.read_chunks(target, total, sink);
        self.wait_all();
        self.copies += u64::from(result.is_ok());
        result
    }

    fn read_chunks(&mut self, target: &Target, total: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let chunks = total.div_ceil(CHUNK);
        let len = |i: usize| CHUNK.min(total - i * CHUNK);
        // Enqueues the read of chunk `i` into slot `i % 2`, once the host has emptied it.
        let enqueue = |this: &mut Self, i: usize| -> Result<()> {
            let k = i % 2;
            this.wait(k, target.device)?;
            let mut event: cl_event = ptr::null_mut();
            // The raw entry point: a non-blocking read of chunk `i` (within the buffer: the
            // caller checked the whole copy) into the slot, which is not read until the event
            // completes.
            let status = target.library.clEnqueueReadBuffer(
                target.queue,
                target.mem,
                CL_NON_BLOCKING,
                i * CHUNK,
                len(i),
                this.slots[k].host.ptr().cast(),
                0,
                ptr::null(),
                &mut event,
            );
            target.check("clEnqueueReadBuffer", status)?;
            this.slots[k].copy = Some(Event::new(event));
            target.flush()
        };
        if chunks > 0 {
            enqueue(self, 0)?;
        }
        for i in 0..chunks {
            if i + 1 < chunks {
                enqueue(self, i + 1)?;
            }
            let k = i % 2;
            self.wait(k, target.device)?;
            sink(self.host(k, len(i)))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::parallel_copy;

    #[test]
    fn a_parallel_copy_copies_every_byte() {
        for len in [0, 1, super::PIECE - 1, super::PIECE, 3 * super::PIECE + 5] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut dst = vec![0u8; len];
            parallel_copy(&mut dst, &src);
            assert!(dst == src, "{len} bytes");
        }
    }
}
