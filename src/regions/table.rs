//! scikit-image's region properties from the device's sums ([`RegionSums`]), with its names,
//! axis order, column names (`bbox-0`, `moments_central-1-2`, ...) and `spacing`.

use super::{RegionSums, MAX_ORDER};
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
    fn unavailable(self, axes: u8, spacing: &[f64]) -> Option<&'static str> {
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

/// One column of a [`RegionTable`]: its name (`area`, `bbox-0`, `moments-1-2`) and a value per
/// component.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// scikit-image's column name.
    pub name: String,
    /// The values, in label order (integers as exact `f64`s where [`Column::integer`]).
    pub values: Vec<f64>,
    /// Whether the values are integers.
    pub integer: bool,
}

/// The region properties of every component, as scikit-image's `regionprops_table` gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegionTable {
    /// The columns, in the order of the properties asked for.
    pub columns: Vec<Column>,
}

impl RegionTable {
    /// The moment order, Euler/perimeter sums and intensity that `properties` need: what to ask
    /// the device for.
    pub fn needs(properties: &[Property]) -> (u8, bool, bool) {
        let order = properties.iter().map(|p| p.order()).max().unwrap_or(0);
        let shape = properties.iter().any(|p| p.needs_shape());
        let intensity = properties.iter().any(|p| p.needs_intensity());
        (order, shape, intensity)
    }

    /// Checks `properties` and `spacing` (one positive finite value per axis) for an array of
    /// `axes` dimensions, `intensity` telling whether an intensity image is given; returns the
    /// spacing to use (ones by default).
    pub fn check(properties: &[Property], axes: u8, spacing: Option<&[f64]>, intensity: bool) -> Result<Vec<f64>> {
        let spacing = match spacing {
            None => vec![1.0; usize::from(axes)],
            Some(s) if s.len() != usize::from(axes) || s.iter().any(|&v| !(v.is_finite() && v > 0.0)) => {
                return Err(Error::InvalidParameter {
                    name: "spacing".into(),
                    reason: format!("{s:?}: one positive finite value per axis ({axes}) is needed"),
                })
            }
            Some(s) => s.to_vec(),
        };
        for &p in properties {
            if let Some(why) = p.unavailable(axes, &spacing) {
                return Err(Error::InvalidParameter {
                    name: "properties".into(),
                    reason: format!("{} {why} (an array of {axes} dimensions, spacing {spacing:?})", p.name()),
                });
            }
            if p.needs_intensity() && !intensity {
                return Err(Error::InvalidParameter {
                    name: "properties".into(),
                    reason: format!("{} needs an intensity image", p.name()),
                });
            }
        }
        Ok(spacing)
    }

    /// The columns of `properties` from `sums` under `spacing` (in axis order: rows first), after
    /// [`RegionTable::check`]. The sums must hold what [`RegionTable::needs`] asks for.
    pub fn from_sums(sums: &RegionSums, properties: &[Property], spacing: Option<&[f64]>) -> Result<RegionTable> {
        let axes = sums.axes;
        let spacing = Self::check(properties, axes, spacing, sums.intensity.is_some())?;
        let (order, shape, _) = Self::needs(properties);
        if sums.order < order || (shape && sums.euler.is_none()) {
            return Err(Error::InvalidParameter {
                name: "properties".into(),
                reason: "the region sums lack what these properties need".into(),
            });
        }
        // Labels without pixels (possible in labels declared consecutive up to a count) have no
        // row, as scikit-image lists only the labels present.
        let present: Vec<usize> = (0..sums.len()).filter(|&k| sums.stats.components[k].area > 0).collect();
        let regions: Vec<Region> = present.iter().map(|&k| Region::new(sums, k, &spacing)).collect();
        let mut columns = Vec::new();
        for &p in properties {
            let shape = value_shape(p, axes);
            let per: Vec<Vec<f64>> =
                regions.iter().zip(&present).map(|(r, &k)| r.values(p, sums, k, &spacing)).collect();
            for (j, suffix) in suffixes(&shape).into_iter().enumerate() {
                columns.push(Column {
                    name: format!("{}{suffix}", p.name()),
                    values: per.iter().map(|v| v[j]).collect(),
                    integer: p.is_integer(),
                });
            }
        }
        Ok(RegionTable { columns })
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The number of rows (components).
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }
}

