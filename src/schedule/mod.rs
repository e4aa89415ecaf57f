//! Host-side schedules: which kernels run, in which order, with which loop. Each algorithm's
//! schedule is written once against the device abstraction (`&dyn Gpu`) and so serves OpenCL,
//! CUDA and the recording device alike. Each schedule file also declares what the registry
//! (`crate::registry`) reads about it: its kernel file (`KERNEL`) and its algorithms' entries
//! ([`AlgorithmInfo`]: name, connectivities, phases, defines, schedule builder, ...) or its
//! stage's ([`StageInfo`], `STAGE`); the registry's lists name them. An `_IC` variant is the
//! same schedule built with `INLINE_COMPRESSION=1`.

mod common;
mod entry;
mod launch;

pub(crate) mod be;
pub(crate) mod bke;
pub(crate) mod buf;
pub(crate) mod hold;
pub(crate) mod ke;
pub(crate) mod le;
pub(crate) mod ole;
pub(crate) mod regionprops;
pub(crate) mod relabel;
mod scratch;
mod stage;
pub(crate) mod stats;
pub(crate) mod tuf;
pub(crate) mod uf;

pub use entry::AlgorithmInfo;
pub(crate) use entry::{BLOCK_CONNECTIVITIES, PIXEL_CONNECTIVITIES};
pub use stage::StageInfo;

pub(crate) use common::{label, label_into, Job, Schedule, ScheduleBuilder};
pub(crate) use launch::{dims_defines, kernels, over_blocks, over_pixels, until_stable, LABEL_BYTES};
