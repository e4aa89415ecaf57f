//! Device buffers that a stage keeps from one call to the next: allocating and freeing them on
//! every call costs more than the kernels on small images (the host's calls leave the device
//! idle, and NVIDIA's OpenCL waits for the queue when a buffer is released).

use crate::gpu::{Buffer, Gpu};
use crate::Result;

/// Numbered slots of buffers. A slot's buffer is reused while it holds at least the bytes asked
/// for and at most twice as many (so that a small image after a large one neither keeps nor
/// clears the large one's memory); otherwise it is freed and a new one allocated. They are
/// freed with their owner (the labeler).
#[derive(Default)]
pub(crate) struct Scratch {
    slots: Vec<Option<Buffer>>,
}

impl Scratch {
    /// Slot `slot`'s buffer, of at least `bytes` bytes (contents undefined), out of the slot
    /// until [`Scratch::put`] gives it back.
    pub(crate) fn take(&mut self, gpu: &dyn Gpu, slot: usize, bytes: usize) -> Result<Buffer> {
        self.take_if(gpu, slot, bytes, |len, bytes| len <= 2 * bytes)
    }

    /// [`Scratch::take`], with a new buffer zeroed (queued), so that it never holds memory
    /// nothing wrote: for buffers the kernels write with atomic stores (`STORE_RELAXED`), which
    /// on OpenCL C 1.2 are atomic exchanges, and Oclgrind's uninitialized-memory check takes an
    /// exchange onto memory never written for the write of an uninitialized value.
    pub(crate) fn take_written(&mut self, gpu: &dyn Gpu, slot: usize, bytes: usize) -> Result<Buffer> {
        let kept = self.slots.get(slot).and_then(Option::as_ref).map(|b| b.len());
        let mut buffer = self.take(gpu, slot, bytes)?;
        if kept != Some(buffer.len()) {
            gpu.zero(&mut buffer)?;
        }
        Ok(buffer)
    }

    /// Slot `slot`'s buffer if it has at least `bytes` bytes, however many more, else a new one
    /// of `bytes`: for a call that only needs a placeholder, without dropping a larger buffer
    /// that other calls use.
    pub(crate) fn take_at_least(&mut self, gpu: &dyn Gpu, slot: usize, bytes: usize) -> Result<Buffer> {
        self.take_if(gpu, slot, bytes, |_, _| true)
    }

    /// Slot `slot`'s buffer if it has at least `bytes` bytes (at least one) and `keep(its
    /// length, bytes)`, else a new one of `bytes` (the old one freed first).
    fn take_if(&mut self, gpu: &dyn Gpu, slot: usize, bytes: usize, keep: fn(usize, usize) -> bool) -> Result<Buffer> {
        let bytes = bytes.max(1);
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        match self.slots[slot].take() {
            Some(buffer) if buffer.len() >= bytes && keep(buffer.len(), bytes) => Ok(buffer),
            stale => {
                drop(stale);
                Ok(gpu.alloc(bytes)?)
            }
        }
    }

    /// Gives a buffer back to slot `slot`, for the next call.
    pub(crate) fn put(&mut self, slot: usize, buffer: Buffer) {
        self.slots[slot] = Some(buffer);
    }
}
