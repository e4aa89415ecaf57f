//! One component's properties from its sums, with scikit-image's definitions (its
//! `_regionprops.py` and `_moments.py`): the moments in its axis order (rows first) scaled by
//! the spacing, the raw, normalized and Hu moments, the inertia tensor and its eigenvalues, and
//! the values of each [`Property`]. Fixed-size arrays throughout: a table of 10^4 components
//! costs no allocation per component.

use std::f64::consts::{FRAC_PI_4, PI, SQRT_2};

use super::{Property, RegionSums, MAX_ORDER};

/// Entries per axis of a moment table (orders 0..=3).
pub(super) const SIDE: usize = MAX_ORDER as usize + 1;
/// Entries of a volume's moment table.
const ENTRIES: usize = SIDE * SIDE * SIDE;

/// The powers of entry `i` of a moment table of `side` entries per axis and `axes` axes, most
/// significant first (unused axes 0).
fn powers_of(mut i: usize, side: usize, axes: usize) -> [usize; 3] {
    let mut p = [0; 3];
    for slot in p[..axes].iter_mut().rev() {
        *slot = i % side;
        i /= side;
    }
    p
}

/// The entry of `powers` in a table of [`SIDE`] entries per axis and `axes` axes.
fn entry_of(powers: &[usize; 3], axes: usize) -> usize {
    powers[..axes].iter().fold(0, |i, &p| i * SIDE + p)
}

/// Where each of the device's central moments goes in a [`Region`]'s table, and the spacing's
/// factor for it: computed once per table, not per component.
pub(super) struct MomentLayout {
    /// (entry in the region's table, the spacing to the powers) of each device moment.
    entries: Vec<(usize, f64)>,
}

impl MomentLayout {
    /// The layout of `sums`' moments under `spacing`.
    pub(super) fn new(sums: &RegionSums, spacing: &[f64]) -> MomentLayout {
        let (axes, side) = (usize::from(sums.axes), usize::from(sums.order) + 1);
        let entries = (0..sums.moments_per_component())
            .map(|i| {
                let powers = powers_of(i, side, axes);
                let scale: f64 = (0..axes).map(|a| spacing[a].powi(powers[a] as i32)).product();
                (entry_of(&powers, axes), scale)
            })
            .collect();
        MomentLayout { entries }
    }
}

/// One component's quantities, in scikit-image's axis order, scaled by the spacing.
pub(super) struct Region {
    axes: usize,
    /// Pixel count.
    count: f64,
    /// First index along each axis, and one past the last.
    start: [f64; 3],
    stop: [f64; 3],
    /// Centroid in pixel units.
    centroid: [f64; 3],
    /// Central moments scaled by the spacing, [`SIDE`]^axes (entries past the order summed: 0).
    mu: [f64; ENTRIES],
    /// The inertia tensor (row-major) and its eigenvalues, clipped at 0, largest first (with
    /// moments of order 2 or more).
    inertia: [f64; 9],
    eigenvalues: [f64; 3],
}

impl Region {
    /// Component `k` of `sums`, its moments placed and scaled by `layout`.
    pub(super) fn new(sums: &RegionSums, k: usize, layout: &MomentLayout) -> Region {
        let c = &sums.stats.components[k];
        let axes = usize::from(sums.axes);
        // The statistics' x, y, z order reversed: rows (y) first, planes (z) before them.
        let low = [c.left, c.top, c.front];
        let size = [c.width, c.height, c.depth];
        let centroid = c.centroid();
        let (mut start, mut stop, mut center) = ([0.0; 3], [0.0; 3], [0.0; 3]);
        for i in 0..axes {
            let a = axes - 1 - i;
            start[i] = f64::from(low[a]);
            stop[i] = f64::from(low[a] + size[a]);
            center[i] = centroid[a];
        }
        let mut region = Region {
            axes,
            count: c.area as f64,
            start,
            stop,
            centroid: center,
            mu: [0.0; ENTRIES],
            inertia: [0.0; 9],
            eigenvalues: [0.0; 3],
        };
        for (&value, &(entry, scale)) in sums.central_of(k).iter().zip(&layout.entries) {
            region.mu[entry] = value * scale;
        }
        if sums.order >= 2 {
            region.inertia = region.inertia_tensor();
            region.eigenvalues = region.eigenvalues_of_inertia();
        }
        region
    }

