//! The device abstraction of `ccl`: what a backend runtime offers the algorithms (compile,
//! allocate, copy, launch, time), as one object-safe trait, [`Gpu`], that the OpenCL and CUDA
//! runtime crates implement directly. Algorithms are written once against `&dyn Gpu`.
//!
//! Handles ([`Buffer`], [`Program`], [`Kernel`], [`Mark`]) are opaque: each backend wraps its own
//! native objects in them and unwraps them again, so a handle of another backend is refused with
//! [`Error::WrongHandle`] instead of being misused.
//!
//! Compiled kernels are kept on disk by [`KernelCache`] and reused by later processes; a
//! [`Program`] says whether it came from there ([`Program::from_cache`]).

mod cache;
mod error;
mod handle;
mod launch;
mod loader;

pub use cache::{CacheKey, KernelCache, StoreFailure, FORMAT_VERSION as CACHE_FORMAT_VERSION};
pub use error::{Error, Result};
pub use handle::{Arg, Buffer, HostBuffer, Kernel, Mark, Program};
pub use launch::{Define, DefineValue, Dialect, KernelLimits, LaunchRange, Limits, FLUSH_DENORMALS, REGISTER_BUDGET};
pub use loader::broken_library;

/// The variable that chooses how NVIDIA devices (CUDA, and NVIDIA's OpenCL) read what other
/// work-items write in the same launch: unset or `weak`, PTX weak loads (the default: as fast as
/// plain loads, and given a meaning by PTX's memory model); `strict`, relaxed atomic loads
/// (formally race-free in C++ too, and 1.1-2.9x slower on an H200; see `docs/atomics.md`).
pub const ATOMIC_LOADS_VAR: &str = "CCL_ATOMIC_LOADS";

/// Whether [`ATOMIC_LOADS_VAR`] asks for strict (relaxed atomic) loads on NVIDIA devices.
pub fn strict_loads() -> bool {
    std::env::var(ATOMIC_LOADS_VAR).is_ok_and(|v| v.trim().eq_ignore_ascii_case("strict"))
}

/// The most bytes [`Gpu::read_pieces`] hands its sink at once (its backends' staging chunk).
pub const READ_PIECE: usize = 16 << 20;

/// [`Gpu::read_pieces`] without staging: reads the first `len` bytes of `buffer` whole into
/// host memory (8-byte aligned), then hands them to `sink` [`READ_PIECE`] bytes at a time.
pub fn read_whole_in_pieces<G: Gpu + ?Sized>(
    gpu: &G,
    buffer: &Buffer,
    len: usize,
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    assert!(len <= buffer.len(), "read of {len} bytes from a {}-byte buffer", buffer.len());
    // u64 elements: the pieces are 8-byte aligned.
    let mut whole = vec![0u64; len.div_ceil(8)];
    let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut whole)[..len];
    gpu.read(buffer, bytes)?;
    bytes.chunks(READ_PIECE).try_for_each(sink)
}

