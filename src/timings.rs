//! Per-phase timings of one labeling.

use std::fmt;

/// A phase of a labeling run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Host-to-device copy of the input (host clock).
    Upload,
    /// Allocation of the output and scratch buffers.
    Allocation,
    /// Initialization of the label (union-find) array.
    Initialization,
    /// UF: union-find inside each tile, in local memory.
    LocalMerge,
    /// UF: unions across tile borders.
    BorderMerge,
    /// Merge (unions between neighbours).
    Merge,
    /// KE / BKE: reduction (the unions initialization could not do).
    Reduction,
    /// Compression (flattening every tree to its root).
    Compression,
    /// Block algorithms: copying block labels to pixels.
    FinalLabeling,
    /// The whole labeling of the CPU reference.
    CpuLabeling,
    /// Freeing scratch buffers.
    Deallocation,
    /// Renumbering raw labels 1..N in raster order on the device, and counting them.
    Relabel,
    /// Device-to-host copy of the labels (host clock).
    Download,
    /// Binarization: image statistics a threshold needs first (Wolf's minimum and deviation,
    /// Otsu's histogram and threshold).
    Statistics,
    /// Binarization: the thresholding kernel itself (window sums and the decision per pixel).
    Threshold,
    /// Component statistics (area, bounding box, coordinate sums) on the device, read back.
    ComponentStats,
    /// Region properties' sums (moments, Euler number, perimeter, intensity) on the device.
    RegionProps,
}

impl Phase {
    /// A short lowercase name, e.g. `local-merge`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Upload => "upload",
            Phase::Allocation => "allocation",
            Phase::Initialization => "initialization",
            Phase::LocalMerge => "local-merge",
            Phase::BorderMerge => "border-merge",
            Phase::Merge => "merge",
            Phase::Reduction => "reduction",
            Phase::Compression => "compression",
            Phase::FinalLabeling => "final-labeling",
            Phase::CpuLabeling => "cpu-labeling",
            Phase::Deallocation => "deallocation",
            Phase::Relabel => "relabel",
            Phase::Download => "download",
            Phase::Statistics => "statistics",
            Phase::Threshold => "threshold",
            Phase::ComponentStats => "component-stats",
            Phase::RegionProps => "region-props",
        }
    }

    /// Whether the phase moves data between host and device (outside the labeling proper).
    pub fn is_transfer(self) -> bool {
        matches!(self, Phase::Upload | Phase::Download)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The duration of one phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseTime {
    /// The phase.
    pub phase: Phase,
    /// Milliseconds: from device events for kernels (and for allocation where it is a device
    /// command, as on CUDA), from the host clock otherwise.
    pub ms: f64,
}

/// Timings of one labeling.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    /// Phases in execution order.
    pub phases: Vec<PhaseTime>,
    /// Iterations of iterative algorithms (LE, OLE, BE); `None` for direct ones.
    pub iterations: Option<u32>,
}

impl Timings {
    /// The phases in order, as "name ms" with three decimals, comma-separated (as `ccl` prints
    /// them).
    pub fn phase_list(&self) -> String {
        self.phases.iter().map(|p| format!("{} {:.3}", p.phase, p.ms)).collect::<Vec<_>>().join(", ")
    }

    /// Total milliseconds of the labeling proper: every phase but upload and download.
    pub fn labeling_ms(&self) -> f64 {
        self.phases.iter().filter(|p| !p.phase.is_transfer()).map(|p| p.ms).sum()
    }

    /// Milliseconds spent in `phase` (summed when it occurs several times).
    pub fn phase_ms(&self, phase: Phase) -> f64 {
        self.phases.iter().filter(|p| p.phase == phase).map(|p| p.ms).sum()
    }
}