    /// Central moment `powers` (scaled).
    fn mu(&self, powers: [usize; 3]) -> f64 {
        self.mu[entry_of(&powers, self.axes)]
    }

    /// scikit-image's `inertia_tensor`: diagonal entry i the second moments along the other
    /// axes, off-diagonal (i, j) minus the mixed moment, over the count.
    fn inertia_tensor(&self) -> [f64; 9] {
        let a = self.axes;
        let pair = |i: usize, j: usize| {
            let mut p = [0; 3];
            p[i] += 1;
            p[j] += 1;
            self.mu(p)
        };
        let total: f64 = (0..a).map(|i| pair(i, i)).sum();
        let mut t = [0.0; 9];
        for i in 0..a {
            for j in 0..a {
                t[i * a + j] = if i == j { (total - pair(i, i)) / self.count } else { -pair(i, j) / self.count };
            }
        }
        t
    }

    /// The inertia tensor's eigenvalues, clipped at 0, largest first.
    fn eigenvalues_of_inertia(&self) -> [f64; 3] {
        let t = &self.inertia;
        let mut values = if self.axes == 2 { symmetric_eigenvalues_2(t) } else { symmetric_eigenvalues_3(t) };
        let used = &mut values[..self.axes];
        used.iter_mut().for_each(|v| *v = v.max(0.0));
        used.sort_by(|a, b| b.total_cmp(a));
        values
    }

    /// The centroid relative to the bounding box's first corner, scaled.
    fn local_centroid(&self, spacing: &[f64]) -> [f64; 3] {
        std::array::from_fn(|i| if i < self.axes { (self.centroid[i] - self.start[i]) * spacing[i] } else { 0.0 })
    }

    /// The normalized central moments' divisors by order (0..=9): the smallest spacing to the
    /// order, and the count to (order / axes + 1), that power taken as the count's axes-th root to
    /// the order, times the count.
    fn normalizers(&self, smallest_spacing: f64) -> [(f64, f64); 3 * (SIDE - 1) + 1] {
        let root = if self.axes == 2 { self.count.sqrt() } else { self.count.cbrt() };
        let (mut spacing_power, mut root_power) = (1.0, 1.0);
        std::array::from_fn(|_| {
            let pair = (spacing_power, root_power * self.count);
            spacing_power *= smallest_spacing;
            root_power *= root;
            pair
        })
    }

    /// Normalized central moment `powers` (scikit-image's `moments_normalized`: NaN below order
    /// 2), with the divisors of [`Region::normalizers`].
    fn normalized(&self, powers: [usize; 3], normalizers: &[(f64, f64)]) -> f64 {
        let order: usize = powers.iter().sum();
        if order < 2 {
            return f64::NAN;
        }
        let (spacing, count) = normalizers[order];
        (self.mu(powers) / spacing) / count
    }