/// The shape of a property's value for `axes` dimensions (empty: a scalar).
fn value_shape(p: Property, axes: u8) -> Vec<usize> {
    use Property::*;
    let a = usize::from(axes);
    let side = usize::from(MAX_ORDER) + 1;
    match p {
        Bbox => vec![2 * a],
        Centroid | CentroidLocal | InertiaTensorEigvals => vec![a],
        Moments | MomentsCentral | MomentsNormalized => vec![side; a],
        MomentsHu => vec![7],
        InertiaTensor => vec![a, a],
        _ => vec![],
    }
}

/// Column name suffixes of a value of `shape`, row-major: `""` for a scalar, `-i`, `-i-j`, ...
fn suffixes(shape: &[usize]) -> Vec<String> {
    let mut out = vec![String::new()];
    for &extent in shape {
        out = out.iter().flat_map(|s| (0..extent).map(move |i| format!("{s}-{i}"))).collect();
    }
    out
}

/// One component's quantities in scikit-image's axis order (rows first), scaled by the spacing.
struct Region {
    /// Pixel count.
    count: f64,
    /// First index along each axis, and one past the last.
    start: Vec<f64>,
    stop: Vec<f64>,
    /// Centroid in pixel units (axis order).
    centroid: Vec<f64>,
    /// Central moments scaled by the spacing (`mu`), side^axes, or empty.
    mu: Vec<f64>,
}

impl Region {
    fn new(sums: &RegionSums, k: usize, spacing: &[f64]) -> Region {
        let c = &sums.stats.components[k];
        let axes = usize::from(sums.axes);
        // The statistics' x, y, z order reversed: rows (y) first, planes (z) before them.
        let order: Vec<usize> = (0..axes).rev().collect();
        let low = [c.left, c.top, c.front];
        let size = [c.width, c.height, c.depth];
        let centroid = c.centroid();
        let start: Vec<f64> = order.iter().map(|&a| f64::from(low[a])).collect();
        let stop: Vec<f64> = order.iter().map(|&a| f64::from(low[a] + size[a])).collect();
        let mut mu = Vec::new();
        if sums.order > 0 {
            let side = usize::from(sums.order) + 1;
            let raw = sums.central_of(k);
            // Scaled to MAX_ORDER's layout (entries past the order summed stay NaN: never read).
            let full = usize::from(MAX_ORDER) + 1;
            mu = vec![f64::NAN; full.pow(axes as u32)];
            for (i, &value) in raw.iter().enumerate() {
                let powers = digits(i, side, axes);
                let scale: f64 = powers.iter().zip(spacing).map(|(&p, &s)| s.powi(p as i32)).product();
                mu[index(&powers, full)] = value * scale;
            }
        }
        Region { count: c.area as f64, start, stop, centroid: order.iter().map(|&a| centroid[a]).collect(), mu }
    }

    fn axes(&self) -> usize {
        self.start.len()
    }

    /// Central moment `powers` (scaled).
    fn mu(&self, powers: &[usize]) -> f64 {
        self.mu[index(powers, usize::from(MAX_ORDER) + 1)]
    }

    /// The inertia tensor (scikit-image's `inertia_tensor`), row-major.
    fn inertia(&self) -> Vec<f64> {
        let a = self.axes();
        let mu0 = self.count;
        let unit = |i: usize, j: usize| -> Vec<usize> {
            let mut p = vec![0; a];
            p[i] += 1;
            p[j] += 1;
            p
        };
        let second: Vec<f64> = (0..a).map(|i| self.mu(&unit(i, i))).collect();
        let total: f64 = second.iter().sum();
        let mut t = vec![0.0; a * a];
        for i in 0..a {
            for j in 0..a {
                t[i * a + j] = if i == j { (total - second[i]) / mu0 } else { -self.mu(&unit(i, j)) / mu0 };
            }
        }
        t
    }

    /// The inertia tensor's eigenvalues, clipped at 0, largest first.
    fn eigenvalues(&self) -> Vec<f64> {
        let t = self.inertia();
        let mut values = if self.axes() == 2 { symmetric_eigenvalues_2(&t) } else { symmetric_eigenvalues_3(&t) };
        values.iter_mut().for_each(|v| *v = v.max(0.0));
        values.sort_by(|a, b| b.total_cmp(a));
        values
    }

