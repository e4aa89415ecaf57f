//! The device abstraction the algorithms are written against: compile, allocate, copy, launch,
//! time. The OpenCL and CUDA runtimes each implement [`Gpu`] in a few lines; every algorithm's
//! schedule (in `schedule/`) is written once over it.
// Built without any GPU feature, only the CPU reference remains.
#![cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]

#[cfg(feature = "cuda")]
pub(crate) mod cuda;
#[cfg(feature = "opencl")]
pub(crate) mod opencl;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::kernels::KernelFile;
use crate::{Phase, PhaseTime, Result};

/// Where the pixels or labels of a device-resident image live.
pub(crate) enum Storage<T> {
    /// In host memory (the CPU backend).
    Host(Vec<T>),
    /// In an OpenCL buffer.
    #[cfg(feature = "opencl")]
    OpenCl(ccl_opencl::Buffer),
    /// In a CUDA buffer.
    #[cfg(feature = "cuda")]
    Cuda(ccl_cuda::Buffer),
}

/// A kernel argument.
pub(crate) enum Arg<'a, B> {
    /// A device buffer.
    Buf(&'a B),
    /// A 32-bit unsigned scalar.
    U32(u32),
}

/// A unique number for each opened device, so buffers are never handed to another device.
pub(crate) fn next_owner_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What a backend runtime offers the algorithms.
pub(crate) trait Gpu: Sized {
    /// A device buffer of bytes.
    type Buffer;
    /// A compiled kernel file.
    type Program;
    /// One kernel function.
    type Kernel;
    /// A point in the command stream, for timing.
    type Mark;
    /// Whether allocation is a stream-ordered device command (timed by device events); when
    /// not (OpenCL), allocation and deallocation are timed on the host clock.
    const STREAM_ORDERED_ALLOC: bool;

    /// Another handle on the same device whose commands and timing marks are its own (OpenCL:
    /// a command queue; CUDA: a stream). Buffers and programs are shared between handles; every
    /// copy waits for its queue, so a buffer written through one handle may be read by another.
    fn new_queue(&self) -> Result<Self>;
    /// Compiles `file` with integer `defines`.
    fn build(&self, file: &KernelFile, defines: &[(&str, u32)]) -> Result<Self::Program>;
    /// Looks up a kernel of a compiled file.
    fn kernel(&self, program: &Self::Program, name: &str) -> Result<Self::Kernel>;
    /// Allocates `bytes` bytes.
    fn alloc(&self, bytes: usize) -> Result<Self::Buffer>;
    /// Copies host bytes to the start of a buffer.
    fn write(&self, buffer: &mut Self::Buffer, data: &[u8]) -> Result<()>;
    /// Copies the start of a buffer to host bytes and waits.
    fn read(&self, buffer: &Self::Buffer, out: &mut [u8]) -> Result<()>;
    /// Sets every byte of a buffer to zero.
    fn zero(&self, buffer: &mut Self::Buffer) -> Result<()>;
    /// Launches a kernel over `global` work-items (a multiple of `local`) in groups of `local`.
    fn launch(
        &self,
        kernel: &mut Self::Kernel,
        global: [usize; 2],
        local: [usize; 2],
        args: &[Arg<Self::Buffer>],
    ) -> Result<()>;
    /// Marks the current point of the command stream.
    fn mark(&self) -> Result<Self::Mark>;
    /// Device milliseconds between two marks (waits for them).
    fn elapsed_ms(&self, from: &Self::Mark, to: &Self::Mark) -> Result<f64>;
    /// Waits for every queued command.
    fn finish(&self) -> Result<()>;
    /// Forgets this handle's timing state older than this call (OpenCL keeps one event per
    /// kernel or fill until then).
    fn reset_marks(&self) {}
    /// Moves a buffer into backend-neutral storage.
    fn into_storage<T>(buffer: Self::Buffer) -> Storage<T>;
    /// The buffer in `storage`, if it belongs to this backend.
    fn from_storage<T>(storage: &Storage<T>) -> Option<&Self::Buffer>;

    /// Launches `kernel` with one work-item per pixel of a `width` x `height` image, in groups
    /// of `local`; the range is rounded up, so kernels check their coordinates.
    fn launch_over(
        &self,
        kernel: &mut Self::Kernel,
        (width, height): (usize, usize),
        local: [usize; 2],
        args: &[Arg<Self::Buffer>],
    ) -> Result<()> {
        let global = [width.div_ceil(local[0]) * local[0], height.div_ceil(local[1]) * local[1]];
        self.launch(kernel, global, local, args)
    }
}

/// Records the phases of one labeling: a device mark (and a host instant) at each boundary.
pub(crate) struct PhaseRecorder<'g, G: Gpu> {
    gpu: &'g G,
    marks: Vec<(G::Mark, Instant)>,
    phases: Vec<Phase>,
}

impl<'g, G: Gpu> PhaseRecorder<'g, G> {
    /// Starts recording at the current point of the stream.
    pub(crate) fn start(gpu: &'g G) -> Result<Self> {
        gpu.reset_marks();
        Ok(Self { gpu, marks: vec![(gpu.mark()?, Instant::now())], phases: Vec::new() })
    }

    /// Ends `phase` here: the commands queued since the previous boundary belong to it.
    pub(crate) fn end(&mut self, phase: Phase) -> Result<()> {
        self.marks.push((self.gpu.mark()?, Instant::now()));
        self.phases.push(phase);
        Ok(())
    }

    /// Waits for the device and returns each phase's duration.
    pub(crate) fn finish(self) -> Result<Vec<PhaseTime>> {
        self.gpu.finish()?;
        let mut out = Vec::with_capacity(self.phases.len());
        for (i, &phase) in self.phases.iter().enumerate() {
            let (from, to) = (&self.marks[i], &self.marks[i + 1]);
            let host_timed = !G::STREAM_ORDERED_ALLOC && matches!(phase, Phase::Allocation | Phase::Deallocation);
            let ms =
                if host_timed { (to.1 - from.1).as_secs_f64() * 1e3 } else { self.gpu.elapsed_ms(&from.0, &to.0)? };
            out.push(PhaseTime { phase, ms });
        }
        Ok(out)
    }
}
