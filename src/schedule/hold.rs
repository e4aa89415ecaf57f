//! A queue hold for benchmarks (`kernels/hold.kernel`): one work-item spins on the device while
//! the host queues a timed run behind it, so that the run's device marks time its commands as
//! they run back to back, not the host's time to submit them. On an idle device the first mark
//! completes as soon as it is submitted and the device then waits for the host's next launch:
//! its time (several microseconds a launch on the H100) lands in the measured span.

use ccl_backend::{Arg, LaunchRange};

use super::StageInfo;
use crate::gpu::{build_program, Buffer, BuildReport, Gpu, Kernel};
use crate::kernels::{kernel_file, KernelFile};
use crate::Result;

/// `kernels/hold.kernel`.
pub(crate) const KERNEL: KernelFile = kernel_file!("hold": COMMON);

/// The queue hold's registry entry.
pub(crate) const STAGE: StageInfo =
    StageInfo::new("A one-work-item spin that holds a queue busy while a benchmark queues its commands", KERNEL);

/// Spin steps of one hold: about 0.6 ms on the H100 (2^17 of them took 147 us under Nsight
/// Compute's base clocks), longer than any benchmarked call takes to submit: a binarization and
/// a labeling are a few to a few tens of commands, at most about 14 us of host time each
/// (NVIDIA's OpenCL with a profiling event).
const ITERATIONS: u32 = 1 << 19;

/// The hold of one queue: its kernel and the word it writes, built at the first hold.
#[derive(Default)]
pub(crate) struct QueueHold {
    built: Option<(Kernel, Buffer)>,
}

impl QueueHold {
    /// Queues the hold on `gpu`'s queue and returns at once (the device holds for a while);
    /// the first call builds the kernel, counted in `report`.
    pub(crate) fn hold(&mut self, gpu: &dyn Gpu, report: &mut BuildReport) -> Result<()> {
        if self.built.is_none() {
            let program = build_program(gpu, &KERNEL, &[], report)?;
            let kernel = gpu.kernel(&program, "hold")?;
            let mut sink = gpu.alloc(4)?;
            gpu.zero(&mut sink)?;
            self.built = Some((kernel, sink));
        }
        let (kernel, sink) = self.built.as_mut().expect("built above");
        let one = LaunchRange::over([1, 1, 1], [1, 1, 1]);
        gpu.launch(kernel, &one, &[Arg::Buffer(sink), Arg::U32(ITERATIONS)])?;
        Ok(())
    }
}
