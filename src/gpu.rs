//! The device abstraction as the crate uses it: [`ccl_backend::Gpu`] (implemented directly by
//! the OpenCL and CUDA backend crates and by [`crate::recording::RecordingGpu`]), the build of a
//! kernel file ([`build_program`], counted in a [`BuildReport`]) and the recorder that times
//! each phase of one labeling from device marks. With [`crate::device`] (discovery and opened
//! devices) this is the device layer: labelers, binarizers and schedules use it, and it uses
//! none of them.

use std::time::Instant;

pub(crate) use ccl_backend::{
    Arg, Buffer, Define, Gpu, Kernel, LaunchRange, Limits, Mark, Program, FLUSH_DENORMALS, REGISTER_BUDGET,
};

use crate::kernels::KernelFile;
use crate::{Error, Phase, PhaseTime, Result};

/// How a labeler's kernels were obtained: compiled, or loaded from the kernel cache.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BuildReport {
    /// Kernel programs built (one per connectivity, and the relabeling stage once used).
    pub programs: usize,
    /// Of those, the ones loaded from the kernel cache.
    pub from_cache: usize,
    /// Host milliseconds of the builds (compiling or loading).
    pub build_ms: f64,
    /// Host milliseconds of the untimed first launches (see [`crate::GpuLabeler`]).
    pub warm_up_ms: f64,
}

/// Compiles (or loads from the kernel cache) a kernel file, naming it in a build error, and
/// counts it in `report`.
pub(crate) fn build_program(
    gpu: &dyn Gpu,
    file: &KernelFile,
    defines: &[Define],
    report: &mut BuildReport,
) -> Result<Program> {
    let source = file.load(gpu.dialect()).map_err(|(path, e)| Error::FileRead { path, reason: e.to_string() })?;
    let program = gpu.build(&source, defines).map_err(|e| match e {
        source @ ccl_backend::Error::Build { .. } => Error::KernelBuild { kernel: file.path(gpu.dialect()), source },
        e => e.into(),
    })?;
    report.programs += 1;
    report.from_cache += usize::from(program.from_cache());
    report.build_ms += program.build_ms();
    Ok(program)
}

/// Records the phases of one labeling: a device mark (and a host instant) at each boundary,
/// except, without `every_phase`, the boundaries a schedule leaves unmarked
/// ([`PhaseRecorder::end_or_merge`]) so that its next kernel may overlap the previous one: a
/// mark between two kernels keeps the second from starting early (CUDA's programmatic dependent
/// launch), and a mark costs device time of its own (about 1.5 us each on the H100).
pub(crate) struct PhaseRecorder<'g> {
    gpu: &'g dyn Gpu,
    marks: Vec<(Mark, Instant)>,
    phases: Vec<Phase>,
    every_phase: bool,
}

impl<'g> PhaseRecorder<'g> {
    /// Starts recording at the current point of `gpu`'s stream (a handle of the labeler's own,
    /// so no other labeling's commands fall between its marks).
    pub(crate) fn start(gpu: &'g dyn Gpu) -> Result<Self> {
        Self::start_labeling(gpu, true)
    }

    /// Starts recording a labeling, whose schedule may leave boundaries between its kernel phases
    /// unmarked unless `every_phase` (see [`crate::GpuLabeler::mark_every_phase`]).
    pub(crate) fn start_labeling(gpu: &'g dyn Gpu, every_phase: bool) -> Result<Self> {
        gpu.reset_marks();
        Ok(Self { gpu, marks: vec![(gpu.mark()?, Instant::now())], phases: Vec::new(), every_phase })
    }

    /// Ends `phase` here: the commands queued since the previous boundary belong to it.
    pub(crate) fn end(&mut self, phase: Phase) -> Result<()> {
        self.marks.push((self.gpu.mark()?, Instant::now()));
        self.phases.push(phase);
        Ok(())
    }

    /// Ends `phase` here where every phase is marked, and returns false; otherwise leaves the
    /// boundary unmarked and returns true: `phase` is then timed with the next one (and not
    /// listed), and the caller may launch its next kernel to overlap this one
    /// ([`Gpu::launch_overlapping`]). Only for a boundary between two kernel phases.
    pub(crate) fn end_or_merge(&mut self, phase: Phase) -> Result<bool> {
        if self.every_phase {
            self.end(phase)?;
        }
        Ok(!self.every_phase)
    }

    /// Waits for the device and returns each phase's duration: device time between marks, or
    /// the host clock for allocation on backends where it is not a queued command.
    pub(crate) fn finish(self) -> Result<Vec<PhaseTime>> {
        self.gpu.finish()?;
        let host_timed_alloc = !self.gpu.stream_ordered_alloc();
        let mut out = Vec::with_capacity(self.phases.len());
        for (i, &phase) in self.phases.iter().enumerate() {
            let (from, to) = (&self.marks[i], &self.marks[i + 1]);
            let host_timed = host_timed_alloc && matches!(phase, Phase::Allocation | Phase::Deallocation);
            let ms =
                if host_timed { (to.1 - from.1).as_secs_f64() * 1e3 } else { self.gpu.elapsed_ms(&from.0, &to.0)? };
            out.push(PhaseTime { phase, ms });
        }
        Ok(out)
    }
}
