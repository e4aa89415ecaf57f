//! Arrays larger than a device, or than 32-bit labels: labeled in slabs along the slowest axis.
//!
//! A [`SlabPlan`] cuts an array into slabs of whole planes (rows of an image, slices of a
//! volume) that fit a device memory cap and 32-bit labels. [`label_in_slabs`] labels each slab
//! on the device into consecutive labels, makes them global (the slab's offset, the count of
//! the slabs before it, plus its local label) as it writes them into the output, joins the
//! labels across each face between two slabs with a union-find on the host (every in-plane
//! offset the connectivity allows, so a face covers edge and corner contacts), and finally
//! renumbers the whole output consecutively ([`LabelMerger`]): the same labels, bit for bit, as
//! the consecutive labeling of the whole array at once. The output may be 32- or 64-bit
//! ([`LabelWord`]); 64-bit labels number arrays past 2^32 elements, each slab staying under it.
//! [`label_in_slabs_across`] spreads the slabs over several labelers (one per device), a wave
//! of slabs at once on their own threads, joined on the host in slab order: the same labels.

mod io;
mod merge;
mod pipeline;

use std::time::Instant;

pub use io::{Dense, DenseLabels, ElementSource, LabelSink};
pub use merge::{LabelMap, LabelMerger, LabelWord};
pub use pipeline::{label_slabs_through, label_slabs_with};

use crate::{Connectivity, Error, Labeler, Result, Shape, Timings};

/// Device bytes a slab takes per element, an upper estimate over the algorithms: its input
/// byte, its labels, TUF's copy of the labels for its ranked pass and the relabeling's scratch.
pub const DEVICE_BYTES_PER_ELEMENT: u64 = 12;

/// Most elements in one slab: 2^31, half of what 32-bit labels number, a margin for the kernels'
/// 32-bit index arithmetic (the relabeling's count of mark words wrapped at 2^32 - 1 pixels
/// until it was mended; whole images of 4.29 Gpx are exact on an H200 with TUF, UF and BUF since).
pub const MAX_SLAB_ELEMENTS: u64 = 1 << 31;

/// The environment variable that caps the device memory a labeling of an array in slabs may use
/// (bytes); unset, only 32-bit labels bound a slab.
pub const MAX_DEVICE_BYTES_VAR: &str = "CCL_MAX_DEVICE_BYTES";

/// The cap [`MAX_DEVICE_BYTES_VAR`] sets: `None` where it is unset or empty, an
/// [`Error::InvalidParameter`] where it is not a positive number of bytes.
pub fn max_device_bytes_from_env() -> Result<Option<u64>> {
    match std::env::var(MAX_DEVICE_BYTES_VAR) {
        Ok(text) if !text.trim().is_empty() => match text.trim().parse::<u64>() {
            Ok(bytes) if bytes > 0 => Ok(Some(bytes)),
            _ => Err(Error::InvalidParameter {
                name: MAX_DEVICE_BYTES_VAR.into(),
                reason: format!("{text:?} is not a positive number of bytes"),
            }),
        },
        _ => Ok(None),
    }
}

/// How an array is cut into slabs of whole planes along its slowest axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlabPlan {
    shape: Shape,
    planes_per_slab: usize,
    label_base: u64,
}

impl SlabPlan {
    /// Slabs of as many planes as fit `max_device_bytes` ([`DEVICE_BYTES_PER_ELEMENT`] each;
    /// `None`: no cap) and [`MAX_SLAB_ELEMENTS`]. An empty array, or a cap
    /// that does not hold one plane, is an [`Error::InvalidParameter`].
    pub fn new(shape: Shape, max_device_bytes: Option<u64>) -> Result<Self> {
        let ((width, height), planes) = planes_of(shape);
        let plane = width * height;
        if plane == 0 || planes == 0 {
            return Err(Error::InvalidParameter { name: "shape".into(), reason: format!("{shape} has no element") });
        }
        let by_labels = MAX_SLAB_ELEMENTS / plane as u64;
        let by_memory = max_device_bytes.map_or(u64::MAX, |cap| cap / (plane as u64 * DEVICE_BYTES_PER_ELEMENT));
        let fit = by_labels.min(by_memory);
        if fit == 0 {
            let need = plane as u64 * DEVICE_BYTES_PER_ELEMENT;
            return Err(Error::InvalidParameter {
                name: "max device bytes".into(),
                reason: match max_device_bytes {
                    Some(cap) if cap < need => format!(
                        "a slab of {shape} holds at least one plane of {plane} elements, {need} device bytes, \
                         more than the cap of {cap}"
                    ),
                    _ => format!("a plane of {shape} has more than {MAX_SLAB_ELEMENTS} elements, the most in a slab"),
                },
            });
        }
        Ok(Self { shape, planes_per_slab: fit.min(planes as u64) as usize, label_base: 0 })
    }

