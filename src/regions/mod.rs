//! Region properties (issue 53): scikit-image's `regionprops_table` for every component of a
//! consecutive labeling, computed where the labels are.
//!
//! The design splits what touches every pixel from what touches every component:
//! 1. On the device, the sums each property is derived from ([`RegionSums`]): the statistics
//!    stage's area, bounding box and exact coordinate sums (so the centroid), then
//!    `kernels/regionprops.kernel`'s central moments about the centroid (double precision, up to
//!    the power [`RegionRequest::order`] along each axis), the Euler number's window
//!    coefficients and the perimeter's border-pixel classes (integers), and an intensity image's
//!    sum, minimum and maximum. Only these sums, a few dozen numbers a component, leave the
//!    device. The CPU reference computes the same sums on the host ([`RegionSums::of_labels`]).
//! 2. On the host, [`RegionTable`] derives scikit-image's properties from them, with its names,
//!    axis order (rows first: (row, column) for images, (plane, row, column) for volumes) and
//!    definitions, and its `spacing`: the raw moments from the central ones and the centroid, the
//!    normalized and Hu moments, the inertia tensor and its eigenvalues, orientation,
//!    eccentricity, axis lengths, ... ([`Property`] lists them).
//!
//! Central moments are summed about the centroid rather than derived from raw sums, which would
//! lose the digits that cancel; integers (area, box, coordinate sums, Euler and perimeter
//! counts) are exact.

mod euler;
mod property;
mod reference;
mod region;
mod table;

pub use property::Property;
pub use table::{Column, RegionTable};

use crate::{ComponentStats, DeviceArray, Element};

/// An intensity image's element type: `f32` or `f64` (other types are converted first).
pub trait IntensityValue: Element + Into<f64> {
    /// Whether it is `f64`.
    const FLOAT64: bool;
}

impl IntensityValue for f32 {
    const FLOAT64: bool = false;
}

impl IntensityValue for f64 {
    const FLOAT64: bool = true;
}

/// An intensity image on a labeler's device, of the labels' shape
/// ([`crate::Labeler::upload_intensity`]).
#[derive(Clone, Copy)]
pub enum Intensity<'a> {
    /// Single precision.
    F32(&'a DeviceArray<f32>),
    /// Double precision.
    F64(&'a DeviceArray<f64>),
}

impl Intensity<'_> {
    /// The image's shape.
    pub fn shape(&self) -> crate::Shape {
        match self {
            Intensity::F32(a) => a.shape(),
            Intensity::F64(a) => a.shape(),
        }
    }
}

/// What [`crate::testing::Stages::region_sums`] sums beyond the statistics.
#[derive(Clone, Copy, Default)]
pub struct RegionRequest<'a> {
    /// The central moments up to this power along each axis (0: none; at most 3).
    pub order: u8,
    /// The Euler number's coefficient sums, and for images the perimeter's classes.
    pub shape: bool,
    /// The intensity image to sum, take the minimum and maximum of.
    pub intensity: Option<Intensity<'a>>,
}

/// The highest moment order the device sums (scikit-image's `regionprops` takes order 3).
pub const MAX_ORDER: u8 = 3;

/// The sums of every component of a consecutive labeling (entry `k` is label `k + 1`) that its
/// properties are derived from ([`RegionTable`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegionSums {
    /// Dimensions of the array they describe: 2 (an image) or 3 (a volume).
    pub axes: u8,
    /// Area, bounding box and coordinate sums.
    pub stats: ComponentStats,
    /// The power each axis goes up to in `central` (0: no moments).
    pub order: u8,
    /// Central moments about each component's centroid, in pixel units, `(order + 1)^axes` a
    /// component in scikit-image's axis order: entry `[p][q]` of an image (flattened row-major)
    /// sums dy^p dx^q, entry `[p][q][r]` of a volume dz^p dy^q dx^r.
    pub central: Vec<f64>,
    /// Each component's sum of Euler coefficients ([`RegionSums::euler_number`]).
    pub euler: Option<Vec<i64>>,
    /// Images: each component's border pixels in the three classes of scikit-image's
    /// `perimeter` (unit length, sqrt 2, (1 + sqrt 2) / 2).
    pub perimeter: Option<Vec<[u64; 3]>>,
    /// Each component's intensity sum, minimum and maximum.
    pub intensity: Option<Vec<[f64; 3]>>,
}

impl RegionSums {
    /// The number of components.
    pub fn len(&self) -> usize {
        self.stats.len()
    }

    /// Whether there is no component.
    pub fn is_empty(&self) -> bool {
        self.stats.is_empty()
    }

    /// Central moments a component.
    pub fn moments_per_component(&self) -> usize {
        if self.order == 0 {
            0
        } else {
            usize::from(self.order + 1).pow(u32::from(self.axes))
        }
    }

    /// Component `k`'s central moments (empty without moments).
    pub fn central_of(&self, k: usize) -> &[f64] {
        let m = self.moments_per_component();
        &self.central[k * m..(k + 1) * m]
    }

    /// Component `k`'s Euler number, where summed.
    pub fn euler_number(&self, k: usize) -> Option<i64> {
        self.euler.as_ref().map(|e| euler::number(e[k], self.axes))
    }

    /// The sums of consecutive `labels` (1..`n`) of `shape` as an array of `axes` dimensions,
    /// computed on the host: the CPU reference, and what the device's are checked against.
    pub fn of_labels(
        labels: &[u32],
        shape: crate::Shape,
        n: u32,
        axes: u8,
        request: &RegionRequest<'_>,
        intensity: Option<&[f64]>,
    ) -> Self {
        reference::sums(labels, shape, n, axes, request, intensity)
    }
}

/// The Euler coefficient table of `axes` dimensions (a kernel argument).
pub(crate) fn euler_coefficients(axes: u8) -> &'static [i32] {
    euler::coefficients(axes)
}

/// Checks that `axes` (2 or 3) fits an array of `shape`: a volume deeper than one slice has 3.
pub(crate) fn check_axes(shape: crate::Shape, axes: u8) -> crate::Result<()> {
    if (shape.dims()..=3).contains(&axes) && axes >= 2 {
        return Ok(());
    }
    Err(crate::Error::InvalidParameter {
        name: "dims".into(),
        reason: format!("{axes} dimensions for an array of shape {shape}"),
    })
}
