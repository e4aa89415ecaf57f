//! What the schedules share: the job they run and their trait, with the labeling of one job
//! (the launch helpers they and the stages share are in [`super::launch`]).

use super::launch::LABEL_BYTES;
use super::relabel::{RankTables, Relabel};
use crate::gpu::{Buffer, Gpu, PhaseRecorder, Program};
use crate::{Connectivity, ImageKind, Phase, RawLabels, Result, Shape, Timings};

/// One labeling: the binary input and the label output on the device, both of `shape`.
pub(crate) struct Job<'a> {
    /// One byte per pixel, nonzero is foreground.
    pub input: &'a Buffer,
    /// One 32-bit label per pixel, written by the schedule.
    pub labels: &'a Buffer,
    /// The image's extent.
    pub shape: Shape,
}

impl Job<'_> {
    /// Width, height and depth as the kernels take them (depth 1 for an image).
    pub fn extent(&self) -> [u32; 3] {
        [self.shape.width as u32, self.shape.height as u32, self.shape.depth as u32]
    }
}

/// The compiled kernels of one algorithm for one connectivity, and how to run them.
pub(crate) trait Schedule: Send {
    /// Labels `job.input` into `job.labels`, ending each phase on `recorder`; returns the
    /// iteration count of iterative algorithms. Scratch buffers are allocated and freed here,
    /// recorded as [`crate::Phase::Allocation`] and [`crate::Phase::Deallocation`].
    fn run(&mut self, gpu: &dyn Gpu, job: &Job, recorder: &mut PhaseRecorder) -> Result<Option<u32>>;

    /// Labels `job.input` into consecutive labels 1..N in `job.labels`, and returns the rank
    /// tables that hold N on the device ([`Relabel::count`] reads it): by default
    /// [`Schedule::run`], then `relabel` on its raw labels (of `convention`); a schedule that can
    /// renumber in its own last pass does so instead, from `relabel`'s rank tables. Nothing
    /// waits for the device; the caller ends [`crate::Phase::Relabel`].
    fn run_ranked(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        relabel: &mut Relabel,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<(Option<u32>, RankTables)> {
        run_then_rank(self, gpu, job, relabel, convention, recorder)
    }

    /// [`Schedule::run_ranked`], ending [`crate::Phase::Relabel`], then N read back (a
    /// transfer that waits for the device, not timed); returns the iteration count and N.
    fn run_consecutive(
        &mut self,
        gpu: &dyn Gpu,
        job: &Job,
        relabel: &mut Relabel,
        convention: RawLabels,
        recorder: &mut PhaseRecorder,
    ) -> Result<(Option<u32>, u32)> {
        let (iterations, tables) = self.run_ranked(gpu, job, relabel, convention, recorder)?;
        recorder.end(Phase::Relabel)?;
        let count = relabel.count(gpu, tables)?;
        Ok((iterations, count))
    }

    /// Labels a batch of `items` images of one shape stacked along the rows of `job` (each
    /// `job.shape.height / items` rows) as one, in as few launches as for one image, into
    /// consecutive labels 1..N_k within each item k; returns the items' counts (read back, which
    /// waits for the device), or `None` where the schedule cannot (the caller then labels item
    /// by item; the default). Ends [`crate::Phase::Relabel`].
    fn run_items_ranked(
        &mut self,
        _gpu: &dyn Gpu,
        _job: &Job,
        _items: usize,
        _relabel: &mut Relabel,
        _convention: RawLabels,
        _recorder: &mut PhaseRecorder,
    ) -> Result<Option<Vec<u32>>> {
        Ok(None)
    }
}

/// [`Schedule::run_ranked`]'s default: the schedule's labeling, then `relabel` on its raw labels
/// (of `convention`).
pub(crate) fn run_then_rank<S: Schedule + ?Sized>(
    schedule: &mut S,
    gpu: &dyn Gpu,
    job: &Job,
    relabel: &mut Relabel,
    convention: RawLabels,
    recorder: &mut PhaseRecorder,
) -> Result<(Option<u32>, RankTables)> {
    let iterations = schedule.run(gpu, job, recorder)?;
    let tables = relabel.run_ranked(gpu, job.labels, job.shape, convention, recorder)?;
    Ok((iterations, tables))
}

/// One labeling of `input` (of `shape`) by `schedule` into a new label buffer, timed from that
/// buffer's allocation on ([`Phase::Allocation`]): what a labeler does on a device, and the
/// recording device checks. The labeling itself is [`label_into`]'s.
pub(crate) fn label(
    gpu: &dyn Gpu,
    schedule: &mut dyn Schedule,
    input: &Buffer,
    shape: Shape,
    every_phase: bool,
) -> Result<(Buffer, Timings)> {
    let mut recorder = PhaseRecorder::start_labeling(gpu, every_phase)?;
    let labels = gpu.alloc(shape.len() * LABEL_BYTES)?;
    recorder.end(Phase::Allocation)?;
    let timings = label_into(gpu, schedule, input, &labels, shape, recorder)?;
    Ok((labels, timings))
}

/// One labeling of `input` (of `shape`) by `schedule` into `labels`, an existing buffer of one
/// label per pixel, continuing `recorder`'s phases. Returns the phases and the iteration count
/// once the device is done.
pub(crate) fn label_into(
    gpu: &dyn Gpu,
    schedule: &mut dyn Schedule,
    input: &Buffer,
    labels: &Buffer,
    shape: Shape,
    mut recorder: PhaseRecorder,
) -> Result<Timings> {
    debug_assert!(labels.len() >= shape.len() * LABEL_BYTES, "a label buffer of {} bytes for {shape}", labels.len());
    let iterations = schedule.run(gpu, &Job { input, labels, shape }, &mut recorder)?;
    let phases = recorder.finish()?;
    Ok(Timings { phases, iterations })
}

/// Makes a schedule from a program compiled for a connectivity and images of a kind (each
/// schedule module's `build`).
pub(crate) type ScheduleBuilder = fn(&dyn Gpu, &Program, Connectivity, ImageKind) -> Result<Box<dyn Schedule>>;