    /// Labels from `base`+1 (`base`+1..`base`+N) instead of 1, as a part of a larger labeling
    /// (and a way to test 64-bit labels on small arrays).
    pub fn with_label_base(self, base: u64) -> Self {
        Self { label_base: base, ..self }
    }

    /// Slabs of at most a `devices`-th of the planes (rounded up), so that each of `devices`
    /// labelers gets a slab of about the same size in each wave of [`label_in_slabs_across`].
    pub fn spread_over(self, devices: usize) -> Self {
        let planes = planes_of(self.shape).1;
        let most = planes.div_ceil(devices.max(1)).max(1);
        Self { planes_per_slab: self.planes_per_slab.min(most), ..self }
    }

    /// Slabs of a multiple of `planes` planes where they hold that many (so that they cut a
    /// file's chunks of `planes` planes only between chunks).
    pub fn aligned_to(self, planes: usize) -> Self {
        let planes = planes.max(1);
        if self.planes_per_slab < planes {
            return self;
        }
        Self { planes_per_slab: self.planes_per_slab / planes * planes, ..self }
    }

    /// The array's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Planes (rows of an image, slices of a volume) in each slab but maybe the last.
    pub fn planes_per_slab(&self) -> usize {
        self.planes_per_slab
    }

    /// The number of slabs.
    pub fn slabs(&self) -> usize {
        planes_of(self.shape).1.div_ceil(self.planes_per_slab)
    }

    /// The planes of slab `k`.
    pub fn plane_range(&self, k: usize) -> std::ops::Range<usize> {
        let (first, end) = self.planes(k);
        first..end
    }

    /// The planes of slab `k`, first and end.
    fn planes(&self, k: usize) -> (usize, usize) {
        let total = planes_of(self.shape).1;
        (k * self.planes_per_slab, ((k + 1) * self.planes_per_slab).min(total))
    }

    /// The shape of `planes` planes of the array.
    fn slab_shape(&self, planes: usize) -> Shape {
        if self.shape.depth == 1 {
            Shape::image(self.shape.width, planes)
        } else {
            Shape { depth: planes, ..self.shape }
        }
    }
}

/// The extent of a plane (width, height) and the planes along the slowest axis: rows of an
/// image (height 1), slices of a volume.
fn planes_of(shape: Shape) -> ((usize, usize), usize) {
    if shape.depth == 1 {
        ((shape.width, 1), shape.height)
    } else {
        ((shape.width, shape.height), shape.depth)
    }
}

/// What [`label_in_slabs`] did.
#[derive(Clone, Debug)]
pub struct SlabRun {
    /// The number of components N (labels 1..N).
    pub count: u64,
    /// The number of slabs.
    pub slabs: usize,
    /// Each slab's phases in turn (its upload and download on the host clock), then the join of
    /// the faces and the renumbering ([`Phase::Relabel`], host clock).
    pub timings: Timings,
    /// The statistics of components 1..N (label order), where the options asked for them:
    /// each slab's from its device, joined on the host ([`label_slabs_with`]).
    pub stats: Option<crate::ComponentStats>,
}

/// Labels the dense row-major array of `plan`'s shape in `elements` (one byte each, nonzero is
/// foreground) slab by slab with `labeler`, into `out` (one label per element): consecutive
/// labels 1..N in raster order, the same as labeling it whole (B+1..B+N from the plan's
/// [`SlabPlan::with_label_base`] B). Sizes that do not match the
/// shape are an [`Error::InvalidParameter`]; more labels than `W` holds as well (the output is
/// then partly written).
pub fn label_in_slabs<L: Labeler + Send, W: LabelWord>(
    labeler: &mut L,
    plan: &SlabPlan,
    elements: &[u8],
    connectivity: Connectivity,
    out: &mut [W],
) -> Result<SlabRun> {
    label_in_slabs_across(std::slice::from_mut(labeler), plan, elements, connectivity, out)
}

/// [`label_in_slabs`] with several labelers (one per device, say), as
/// [`label_slabs_through`] spreads them. The labels are the same as with one labeler. No
/// labeler is an [`Error::InvalidParameter`].
pub fn label_in_slabs_across<L: Labeler + Send, W: LabelWord>(
    labelers: &mut [L],
    plan: &SlabPlan,
    elements: &[u8],
    connectivity: Connectivity,
    out: &mut [W],
) -> Result<SlabRun> {
    let shape = plan.shape();
    for (name, len) in [("elements", elements.len()), ("labels", out.len())] {
        if len != shape.len() {
            return Err(Error::InvalidParameter {
                name: name.into(),
                reason: format!("{len} values for an array of shape {shape} ({} elements)", shape.len()),
            });
        }
    }
    label_slabs_through(labelers, plan, connectivity, &Dense::new(elements, shape), &mut DenseLabels::new(out, shape))
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
