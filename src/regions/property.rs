//! The region properties by scikit-image's names ([`Property`]): what each needs from the
//! device (moment order, Euler and perimeter sums, an intensity image) and where it is defined.

use super::MAX_ORDER;
use crate::{Error, Result};

macro_rules! properties {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A region property, by scikit-image's name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Property {
            $($(#[$doc])* $variant,)*
        }

        impl Property {
            /// Every property, in this order.
            pub const ALL: &'static [Property] = &[$(Property::$variant,)*];

            /// scikit-image's name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Property::$variant => $name,)*
                }
            }
        }
    };
}

properties! {
    /// The component's label.
    Label = "label",
    /// Pixel count times the pixel's area (volume) under `spacing`.
    Area = "area",
    /// Pixel count.
    NumPixels = "num_pixels",
    /// Bounding box: first index along each axis, then one past the last (pixels).
    Bbox = "bbox",
    /// Area of the bounding box.
    AreaBbox = "area_bbox",
    /// Mean coordinates (scaled by `spacing`).
    Centroid = "centroid",
    /// Centroid relative to the bounding box's first corner.
    CentroidLocal = "centroid_local",
    /// Area over the bounding box's area.
    Extent = "extent",
    /// Diameter of the disk (ball) of the same area (volume).
    EquivalentDiameterArea = "equivalent_diameter_area",
    /// Euler characteristic at full connectivity (objects less holes; volumes also less tunnels).
    EulerNumber = "euler_number",
    /// Images: perimeter by scikit-image's border-pixel weights (isotropic spacing only).
    Perimeter = "perimeter",
    /// Raw moments up to order 3 along each axis, about the bounding box's first corner.
    Moments = "moments",
    /// Central moments up to order 3 along each axis.
    MomentsCentral = "moments_central",
    /// Scale-invariant moments (NaN below order 2).
    MomentsNormalized = "moments_normalized",
    /// Images: Hu's seven invariants (unit spacing only).
    MomentsHu = "moments_hu",
    /// The inertia tensor.
    InertiaTensor = "inertia_tensor",
    /// Its eigenvalues, largest first.
    InertiaTensorEigvals = "inertia_tensor_eigvals",
    /// Images: angle between axis 0 (rows) and the major axis, in radians.
    Orientation = "orientation",
    /// Images: eccentricity of the ellipse of the same second moments.
    Eccentricity = "eccentricity",
    /// Major axis length of the ellipse (ellipsoid) of the same second moments.
    AxisMajorLength = "axis_major_length",
    /// Minor axis length.
    AxisMinorLength = "axis_minor_length",
    /// Mean of the intensity image over the component.
    IntensityMean = "intensity_mean",
    /// Minimum of the intensity image over the component.
    IntensityMin = "intensity_min",
    /// Maximum of the intensity image over the component.
    IntensityMax = "intensity_max",
}

impl Property {
    /// The property named `name`, or an error listing the names known.
    pub fn parse(name: &str) -> Result<Property> {
        Property::ALL.iter().copied().find(|p| p.name() == name.trim()).ok_or_else(|| Error::InvalidParameter {
            name: "properties".into(),
            reason: format!(
                "unknown region property {name:?}; known: {}",
                Property::ALL.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// The moment order its computation needs (0: none).
    pub fn order(self) -> u8 {
        use Property::*;
        match self {
            Moments | MomentsCentral | MomentsNormalized | MomentsHu => MAX_ORDER,
            InertiaTensor | InertiaTensorEigvals | Orientation | Eccentricity | AxisMajorLength | AxisMinorLength => 2,
            _ => 0,
        }
    }

    /// Whether it needs the Euler or perimeter sums.
    pub fn needs_shape(self) -> bool {
        matches!(self, Property::EulerNumber | Property::Perimeter)
    }

    /// Whether it needs an intensity image.
    pub fn needs_intensity(self) -> bool {
        matches!(self, Property::IntensityMean | Property::IntensityMin | Property::IntensityMax)
    }

    /// Whether its values are integers (scikit-image returns them as such).
    pub fn is_integer(self) -> bool {
        matches!(self, Property::Label | Property::NumPixels | Property::Bbox | Property::EulerNumber)
    }

    /// Why it is not defined for `axes` dimensions or this `spacing`, if it is not (scikit-image
    /// raises then too).
    pub(super) fn unavailable(self, axes: u8, spacing: &[f64]) -> Option<&'static str> {
        use Property::*;
        let isotropic = spacing.iter().all(|&s| s == spacing[0]);
        match self {
            Perimeter | MomentsHu | Orientation | Eccentricity if axes != 2 => Some("is defined for images only"),
            Perimeter if !isotropic => Some("takes an isotropic spacing only"),
            MomentsHu if spacing.iter().any(|&s| s != 1.0) => Some("takes a unit spacing only"),
            _ => None,
        }
    }
}
