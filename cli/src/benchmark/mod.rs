//! Comparative benchmarking in the style of the papers' YACCLAB (TPDS 2020 Sec. 6): the same
//! inputs on every device and algorithm, timed by device events, written as one CSV row per run
//! (so an interrupted run keeps what it measured), summarised as markdown tables and plots.
//!
//! Modes: `average` (a dataset, per image the minimum over the runs, then the mean over images),
//! `steps` (the same with per-phase times), `density` (MT19937 images over densities and
//! granularities, the papers' Fig. 4 / Fig. 15), `size` (growing images at one density) and
//! `end-to-end`. Each runs on images or on volumes (YACCLAB's 3D experiments, TPDS 2020
//! Sec. 6.1.2-6.1.3: random 256^3 volumes over densities and granularities, the Hilbert volumes,
//! growing cubes), labeled with 6-, 18- or 26-connectivity.

pub mod binarize;
pub mod folder;
mod inputs;
mod plot;
mod record;
mod report;
mod runner;

pub use inputs::{
    density_inputs, directory_inputs, hilbert_inputs, random_inputs, size_inputs, DirectoryInputs, Extent, Input,
};
pub use plot::write_plots;
pub use record::{machine_description, read_records, Record, RecordWriter, HEADER};
pub use report::{summary_markdown, Mode};
pub use runner::{run, BenchOptions};

/// How a timed run of a device-resident measurement meets the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Behind a queue hold (`kernels/hold.kernel`): the run's commands (up to its first read-back,
    /// if any) are all queued before the device reaches its first mark, so its device time is that
    /// of its commands as they run back to back in a pipeline, the same way on every backend.
    Queued,
    /// On an idle device, as a lone call meets it: the first mark completes at once and the
    /// device then waits for the host to submit each launch (on CUDA several microseconds of
    /// host time land in the span; NVIDIA's OpenCL starts its span at the first command).
    Idle,
}

impl Timing {
    /// The name used on the command line and in the results.
    pub fn name(self) -> &'static str {
        match self {
            Timing::Queued => "queued",
            Timing::Idle => "idle",
        }
    }
}

impl std::str::FromStr for Timing {
    type Err = ccl::Error;
    fn from_str(s: &str) -> ccl::Result<Self> {
        match s {
            "queued" => Ok(Timing::Queued),
            "idle" => Ok(Timing::Idle),
            other => Err(ccl::Error::InvalidParameter {
                name: "timing".into(),
                reason: format!("'{other}' is none of queued, idle"),
            }),
        }
    }
}
