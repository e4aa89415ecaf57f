//! One labeling call, [`crate::Labeler::run`], whose options are fields of [`Options`] rather
//! than methods of their own.
//!
//! A labeling is a chain of stages, each working on arrays that stay on the device:
//!
//! 1. **binarize** (optional, before the run: [`crate::binarize`]) turns a gray page into the
//!    [`crate::DeviceImage`] a labeler takes, without it leaving the device;
//! 2. **label**, one schedule per [`crate::Algorithm`], writes the algorithm's raw labels
//!    ([`crate::Numbering::Raw`]) into new or existing [`DeviceLabels`];
//! 3. **relabel** renumbers them 1..N in raster order of each component's first pixel and counts
//!    N ([`LabelNumbering::Consecutive`]); TUF writes consecutive labels in its own last pass
//!    instead, a pass over the labels fewer;
//! 4. **statistics** ([`Stats`]) computes a table per component where the labels are, right
//!    after the relabeling and without reading N back first; only the table leaves the device;
//! 5. **filter** ([`Filter`]) keeps the components the statistics select, renumbered 1..M in
//!    place;
//! 6. **hold** (benchmarks only, before the run: [`crate::GpuLabeler::hold_queue`]) queues a
//!    spin so that the run's commands are all queued before the device reaches them.
//!
//! [`crate::Labeler::run`] chains the stages the [`Options`] ask for into new labels and returns
//! them in a [`Run`]; [`crate::Labeler::run_into`] writes existing labels (reused over many
//! images, or borrowed from another library) and returns a `Run<()>`; [`crate::run_host`] uploads the
//! input first and downloads the labels last. Each stage's phases
//! follow the previous stage's in the result's [`Timings`]. This module holds what a run is
//! asked and what it returns; the labelers chain the stages (`src/labeler/run.rs`).
//!
//! ```no_run
//! use ccl::{Algorithm, BinaryImage, Connectivity, Device, Labeler, Options, Stats};
//!
//! let image = BinaryImage::image_from_fn(64, 48, |x, y| (x / 4 + y / 4) % 2 == 0)?;
//! let mut labeler = Device::auto()?.labeler(Algorithm::TUF)?;
//! let on_device = labeler.upload(&image)?;
//! let run = labeler.run(&on_device, &Options::new(Connectivity::Eight).stats(Stats::Components))?;
//! println!("{:?} components, {:?}", run.count, run.stats.map(|s| s.len()));
//! let labels = labeler.download(&run.labels)?;
//! # Ok::<(), ccl::Error>(())
//! ```

use crate::{ComponentStats, Connectivity, DeviceLabels, OpenCvStats, Timings};

/// How a run numbers its labels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LabelNumbering {
    /// The algorithm's own raw labels, in its convention (see [`crate::Algorithm`]); not counted.
    #[default]
    Raw,
    /// Consecutive labels 1..N in raster order of each component's first pixel, counted.
    Consecutive,
}

/// Which statistics of the components a run computes on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stats {
    /// None.
    #[default]
    None,
    /// [`ComponentStats`]: area, bounding box and coordinate sums per component.
    Components,
    /// OpenCV's `connectedComponentsWithStats` tables ([`OpenCvStats`]) for an array of `dims`
    /// dimensions: 2 for an image, 3 for a volume (a single slice may take either; 3 gives it z
    /// columns).
    OpenCv {
        /// 2 or 3.
        dims: u8,
    },
}

/// Which components a run keeps: the others become background, and the kept ones are renumbered
/// 1..M in label order (so still in raster order of first appearance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Components of at least this many pixels ([`ComponentStats::at_least`]).
    MinSize(u64),
    /// The largest this many components ([`ComponentStats::largest`]).
    Largest(usize),
}

/// What one [`crate::Labeler::run`] does, besides labeling.
///
/// Statistics and filters describe consecutive labels: asking for either numbers the labels
/// consecutively whatever [`Options::numbering`] says.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Which pixels are neighbours: 4 or 8 for an image, 6, 18 or 26 for a volume (a single
    /// slice takes either kind: 6 joins as 4, 18 and 26 as 8).
    pub connectivity: Connectivity,
    /// Raw labels (the default) or consecutive ones.
    pub numbering: LabelNumbering,
    /// The statistics to compute (none by default).
    pub stats: Stats,
    /// Filters applied in order (none by default), each to the components the previous left.
    pub filters: Vec<Filter>,
}

impl Options {
    /// Raw labels with `connectivity`, no statistics, no filter.
    pub fn new(connectivity: Connectivity) -> Self {
        Self { connectivity, numbering: LabelNumbering::Raw, stats: Stats::None, filters: Vec::new() }
    }

    /// Consecutive labels 1..N, counted.
    pub fn consecutive(mut self) -> Self {
        self.numbering = LabelNumbering::Consecutive;
        self
    }

    /// The labels numbered as `numbering` says.
    pub fn numbering(mut self, numbering: LabelNumbering) -> Self {
        self.numbering = numbering;
        self
    }

    /// These statistics computed (implies consecutive labels).
    pub fn stats(mut self, stats: Stats) -> Self {
        self.stats = stats;
        self
    }

    /// This filter applied after those already asked for (implies consecutive labels).
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filters.push(filter);
        self
    }

    /// Whether the labels come out consecutive: asked for, or needed by statistics or filters.
    pub fn is_consecutive(&self) -> bool {
        self.numbering == LabelNumbering::Consecutive || self.stats != Stats::None || !self.filters.is_empty()
    }
}

/// The result of a run: the labels (`T`: [`DeviceLabels`] from [`crate::Labeler::run`], `()`
/// from [`crate::Labeler::run_into`], which writes them in place, host labels from [`crate::run_host`])
/// and what the [`Options`] asked for besides.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Run<T = DeviceLabels> {
    /// The labels (see [`DeviceLabels::numbering`] on the device).
    pub labels: T,
    /// The number of components when the labels are consecutive (after the filters).
    pub count: Option<u32>,
    /// With [`Stats::Components`], the statistics, entry `k` for label `k + 1`.
    pub stats: Option<ComponentStats>,
    /// With [`Stats::OpenCv`], OpenCV's tables.
    pub opencv: Option<OpenCvStats>,
    /// Every stage's phases, on the device; [`crate::run_host`]'s begin with [`crate::Phase::Upload`] and end
    /// with [`crate::Phase::Download`], timed on the host clock.
    pub timings: Timings,
}

impl<T> Run<T> {
    /// The same result with other labels.
    pub(crate) fn with_labels<U>(self, labels: U) -> Run<U> {
        let Run { count, stats, opencv, timings, .. } = self;
        Run { labels, count, stats, opencv, timings }
    }
}