    /// Normalized central moments (scikit-image's `moments_normalized`, order 3).
    fn normalized(&self, spacing: &[f64]) -> Vec<f64> {
        let a = self.axes();
        let side = usize::from(MAX_ORDER) + 1;
        let scale = spacing.iter().copied().fold(f64::INFINITY, f64::min);
        (0..side.pow(a as u32))
            .map(|i| {
                let powers = digits(i, side, a);
                let order: usize = powers.iter().sum();
                if order < 2 {
                    f64::NAN
                } else {
                    (self.mu(&powers) / scale.powi(order as i32)) / self.count.powf(order as f64 / a as f64 + 1.0)
                }
            })
            .collect()
    }

    /// The values of property `p` of component `k` (flattened row-major).
    fn values(&self, p: Property, sums: &RegionSums, k: usize, spacing: &[f64]) -> Vec<f64> {
        use std::f64::consts::{FRAC_PI_4, PI, SQRT_2};
        use Property::*;
        let a = self.axes();
        let pixel: f64 = spacing.iter().product();
        let extents: f64 = self.start.iter().zip(&self.stop).map(|(s, e)| e - s).product();
        let area = self.count * pixel;
        let local: Vec<f64> = (0..a).map(|i| (self.centroid[i] - self.start[i]) * spacing[i]).collect();
        let intensity = |i: usize| sums.intensity.as_ref().map_or(f64::NAN, |v| v[k][i]);
        match p {
            Label => vec![(k + 1) as f64],
            Area => vec![area],
            NumPixels => vec![self.count],
            Bbox => self.start.iter().chain(&self.stop).copied().collect(),
            AreaBbox => vec![extents * pixel],
            Centroid => self.centroid.iter().zip(spacing).map(|(c, s)| c * s).collect(),
            CentroidLocal => local,
            Extent => vec![self.count / extents],
            EquivalentDiameterArea => vec![(2.0 * a as f64 * area / PI).powf(1.0 / a as f64)],
            EulerNumber => vec![sums.euler_number(k).unwrap_or(0) as f64],
            Perimeter => {
                let [unit, diagonal, corner] = sums.perimeter.as_ref().map_or([0; 3], |v| v[k]);
                vec![(unit as f64 + diagonal as f64 * SQRT_2 + corner as f64 * (1.0 + SQRT_2) / 2.0) * spacing[0]]
            }
            MomentsCentral => self.mu.clone(),
            Moments => raw_moments(&self.mu, &local, a),
            MomentsNormalized => self.normalized(spacing),
            MomentsHu => hu(&self.normalized(spacing)),
            InertiaTensor => self.inertia(),
            InertiaTensorEigvals => self.eigenvalues(),
            Orientation => {
                let t = self.inertia();
                let (ta, b, c) = (t[0], t[1], t[3]);
                let angle = if ta - c == 0.0 {
                    if b < 0.0 {
                        FRAC_PI_4
                    } else {
                        -FRAC_PI_4
                    }
                } else {
                    0.5 * (-2.0 * b).atan2(c - ta)
                };
                vec![angle]
            }
            Eccentricity => {
                let ev = self.eigenvalues();
                vec![if ev[0] == 0.0 { 0.0 } else { (1.0 - ev[1] / ev[0]).sqrt() }]
            }
            AxisMajorLength => {
                let ev = self.eigenvalues();
                vec![if a == 2 { 4.0 * ev[0].sqrt() } else { (10.0 * (ev[0] + ev[1] - ev[2])).max(0.0).sqrt() }]
            }
            AxisMinorLength => {
                let ev = self.eigenvalues();
                vec![if a == 2 { 4.0 * ev[1].sqrt() } else { (10.0 * (-ev[0] + ev[1] + ev[2])).max(0.0).sqrt() }]
            }
            IntensityMean => vec![intensity(0) / self.count],
            IntensityMin => vec![intensity(1)],
            IntensityMax => vec![intensity(2)],
        }
    }
}

/// The digits of `i` in base `side`, `axes` of them, most significant first: the powers of a
/// flattened moment index.
fn digits(mut i: usize, side: usize, axes: usize) -> Vec<usize> {
    let mut d = vec![0; axes];
    for slot in d.iter_mut().rev() {
        *slot = i % side;
        i /= side;
    }
    d
}

