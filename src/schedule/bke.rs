//! BKE, Block-based Komura Equivalence (TPDS 2020 Sec. 5.2), 8-connectivity; BKE_IC compresses
//! inline. Kernels: `kernels/blocks.h`, `kernels/bke.kernel`, `kernels/compress.kernel`.
//!
//! 1. Initialization: each block links to its smallest connected backward block and stores an
//!    information byte (its foreground pixels, the other connected blocks) in the output image
//!    (TPDS 2020 Table 1, Fig. 8).
//! 2. Compression.
//! 3. Reduction: unions with the connected blocks initialization did not link.
//! 4. Compression.
//! 5. FinalLabeling: block labels to foreground pixels, from the information byte.
//!
//! Only 1xN and Nx1 images with N odd (1x1 included) have a block with no pixel to borrow for
//! its information byte; for them a one-word buffer is allocated.
//!
//! Raw labels: top-left pixel index of the component's first block + 1; background 0.
use super::{kernels, over_blocks, Job, Schedule, LABEL_BYTES};
use crate::gpu::{Arg, Define, Gpu, Kernel, PhaseRecorder, Program};
use crate::{Connectivity, Phase, Result, Shape};

/// The compile-time defines of `kernels/bke.kernel`: none beyond the variant's.
pub(crate) fn defines(_: Connectivity) -> Vec<Define> {
    Vec::new()
}

/// Whether the image has a block with no pixel slot to borrow for its information byte: 1xN
/// and Nx1 images with N odd (1x1 included).
fn needs_extra_word(shape: Shape) -> bool {
    (shape.width == 1 || shape.height == 1) && shape.width % 2 == 1 && shape.height % 2 == 1
}

/// The compiled BKE kernels.
pub(crate) struct Bke {
    init: Kernel,
    compress: Kernel,
    reduce: Kernel,
    finish: Kernel,
}

/// Makes the BKE schedule from its compiled program.
pub(crate) fn build(gpu: &dyn Gpu, program: &Program, _: Connectivity) -> Result<Box<dyn Schedule>> {
    let [init, compress, reduce, finish] =
        kernels(gpu, program, ["bke_init", "compress_blocks", "bke_reduce", "bke_final"])?;
    Ok(Box::new(Bke { init, compress, reduce, finish }))
}

impl Schedule for Bke {
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>> {
        let extra = if needs_extra_word(job.shape) {
            let buffer = gpu.alloc(LABEL_BYTES)?;
            recorder.end(Phase::Allocation)?;
            Some(buffer)
        } else {
            None
        };
        // Without the extra word the kernels never touch their `extra` argument.
        let extra_arg = Arg::Buffer(extra.as_ref().unwrap_or(job.labels));
        let (w, h) = job.size();
        let blocks = over_blocks(job.shape);
        let (input, labels) = (Arg::Buffer(job.input), Arg::Buffer(job.labels));
        let image_args = [input, labels, extra_arg, Arg::U32(w), Arg::U32(h)];
        let reduce_args = [labels, extra_arg, Arg::U32(w), Arg::U32(h)];
        let label_args = [labels, Arg::U32(w), Arg::U32(h)];
        gpu.launch(&mut self.init, &blocks, &image_args)?;
        recorder.end(Phase::Initialization)?;
        gpu.launch(&mut self.compress, &blocks, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch(&mut self.reduce, &blocks, &reduce_args)?;
        recorder.end(Phase::Reduction)?;
        gpu.launch(&mut self.compress, &blocks, &label_args)?;
        recorder.end(Phase::Compression)?;
        gpu.launch(&mut self.finish, &blocks, &image_args)?;
        recorder.end(Phase::FinalLabeling)?;
        if let Some(buffer) = extra {
            drop(buffer);
            recorder.end(Phase::Deallocation)?;
        }
        Ok(None)
    }
}
