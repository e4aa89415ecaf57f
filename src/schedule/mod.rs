//! Host-side schedules: which kernels run, in which order, with which loop. Each algorithm's
//! schedule is written once against the device abstraction (`&dyn Gpu`) and so serves OpenCL,
//! CUDA and the recording device alike; the registry (`crate::registry`) names the schedule,
//! kernel file and defines of each algorithm. An `_IC` variant is the same schedule built with
//! `INLINE_COMPRESSION=1`.

mod common;
mod launch;

pub(crate) mod be;
pub(crate) mod bke;
pub(crate) mod buf;
pub(crate) mod hold;
pub(crate) mod ke;
pub(crate) mod le;
pub(crate) mod ole;
pub(crate) mod relabel;
mod scratch;
pub(crate) mod stats;
pub(crate) mod tuf;
pub(crate) mod uf;

pub(crate) use common::{label, label_into, Job, Schedule, ScheduleBuilder};
pub(crate) use launch::{dims_defines, kernels, over_blocks, over_pixels, until_stable, LABEL_BYTES};