/// The flattened index of moment `powers` in a table of `side` entries per axis.
fn index(powers: &[usize], side: usize) -> usize {
    powers.iter().fold(0, |i, &p| i * side + p)
}

/// Raw moments about the bounding box's first corner from the central ones (`mu`, order 3) and
/// the centroid relative to that corner (`c`): x^p = sum_i C(p, i) (x - c)^i c^(p - i) along
/// each axis.
fn raw_moments(mu: &[f64], c: &[f64], axes: usize) -> Vec<f64> {
    let side = usize::from(MAX_ORDER) + 1;
    let binomial = |n: usize, k: usize| -> f64 { (0..k).fold(1.0, |b, i| b * (n - i) as f64 / (i + 1) as f64) };
    (0..side.pow(axes as u32))
        .map(|i| {
            let p = digits(i, side, axes);
            (0..side.pow(axes as u32))
                .map(|j| digits(j, side, axes))
                .filter(|q| q.iter().zip(&p).all(|(qi, pi)| qi <= pi))
                .map(|q| {
                    let weight: f64 =
                        (0..axes).map(|d| binomial(p[d], q[d]) * c[d].powi((p[d] - q[d]) as i32)).product();
                    weight * mu[index(&q, side)]
                })
                .sum()
        })
        .collect()
}

/// Hu's seven invariants from the normalized moments (4 x 4, row-major) of an image.
fn hu(nu: &[f64]) -> Vec<f64> {
    let n = |p: usize, q: usize| nu[p * 4 + q];
    let (n20, n02, n11) = (n(2, 0), n(0, 2), n(1, 1));
    let (n30, n03, n21, n12) = (n(3, 0), n(0, 3), n(2, 1), n(1, 2));
    let (s1, s2) = (n30 + n12, n21 + n03);
    let (d1, d2) = (n30 - 3.0 * n12, 3.0 * n21 - n03);
    vec![
        n20 + n02,
        (n20 - n02).powi(2) + 4.0 * n11.powi(2),
        d1.powi(2) + d2.powi(2),
        s1.powi(2) + s2.powi(2),
        d1 * s1 * (s1.powi(2) - 3.0 * s2.powi(2)) + d2 * s2 * (3.0 * s1.powi(2) - s2.powi(2)),
        (n20 - n02) * (s1.powi(2) - s2.powi(2)) + 4.0 * n11 * s1 * s2,
        d2 * s1 * (s1.powi(2) - 3.0 * s2.powi(2)) - d1 * s2 * (3.0 * s1.powi(2) - s2.powi(2)),
    ]
}

/// Eigenvalues of a symmetric 2 x 2 matrix (row-major).
fn symmetric_eigenvalues_2(t: &[f64]) -> Vec<f64> {
    let (mean, half) = ((t[0] + t[3]) / 2.0, (t[0] - t[3]) / 2.0);
    let radius = half.hypot(t[1]);
    vec![mean + radius, mean - radius]
}

/// Eigenvalues of a symmetric 3 x 3 matrix (row-major), by the trigonometric solution of its
/// characteristic polynomial (Smith 1961).
fn symmetric_eigenvalues_3(t: &[f64]) -> Vec<f64> {
    let off = t[1] * t[1] + t[2] * t[2] + t[5] * t[5];
    if off == 0.0 {
        return vec![t[0], t[4], t[8]];
    }
    let q = (t[0] + t[4] + t[8]) / 3.0;
    let p2 = (t[0] - q).powi(2) + (t[4] - q).powi(2) + (t[8] - q).powi(2) + 2.0 * off;
    let p = (p2 / 6.0).sqrt();
    let b: Vec<f64> = (0..9).map(|i| (t[i] - if i % 4 == 0 { q } else { 0.0 }) / p).collect();
    let det =
        b[0] * (b[4] * b[8] - b[5] * b[7]) - b[1] * (b[3] * b[8] - b[5] * b[6]) + b[2] * (b[3] * b[7] - b[4] * b[6]);
    let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    let first = q + 2.0 * p * phi.cos();
    let last = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    vec![first, 3.0 * q - first - last, last]
}