/// A device, or one queue (stream) of it: everything the algorithms' host schedules use.
///
/// Threads: implementations are `Send + Sync`. Commands are in order on one handle; another
/// handle from [`Gpu::new_queue`] has its own order and its own timing marks. Copies wait for
/// their queue, so a buffer written through one handle may be used through another.
pub trait Gpu: Send + Sync {
    /// The device's name, as errors name it.
    fn name(&self) -> &str;
    /// The language the device compiles.
    fn dialect(&self) -> Dialect;
    /// Launch limits of the device.
    fn limits(&self) -> &Limits;
    /// Whether allocation is a stream-ordered device command (timed by device events); when not
    /// (OpenCL), allocation and deallocation are timed on the host clock.
    fn stream_ordered_alloc(&self) -> bool;
    /// Another handle on the same device whose commands and timing marks are its own (OpenCL:
    /// a command queue; CUDA: a stream). Buffers and programs are shared between handles.
    fn new_queue(&self) -> Result<Box<dyn Gpu>>;
    /// Compiles a kernel source (in [`Gpu::dialect`]) with `defines`.
    fn build(&self, source: &str, defines: &[Define]) -> Result<Program>;
    /// Looks up a kernel of a compiled program.
    fn kernel(&self, program: &Program, name: &str) -> Result<Kernel>;
    /// Why a build of this device (through any of its handles) took a slower route than it
    /// should have, if one did: the programs still give the same results, and a caller may tell
    /// its user (NVIDIA OpenCL: ptxas could not assemble a program). None by default.
    fn build_note(&self) -> Option<String> {
        None
    }
    /// Allocates `bytes` bytes (contents undefined).
    fn alloc(&self, bytes: usize) -> Result<Buffer>;
    /// Wraps `bytes` bytes of device memory the caller owns at `address` (a CUDA device
    /// pointer, e.g. of a CuPy array or a PyTorch tensor) as a buffer of this device, without
    /// copying; the buffer never frees the memory. `ready_on` is a stream whose work so far must
    /// finish before the memory is used (CUDA: a `CUstream` value, where 1 is the legacy default
    /// stream and 2 the per-thread default stream, as in the CUDA Array Interface v3); the call
    /// waits for it. Commands of this handle that use the buffer are finished when it drops.
    ///
    /// The default (OpenCL) refuses with [`Error::Unsupported`]; CUDA checks that `address` is
    /// device (or managed) memory of its device, else [`Error::InvalidMemory`].
    ///
    /// # Safety
    /// The `bytes` bytes at `address` must lie in one valid device allocation that stays
    /// allocated for as long as the buffer lives; while the buffer lives, nothing else may write
    /// them, nor read them once this device writes the buffer.
    unsafe fn borrow(&self, address: u64, bytes: usize, ready_on: Option<u64>) -> Result<Buffer> {
        let _ = (address, bytes, ready_on);
        Err(Error::Unsupported {
            device: self.name().to_string(),
            what: "borrowing device memory it did not allocate (CUDA devices only)".to_string(),
        })
    }
    /// Host memory for fast copies to and from this device: page-locked where the backend can,
    /// so that copies from or into it (or any part of it) go straight over the bus instead of
    /// through the driver's staging. The default is ordinary memory.
    fn alloc_host(&self, bytes: usize) -> Result<HostBuffer> {
        Ok(HostBuffer::unpinned(bytes))
    }
    /// Copies host bytes to the start of a buffer and waits for the copy.
    fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()>;
    /// Copies the start of a buffer to host bytes and waits for the copy.
    fn read(&self, buffer: &Buffer, out: &mut [u8]) -> Result<()>;
    /// Copies the first `len` bytes of a buffer to the host in order and hands them to `sink` a
    /// piece at a time (each at most [`READ_PIECE`] bytes, a multiple of 8 but the last, and
    /// 8-byte aligned), as they arrive: for results written out as they come (into a file),
    /// without a host array of their size. Backends that stage large reads copy the next piece
    /// from the device while `sink` handles this one. An error of `sink` stops the read and is
    /// returned. The default reads the whole range first, then hands it out.
    fn read_pieces(&self, buffer: &Buffer, len: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        read_whole_in_pieces(self, buffer, len, sink)
    }
    /// Sets every byte of a buffer to zero (queued).
    fn zero(&self, buffer: &mut Buffer) -> Result<()>;
    /// Queues `kernel` over `range` with `args`; a range beyond the device's grid limits is
    /// folded as [`LaunchRange::fold`] describes, or refused when it cannot be.
    fn launch(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()>;
    /// Queues `kernel` as [`Gpu::launch`] does, but lets it start before the kernel queued just
    /// before it has finished, where the device can (CUDA's programmatic dependent launch, on
    /// compute capability 9.0 and later): it then runs its work up to its
    /// `WAIT_FOR_PREVIOUS_KERNEL()` (the preludes' macro) while the previous kernel ends, and
    /// must not touch what that kernel writes before it. Commands queued before that kernel
    /// have finished when it starts. The default is [`Gpu::launch`].
    fn launch_overlapping(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()> {
        self.launch(kernel, range, args)
    }
    /// Whether [`Gpu::launch_overlapping`] lets a kernel start before the one queued before it
    /// ends on this device; the default, false, where it is [`Gpu::launch`].
    fn overlaps_launches(&self) -> bool {
        false
    }
    /// Marks the current point of this handle's command stream.
    fn mark(&self) -> Result<Mark>;
    /// Device milliseconds between two marks of this handle (waits for them).
    fn elapsed_ms(&self, from: &Mark, to: &Mark) -> Result<f64>;
    /// Waits for every queued command of this handle.
    fn finish(&self) -> Result<()>;
    /// Forgets this handle's timing state older than this call; marks taken before are invalid.
    fn reset_marks(&self) {}
}