    /// Raw moment `powers` about the bounding box's first corner, from the central ones and the
    /// local centroid `c`: along each axis x^p = sum_i C(p, i) (x - c)^i c^(p - i).
    fn raw(&self, powers: [usize; 3], c: &[f64; 3]) -> f64 {
        const BINOMIAL: [[f64; SIDE]; SIDE] =
            [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 2.0, 1.0, 0.0], [1.0, 3.0, 3.0, 1.0]];
        // c[d]^e for e in 0..SIDE.
        let c_powers: [[f64; SIDE]; 3] = std::array::from_fn(|d| [1.0, c[d], c[d] * c[d], c[d] * c[d] * c[d]]);
        let mut total = 0.0;
        for q0 in 0..=powers[0] {
            for q1 in 0..=powers[1] {
                for q2 in 0..=powers[2] {
                    let q = [q0, q1, q2];
                    let weight: f64 =
                        (0..self.axes).map(|d| BINOMIAL[powers[d]][q[d]] * c_powers[d][powers[d] - q[d]]).product();
                    total += weight * self.mu(q);
                }
            }
        }
        total
    }

    /// Pushes the values of property `p` of component `k` (flattened row-major) onto `out`.
    pub(super) fn push_values(&self, p: Property, sums: &RegionSums, k: usize, spacing: &[f64], out: &mut Vec<f64>) {
        use Property::*;
        let a = self.axes;
        let pixel: f64 = spacing.iter().product();
        let extents: f64 = (0..a).map(|i| self.stop[i] - self.start[i]).product();
        let area = self.count * pixel;
        let tables = SIDE.pow(a as u32);
        let intensity = |i: usize| sums.intensity.as_ref().map_or(f64::NAN, |v| v[k][i]);
        let ev = &self.eigenvalues;
        match p {
            Label => out.push((k + 1) as f64),
            Area => out.push(area),
            NumPixels => out.push(self.count),
            Bbox => out.extend(self.start[..a].iter().chain(&self.stop[..a])),
            AreaBbox => out.push(extents * pixel),
            Centroid => out.extend((0..a).map(|i| self.centroid[i] * spacing[i])),
            CentroidLocal => out.extend_from_slice(&self.local_centroid(spacing)[..a]),
            Extent => out.push(self.count / extents),
            EquivalentDiameterArea => out.push((2.0 * a as f64 * area / PI).powf(1.0 / a as f64)),
            EulerNumber => out.push(sums.euler_number(k).unwrap_or(0) as f64),
            Perimeter => {
                let [unit, diagonal, corner] = sums.perimeter.as_ref().map_or([0; 3], |v| v[k]);
                let length = unit as f64 + diagonal as f64 * SQRT_2 + corner as f64 * (1.0 + SQRT_2) / 2.0;
                out.push(length * spacing[0]);
            }
            MomentsCentral => out.extend_from_slice(&self.mu[..tables]),
            Moments => {
                let c = self.local_centroid(spacing);
                out.extend((0..tables).map(|i| self.raw(powers_of(i, SIDE, a), &c)));
            }
            MomentsNormalized => {
                let normalizers = self.normalizers(spacing.iter().copied().fold(f64::INFINITY, f64::min));
                out.extend((0..tables).map(|i| self.normalized(powers_of(i, SIDE, a), &normalizers)));
            }
            MomentsHu => {
                let normalizers = self.normalizers(1.0);
                out.extend(hu(|p, q| self.normalized([p, q, 0], &normalizers)));
            }
            InertiaTensor => out.extend_from_slice(&self.inertia[..a * a]),
            InertiaTensorEigvals => out.extend_from_slice(&ev[..a]),
            Orientation => {
                let (ta, b, c) = (self.inertia[0], self.inertia[1], self.inertia[3]);
                out.push(if ta - c == 0.0 {
                    if b < 0.0 {
                        FRAC_PI_4
                    } else {
                        -FRAC_PI_4
                    }
                } else {
                    0.5 * (-2.0 * b).atan2(c - ta)
                });
            }
            Eccentricity => out.push(if ev[0] == 0.0 { 0.0 } else { (1.0 - ev[1] / ev[0]).sqrt() }),
            AxisMajorLength => {
                out.push(if a == 2 { 4.0 * ev[0].sqrt() } else { (10.0 * (ev[0] + ev[1] - ev[2])).max(0.0).sqrt() })
            }
            AxisMinorLength => {
                out.push(if a == 2 { 4.0 * ev[1].sqrt() } else { (10.0 * (-ev[0] + ev[1] + ev[2])).max(0.0).sqrt() })
            }
            IntensityMean => out.push(intensity(0) / self.count),
            IntensityMin => out.push(intensity(1)),
            IntensityMax => out.push(intensity(2)),
        }
    }
}

/// Hu's seven invariants from the normalized moments `nu(p, q)` of an image.
fn hu(nu: impl Fn(usize, usize) -> f64) -> [f64; 7] {
    let (n20, n02, n11) = (nu(2, 0), nu(0, 2), nu(1, 1));
    let (n30, n03, n21, n12) = (nu(3, 0), nu(0, 3), nu(2, 1), nu(1, 2));
    let (s1, s2) = (n30 + n12, n21 + n03);
    let (d1, d2) = (n30 - 3.0 * n12, 3.0 * n21 - n03);
    [
        n20 + n02,
        (n20 - n02).powi(2) + 4.0 * n11.powi(2),
        d1.powi(2) + d2.powi(2),
        s1.powi(2) + s2.powi(2),
        d1 * s1 * (s1.powi(2) - 3.0 * s2.powi(2)) + d2 * s2 * (3.0 * s1.powi(2) - s2.powi(2)),
        (n20 - n02) * (s1.powi(2) - s2.powi(2)) + 4.0 * n11 * s1 * s2,
        d2 * s1 * (s1.powi(2) - 3.0 * s2.powi(2)) - d1 * s2 * (3.0 * s1.powi(2) - s2.powi(2)),
    ]
}

/// Eigenvalues of a symmetric 2 x 2 matrix (row-major, its first 4 entries).
fn symmetric_eigenvalues_2(t: &[f64; 9]) -> [f64; 3] {
    let (mean, half) = ((t[0] + t[3]) / 2.0, (t[0] - t[3]) / 2.0);
    let radius = half.hypot(t[1]);
    [mean + radius, mean - radius, 0.0]
}

/// Eigenvalues of a symmetric 3 x 3 matrix (row-major), by the trigonometric solution of its
/// characteristic polynomial (Smith 1961).
fn symmetric_eigenvalues_3(t: &[f64; 9]) -> [f64; 3] {
    let off = t[1] * t[1] + t[2] * t[2] + t[5] * t[5];
    if off == 0.0 {
        return [t[0], t[4], t[8]];
    }
    let q = (t[0] + t[4] + t[8]) / 3.0;
    let p2 = (t[0] - q).powi(2) + (t[4] - q).powi(2) + (t[8] - q).powi(2) + 2.0 * off;
    let p = (p2 / 6.0).sqrt();
    let b: [f64; 9] = std::array::from_fn(|i| (t[i] - if i % 4 == 0 { q } else { 0.0 }) / p);
    let det =
        b[0] * (b[4] * b[8] - b[5] * b[7]) - b[1] * (b[3] * b[8] - b[5] * b[6]) + b[2] * (b[3] * b[7] - b[4] * b[6]);
    let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    let first = q + 2.0 * p * phi.cos();
    let last = q + 2.0 * p * (phi + 2.0 * PI / 3.0).cos();
    [first, 3.0 * q - first - last, last]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigenvalues_of_known_matrices() {
        let diagonal = [3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0];
        assert_eq!(symmetric_eigenvalues_3(&diagonal), [3.0, 1.0, 2.0]);
        // [[2, 1, 0], [1, 2, 0], [0, 0, 5]]: 5, 3, 1.
        let mut got = symmetric_eigenvalues_3(&[2.0, 1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 5.0]);
        got.sort_by(|a, b| b.total_cmp(a));
        for (g, w) in got.iter().zip([5.0, 3.0, 1.0]) {
            assert!((g - w).abs() < 1e-12, "{got:?}");
        }
        let two = symmetric_eigenvalues_2(&[2.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert!((two[0] - 3.0).abs() < 1e-15 && (two[1] - 1.0).abs() < 1e-15, "{two:?}");
    }

    #[test]
    fn moment_entries_round_trip() {
        for axes in [2, 3] {
            for i in 0..SIDE.pow(axes as u32) {
                assert_eq!(entry_of(&powers_of(i, SIDE, axes), axes), i);
            }
        }
    }
}
